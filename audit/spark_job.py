"""The audit's Spark side: find the inputs, number every physical line, parse on the JVM, quarantine.

* ``expand_inputs`` — files and directories (recursive) → Kafka log files and JSONL trace files; a file found
  under a directory is skipped only when it is hidden or plainly not a log by its name (``not_a_log``: a
  README, ``.md``, ``.json``, …), and every skipped file is reported with why; a file named directly is always
  audited (what is not a log is then quarantined line by line).
* ``raw_lines`` / ``split_offsets`` / ``with_line_numbers`` (together ``numbered_lines``) — ``spark.read.text``
  plus a line number per physical line, computed without collecting the corpus: rows of one file split are
  consecutive ``monotonically_increasing_id`` values, so ``line = id − first id of the split + lines in the
  earlier splits of the file + 1`` (the per-split counts are a tiny table, ``offsets_table``). Gzip files are
  one split. The pipeline parses ``raw_lines`` and numbers the stored result, so the corpus is read once.
* ``stored_parse`` — what the audit keeps of every line (``jvm_parser.stored_schema``; the audit's rows cross
  the log rules' shuffle, ``replay.shuffled``, and are written nowhere else): file and history ids,
  line number, status, the timestamp as a long, kind, the fields replay reads, the text of non-records. One
  pass reads whole files (``LineParser.readStored``: line numbers counted while reading, wrapped records
  re-joined, continuation lines attached to their record, a record's first continuation line kept with it as
  its exception, a broken compressed file read up to the break). There is no other parser of Kafka logs
  (``ParserUnavailable`` without the JVM line parser).
* ``parse_kafka`` — layout, template and fields of each line of a text column, by the same JVM line parser.
* ``resolve_non_records`` — after ``parse_kafka`` (line by line): continuation lines are attached to the
  record above them; blank lines are parsed; the rest is quarantined with a reason. Only non-record lines take
  part (a small set). The stored parse resolves them itself, while reading.
* ``decode_trace_lines`` / ``trace_parts`` — JSONL trace lines → a status per line and facts (Python UDF: the
  codec is Python; traces are small).
"""

from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kcspec.audit import jvm_parser, stats, traces
from kcspec.model.kafka_log import lines as g
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

TRACE_SUFFIXES = tuple(
    f".{kind}{codec}" for kind in ("jsonl", "ndjson") for codec in ("", ".gz", ".bz2", ".xz", ".lz4", ".zst")
)
"""Names ``--format auto`` takes for JSONL traces: a compression suffix is allowed, but what decompresses a
trace is its first bytes (``salvage``), never this name."""
FORMATS = ("auto", "kafka-log", "jsonl")


class InputError(ValueError):
    """Bad input paths: the message names the path and what is wrong."""


@dataclass(frozen=True)
class Inputs:
    kafka_logs: tuple[str, ...]
    traces: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    """Files under a directory that are not audited, each with why (hidden, or ``not_a_log``): reported to the
    user on the terminal, in ``stats.json`` and in the summary's file table, never dropped silently."""
    unreadable: tuple[tuple[str, str], ...] = ()
    """Folders and files that could not be listed or read, each with why: the rest is audited, and the run is
    not clean (``verdict.judge``'s ``unaudited``: exit 2 naming them, unless violations were found)."""


HIDDEN = "hidden file"
NOT_LOG_SUFFIXES = (
    ".md",
    ".markdown",
    ".rst",
    ".adoc",
    ".html",
    ".htm",
    ".pdf",
    ".json",
    ".yaml",
    ".yml",
    ".xml",
    ".toml",
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".svg",
)
"""Name endings of files that are documents, configuration or pictures, never log4j output nor JSONL traces
(``.json`` is one JSON document; traces are ``.jsonl``/``.ndjson``). ``.txt`` and ``.out`` are *not* here:
logs are often saved under those names."""
NOT_LOG_STEMS = ("readme", "license", "licence", "notice", "changelog")
"""Names (before any extension, any case) of the documents that travel with collected logs."""


def not_a_log(name: str) -> str | None:
    """Why a file found under a directory is plainly not a log, from its name alone; ``None``: audit it.

    Decision: such a file is skipped and reported (a README beside the logs would otherwise be quarantined line
    by line and make the run "not clean" for a reason that says nothing about the logs). Only names decide:
    anything else found is audited, and a file named directly on the command line is audited whatever its name.
    """
    lower = name.lower()
    for suffix in NOT_LOG_SUFFIXES:
        if lower.endswith(suffix) or lower.endswith(suffix + ".gz"):
            return f"not a log by its name ({suffix} file); name it directly to audit it"
    stem = lower.split(".", 1)[0]
    if stem in NOT_LOG_STEMS and not lower.endswith((".log", ".log.gz")):
        return f"not a log by its name (a {stem.upper()} document); name it directly to audit it"
    return None


def expand_inputs(paths: list[str], fmt: str = "auto") -> Inputs:
    """Files named directly, and the files under named directories that are not skipped, split by format.

    Under a directory, hidden files (a path part starting with ``.``: ``.git/…``, editor swap files) and files
    that are plainly not logs by their name (``not_a_log``) are not audited; they are listed with the reason
    in ``Inputs.skipped`` so the caller can say so. A file named directly is always audited: one that is not a
    Kafka log has its lines quarantined with a reason.
    """
    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    logs: list[str] = []
    trs: list[str] = []
    skipped: list[tuple[str, str]] = []
    unreadable: list[tuple[str, str]] = []
    for given in paths:
        p = Path(given)
        if not p.exists():
            raise InputError(f"{given}: no such file or directory")
        files = [p] if p.is_file() else _files_under(p, unreadable)
        if p.is_dir():
            kept: list[Path] = []
            for f in files:
                hidden = any(part.startswith(".") for part in f.relative_to(p).parts)
                why = HIDDEN if hidden else not_a_log(f.name)
                if why is None:
                    kept.append(f)
                else:
                    skipped.append((str(f.resolve()), why))
            files = kept
        for f in files:
            is_trace = fmt == "jsonl" or (fmt == "auto" and f.name.lower().endswith(TRACE_SUFFIXES))
            (trs if is_trace else logs).append(str(f.resolve()))
    if not logs and not trs:
        also = f" ({len(skipped)} skipped: {skipped[0][1]})" if skipped else ""
        also += "".join(f"; {name}: {why}" for name, why in unreadable[:3])
        raise InputError(f"{', '.join(paths)}: no input files found{also}")
    return Inputs(
        tuple(dict.fromkeys(logs)),
        tuple(dict.fromkeys(trs)),
        tuple(dict.fromkeys(skipped)),
        tuple(dict.fromkeys(unreadable)),
    )


def _files_under(top: Path, unreadable: list[tuple[str, str]]) -> list[Path]:
    """The files under ``top``, sorted; a folder that cannot be listed is added to ``unreadable`` with the
    reason (``Path.rglob`` passes over it in silence: a false "clean")."""

    def failed(err: OSError) -> None:
        where = str(Path(err.filename).resolve()) if err.filename else str(top.resolve())
        unreadable.append((where, f"folder not readable ({err.strerror or err})"))

    found = [Path(root) / name for root, _, names in os.walk(top, onerror=failed) for name in names]
    return sorted(f for f in found if f.is_file())


def display_name(uri: str) -> str:
    """The local path of a ``file:`` URI (other schemes are kept as they are)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def raw_lines(spark: SparkSession, files: tuple[str, ...]) -> DataFrame:
    """``(text, uri, block, rid)`` for every physical line: ``rid`` increases by one along a file split."""
    return spark.read.text(list(files)).select(
        F.col("value").alias("text"),
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("rid"),
    )


def split_offsets(spark: SparkSession, raw: DataFrame, history_key: str = "cluster") -> DataFrame:
    """A small table ``(uri, block, base, file, history)``: ``line = rid − base + 1`` (only counts are collected).

    ``history`` names the cluster history a file belongs to (``history_of``).
    """
    splits = (
        raw.groupBy("uri", "block").agg(F.count(F.lit(1)).alias("n"), F.min("rid").alias("first")).collect()
    )
    table = {(str(r["uri"]), int(r["block"])): (int(r["n"]), int(r["first"])) for r in splits}
    return offsets_table(spark, table, history_key)


HISTORY_KEYS = ("cluster", "dir", "file")
"""What one cluster's history is: every file given (``cluster``, the default: one history per partition and
replica, ordered by timestamp across brokers and files), each directory (``dir``), or each file (``file``)."""


def history_of(name: str, history_key: str) -> str:
    """The history a file belongs to: the one cluster (``cluster``), its directory (``dir``), the file (``file``)."""
    if history_key not in HISTORY_KEYS:
        raise ValueError(f"history key {history_key!r}: expected one of {', '.join(HISTORY_KEYS)}")
    if history_key == "cluster":
        return ""
    return name if history_key == "file" else name.rsplit("/", 1)[0]


def offsets_table(
    spark: SparkSession, splits: dict[tuple[str, int], tuple[int, int]], history_key: str = "cluster"
) -> DataFrame:
    """``split_offsets`` from ``(uri, block) → (lines, first rid)`` of every file split."""
    per_file: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for (uri, block), (n, first) in splits.items():
        per_file[uri].append((block, n, first))
    table: list[tuple[str, int, int, str, str]] = []
    for uri, items in per_file.items():
        offset = 0
        name = display_name(uri)
        history = history_of(name, history_key)
        for block, n, first in sorted(items):
            table.append((uri, block, first - offset, name, history))
            offset += n
    return spark.createDataFrame(table, "uri string, block long, base long, file string, history string")


def with_line_numbers(df: DataFrame, offsets: DataFrame) -> DataFrame:
    """``df`` (with ``uri``, ``block``, ``rid``) with ``file``, ``line`` and ``history`` in their place."""
    rest = [c for c in df.columns if c not in ("uri", "block", "rid")]
    return df.join(F.broadcast(offsets), ["uri", "block"]).select(
        "file", (F.col("rid") - F.col("base") + 1).alias("line"), "history", *rest
    )


def numbered_lines(spark: SparkSession, files: tuple[str, ...], history_key: str = "cluster") -> DataFrame:
    """``(file, line, history, text)`` for every physical line of ``files``; ``line`` starts at 1."""
    raw = raw_lines(spark, files)
    return with_line_numbers(raw, split_offsets(spark, raw, history_key))


class ParserUnavailable(RuntimeError):
    """The Spark session cannot load the JVM line parser (``jvm_parser.status`` says why): the audit does not run.

    Decision: there is one way Kafka logs are read and parsed — ``LineParser.readStored``, which numbers lines
    while reading, re-joins records wrapped over several lines and audits a broken compressed file up to the
    break. The Spark-expression parser that stood in without ``javac`` did neither, so the same logs gave
    another audit; it is gone, and a machine without a JDK gets this error (exit 2) instead."""


def stored_parse(
    spark: SparkSession, files: list[tuple[str, int, int]]
) -> tuple[DataFrame, Callable[[], list[stats.Cell]]]:
    """The stored parse of ``files`` (path, file id, history id): ``jvm_parser.stored_schema`` columns.

    The files are read and parsed by ``LineParser.readStored`` in one pass, line numbers counted while reading,
    and the statistics' cells counted on the way: the second item, called after the DataFrame has been computed
    (once), returns them. ``ParserUnavailable`` when the session cannot load the parser."""
    if not jvm_parser.available(spark):
        raise ParserUnavailable(jvm_parser.status(spark))
    frame, cube = jvm_parser.read_stored(spark, files, reading_tasks(spark, [p for p, _, _ in files]))
    return frame, lambda: stats.cells_from_text(jvm_parser.cube_text(cube))


TASK_BYTES = 64 << 20
"""About how many bytes of input one reading task of ``stored_parse`` reads (Spark's own
``spark.sql.files.maxPartitionBytes`` default is 128 MiB)."""


def reading_tasks(spark: SparkSession, paths: list[str]) -> int:
    """How many tasks ``stored_parse`` reads ``paths`` in: four per core, more when the input's bytes ask for
    more (``TASK_BYTES`` each), never more than files (a task reads whole files).

    Decision (measured): by bytes, not by files. One task per four files made 1,250 tasks of a folder of
    5,000 hourly-rotated files (876,000 lines, 200 MB), each paying Spark's scheduling and a task's set-up for
    a few small files; 8 tasks (local[2]) read the same files whole, in sequence within a task."""
    cores = max(1, spark.sparkContext.defaultParallelism)
    size = 0
    for p in paths:
        with contextlib.suppress(OSError):  # read, and reported, by the reader itself
            size += os.path.getsize(p)
    return max(1, min(len(paths), max(cores * 4, -(-size // TASK_BYTES))))


def parse_kafka(lines: DataFrame) -> DataFrame:
    """Records with layout, kind, template and typed fields; other lines with status ``nolayout``: the grammar
    of ``lines`` evaluated by ``jvm_parser.LineParser``, one JVM call per line of the string column ``text``
    (other columns carried along). Line by line: no re-joining of wrapped records (``stored_parse`` does that);
    the benchmark's ceiling and the tests use it. ``ParserUnavailable`` when the session cannot load it."""
    spark = lines.sparkSession
    if not jvm_parser.available(spark):
        raise ParserUnavailable(jvm_parser.status(spark))
    keep = [c for c in lines.columns if c != "text"]
    parsed = lines.select(*keep, "text", jvm_parser.parse_column(spark, F.col("text")).alias("_p"))
    out = [*jvm_parser.HEAD_COLUMNS, *g.ALL_FIELDS, "status"]
    return parsed.select(*keep, "text", *[F.col("_p")[c].alias(c) for c in out])


def resolve_non_records(parsed: DataFrame, file: str = "file") -> DataFrame:
    """``(file, line, text, status, reason, detail, owner)`` for every line that is not a plain record.

    Status ``blank``, ``continuation`` (``owner`` = the record's line) or ``quarantined`` (``reason``).
    A run of consecutive continuation/blank lines belongs to the line just before the run when that
    line is a record; a quarantined record's continuation lines are quarantined with it. ``file`` names
    the column that identifies the file (the stored parse's ``fid``), kept under that name.
    """
    odd = parsed.where(F.col("status") != "record").select(
        file,
        "line",
        "text",
        "status",
        "reason",
        (
            (F.col("status") == "nolayout")
            & (
                F.col("text").rlike(g.BLANK_REGEX)
                | F.col("text").rlike(g.CONTINUATION_REGEX)
                | F.coalesce(F.col("reason") == jvm_parser.WRAPPED, F.lit(False))
            )
        ).alias("attachable"),
        F.col("text").rlike(g.BLANK_REGEX).alias("blank"),
    )
    w = Window.partitionBy(file).orderBy("line")
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
    owner = F.first("head_owner").over(Window.partitionBy(file, "run").orderBy("line"))
    res = with_run.withColumn("owner", F.when(F.col("attachable"), owner)).withColumn(
        # a run that starts at the file's first line: nothing but blank and continuation lines before it
        "run_first",
        F.min("line").over(Window.partitionBy(file, "run")),
    )
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
        .when(F.col("attachable") & (F.col("run_first") == 1), g.ORPHAN_AT_START)
        .when(F.col("attachable"), g.ORPHAN_REASONS[0])
        .when(F.col("text").rlike(g.CONTAINER_PREFIX_REGEX), g.OUT_OF_SCOPE)
        .otherwise("no-layout")
    )
    return res.select(
        file,
        "line",
        "text",
        status.alias("status"),
        reason.alias("reason"),
        F.when(F.col("reason").isin(*jvm_parser.BROKEN_REASONS), F.col("text")).alias("detail"),
        F.when(~F.col("blank") | F.col("owner").isNotNull(), F.col("owner")).alias("owner"),
    )


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


def decode_trace_lines(lines: DataFrame) -> DataFrame:
    """``(file, line, text, status, reason, detail, facts)`` for every JSONL trace line: status ``record``
    (decoded: ``facts``), ``blank``, or ``quarantined`` (reason ``bad-trace-line``, the codec's message as
    ``detail``). The text is kept for lines that are not records only. Store it once: the decoder is Python."""
    udf = F.udf(_decode, TRACE_RESULT, useArrow=False)
    decoded = lines.withColumn("_d", udf("text", "file", "line"))
    blank = F.trim(F.col("text")) == ""
    bad = ~blank & F.col("_d.error").isNotNull()
    return decoded.select(
        "file",
        "line",
        F.when(blank | bad, F.col("text")).alias("text"),
        F.when(blank, "blank").when(bad, "quarantined").otherwise("record").alias("status"),
        F.when(bad, F.lit("bad-trace-line")).alias("reason"),
        F.when(bad, F.col("_d.error")).alias("detail"),
        F.col("_d.facts").alias("facts"),
    )


def trace_parts(decoded: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``(facts, non_records)`` of ``decode_trace_lines``'s rows."""
    facts = decoded.select("file", "line", F.explode("facts").alias("f")).select("file", "line", "f.*")
    non_records = decoded.where(F.col("status") != "record").select(
        "file", "line", "text", "status", "reason", "detail", F.lit(None).cast("long").alias("owner")
    )
    return facts, non_records


def decode_traces(lines: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``(facts, non_records)`` of JSONL trace lines; bad lines are quarantined with the codec's message."""
    return trace_parts(decode_trace_lines(lines))
