"""``kcspec audit`` on a JSON Lines trace: a line nested 1,000 levels deep or holding a 4,400-digit integer
is a quarantined line with the reason, not a crash of the Spark job (the lines are decoded by
``kcspec.audit.traces.decode_line`` through the bounded JSON reader)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.pipeline import run_audit
from kcspec.audit.spark_job import expand_inputs
from kcspec.spec.profiles import KAFKA_2_8

from tests.unit.audit.test_traces import reference_trace_lines

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[1]", shuffle_partitions=1)


def test_deep_and_huge_number_lines_are_quarantined(spark: Any, tmp_path: Path) -> None:
    lines = reference_trace_lines()
    lines[2] = '{"step": ' + "[" * 1000 + "]" * 1000 + "}"
    lines[3] = '{"step": ' + "7" * 4400 + "}"
    d = tmp_path / "traces"
    d.mkdir()
    (d / "run.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    summary = run_audit(spark, expand_inputs([str(d)]), out, KAFKA_2_8, lambda s: None)
    assert (summary.lines_read, summary.quarantined) == (len(lines), 2)
    quarantine = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    by_line = {q["line"]: q for q in quarantine}
    assert by_line[3]["reason"] == "bad-trace-line" and "nested deeper than 64" in by_line[3]["detail"]
    assert by_line[4]["reason"] == "bad-trace-line" and "number literal of 4400" in by_line[4]["detail"]
