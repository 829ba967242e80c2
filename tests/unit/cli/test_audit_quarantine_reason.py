"""``kcspec audit`` prints the first quarantined line's reason on the terminal (for a JSONL trace line, the
codec's message: JSON path and what was expected), not only in quarantine.jsonl."""

from __future__ import annotations

from pathlib import Path

from kcspec.audit.traces import decode_line
from kcspec.model.event_candidates import bootstrap
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep

from kcspec.commands.audit import quarantine_lines
from tests.support.paths import ROOT


def test_the_first_reason_of_a_rejected_counterexample_trace_is_shown(tmp_path: Path) -> None:
    # a counterexample trace (one indented JSON document) given as JSONL: each line is rejected
    trace = Trace("kafka-2.8", ClusterState(), tuple(TraceStep(e) for e in bootstrap(ExploreConfig())))
    text = trace.to_json().splitlines()[1]
    _facts, reason = decode_line(text)
    assert reason is not None
    sample: list[dict[str, object]] = [
        {"file": "run.trace.json", "line": 2, "reason": "bad-trace-line", "detail": reason, "text": text},
        {"file": "run.trace.json", "line": 3, "reason": "bad-trace-line", "detail": "other", "text": "x"},
    ]
    lines = quarantine_lines(sample)
    assert lines[-2] == f"    first reason (run.trace.json:2): {reason}", lines
    assert sum("first reason" in line for line in lines) == 1, "only the first reason is printed in full"
    assert "The JSONL trace format" in lines[-1] and "Trace.to_jsonl" in lines[-1], lines
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "### The JSONL trace format" in readme, "the hint names a README section that does not exist"


def test_a_reason_without_detail_is_its_code() -> None:
    sample: list[dict[str, object]] = [{"file": "f", "line": 1, "reason": "no-layout", "text": "junk"}]
    assert quarantine_lines(sample)[-1] == "    first reason (f:1): no-layout"


def test_nothing_quarantined_prints_nothing() -> None:
    assert quarantine_lines([]) == []
