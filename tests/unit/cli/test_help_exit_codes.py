"""Every command's ``--help`` ends with the same exit-code table (``kcspec.cli.EXIT_CODES``): 0, 1, 2, 3, 130
and 143, each with its meaning."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kcspec.cli import main
from tests.integration.cli.test_exit_codes import _leaf_commands


@pytest.mark.parametrize("command", ["", *_leaf_commands()])
def test_help_lists_every_exit_code(command: str) -> None:
    result = CliRunner().invoke(main, [*command.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "Exit codes:" in result.output, f"kcspec {command} --help has no exit codes:\n{result.output}"
    table = result.output[result.output.index("Exit codes:") :]
    for code, meaning in [
        ("0", "pass"),
        ("1", "violation"),
        ("2", "bad usage"),
        ("3", "internal error"),
        ("130", "Ctrl-C"),
        ("143", "SIGTERM"),
    ]:
        assert f"  {code} " in table and meaning in table, (
            f"kcspec {command} --help: no exit {code}:\n{table}"
        )
