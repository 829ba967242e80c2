"""The options and errors every command shares (``kcspec/options.py``): declared once, read the same everywhere."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from kcspec.spec.profiles import PROFILES

from kcspec import options
from kcspec.cli import main


def test_fail_is_one_error_line_and_exit_2() -> None:
    @click.command()
    def broken() -> None:
        options.fail("--sut: no such program: ./nope")

    result = CliRunner().invoke(broken, [])
    assert result.exit_code == 2
    assert result.output == "error: --sut: no such program: ./nope\n"


def test_usage_error_shows_the_usage_line_and_exits_2() -> None:
    @click.command()
    def wrong() -> None:
        options.usage_error("--check compares the whole folder")

    result = CliRunner().invoke(wrong, [])
    assert result.exit_code == 2
    assert "Usage:" in result.output and "Error: --check compares the whole folder" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["explore"],
        ["tla", "export"],
        ["tla", "check"],
        ["tla", "crosscheck"],
        ["audit"],
        ["simulate"],
        ["verify"],
    ],
)
def test_profile_offers_the_profiles_the_spec_defines(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "--profile" in result.output
    for name in PROFILES:
        assert name in result.output, f"{' '.join(command)} --help does not offer {name}"


@pytest.mark.parametrize("command", [["tla", "check"], ["tla", "crosscheck"], ["verify"]])
def test_tla2tools_reads_the_environment(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert "--tla2tools" in result.output and "TLA2TOOLS_JAR" in result.output
