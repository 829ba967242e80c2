"""Every bound of ``kcspec explore`` outside its range is a usage error (exit 2, naming the option), never a
run that explores nothing and reports "no violation found"."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kcspec.cli import main


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--max-states", "0"], "--max-states"),
        (["--max-states", "-1"], "--max-states"),
        (["--depth", "-1"], "--depth"),
        (["--brokers", "0"], "--brokers"),
        (["--topics", "0"], "--topics"),
        (["--partitions", "0"], "--partitions"),
        (["--rf", "0"], "--rf"),
        (["--workers", "0"], "--workers"),
    ],
)
def test_a_bound_below_its_range_is_exit_2(args: list[str], named: str) -> None:
    result = CliRunner().invoke(main, ["explore", *args])
    assert result.exit_code == 2, (
        f"kcspec explore {' '.join(args)} exited {result.exit_code}:\n{result.output}"
    )
    assert named in result.output, result.output
    assert "no violation" not in result.output, result.output
