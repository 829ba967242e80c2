"""What ``kcspec verify`` prints in a CI log and at a terminal, on planted checks (fast, in-process): one plain line
per finished case, text from data printed as it is (never read as Rich markup), each skip reason once, and
``--fail-fast`` stopping at the first failure with its counterexample."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.gate.cases import CaseResult, Check, VerifyOptions
from kcspec.conformance.verdicts import Verdict
from rich.console import Console

import kcspec.commands.verify as verify
from kcspec.cli import main

BRACKETS = "unclean [kafka-2.8]"
HINT = "the TLA+ syntax check needs tree-sitter: pip install 'kcspec[tla]'"
LEMMA = "an unclean leader's ISR is [] ; [bold]not markup[/bold]"
TLC_REASON = (
    "TLC is not available:\n  no tla2tools.jar\n  set TLA2TOOLS_JAR\n  or pass --tla2tools\n  (see README)"
)


def _planted(opts: VerifyOptions) -> Iterator[CaseResult]:
    yield CaseResult("spec-vs-reference", "create [kafka-2.8]", Verdict.passed, "9 steps agree")
    yield CaseResult("spec-vs-reference", BRACKETS, Verdict.failed, LEMMA, "details", "out/cex [1].json")
    yield CaseResult("spec-vs-reference", "syntax [kafka-2.8]", Verdict.skipped, HINT)
    for profile in ("kafka-2.8", "kafka-1.1"):
        for model in ("one", "two"):
            yield CaseResult("spec-vs-reference", f"tlc {model} [{profile}]", Verdict.skipped, TLC_REASON)


def _never(opts: VerifyOptions) -> Iterator[CaseResult]:
    raise AssertionError("--fail-fast ran a check after the first failure")
    yield  # pragma: no cover


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        verify,
        "CHECKS",
        (Check("spec-vs-reference", "planted [x]", _planted), Check("explore", "never reached", _never)),
    )


def test_a_log_gets_one_plain_line_per_case_and_data_is_printed_as_it_is(
    planted: None, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        main,
        [
            "verify",
            "--check",
            "spec-vs-reference",
            "--out",
            str(tmp_path),
            "--json",
            str(tmp_path / "v.json"),
        ],
    )
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("passed") and "create [kafka-2.8]" in line for line in lines), result.output
    failed = [line for line in lines if line.startswith("FAILED")]
    assert failed == [f"FAILED  spec-vs-reference: {BRACKETS} — {LEMMA} (0.0s)"], result.output
    assert "  counterexample: out/cex [1].json" in lines
    assert HINT in result.output
    assert result.output.count("no tla2tools.jar") == 1, (
        f"the skip reason is printed more than once:\n{result.output}"
    )
    assert (
        "skipped (4) spec-vs-reference: tlc one [kafka-2.8], spec-vs-reference: tlc two [kafka-2.8]"
        in result.output
    )
    assert all(len(line) < 200 for line in lines if "skipped (" not in line), result.output
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["ok"] is False and report["interrupted"] is None


def test_fail_fast_stops_at_the_first_failure_with_its_counterexample(planted: None, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["verify", "--fail-fast", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "counterexample: out/cex [1].json" in result.output
    assert "tlc one" not in result.output, "a case after the first failure was run"
    assert f"--fail-fast: stopped at the first failure (spec-vs-reference: {BRACKETS})" in result.output
    assert "not run: explore" in result.output


def test_at_a_terminal_data_is_not_read_as_markup() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=300, color_system=None)
    case = CaseResult("spec-vs-reference", BRACKETS, Verdict.failed, HINT)
    console.print(verify._styled_case(case))
    assert console.file.getvalue().strip() == f"FAILED spec-vs-reference: {BRACKETS} — {HINT}"  # type: ignore[attr-defined]
