"""``kcspec fuzz --budget`` is a bound: the campaign looks at the clock before every step and stops in the middle
of a round once the budget is spent (Hypothesis alone would finish its round of 25 runs of 30 steps first).
The clock is the test's own — every look at it is one second later — so nothing here depends on the machine's
speed."""

from __future__ import annotations

import itertools

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.fuzz.campaign import run_campaign

from kcspec.cli import main

pytestmark = pytest.mark.integration  # compiles the spec's code: seconds


def test_the_budget_stops_a_round_in_the_middle() -> None:
    ticks = itertools.count()
    result = run_campaign("kafka-2.8", 20.0, 1, None, None, clock=lambda: float(next(ticks)))
    assert result.failure is None
    assert result.rounds == 1
    assert 0 < result.coverage.steps < 20, f"{result.coverage.steps} steps for 20 looks at the clock"
    assert result.seconds <= 20.0 + 2.0


def test_a_budget_of_nothing_is_bad_usage() -> None:
    result = CliRunner().invoke(main, ["fuzz", "--budget", "0s"])
    assert result.exit_code == 2, result.output
    assert "the budget must be more than 0 seconds" in result.output
