"""The audit of a small input (interpreted expressions, one shuffle partition: ``session.SMALL_INPUT_SETTINGS``)
gives exactly the outputs of the audit with Spark's code generation and adaptive execution, on a corpus with
bad input, every layout, stack traces, wrapped records, a good and a truncated ``.gz``."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.pipeline import run_audit
from kcspec.audit.session import make_session
from kcspec.audit.spark_job import expand_inputs
from kcspec.model.spark import session
from kcspec.spec.profiles import KAFKA_2_8

from tests.integration.audit.test_spark_job import GOOD, _corpus

pytestmark = pytest.mark.spark
COMPARED = ("violations.jsonl", "quarantine.jsonl", "findings.jsonl", "stats.json")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    yield make_session("local[2]", shuffle_partitions=2)


def test_small_input_settings_change_nothing_but_how_spark_evaluates(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _corpus(tmp_path)
    whole = gzip.compress(("\n".join(GOOD * 400) + "\n").encode())
    (d / "state-change.log.2.gz").write_bytes(whole[: len(whole) // 2])
    inputs = expand_inputs([str(d)])
    assert session.input_bytes(inputs.kafka_logs) <= session.SMALL_INPUT_BYTES
    steps: dict[str, list[str]] = {"small": [], "codegen": []}
    run_audit(spark, inputs, tmp_path / "small", KAFKA_2_8, steps["small"].append)
    before = {k: spark.conf.get(k, None) for k in session.SMALL_INPUT_SETTINGS}
    monkeypatch.setattr(session, "SMALL_INPUT_BYTES", 0)
    run_audit(spark, inputs, tmp_path / "codegen", KAFKA_2_8, steps["codegen"].append)
    assert steps["small"][0].startswith("small input (") and not steps["codegen"][0].startswith("small input")
    # the session's own settings are back after a small run
    assert before == {k: spark.conf.get(k, None) for k in session.SMALL_INPUT_SETTINGS}
    for name in COMPARED:
        small, codegen = (tmp_path / "small" / name).read_text(), (tmp_path / "codegen" / name).read_text()
        if name.endswith(".json"):  # the same content; key order follows Spark's partitions
            small, codegen = json.loads(small), json.loads(codegen)
        assert small == codegen, f"{name} differs between the small-input and the code-generating audit"
    assert "corrupt-compressed-file" in (tmp_path / "small" / "quarantine.jsonl").read_text()
    assert "leader-not-in-isr" in (tmp_path / "small" / "violations.jsonl").read_text()
