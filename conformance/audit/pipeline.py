"""The whole audit, step by step: parse once to Parquet, then replay, count and report from there.

Intermediate tables live in ``<out>/work/`` (Parquet), so each input line is read and parsed once and
nothing of the corpus is collected to the driver: only aggregates (counts, per-epoch first timestamps,
per-split line counts) and bounded samples are.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kcspec.conformance.audit import replay, report
from kcspec.conformance.audit.spark_job import (
    Inputs,
    decode_traces,
    display_name,
    exceptions_of,
    numbered_lines,
    parse_kafka,
    raw_lines,
    resolve_non_records,
    split_offsets,
    with_line_numbers,
)
from kcspec.spec.profiles import PROFILES, Profile
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

EVENT_KINDS = (
    *replay.WRITE_KINDS,
    "controller_elected",
    "controller_ready",
    "resigned",
    "topic_deletion_queued",
    "topic_deletion_completed",
    "request_summary",
    "response_error",
    "replicas_marked_offline",
    "reassign_lair_failed",
    "election_started",
    "leader_elected",
    "state_machine_bulk",
)
TRANSITION_KINDS = (
    "replica_transition",
    "partition_transition",
    "replica_transition_failed",
    "partition_transition_failed",
)
SAMPLE = 20

Step = Callable[[str], None]


def run_audit(
    spark: SparkSession, inputs: Inputs, out: Path, profile: Profile, step: Step, history_key: str = "dir"
) -> report.Summary:
    """Run the audit; ``history_key`` ``dir`` treats each directory as one cluster's history, ``file`` each file."""
    work = out / "work"
    for old in ("work", "violations.parquet", "quarantine.parquet"):
        shutil.rmtree(out / old, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)

    def uri(name: str) -> str:
        return str((work / name).resolve())

    violations: list[DataFrame] = []
    non_records: list[DataFrame] = []
    per_file: list[DataFrame] = []
    events: DataFrame | None = None
    edges: dict[str, dict[tuple[str, str], int]] = {"replica": {}, "partition": {}}
    if inputs.kafka_logs:
        step(f"parsing {len(inputs.kafka_logs)} Kafka log file(s)")
        parsed_raw = parse_kafka(raw_lines(spark, inputs.kafka_logs))
        # stored once: a record's text and message are not needed again, other lines keep their text
        stored_cols = [c for c in parsed_raw.columns if c not in ("text", "message")]
        parsed_raw.select(
            *stored_cols, F.when(F.col("status") != "record", F.col("text")).alias("text")
        ).write.parquet(uri("parsed.parquet"))
        stored = spark.read.parquet(uri("parsed.parquet"))
        parsed = with_line_numbers(stored, split_offsets(spark, stored, history_key))
        step("attaching continuation lines, quarantining the rest")
        resolve_non_records(parsed).write.parquet(uri("non_records.parquet"))
        nr = spark.read.parquet(uri("non_records.parquet"))
        non_records.append(nr)
        records = parsed.where(F.col("status") == "record")
        events = records.where(F.col("kind").isin(*EVENT_KINDS)).drop("text")
        per_file.append(_record_counts(spark, stored))
        per_file.append(nr.groupBy("file").pivot("status", ["continuation", "blank", "quarantined"]).count())
        step(f"replaying {len(inputs.kafka_logs)} log file(s) against profile {profile.name}")
        violations.append(replay.log_rules(spark, events, profile, exceptions_of(nr)))
        tr = replay.transitions(events)
        edges = {m: report.edge_counts(tr, m) for m in edges}
    if inputs.traces:
        step(f"decoding {len(inputs.traces)} JSONL trace file(s)")
        facts, tnr = decode_traces(numbered_lines(spark, inputs.traces, history_key))
        facts.write.parquet(uri("facts.parquet"))
        tnr.write.parquet(uri("trace_non_records.parquet"))
        facts_df = spark.read.parquet(uri("facts.parquet"))
        tnr_df = spark.read.parquet(uri("trace_non_records.parquet"))
        non_records.append(tnr_df)
        lines = (
            numbered_lines(spark, inputs.traces, history_key)
            .groupBy("file")
            .agg(F.count(F.lit(1)).alias("n"))
        )
        odd = tnr_df.groupBy("file").pivot("status", ["continuation", "blank", "quarantined"]).count()
        per_file.append(
            lines.join(odd, "file", "left").select(
                "file",
                (F.col("n") - F.coalesce("blank", F.lit(0)) - F.coalesce("quarantined", F.lit(0))).alias(
                    "record"
                ),
            )
        )
        per_file.append(odd)
        step(f"replaying {len(inputs.traces)} trace file(s) against profile {profile.name}")
        violations.append(replay.trace_rules(facts_df, profile))

    step("writing violations")
    all_v = _union(violations).repartition(1, "file").sortWithinPartitions("file", "line", "rule")
    all_v.write.parquet(str((out / "violations.parquet").resolve()))
    vdf = spark.read.parquet(str((out / "violations.parquet").resolve())).orderBy("file", "line", "rule")
    n_viol = report.write_jsonl(vdf, out / "violations.jsonl")
    step("writing quarantine")
    quarantine = (
        _union(non_records)
        .where(F.col("status") == "quarantined")
        .select("file", "line", "reason", "detail", "text")
    )
    quarantine.write.parquet(str((out / "quarantine.parquet").resolve()))
    qdf = spark.read.parquet(str((out / "quarantine.parquet").resolve())).orderBy("file", "line")
    n_quar = report.write_jsonl(qdf, out / "quarantine.jsonl")

    step("statistics and coverage")
    files = _file_stats(per_file)
    lines_read = sum(f["lines"] for f in files)
    coverage: list[dict[str, Any]] = []
    if events is not None:
        for name in sorted(PROFILES):
            for machine in ("replica", "partition"):
                coverage.append(report.coverage_matrix(PROFILES[name], machine, edges[machine]))
    summary = report.Summary(
        lines_read=lines_read,
        parsed=lines_read - n_quar,
        quarantined=n_quar,
        violations=n_viol,
        per_file=files,
        kinds=report.count_map(events, "kind") if events is not None else {},
        by_rule=report.count_map(vdf, "rule"),
        by_reason=report.count_map(qdf, "reason"),
        per_broker=_per_broker(spark, out, vdf),
        per_epoch=_per_epoch(events, vdf),
        quarantine_sample=report.rows(qdf, SAMPLE),
        violation_sample=report.rows(vdf, SAMPLE),
        coverage=coverage,
    )
    report.write_outputs(
        out, summary, [(f"coverage-{m['profile']}-{m['machine']}.json", m) for m in coverage]
    )
    return summary


def _union(dfs: list[DataFrame]) -> DataFrame:
    result = dfs[0]
    for df in dfs[1:]:
        result = result.unionByName(df, allowMissingColumns=True)
    return result


def _record_counts(spark: SparkSession, stored: DataFrame) -> DataFrame:
    """``(file, record)`` from the stored parse (files by URI, named on the driver: no join over the corpus)."""
    counts = stored.where(F.col("status") == "record").groupBy("uri").count().collect()
    rows = [(display_name(str(r["uri"])), int(r["count"])) for r in counts]
    return spark.createDataFrame(rows, "file string, record long")


def _file_stats(parts: list[DataFrame]) -> list[dict[str, Any]]:
    acc: dict[str, dict[str, int]] = {}
    for df in parts:
        for r in df.collect():
            d = acc.setdefault(r["file"], {"record": 0, "continuation": 0, "blank": 0, "quarantined": 0})
            for k in d:
                if k in r.asDict() and r[k] is not None:
                    d[k] += int(r[k])
    return [{"file": f, "lines": sum(d.values()), **d} for f, d in sorted(acc.items())]


def _per_broker(spark: SparkSession, out: Path, vdf: DataFrame) -> list[dict[str, Any]]:
    work = str((out / "work" / "parsed.parquet").resolve())
    if not (out / "work" / "parsed.parquet").exists():
        return []
    parsed = spark.read.parquet(work).where(F.col("status") == "record")  # stored parse: no file/line
    who = F.coalesce(F.col("controller_id"), F.col("broker"))
    stats = (
        parsed.where(who.isNotNull())
        .groupBy(who.alias("broker"))
        .agg(
            F.count(F.lit(1)).alias("records"),
            F.sum(F.col("kind").isin(*TRANSITION_KINDS).cast("int")).alias("transitions"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
    )
    v = (
        vdf.where(F.col("controller_id").isNotNull())
        .groupBy(F.col("controller_id").alias("broker"))
        .agg(F.count(F.lit(1)).alias("violations"))
    )
    return [
        dict(r.asDict(), violations=r["violations"] or 0)
        for r in stats.join(v, "broker", "left").orderBy("broker").collect()
    ]


def _per_epoch(events: DataFrame | None, vdf: DataFrame) -> list[dict[str, Any]]:
    if events is None:
        return []
    stats = (
        events.where(F.col("controller_epoch").isNotNull())
        .groupBy("controller_epoch")
        .agg(
            F.array_sort(F.collect_set("controller_id")).alias("controllers"),
            F.count(F.lit(1)).alias("records"),
            F.sum(F.col("kind").isin(*TRANSITION_KINDS).cast("int")).alias("transitions"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
    )
    v = (
        vdf.where(F.col("controller_epoch").isNotNull())
        .groupBy("controller_epoch")
        .agg(F.count(F.lit(1)).alias("violations"))
    )
    return [
        dict(r.asDict(), violations=r["violations"] or 0)
        for r in stats.join(v, "controller_epoch", "left").orderBy("controller_epoch").collect()
    ]
