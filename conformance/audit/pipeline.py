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

from kcspec.conformance.audit import jvm_parser, replay, report, stats
from kcspec.conformance.audit.spark_job import (
    Inputs,
    decode_traces,
    display_name,
    exceptions_of,
    history_of,
    numbered_lines,
    offsets_table,
    parse_kafka,
    raw_lines,
    resolve_non_records,
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
STORED_COLUMNS = (
    "uri",
    "block",
    "rid",
    "status",
    "reason",
    "ts",
    "kind",
    "controller_id",
    "controller_epoch",
    "broker",
    "replica",
    "topic",
    "partition",
    "from_state",
    "to_state",
    "leader",
    "leader_epoch",
    "isr",
    "topics",
)
"""Columns of the parse kept in ``work/parsed.parquet`` (besides the text of lines that are not records)."""
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
    cells: list[stats.Cell] = []
    if inputs.kafka_logs:
        step(f"parsing {len(inputs.kafka_logs)} Kafka log file(s) with the {jvm_parser.status(spark)}")
        parsed_raw = parse_kafka(raw_lines(spark, inputs.kafka_logs))
        # stored once, with what replay and statistics read: other lines keep their text
        parsed_raw.select(
            *STORED_COLUMNS, F.when(F.col("status") != "record", F.col("text")).alias("text")
        ).write.parquet(uri("parsed.parquet"))
        stored = spark.read.parquet(uri("parsed.parquet"))
        step("counting lines per file split, kind, broker and controller epoch")
        cells = stats.line_cube(stored)
        parsed = with_line_numbers(stored, offsets_table(spark, stats.split_table(cells), history_key))
        step("attaching continuation lines, quarantining the rest")
        resolve_non_records(parsed).write.parquet(uri("non_records.parquet"))
        nr = spark.read.parquet(uri("non_records.parquet"))
        non_records.append(nr)
        records = parsed.where(F.col("status") == "record")
        events = records.where(F.col("kind").isin(*EVENT_KINDS)).drop("text")
        records_per_file = stats.record_counts(cells, display_name)
        per_file.append(spark.createDataFrame(sorted(records_per_file.items()), "file string, record long"))
        per_file.append(nr.groupBy("file").pivot("status", ["continuation", "blank", "quarantined"]).count())
        step(f"replaying {len(inputs.kafka_logs)} log file(s) against profile {profile.name}")
        firsts = stats.epoch_firsts(
            cells, replay.ACTING_KINDS, lambda u: history_of(display_name(u), history_key)
        )
        violations.append(replay.log_rules(spark, events, profile, exceptions_of(nr), firsts))
        edges = {m: stats.edge_counts(cells, m) for m in edges}
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
    by_rule: dict[str, int] = {}
    v_broker: dict[int, int] = {}
    v_epoch: dict[int, int] = {}
    for r in vdf.groupBy("rule", "controller_id", "controller_epoch").count().collect():
        n = int(r["count"])
        by_rule[str(r["rule"])] = by_rule.get(str(r["rule"]), 0) + n
        if r["controller_id"] is not None:
            v_broker[int(r["controller_id"])] = v_broker.get(int(r["controller_id"]), 0) + n
        if r["controller_epoch"] is not None:
            v_epoch[int(r["controller_epoch"])] = v_epoch.get(int(r["controller_epoch"]), 0) + n
    summary = report.Summary(
        lines_read=lines_read,
        parsed=lines_read - n_quar,
        quarantined=n_quar,
        violations=n_viol,
        per_file=files,
        kinds=stats.kind_counts(cells, EVENT_KINDS) if events is not None else {},
        by_rule=by_rule,
        by_reason=report.count_map(qdf, "reason"),
        per_broker=stats.per_broker(cells, v_broker),
        per_epoch=stats.per_epoch(cells, EVENT_KINDS, v_epoch) if events is not None else [],
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


def _file_stats(parts: list[DataFrame]) -> list[dict[str, Any]]:
    acc: dict[str, dict[str, int]] = {}
    for df in parts:
        for r in df.collect():
            d = acc.setdefault(r["file"], {"record": 0, "continuation": 0, "blank": 0, "quarantined": 0})
            for k in d:
                if k in r.asDict() and r[k] is not None:
                    d[k] += int(r[k])
    return [{"file": f, "lines": sum(d.values()), **d} for f, d in sorted(acc.items())]
