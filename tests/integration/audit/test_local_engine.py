"""The local engine (``local_engine``: the reader and rules' pass in one JVM, no Spark session) writes the same
outputs as the Spark path, on every kind of corpus the audit's tests use: the real logs of ``../shared``, the
reference controller's walks (clean, and with a historical bug), a ZooKeeper reset and a stale write, TRACE and
INFO replica histories, every log layout behind its line prefixes and wrapped, a broken ``.gz``, not-a-log lines
and several profiles at once. Byte for byte: violations, quarantine, findings, coverage, stats, verdict, HTML;
the Parquet folders hold the same rows under the same columns and types (their file names are random)."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.local_engine import chosen_engine, run_local
from kcspec.audit.pipeline import conclude, run_audit
from kcspec.audit.spark_job import InputError, expand_inputs
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile

from tests.integration.audit import test_controller_eras as eras_case
from tests.integration.audit import test_synthetic_history as walk_case
from tests.integration.audit import test_trace_level as trace_case
from tests.support import layout_corpus
from tests.support.paths import SHARED
from tests.support.processes import kcspec_process
from tests.support.timing import scaled

pytestmark = [pytest.mark.spark, pytest.mark.integration]

REAL_LOGS = SHARED / "real-logs"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-local-engine")


def _same_outputs(
    spark: Any, tmp_path: Path, paths: list[Path], history: str = "cluster", profile: Profile = KAFKA_2_8
) -> dict[str, Any]:
    """Audit ``paths`` with both engines; assert every output is the same; the local run's ``stats.json``."""
    inputs = expand_inputs([str(p) for p in paths])
    outs = {name: tmp_path / f"out-{name}" for name in ("spark", "local")}
    spark_summary = run_audit(spark, inputs, outs["spark"], profile, lambda s: None, history, False)
    local_summary = run_local(inputs, outs["local"], profile, lambda s: None, history, False)
    assert local_summary == spark_summary
    for name, out in outs.items():
        conclude(out, spark_summary if name == "spark" else local_summary)
    files = {
        name: sorted(p.name for p in out.iterdir() if not p.name.endswith(".parquet"))
        for name, out in outs.items()
    }
    assert files["local"] == files["spark"]
    for name in files["spark"]:
        a, b = (outs["spark"] / name).read_bytes(), (outs["local"] / name).read_bytes()
        assert b == a, f"{name} differs between the engines:\n{_first_difference(a, b)}"
    for table in ("violations.parquet", "quarantine.parquet"):
        frames = {e: spark.read.parquet(str(outs[e] / table)) for e in outs}
        assert [(f.name, f.dataType) for f in frames["local"].schema.fields] == [
            (f.name, f.dataType) for f in frames["spark"].schema.fields
        ], table
        rows = {e: sorted(map(tuple, frames[e].collect()), key=repr) for e in outs}
        assert rows["local"] == rows["spark"], f"{table}: the rows differ"
    stats: dict[str, Any] = json.loads((outs["local"] / "stats.json").read_text())
    return stats


def _first_difference(a: bytes, b: bytes) -> str:
    for n, (x, y) in enumerate(zip(a.decode().splitlines(), b.decode().splitlines(), strict=False), start=1):
        if x != y:
            return f"line {n}:\n spark: {x[:400]}\n local: {y[:400]}"
    return f"one is longer: {len(a)} against {len(b)} bytes"


def test_real_logs_give_the_same_outputs_and_no_violation(spark: Any, tmp_path: Path) -> None:
    if not REAL_LOGS.is_dir():
        pytest.skip(f"{REAL_LOGS} is not there (the shared real-log corpus)")
    stats = _same_outputs(spark, tmp_path, [REAL_LOGS], history="file")
    assert stats["violations"] == 0, stats["by_rule"]
    assert stats["findings"] > 0 and stats["checked"] > 0, "the real logs' findings and transitions"


def test_a_walk_and_a_walk_with_a_historical_bug(spark: Any, tmp_path: Path) -> None:
    clean = walk_case._corpus(tmp_path / "clean", None)
    buggy = walk_case._corpus(tmp_path / "buggy", "kafka-8237")
    assert _same_outputs(spark, tmp_path / "clean-run", [clean])["violations"] == 0
    stats = _same_outputs(spark, tmp_path / "buggy-run", [buggy])
    assert stats["violations"] > 0, "the injected bug is found"


def test_a_reset_and_a_stale_write_and_trace_levels(spark: Any, tmp_path: Path) -> None:
    d, e = "2019-03-04", "2019-03-05"
    logs = tmp_path / "logs"
    eras_case._write(
        logs / "controller.log",
        [eras_case._elected(d, "10:00:00,000", 1, 57, 56), eras_case._elected(e, "09:00:00,000", 1, 1, 1)],
    )
    eras_case._write(
        logs / "state-change.log",
        [
            *eras_case._history(d, "10:00:10", 1, 57, "orders-0"),
            *eras_case._history(e, "09:00:10", 1, 1, "orders-0"),
        ],
    )
    stale = tmp_path / "stale"
    eras_case._write(
        stale / "controller.log",
        [eras_case._elected(d, "10:00:00,000", 1, 5, 4), eras_case._elected(d, "10:05:00,000", 2, 6, 5)],
    )
    eras_case._write(
        stale / "state-change.log",
        [
            *eras_case._history(d, "10:01:00", 1, 5, "orders-0"),
            *eras_case._history(d, "10:06:00", 2, 6, "orders-1"),
            eras_case._online(d, "10:07:00,000", 1, 5, "orders-0", 1),
        ],
    )
    traced = tmp_path / "traced" / "state-change.log"
    traced.parent.mkdir()
    traced.write_text("\n".join(trace_case.TRACED) + "\n")
    info = tmp_path / "info" / "state-change.log"
    info.parent.mkdir()
    info.write_text("\n".join(trace_case.INFO) + "\n")
    assert _same_outputs(spark, tmp_path / "reset", [logs])["violations"] == 0
    assert _same_outputs(spark, tmp_path / "stale-run", [stale])["by_rule"].get("stale-controller-write")
    for profile in (KAFKA_2_8, KAFKA_1_1):
        run = tmp_path / f"levels-{profile.name}"
        stats = _same_outputs(spark, run, [traced.parent, info.parent], history="dir", profile=profile)
        assert stats["by_rule"].get("previous-state-mismatch"), stats["by_rule"]


def test_every_layout_prefix_wrapping_and_broken_input(spark: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    rng = random.Random(7)
    for i, layout in enumerate(sorted(layout_corpus.LAYOUTS)):
        prefix = rng.choice(sorted(layout_corpus.PREFIXES))
        c = layout_corpus.corpus(i, layout, prefix, records=40, wrap=120 if i % 3 == 0 else None)
        (logs / f"{i:02d}-{layout}.log").write_text("".join(x + c.line_end for x in c.lines), newline="")
    (logs / "notes.txt").write_text("not a log line\n\n\tat orphan.Frame(X.java:1)\nanother\n")
    good = layout_corpus.corpus(99, sorted(layout_corpus.LAYOUTS)[0], "none", records=30)
    data = gzip.compress("".join(x + "\n" for x in good.lines).encode())
    (logs / "broken.log.gz").write_bytes(data[: len(data) * 2 // 3])
    stats = _same_outputs(spark, tmp_path / "run", [logs], history="file")
    assert stats["quarantined"] > 0 and stats["lines_read"] > 0


def test_auto_chooses_the_local_engine_only_for_kafka_logs_without_a_master(tmp_path: Path) -> None:
    log = tmp_path / "state-change.log"
    log.write_text("\n".join(trace_case.TRACED) + "\n")
    trace = tmp_path / "run.jsonl"
    trace.write_text("")
    logs, both = expand_inputs([str(log)]), expand_inputs([str(log), str(trace)])
    assert chosen_engine("auto", None, logs)[0] == "local"
    assert chosen_engine("auto", "local[2]", logs)[0] == "spark", "a --master given always runs Spark"
    assert chosen_engine("auto", None, both)[0] == "spark", "traces are decoded by Spark"
    assert chosen_engine("spark", None, logs)[0] == "spark"
    for master, inputs, what in ((None, both, "JSONL trace"), ("local[2]", logs, "--master")):
        with pytest.raises(InputError, match=what):
            chosen_engine("local", master, inputs)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param("-XX:+PrintFlagsFinal", id="flags-printed-before-main"),
        pytest.param("-Xlog:gc*,class+load:stdout", id="unified-logging-beside-the-run"),
    ],
)
def test_a_jvm_that_writes_to_its_standard_output_does_not_stop_the_audit(
    tmp_path: Path, options: str
) -> None:
    """JAVA_TOOL_OPTIONS reaches every JVM a user starts, and some options make the JVM print on its own
    standard output, before LocalAudit's main runs and while it runs. The local engine's answers travel on a
    pipe of their own, so the audit ends as without them (it waited for ever when the answers shared stdout)."""
    log = tmp_path / "state-change.log"
    log.write_text("\n".join(trace_case.TRACED) + "\n")
    verdicts: dict[str, tuple[int, Any]] = {}
    for name, env in (("plain", {"JAVA_TOOL_OPTIONS": ""}), ("noisy", {"JAVA_TOOL_OPTIONS": options})):
        out = tmp_path / f"out-{name}"
        with kcspec_process(["audit", str(log), "--engine", "local", "--out", str(out)], env=env) as proc:
            try:
                _, stderr = proc.communicate(timeout=scaled(180))
            except subprocess.TimeoutExpired:
                pytest.fail(f"JAVA_TOOL_OPTIONS={env['JAVA_TOOL_OPTIONS']!r}: the audit did not end in time")
        assert proc.returncode in (0, 1), f"{name}: exit {proc.returncode}\n{stderr.decode()[-2000:]}"
        verdicts[name] = (proc.returncode, json.loads((out / "verdict.json").read_text()))
        for output in ("violations.jsonl", "findings.jsonl", "quarantine.jsonl"):
            assert (out / output).read_bytes() == (tmp_path / "out-plain" / output).read_bytes(), output
    assert verdicts["noisy"] == verdicts["plain"]
