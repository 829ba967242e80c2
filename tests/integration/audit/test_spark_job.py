"""The Spark parser against the reference parser, and the whole audit end to end (one small session)."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit.pipeline import run_audit
from kcspec.audit.spark_job import (
    expand_inputs,
    numbered_lines,
    parse_kafka,
    resolve_non_records,
    stored_parse,
)
from kcspec.model.kafka_log.reference_parser import parse_file
from kcspec.spec.profiles import KAFKA_2_8

from tests.support.layout_corpus import corpus
from tests.support.paths import SHARED
from tests.support.timing import scaled
from tests.unit.audit.test_layout_variants import UNDATED

REAL_LOGS = SHARED / "real-logs"
pytestmark = pytest.mark.spark

GOOD = [
    "[2021-01-10 14:19:29,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch incremented "
    "to 9 and epoch zk version is now 8 (kafka.controller.KafkaController)",
    "[2021-01-10 14:19:29,100] INFO [Controller id=1 epoch=9] Changed partition t-0 state from NonExistentPartition "
    "to NewPartition with assigned replicas 1,2 (state.change.logger)",
    "[2021-01-10 14:19:29,200] INFO [Controller id=1 epoch=9] Changed partition t-0 from NewPartition to "
    "OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0) "
    "(state.change.logger)",
]
BAD = [
    # leader 3 not in ISR, and a transition invalid from the logged previous state
    "[2021-01-10 14:19:30,000] INFO [Controller id=1 epoch=9] Changed partition t-0 from OfflinePartition to "
    "OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=0, isr=List(1, 2), zkVersion=1) "
    "(state.change.logger)",
    "this is garbage",
    "[2021-01-10 14:19:31,000] TRACE [Controller id=1 epoch=9] Changed state of replica 2 for partition t-0 from "
    "NewReplica to ReplicaDeletionStarted (state.change.logger)",
    # the layout's edges: no message, parentheses in the message with a line number, text after the logger
    "[2021-01-10 14:19:32,000] INFO (kafka.Foo)",
    "[2021-01-10 14:19:32,000] WARN Something (with parens) happened (kafka.Foo:123)",
    "[2021-01-10 14:19:32,000] INFO trailing text (kafka.Foo) x",
    # U+0001 (the Spark parser's separator) in a generic message, and inside a template's field
    "[2021-01-10 14:19:33,000] INFO odd \u0001 text (kafka.Foo)",
    "[2021-01-10 14:19:33,000] INFO [Controller id=1] Starting topic deletion for topics a\u0001b "
    "(kafka.controller.KafkaController)",
]
GENERATED = [
    ("kafka-default", "docker-compose", 70),
    ("strimzi", "journald", None),
    ("logger-dash", "kubectl", None),
    ("logger-dash-brackets", "none", None),
    ("linkedin", "docker-compose", None),
]
README = "# Notes\n\nThese are the broker logs of the incident.\n"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    session = make_session("local[2]", shuffle_partitions=2)
    yield session


def _corpus(tmp: Path, generated: bool = True, pasted: bool = True) -> Path:
    d = tmp / "logs"
    d.mkdir()
    (d / "state-change.log").write_text("\r\n".join(GOOD + BAD) + "\r\n")
    (d / "README.md").write_text(README)  # skipped: plainly not a log by its name
    (d / "notes.txt").write_text(README)  # audited (.txt may be a log): its prose is quarantined
    (d / ".notes.swp").write_text("editor swap file\n")
    with gzip.open(d / "state-change.log.1.gz", "wt") as f:
        f.write("\tat orphan.Frame(X.scala:1)\n" + "\n".join(GOOD) + "\n\tat attached.Frame(X.scala:2)\n")
    # every layout behind a line prefix, and records wrapped by a terminal (the JVM reader re-joins them)
    for seed, (layout, prefix, wrap) in enumerate(GENERATED if generated else []):
        c = corpus(seed, layout, prefix, records=40, wrap=wrap)
        (d / f"generated-{layout}-{prefix}.log").write_text(c.line_end.join(c.lines) + c.line_end)
    # lines without a timestamp (pasted from a terminal), and the same after dated records of the file
    if pasted:
        (d / "pasted.log").write_text("\n".join(UNDATED) + "\n")
        (d / "mixed.log").write_text("\n".join(GOOD + UNDATED) + "\n")
    if REAL_LOGS.is_dir():
        for p in sorted(REAL_LOGS.glob("*.log"))[-6:]:
            shutil.copy(p, d / p.name)
    return d


def test_spark_parse_equals_reference(spark: Any, tmp_path: Path) -> None:
    from kcspec.audit import jvm_parser

    if not jvm_parser.available(spark):
        pytest.skip(jvm_parser.status(spark))
    d = _corpus(tmp_path)
    inputs = expand_inputs([str(d)])
    assert str((d / "notes.txt").resolve()) in inputs.kafka_logs
    assert inputs.skipped == (
        (str((d / ".notes.swp").resolve()), "hidden file"),
        (str((d / "README.md").resolve()), "not a log by its name (.md file); name it directly to audit it"),
    )
    # generated code must compile: with fallback off, a plan Spark cannot compile fails instead of interpreting
    spark.conf.set("spark.sql.codegen.fallback", "false")
    try:
        parsed = parse_kafka(numbered_lines(spark, inputs.kafka_logs)).cache()
        odd = {(r["file"], r["line"]): r for r in resolve_non_records(parsed).collect()}
        got = {(r["file"], r["line"]): r for r in parsed.collect()}
    finally:
        spark.conf.unset("spark.sql.codegen.fallback")
    # parse_kafka parses line by line: wrapped records are not re-joined there
    expected = [p for f in inputs.kafka_logs for p in parse_file(Path(f), f, join_wrapped=False)]
    assert len(got) == len(expected)
    for e in expected:
        key = (e.file, e.line)
        row = got[key]
        if e.status in ("record",) or (e.status == "quarantined" and e.layout):
            assert (row["status"], row["kind"], row["template"], row["reason"]) == (
                e.status,
                e.kind,
                e.template,
                e.reason,
            ), key
            for name, value in e.fields.items():
                assert row[name] == value, (key, name)
        else:
            o = odd[key]
            assert (o["status"], o["reason"], o["owner"]) == (e.status, e.reason, e.owner), key


def test_stored_parse_equals_reference(spark: Any, tmp_path: Path) -> None:
    """The stored parse (file and history ids, line numbers, long timestamps, the stored fields, wrapped records
    re-joined) against the reference parser, on files whose names need escaping in a URI."""
    from kcspec.audit import jvm_parser
    from kcspec.audit.pipeline import FileIds
    from kcspec.audit.stats import line_cube, ts_text

    if not jvm_parser.available(spark):
        pytest.skip(jvm_parser.status(spark))
    d = _corpus(tmp_path)
    (d / "sub dir%41 é").mkdir()
    shutil.copy(d / "state-change.log", d / "sub dir%41 é" / "state-change.log")
    (d / "empty.log").write_text("")
    (d / "no-final-newline.log").write_text(GOOD[0] + "\n\n" + GOOD[1] + "\r" + GOOD[2])
    inputs = expand_inputs([str(d)])
    ids = FileIds.of(inputs.kafka_logs, "dir")
    frame, counted = stored_parse(spark, ids.listing())
    frame.write.parquet(str(tmp_path / "stored.parquet"))
    stored = spark.read.parquet(str(tmp_path / "stored.parquet"))
    # the JVM reader's cells (counted while reading) are the statistics' aggregation of what it stored
    assert sorted(map(repr, counted())) == sorted(map(repr, line_cube(stored)))
    got = {(ids.names[r["fid"]], r["line"]): r for r in stored.collect()}
    expected = [p for f in ids.names for p in parse_file(Path(f), f)]
    assert len(got) == len(expected)
    # a record carries its first continuation line: the exception the failure rules and findings read
    first_continuation: dict[tuple[str, int], str] = {}
    for e in expected:
        if e.status == "continuation" and e.owner is not None:
            first_continuation.setdefault((e.file, e.owner), e.text)
    assert any(first_continuation), "the corpus has no record with continuation lines"
    for e in expected:
        key = (e.file, e.line)
        row = got[key]
        assert ids.history[row["fid"]] == row["hid"], key
        if e.status in ("record",) or (e.status == "quarantined" and e.layout):
            assert (row["status"], row["kind"], row["reason"], ts_text(row["ts"])) == (
                e.status,
                e.kind,
                e.reason,
                e.ts,
            ), key
            assert row["text"] is None if e.status == "record" else row["text"] == e.text, key
            assert row["layout"] == e.layout, key
            for name in jvm_parser.STORED_FIELDS:
                assert row[name] == e.fields.get(name), (key, name)
            assert row["exception"] == first_continuation.get(key), key
        else:
            assert row["text"] == e.text, key
            # statuses are resolved while reading: continuation lines attached, the rest quarantined
            assert (row["status"], row["reason"], row["owner"]) == (e.status, e.reason, e.owner), key
            assert row["exception"] is None, key


def test_a_file_read_again_is_counted_once(spark: Any, tmp_path: Path) -> None:
    """The reader runs in the map stage of the log rules' shuffle, whose tasks Spark runs again when their
    output is lost (and each run reports its counts): the cells count every file once however often it is
    read. Computing the parse twice runs every reading task twice."""
    from kcspec.audit.pipeline import FileIds

    d = _corpus(tmp_path)
    ids = FileIds.of(expand_inputs([str(d)]).kafka_logs, "dir")
    once_frame, once = stored_parse(spark, ids.listing())
    once_frame.count()
    twice_frame, twice = stored_parse(spark, ids.listing())
    twice_frame.count()
    twice_frame.count()
    assert sorted(map(repr, twice())) == sorted(map(repr, once()))
    assert sum(c.lines for c in twice()) == sum(1 for f in ids.names for _ in parse_file(Path(f), f))


def test_audit_end_to_end(spark: Any, tmp_path: Path) -> None:
    d = _corpus(tmp_path, generated=False, pasted=False)
    out = tmp_path / "out"
    out.mkdir()
    summary = run_audit(spark, expand_inputs([str(d)]), out, KAFKA_2_8, lambda s: None, "file")
    assert summary.parsed + summary.quarantined == summary.lines_read
    # "this is garbage", two lines of the layout's edge cases and the notes' two lines of prose
    # the stack frame before the first record of state-change.log.1.gz: quarantined, not counted against the threshold
    assert summary.by_reason.get("no-layout") == 5 and summary.by_reason.get("orphan-at-start") == 1
    assert summary.by_reason.get("separator-character") == 1
    notes = [f for f in summary.per_file if Path(f["file"]).name == "notes.txt"]
    assert notes and notes[0]["quarantined"] == 2 and notes[0]["blank"] == 1
    # the README beside the logs is not audited, and the report says so (never silently)
    assert [Path(f["file"]).name for f in summary.per_file if Path(f["file"]).name == "README.md"] == []
    stats_json = json.loads((out / "stats.json").read_text())
    assert {Path(f["file"]).name: f["why"] for f in stats_json["skipped"]} == {
        ".notes.swp": "hidden file",
        "README.md": "not a log by its name (.md file); name it directly to audit it",
    }
    assert "Files skipped (not audited)" in (out / "summary.html").read_text()
    violations = [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines()]
    mine = {(Path(v["file"]).name, v["line"], v["rule"]) for v in violations}
    assert ("state-change.log", 4, "leader-not-in-isr") in mine
    assert ("state-change.log", 6, "invalid-transition") in mine
    # an Offline → Online election must write a higher leader epoch than the creation's 0 (§11 I6)
    assert ("state-change.log", 4, "leader-epoch-not-increasing") in mine
    cov = json.loads((out / "coverage-kafka-2.8-partition.json").read_text())
    edge = {(e["from"], e["to"]): e for e in cov["edges"]}
    assert (
        edge[("NewPartition", "OnlinePartition")]["count"] >= 2
        and edge[("NewPartition", "OnlinePartition")]["valid"]
    )
    assert (out / "summary.html").read_text().count("<table>") >= 5
    assert (out / "violations.parquet").is_dir() and (out / "quarantine.parquet").is_dir()


def test_jsonl_trace_bad_line_quarantined(spark: Any, tmp_path: Path) -> None:
    from tests.unit.audit.test_traces import reference_trace_lines

    lines = reference_trace_lines()
    bad = json.loads(lines[2])
    bad["state"]["controller"]["epoch"] = "two"
    lines[2] = json.dumps(bad)
    d = tmp_path / "traces"
    d.mkdir()
    (d / "run.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    inputs = expand_inputs([str(d)])
    assert inputs.traces and not inputs.kafka_logs
    summary = run_audit(spark, inputs, out, KAFKA_2_8, lambda s: None)
    assert (summary.lines_read, summary.quarantined, summary.violations) == (len(lines), 1, 0)
    [q] = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert (Path(q["file"]).name, q["line"], q["reason"]) == ("run.jsonl", 3, "bad-trace-line")
    assert q["detail"].startswith("$.state.controller.epoch")


def test_cli_keeps_spark_output_off_the_terminal(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = tmp_path / "state-change.log"
    log.write_text("\n".join(GOOD) + "\n")
    kcspec = Path(sys.executable).parent / "kcspec"
    done = subprocess.run(
        [str(kcspec), "audit", str(log), "--master", "local[1]", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert done.returncode == 0, done.stderr
    for noise in ("WARNING", "Setting default log level", "sc.setLogLevel", "log4j", "WARN "):
        assert noise not in done.stderr and noise not in done.stdout, noise
    assert "parsing 1 Kafka log file(s)" in done.stderr
    assert "lines read" in done.stdout
    # the terminal summary leads with the verdict (then what to look at: nothing here)
    assert done.stdout.splitlines()[0].startswith("no violations; "), done.stdout
    assert "state transition(s) checked" in done.stdout.splitlines()[0], done.stdout


def test_the_reader_resolves_blank_and_continuation_lines_as_the_reference_parser(
    spark: Any, tmp_path: Path
) -> None:
    """Lines that a prefix, a bracket or a colon make look blank or continued (the reader tries its regexes only
    where they can match, and the prefix-free continuation first): statuses, reasons and owners as the
    reference parser's, and each record's exception its first continuation line."""
    from kcspec.audit import jvm_parser
    from kcspec.audit.pipeline import FileIds

    if not jvm_parser.available(spark):
        pytest.skip(jvm_parser.status(spark))
    tricky = [
        "kafka_1  | ",
        "kafka_1  |",
        "[stage]  ",
        "pod-1]:",
        "x: \tat kafka.Foo.bar(Foo.scala:1)",
        "pod-1 kafka: java.lang.IllegalStateException: boom",
        "java.lang.IllegalStateException: boom: again",
        "Caused by: java.io.IOException",
        "\t... 3 more",
        "   ",
        "",
        "kafka_1  | \tat kafka.Foo.bar(Foo.scala:1)",
        "not a continuation: plain words",
        "ends with a colon:",
        "a | b ] c",
    ]
    lines = []
    for t in tricky:
        lines += [GOOD[1], t, "\tat kafka.After(After.scala:2)"]
    log = tmp_path / "logs" / "state-change.log"
    log.parent.mkdir()
    log.write_text("\n".join(lines) + "\n")
    ids = FileIds.of((str(log),), "dir")
    frame, _ = stored_parse(spark, ids.listing())
    got = {r["line"]: r for r in frame.collect()}
    expected = list(parse_file(log, str(log)))
    first: dict[int, str] = {}
    for e in expected:
        if e.status == "continuation" and e.owner is not None:
            first.setdefault(e.owner, e.text)
    assert len(got) == len(expected)
    for e in expected:
        row = got[e.line]
        assert (row["status"], row["reason"], row["owner"]) == (e.status, e.reason, e.owner), (e.line, e.text)
        if e.status == "record":
            assert row["exception"] == first.get(e.line), e.line
