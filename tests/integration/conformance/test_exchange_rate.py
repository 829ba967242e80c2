"""The conformance summary's exchanges/s is counted over the time spent in exchanges, not over the whole run (which
also holds the SUT's start-up and differential testing)."""

from __future__ import annotations

import io
import json
import time

from kcspec.conformance import runner
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.reports import json_report, terminal
from kcspec.conformance.vectors import generate
from kcspec.conformance.vectors.model import Level
from kcspec.conformance.verdicts import Outcome, RunReport, SutInfo, Verdict
from rich.console import Console


def _summary(report: RunReport) -> str:
    out = io.StringIO()
    terminal.print_report(report, Console(file=out, width=200, color_system=None))
    return out.getvalue().strip().splitlines()[-1]


def test_the_rate_divides_by_the_exchange_time_only() -> None:
    outcome = Outcome("v", "elections", ("§6",), "a vector", Verdict.passed)
    report = RunReport(
        SutInfo("sut"), "kafka-2.8", "elections", (outcome,), 100.0, 1000, exchange_seconds=0.5
    )
    assert "(1000 exchanges, 2000/s of exchange time)" in _summary(report)
    data = json.loads(json_report.render(report))
    assert data["exchange_seconds"] == 0.5 and data["exchanges_per_second"] == 2000.0
    assert data["seconds"] == 100.0


def test_a_run_measures_its_exchange_time_inside_the_run_time() -> None:
    vectors = generate.generate(["kafka-2.8"]).vectors
    started = time.monotonic()
    report = runner.run(InProcessAdapter(ReferenceSut()), vectors, profile="kafka-2.8", level=Level.elections)
    elapsed = time.monotonic() - started
    assert report.exchanges > 0
    assert 0 < report.exchange_seconds <= report.seconds <= elapsed
    assert report.exchanges_per_second == report.exchanges / report.exchange_seconds
