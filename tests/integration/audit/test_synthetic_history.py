"""The audit on synthetic history (issue: data pipeline, "done when"): a clean corpus written by the reference
controller has no violation, and a corpus written with an injected historical bug is flagged at the very lines
the bug produced."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.pipeline import run_audit
from kcspec.audit.spark_job import expand_inputs
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.simulate import WalkConfig, emit_logs, walk
from kcspec.reference_impl import ReferenceController
from kcspec.spec.profiles import KAFKA_2_8

pytestmark = pytest.mark.spark

SEED, EVENTS = 11, 200
BUG_MARK = "should be in the ReplicaDeletionStarted states"  # what kafka-8237's 1.1 table prints


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    session = make_session("local[2]", shuffle_partitions=4, app="kcspec-test-synthetic")
    yield session


def _corpus(directory: Path, bug: str | None) -> Path:
    controller = ReferenceController(KAFKA_2_8.name)
    cfg = WalkConfig(KAFKA_2_8.name, brokers=5, topics=3, partitions=4, rf=3)
    if bug is None:
        for _ in walk(controller, cfg, EVENTS, SEED):
            pass
    else:
        with HISTORICAL_BY_NAME[bug].active():
            for _ in walk(controller, cfg, EVENTS, SEED):
                pass
    emit_logs(controller.state_change_log, controller.controller_log, directory)
    return directory


def _violations(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()]


def test_clean_history_has_no_violation(spark: Any, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "clean", None)
    out = tmp_path / "out"
    out.mkdir()
    summary = run_audit(spark, expand_inputs([str(corpus)]), out, KAFKA_2_8, lambda s: None)
    found = _violations(out)
    assert not found, "a clean reference-controller history was flagged:\n" + "\n".join(
        f"{v['file']}:{v['line']}: [{v['rule']}] {v['message']}" for v in found[:10]
    )
    assert summary.lines_read > 0
    # Kafka logs ERROR lines in a healthy cluster too (rejected transitions during deletion and reassignment,
    # elections that find no replica alive): findings, none of them red (a fault)
    logged = sum(" ERROR " in x for f in corpus.glob("*/*.log") for x in f.read_text().splitlines())
    assert logged and summary.findings == sum(summary.by_severity.values()) > 0, summary.by_severity
    red = [
        f"{f['file']}:{f['line']}: {f.get('text')}"
        for f in summary.finding_sample
        if f["severity"] == "error"
    ]
    assert "error" not in summary.by_severity, "\n".join(red[:5])


def test_injected_bug_is_reported_at_its_lines(spark: Any, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "buggy", "kafka-8237")
    expected: set[tuple[str, int]] = set()
    for log in sorted(corpus.glob("*/state-change.log")):
        for n, text in enumerate(log.read_text().splitlines(), start=1):
            if BUG_MARK in text:
                expected.add((str(log), n - 1))  # the exception line follows its ERROR record
    assert expected, "the walk did not exercise the injected bug; choose another seed"
    out = tmp_path / "out"
    out.mkdir()
    run_audit(spark, expand_inputs([str(corpus)]), out, KAFKA_2_8, lambda s: None)
    flagged = {(v["file"], v["line"]) for v in _violations(out) if v["rule"] == "valid-previous-list-differs"}
    assert flagged == expected, (
        f"missed: {sorted(expected - flagged)[:5]}; unexpected: {sorted(flagged - expected)[:5]}"
    )
