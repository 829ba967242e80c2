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
* ``stored_parse`` — what the audit stores of every line (``jvm_parser.stored_schema``): file and history ids,
  line number, status, the timestamp as a long, kind, the fields replay reads, the text of non-records. With
  the JVM parser one pass reads whole files (``LineParser.readStored``, line numbers counted while reading);
  otherwise Spark's text source is read twice (split counts, then ``parse_kafka_expressions``).
* ``parse_kafka`` — layout, template and fields: by the JVM line parser (``jvm_parser``) when the session has
  it, else (``parse_kafka_expressions``) with built-in expressions only, in small compiled stages (the layout
  by one ``regexp_replace``, ``startswith``/``contains`` to pick the one template regex to try, one
  ``regexp_replace`` per line to render all fields of the matched template at once). Same rows either way.
* ``resolve_non_records`` — continuation lines are attached to the record above them; blank lines
  are parsed; the rest is quarantined with a reason. Only non-record lines take part (a small set).
* ``decode_trace_lines`` / ``trace_parts`` — JSONL trace lines → a status per line and facts (Python UDF: the
  codec is Python; traces are small).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from kcspec.conformance.audit import jvm_parser, stats, traces
from kcspec.conformance.audit import lines as g
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

SEP = g.SEPARATOR
TRACE_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
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
    for given in paths:
        p = Path(given)
        if not p.exists():
            raise InputError(f"{given}: no such file or directory")
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
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
        raise InputError(f"{', '.join(paths)}: no input files found{also}")
    return Inputs(tuple(dict.fromkeys(logs)), tuple(dict.fromkeys(trs)), tuple(dict.fromkeys(skipped)))


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


def stored_parse(
    spark: SparkSession, files: list[tuple[str, int, int]], engine: str = "auto"
) -> tuple[DataFrame, Callable[[], list[stats.Cell]] | None]:
    """The stored parse of ``files`` (path, file id, history id): ``jvm_parser.stored_schema`` columns.

    With the JVM parser (``engine`` ``auto`` when the session has it, or ``jvm``) the files are read and parsed
    by ``LineParser.readStored`` in one pass, line numbers counted while reading, and the statistics' cells
    counted on the way: the second item, called after the DataFrame has been computed (once), returns them.
    Otherwise (``spark``) Spark's text source reads the files twice: once to count the lines of every file
    split, once to parse them with ``parse_kafka_expressions`` and number them from those counts; the second
    item is then ``None`` (``stats.line_cube`` over the stored parse gives the cells)."""
    if engine not in PARSE_ENGINES:
        raise ValueError(f"parse engine {engine!r}: expected one of {', '.join(PARSE_ENGINES)}")
    if engine == "jvm" or (engine == "auto" and jvm_parser.available(spark)):
        slices = max(1, spark.sparkContext.defaultParallelism) * 4
        frame, cube = jvm_parser.read_stored(spark, files, min(len(files), max(slices, len(files) // 4)))
        return frame, lambda: stats.cells_from_text(jvm_parser.cube_text(cube))
    ids = {path: (fid, hid) for path, fid, hid in files}
    raw = raw_lines(spark, tuple(path for path, _, _ in files))
    splits = (
        raw.groupBy("uri", "block").agg(F.count(F.lit(1)).alias("n"), F.min("rid").alias("first")).collect()
    )
    table: list[tuple[str, int, int, int, int]] = []
    per_file: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for r in splits:
        per_file[str(r["uri"])].append((int(r["block"]), int(r["n"]), int(r["first"])))
    for uri, items in per_file.items():
        name = display_name(uri)
        if name not in ids:
            raise RuntimeError(f"Spark read {uri!r}, which names no input file ({name!r})")
        offset = 0
        for block, n, first in sorted(items):
            table.append((uri, block, first - offset, *ids[name]))
            offset += n
    offsets = spark.createDataFrame(table, "uri string, block long, base long, fid int, hid int")
    parsed = parse_kafka_expressions(raw).join(F.broadcast(offsets), ["uri", "block"])
    fields = [F.col(f) for f in jvm_parser.STORED_FIELDS]
    stored = parsed.select(
        "fid",
        "hid",
        (F.col("rid") - F.col("base") + 1).alias("line"),
        "status",
        "reason",
        stats.ts_key(F.col("ts")).alias("ts"),
        "kind",
        *fields,
        F.when(F.col("status") != "record", F.col("text")).alias("text"),
        "layout",
    )
    return stored, None


def _chain(pairs: list[tuple[Column, Any]]) -> Column:
    expr: Column | None = None
    for cond, value in pairs:
        v = value if isinstance(value, Column) else F.lit(value)
        expr = F.when(cond, v) if expr is None else expr.when(cond, v)
    assert expr is not None
    return expr


def _normalised_ts(ts: Column) -> Column:
    """``lines.normalise_ts`` as a column: the digits, ``0``-padded to milliseconds, as ``yyyy-MM-dd HH:mm:ss,SSS``."""
    d = F.rpad(F.regexp_replace(ts, "[^0-9]", ""), 17, "0")
    parts: list[Column] = []
    for sep, (start, width) in zip(
        ("", "-", "-", " ", ":", ":", ","),
        ((1, 4), (5, 2), (7, 2), (9, 2), (11, 2), (13, 2), (15, 3)),
        strict=True,
    ):
        parts += [F.lit(sep), F.substring(d, start, width)]
    return F.concat(*parts)


def _layout_render(layout: g.Layout, shift: int) -> str:
    """A replacement rendering ``SEP`` name ``SEP`` ts ``SEP`` level ``SEP`` message ``SEP`` logger (a part the
    layout does not have is empty; ``shift`` prefix groups come first)."""
    name = layout.name + (g.PREFIXED if shift else "")
    order = ("ts", "level", "message", "logger")
    return (
        SEP + name + SEP + SEP.join(f"${layout.group(r) + shift}" if layout.group(r) else "" for r in order)
    )


def _split_layout(df: DataFrame) -> DataFrame:
    """Stage 1: ``layout, ts, level, message, logger`` of a line (``text``), or nulls when no layout matches.

    The layouts of ``lines.LAYOUTS`` are tried in order on the whole line, then after a line prefix
    (``lines.PREFIX_REGEX``), as ``reference_parser.split_layout`` does. The first, Kafka's own, is tried by one
    ``regexp_replace`` on lines starting with ``[`` (the result starts with ``SEP`` when it matched); the
    others by ``rlike`` then ``regexp_replace``. The rendering puts the name and the four parts
    ``SEP``-separated, the message last but one (only the message can hold ``SEP`` itself).
    """
    default = g.LAYOUTS[0]
    text = F.col("text")
    cols = list(df.columns)
    fast = F.regexp_replace(text, default.regex, _layout_render(default, 0))
    rendered = F.when(text.startswith("[") & fast.startswith(SEP), fast)
    anchored = text.startswith("[") | F.substring(text, 1, 1).between("0", "9")
    dated = text.rlike(g.DATE_REGEX)  # every layout has a date (lines.DATE_REGEX): no prefix search without
    for shift in (0, 1):
        for layout in g.LAYOUTS:
            if shift == 0 and layout is default:
                continue
            regex = layout.prefixed if shift else layout.regex
            cond = dated & text.rlike(regex) if shift else anchored & text.rlike(regex)
            rendered = rendered.when(cond, F.regexp_replace(text, regex, _layout_render(layout, shift)))
    step1 = df.select(*cols, F.split(rendered, SEP).alias("_sp"))
    parts = F.col("_sp")
    ok = parts.isNotNull()
    size = F.size(parts)
    message = F.when(size == 6, parts[4]).otherwise(F.array_join(F.slice(parts, 5, size - 5), SEP))
    return step1.select(
        *cols,
        F.when(ok, parts[1]).alias("layout"),
        F.when(ok, _normalised_ts(parts[2])).alias("ts"),
        F.when(ok & (parts[3] != ""), parts[3]).alias("level"),
        F.when(ok, message).alias("message"),
        F.when(ok, F.element_at(parts, -1)).alias("logger"),
    )


_BRACKET_REST = jvm_parser.BRACKET_REST


def _candidate(key: g.DispatchKey) -> Column:
    """Regex-free necessary conditions of a template match (``lines.DispatchKey``), by prefix tests only."""
    msg = F.col("message")
    if key.prefix in ("new", "ctrl"):
        return F.col("_bracket") & F.col("_rest").startswith(key.lead[: jvm_parser.LEAD_WIDTH])
    if key.prefix == "old":
        return F.col("_old") & msg.contains(key.lead)
    return msg.startswith(key.start)


def _field_replacement(t: g.Template) -> str:
    """A replacement that renders template ``t``'s groups in ``lines.ALL_FIELDS`` order, ``SEP``-separated.

    A field filled by several groups (alternatives such as ``(?:[t,0]|t-0)``) concatenates them: only one
    alternative takes part in a match and Java renders a group that took no part as empty.
    """
    return SEP + SEP.join(
        "".join(f"${k + 1}" for k, f in enumerate(t.fields) if f == name) for name in g.ALL_FIELDS
    )


PARSE_ENGINES = ("auto", "jvm", "spark")


def parse_kafka(lines: DataFrame, engine: str = "auto") -> DataFrame:
    """Records with layout, kind, template and typed fields; other lines with status ``nolayout``.

    ``engine`` ``jvm`` evaluates the grammar in ``jvm_parser.LineParser`` (one JVM call per line), ``spark``
    with the built-in expressions of ``parse_kafka_expressions``; ``auto`` takes the JVM parser when the
    session can load it. Both give the same rows (a test compares them with the reference parser).
    """
    if engine not in PARSE_ENGINES:
        raise ValueError(f"parse engine {engine!r}: expected one of {', '.join(PARSE_ENGINES)}")
    spark = lines.sparkSession
    if engine == "jvm" or (engine == "auto" and jvm_parser.available(spark)):
        keep = [c for c in lines.columns if c != "text"]
        parsed = lines.select(*keep, "text", jvm_parser.parse_column(spark, F.col("text")).alias("_p"))
        out = [*jvm_parser.HEAD_COLUMNS, *g.ALL_FIELDS, "status"]
        return parsed.select(*keep, "text", *[F.col("_p")[c].alias(c) for c in out])
    return parse_kafka_expressions(lines)


def parse_kafka_expressions(lines: DataFrame) -> DataFrame:
    """``parse_kafka`` with built-in expressions only (no jar needed).

    Built-in expressions only, in small stages (each a projection that Spark compiles): the layout by one
    ``regexp_replace``, the template id by ``startswith`` tests on the message's first characters after its
    controller prefix that leave (almost always) one template regex to try, then one ``regexp_replace`` per
    line that renders all fields of the matched template in a fixed order. The generic families' prefix regexes run only on lines no template matched.
    Columns of ``lines`` other than ``text`` are carried along.
    """
    keep = [c for c in lines.columns if c != "text"]
    df = _split_layout(lines.select(*keep, "text"))
    msg = F.col("message")
    df = df.select(
        "*",
        msg.startswith("[Controller id=").alias("_bracket"),
        msg.startswith("Controller ").alias("_old"),
    ).withColumn("_rest", F.when(F.col("_bracket"), F.regexp_extract(msg, _BRACKET_REST, 1)))
    tid = _chain(
        [
            (_candidate(k) & msg.rlike(t.regex), i)
            for i, (k, t) in enumerate(zip(g.DISPATCH, g.TEMPLATES, strict=True))
        ]
    )
    df = df.withColumn("tid", tid)
    tid_c = F.col("tid")
    rendered = _chain(
        [
            (tid_c == i, F.regexp_replace(msg, t.regex, _field_replacement(t)))
            for i, t in enumerate(g.TEMPLATES)
        ]
    )
    generic = tid_c.isNull() & F.col("layout").isNotNull()
    df = df.select(
        *keep,
        "text",
        "layout",
        "ts",
        "level",
        "logger",
        "message",
        "tid",
        F.split(rendered, SEP).alias("_g"),
        F.when(
            generic & (F.col("logger") == g.STATE_CHANGE_LOGGER) & (F.col("_bracket") | F.col("_old")),
            msg.rlike(g.CONTROLLER_SIDE_STATE_CHANGE),
        ).alias("_cside"),
        F.when(generic & msg.startswith("["), F.regexp_extract(msg, g.CONTROLLER_ID_PREFIX, 1)).alias("_cp"),
        F.when(
            generic & (msg.startswith("[Broker id=") | msg.startswith("Broker ")),
            F.concat(
                F.regexp_extract(msg, g.BROKER_ID_PREFIX, 1), F.regexp_extract(msg, g.BROKER_ID_PREFIX, 2)
            ),
        ).alias("_bp"),
    )
    # a field that held SEP itself shifts the rendered fields: such a match is quarantined, not misread
    sepbad = F.col("tid").isNotNull() & (F.size("_g") != len(g.ALL_FIELDS) + 1)
    df = df.withColumn("_sepbad", sepbad)
    df = df.withColumn("tid", F.when(~F.col("_sepbad"), tid_c)).withColumn(
        "_g", F.when(~F.col("_sepbad"), F.col("_g"))
    )
    sep_bad = F.col("_sepbad")
    kinds = F.array(*[F.lit(t.kind) for t in g.TEMPLATES])
    names = F.array(*[F.lit(t.name) for t in g.TEMPLATES])
    cside = F.coalesce(F.col("_cside"), F.lit(False))
    ctrl_prefix = F.coalesce(F.col("_cp"), F.lit(""))
    broker_prefix = F.coalesce(F.col("_bp"), F.lit(""))
    kind = (
        F.when(F.col("layout").isNull() | sep_bad, F.lit(None))
        .when(tid_c.isNotNull(), kinds[tid_c])
        .when(cside, F.lit(None))
        .when(ctrl_prefix != "", F.lit("controller_message"))
        .when(broker_prefix != "", F.lit("broker_message"))
        .otherwise(F.lit("other_message"))
    )
    reason = F.when(sep_bad, "separator-character").when(
        cside,
        F.when(msg.rlike(g.LEGACY_CONTROLLER_SIDE), "legacy-state-change").otherwise("unknown-state-change"),
    )
    cols: list[Column] = []
    for j, name in enumerate(g.ALL_FIELDS):
        raw = F.col("_g")[j + 1]
        having = [i for i, t in enumerate(g.TEMPLATES) if name in t.fields]
        if name in g.LIST_FIELDS:
            value = F.when(tid_c.isin(*having), F.regexp_replace(raw, " ", ""))
        else:
            value = F.when(raw != "", raw)
        if name == "controller_id":
            value = F.coalesce(value, F.when(ctrl_prefix != "", ctrl_prefix))
        if name == "broker":
            value = F.coalesce(value, F.when(broker_prefix != "", broker_prefix))
        cols.append((value.cast("int") if name in g.INT_FIELDS else value.cast("string")).alias(name))
    status = (
        F.when(F.col("layout").isNull(), "nolayout").when(cside | sep_bad, "quarantined").otherwise("record")
    )
    return df.select(
        *keep,
        "text",
        "layout",
        "ts",
        "level",
        "logger",
        "message",
        kind.alias("kind"),
        names[tid_c].alias("template"),
        reason.alias("reason"),
        *cols,
        status.alias("status"),
    )


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
        file,
        "line",
        "text",
        status.alias("status"),
        reason.alias("reason"),
        F.when(F.col("reason").isin(*jvm_parser.BROKEN_REASONS), F.col("text")).alias("detail"),
        F.when(~F.col("blank") | F.col("owner").isNotNull(), F.col("owner")).alias("owner"),
    )


def exceptions_of(non_records: DataFrame, file: str = "file") -> DataFrame:
    """``(file, line, exception, continuation_lines)``: per record, its first continuation line and their count."""
    return (
        non_records.where(F.col("status") == "continuation")
        .groupBy(file, "owner")
        .agg(F.min_by("text", "line").alias("exception"), F.count(F.lit(1)).alias("continuation_lines"))
        .withColumnRenamed("owner", "line")
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
