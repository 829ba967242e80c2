"""The audit's Spark side: find the inputs, number every physical line, parse on the JVM, quarantine.

* ``expand_inputs`` — files and directories (recursive) → Kafka log files and JSONL trace files.
* ``numbered_lines`` — ``spark.read.text`` plus a line number per physical line, computed without
  collecting the corpus: rows of one file split are consecutive ``monotonically_increasing_id`` values,
  so ``line = id − first id of the split + lines in the earlier splits of the file + 1`` (the per-split
  counts are a tiny table). Gzip files are one split.
* ``parse_kafka`` — layout, template and fields with built-in expressions only (``rlike`` to choose,
  one ``regexp_replace`` per line to pull all groups of the chosen template at once).
* ``resolve_non_records`` — continuation lines are attached to the record above them; blank lines
  are parsed; the rest is quarantined with a reason. Only non-record lines take part (a small set).
* ``decode_traces`` — JSONL trace lines → facts (Python UDF: the codec is Python; traces are small).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kcspec.conformance.audit import lines as g
from kcspec.conformance.audit import traces
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

SEP = "\u0001"
TRACE_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
FORMATS = ("auto", "kafka-log", "jsonl")


class InputError(ValueError):
    """Bad input paths: the message names the path and what is wrong."""


@dataclass(frozen=True)
class Inputs:
    kafka_logs: tuple[str, ...]
    traces: tuple[str, ...]


def expand_inputs(paths: list[str], fmt: str = "auto") -> Inputs:
    """Files named directly, and every non-hidden file under named directories, split by format."""
    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    logs: list[str] = []
    trs: list[str] = []
    for given in paths:
        p = Path(given)
        if not p.exists():
            raise InputError(f"{given}: no such file or directory")
        files = (
            [p]
            if p.is_file()
            else sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        )
        for f in files:
            if f.suffix.lower() in (".md", ".txt") and p.is_dir():
                continue
            is_trace = fmt == "jsonl" or (fmt == "auto" and f.name.lower().endswith(TRACE_SUFFIXES))
            (trs if is_trace else logs).append(str(f.resolve()))
    if not logs and not trs:
        raise InputError(f"{', '.join(paths)}: no input files found")
    return Inputs(tuple(dict.fromkeys(logs)), tuple(dict.fromkeys(trs)))


def display_name(uri: str) -> str:
    """The local path of a ``file:`` URI (other schemes are kept as they are)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def numbered_lines(spark: SparkSession, files: tuple[str, ...]) -> DataFrame:
    """``(file, line, text)`` for every physical line of ``files``; ``line`` starts at 1."""
    raw = spark.read.text(list(files)).select(
        F.col("value").alias("text"),
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("rid"),
    )
    splits = (
        raw.groupBy("uri", "block").agg(F.count(F.lit(1)).alias("n"), F.min("rid").alias("first")).collect()
    )
    per_file: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for row in splits:
        per_file[row["uri"]].append((int(row["block"]), int(row["n"]), int(row["first"])))
    table: list[tuple[str, int, int, str]] = []
    for uri, items in per_file.items():
        offset = 0
        for block, n, first in sorted(items):
            table.append((uri, block, first - offset, display_name(uri)))
            offset += n
    schema = "uri string, block long, base long, file string"
    offsets = spark.createDataFrame(table, schema) if table else spark.createDataFrame([], schema)
    return raw.join(F.broadcast(offsets), ["uri", "block"]).select(
        "file", (F.col("rid") - F.col("base") + 1).alias("line"), "text"
    )


def _chain(pairs: list[tuple[Column, Any]]) -> Column:
    expr: Column | None = None
    for cond, value in pairs:
        v = value if isinstance(value, Column) else F.lit(value)
        expr = F.when(cond, v) if expr is None else expr.when(cond, v)
    assert expr is not None
    return expr


def parse_kafka(lines: DataFrame) -> DataFrame:
    """Records with layout, kind, template and typed fields; other lines with status ``nolayout``."""
    text = F.col("text")
    layout = _chain([(text.rlike(lay.regex), lay.name) for lay in g.LAYOUTS])
    head = _chain(
        [
            (
                F.col("layout") == lay.name,
                F.split(F.regexp_replace(text, lay.regex, g.group_replacement(4, SEP)), SEP),
            )
            for lay in g.LAYOUTS
        ]
    )
    df = (
        lines.withColumn("layout", layout)
        .withColumn("_h", head)
        .select(
            "file",
            "line",
            "text",
            "layout",
            F.col("_h")[0].alias("ts"),
            F.col("_h")[1].alias("level"),
            F.col("_h")[2].alias("message"),
            F.col("_h")[3].alias("logger"),
        )
    )
    msg = F.col("message")
    tid = _chain([(msg.contains(t.marker) & msg.rlike(t.regex), i) for i, t in enumerate(g.TEMPLATES)])
    groups = _chain(
        [
            (
                F.col("tid") == i,
                F.split(F.regexp_replace(msg, t.regex, g.group_replacement(len(t.fields), SEP)), SEP),
            )
            for i, t in enumerate(g.TEMPLATES)
        ]
    )
    df = df.withColumn("tid", tid).withColumn("_g", groups)
    controller_side = (F.col("logger") == g.STATE_CHANGE_LOGGER) & msg.rlike(g.CONTROLLER_SIDE_STATE_CHANGE)
    ctrl_prefix = F.regexp_extract(msg, g.CONTROLLER_ID_PREFIX, 1)
    broker_prefix = F.concat(
        F.regexp_extract(msg, g.BROKER_ID_PREFIX, 1), F.regexp_extract(msg, g.BROKER_ID_PREFIX, 2)
    )
    kind = (
        F.when(F.col("layout").isNull(), F.lit(None))
        .when(
            F.col("tid").isNotNull(), _chain([(F.col("tid") == i, t.kind) for i, t in enumerate(g.TEMPLATES)])
        )
        .when(controller_side, F.lit(None))
        .when(ctrl_prefix != "", F.lit("controller_message"))
        .when(broker_prefix != "", F.lit("broker_message"))
        .otherwise(F.lit("other_message"))
    )
    reason = F.when(
        F.col("layout").isNotNull() & F.col("tid").isNull() & controller_side,
        F.when(msg.rlike(g.LEGACY_CONTROLLER_SIDE), "legacy-state-change").otherwise("unknown-state-change"),
    )
    template = _chain([(F.col("tid") == i, t.name) for i, t in enumerate(g.TEMPLATES)])
    cols: list[Column] = []
    for name in g.ALL_FIELDS:
        value = _field(name)
        if name == "controller_id":
            value = F.coalesce(
                value, F.when(F.col("tid").isNull() & (ctrl_prefix != ""), ctrl_prefix.cast("int"))
            )
        if name == "broker":
            value = F.coalesce(
                value, F.when(F.col("tid").isNull() & (broker_prefix != ""), broker_prefix.cast("int"))
            )
        cols.append(value.alias(name))
    status = (
        F.when(F.col("layout").isNull(), "nolayout")
        .when(F.col("reason").isNotNull(), "quarantined")
        .otherwise("record")
    )
    return (
        df.withColumn("kind", kind)
        .withColumn("reason", reason)
        .withColumn("template", template)
        .select(
            "file",
            "line",
            "text",
            "layout",
            "ts",
            "level",
            "logger",
            "message",
            "kind",
            "template",
            "reason",
            *cols,
        )
        .withColumn("status", status)
    )


def _field(name: str) -> Column:
    pairs: list[tuple[Column, Column]] = []
    for i, t in enumerate(g.TEMPLATES):
        positions = [k for k, f in enumerate(t.fields) if f == name]
        if not positions:
            continue
        raw = [F.col("_g")[k] for k in positions]
        if name in g.LIST_FIELDS:
            value = F.regexp_replace(raw[0], " ", "")
        else:
            value = (
                F.coalesce(*[F.when(r != "", r) for r in raw])
                if len(raw) > 1
                else F.when(raw[0] != "", raw[0])
            )
        pairs.append((F.col("tid") == i, value))
    col = _chain(pairs) if pairs else F.lit(None)
    return col.cast("int") if name in g.INT_FIELDS else col.cast("string")


def resolve_non_records(parsed: DataFrame) -> DataFrame:
    """``(file, line, text, status, reason, detail, owner)`` for every line that is not a plain record.

    Status ``blank``, ``continuation`` (``owner`` = the record's line) or ``quarantined`` (``reason``).
    A run of consecutive continuation/blank lines belongs to the line just before the run when that
    line is a record; a quarantined record's continuation lines are quarantined with it.
    """
    odd = parsed.where(F.col("status") != "record").select(
        "file",
        "line",
        "text",
        "status",
        "reason",
        (
            (F.col("status") == "nolayout")
            & (F.col("text").rlike(g.BLANK_REGEX) | F.col("text").rlike(g.CONTINUATION_REGEX))
        ).alias("attachable"),
        F.col("text").rlike(g.BLANK_REGEX).alias("blank"),
    )
    w = Window.partitionBy("file").orderBy("line")
    prev_line = F.lag("line").over(w)
    prev_att = F.lag("attachable").over(w)
    starts = odd.withColumn(
        "starts_run",
        ~((prev_line == F.col("line") - 1) & F.coalesce(prev_att, F.lit(False)) & F.col("attachable")),
    ).withColumn(
        # the line before a run start is a record exactly when it is not in this (non-record) set
        "head_owner",
        F.when(
            (F.col("line") > 1) & ((prev_line.isNull()) | (prev_line != F.col("line") - 1)), F.col("line") - 1
        ),
    )
    run = F.sum(F.col("starts_run").cast("int")).over(w.rowsBetween(Window.unboundedPreceding, 0))
    with_run = starts.withColumn("run", run)
    owner = F.first("head_owner").over(Window.partitionBy("file", "run").orderBy("line"))
    res = with_run.withColumn("owner", F.when(F.col("attachable"), owner))
    status = (
        F.when(F.col("status") == "quarantined", "quarantined")
        .when(F.col("attachable") & F.col("blank"), "blank")
        .when(F.col("attachable") & F.col("owner").isNotNull(), "continuation")
        .otherwise("quarantined")
    )
    reason = (
        F.when(F.col("status") == "quarantined", F.col("reason"))
        .when(F.col("attachable") & F.col("blank"), F.lit(None))
        .when(F.col("attachable") & F.col("owner").isNotNull(), F.lit(None))
        .when(F.col("attachable"), "orphan-continuation")
        .otherwise("no-layout")
    )
    return res.select(
        "file",
        "line",
        "text",
        status.alias("status"),
        reason.alias("reason"),
        F.lit(None).cast("string").alias("detail"),
        F.when(~F.col("blank") | F.col("owner").isNotNull(), F.col("owner")).alias("owner"),
    )


def attach_exceptions(records: DataFrame, non_records: DataFrame) -> DataFrame:
    """Each record with ``exception`` (its first continuation line) and ``continuation_lines`` (count)."""
    cont = (
        non_records.where(F.col("status") == "continuation")
        .groupBy("file", "owner")
        .agg(F.min_by("text", "line").alias("exception"), F.count(F.lit(1)).alias("continuation_lines"))
        .withColumnRenamed("owner", "line")
    )
    return records.join(cont, ["file", "line"], "left")


_TYPES: dict[str, T.DataType] = {"string": T.StringType(), "long": T.LongType(), "int": T.IntegerType()}
FACT_SCHEMA = T.StructType([T.StructField(n, _TYPES[t]) for n, t in traces.FACT_FIELDS])
TRACE_RESULT = T.StructType(
    [
        T.StructField("facts", T.ArrayType(FACT_SCHEMA)),
        T.StructField("error", T.StringType()),
    ]
)


def _decode(text: str, file: str, line: int) -> tuple[list[tuple[Any, ...]], str | None]:
    if text.strip() == "":
        return [], None
    facts, error = traces.decode_line(text, "$")
    return [f.row() for f in facts], error


def decode_traces(lines: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``(facts, non_records)`` of JSONL trace lines; bad lines are quarantined with the codec's message."""
    udf = F.udf(_decode, TRACE_RESULT)
    decoded = lines.withColumn("_d", udf("text", "file", "line"))
    facts = decoded.select("file", "line", F.explode("_d.facts").alias("f")).select("file", "line", "f.*")
    blank = F.trim(F.col("text")) == ""
    non_records = decoded.where(F.col("_d.error").isNotNull() | blank).select(
        "file",
        "line",
        "text",
        F.when(blank, "blank").otherwise("quarantined").alias("status"),
        F.when(~blank, F.lit("bad-trace-line")).alias("reason"),
        F.when(~blank, F.col("_d.error")).alias("detail"),
        F.lit(None).cast("long").alias("owner"),
    )
    return facts, non_records
