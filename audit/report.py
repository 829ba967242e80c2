"""Audit outputs: violations and quarantine (Parquet + JSON lines), coverage matrices, statistics, HTML.

Files written to ``--out``:
* ``violations.parquet/`` and ``violations.jsonl`` — one row per violation: file, line, ts, rule,
  section, message (in words), machine, topic, partition, replica, controller_id, controller_epoch;
* ``quarantine.parquet/`` and ``quarantine.jsonl`` — every quarantined line with file, line, reason,
  detail and the line's text;
* ``coverage-<profile>-<machine>.json`` — the transition-coverage matrix, format
  ``{"profile": …, "machine": "replica"|"partition", "edges": [{"from": …, "to": …, "count": n,
  "valid": true|false}]}``: every edge of the profile's table (count 0 when never logged) plus every
  logged edge that the table does not allow (``valid: false``);
* ``stats.json`` — line counts (read = parsed + quarantined, per file), records per kind, per-broker and
  per-controller-epoch statistics, violations per rule, and the violations grouped by rule and signature, each
  group with the places of ``spec/`` its rule checks (``Summary.violation_groups``);
* ``summary.html`` — all of the above for a person, led by what to look at first: warnings about the audit
  (a profile that does not match the log), violations with their line and the earlier line they were
  compared with, findings (rejected transitions, failed elections, fenced writes) with their line;
* ``findings.jsonl`` — every finding (``findings.FINDING_COLUMNS``).

JSON lines of a few rows are streamed from Spark a piece at a time (``toLocalIterator``); many rows are
written by Spark's JSON writer and joined in order (``write_jsonl_tallied``). Either way nothing is collected
whole, and the lines are the same: compact JSON, the columns in order, nulls written.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kcspec.spec.profiles import Profile
from pyspark.sql import DataFrame

S = TypeVar("S", bound=Enum)


@dataclass(frozen=True)
class Summary:
    lines_read: int
    parsed: int
    quarantined: int
    violations: int
    per_file: list[dict[str, Any]]
    kinds: dict[str, int]
    by_rule: dict[str, int]
    by_reason: dict[str, int]
    per_broker: list[dict[str, Any]]
    per_epoch: list[dict[str, Any]]
    quarantine_sample: list[dict[str, Any]] = field(default_factory=list)
    violation_sample: list[dict[str, Any]] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    findings: int = 0
    by_finding: dict[str, int] = field(default_factory=dict)
    by_severity: dict[str, int] = field(default_factory=dict)
    """Findings per severity (``findings.SEVERITIES``: ``error`` a fault, ``warning`` the cluster's trouble,
    ``expected`` an ERROR line that is Kafka's normal behaviour, ``findings.EXPECTED``)."""
    finding_sample: list[dict[str, Any]] = field(default_factory=list)
    """``findings.FINDING_COLUMNS`` and the line's ``text``, errors first."""
    layouts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file, the lines each layout took (``layouts.layout_counts``; ``-``: lines that are not records)."""
    version: dict[str, Any] = field(default_factory=dict)
    """``layouts.version_report``: per history, the Kafka version its logs' formats say and the profile for it."""
    warnings: list[str] = field(default_factory=list)
    """About the audit itself (a profile that does not match the log): shown first."""
    skipped: list[dict[str, str]] = field(default_factory=list)
    """Files found under a directory and not audited: ``file`` and ``why`` (``spark_job.Inputs.skipped``)."""
    violation_groups: list[dict[str, Any]] = field(default_factory=list)
    """Violations grouped by rule and signature (``violation_groups``): ``rule``, ``signature``, ``count``, the
    ``first`` few, each with its line's ``text`` and the line it was compared with, and ``spec``: the places of
    ``spec/`` (``path:line``, relative to the folder holding ``spec/``) that write what the rule checks."""
    notes: list[str] = field(default_factory=list)
    """What the reader should know to read the results (where controller epochs start over: ``eras``)."""
    checked: int | None = None
    """State transitions the rules checked (log transition records and trace steps)."""
    unreadable: list[dict[str, str]] = field(default_factory=list)
    """Folders and files that could not be read (``spark_job.Inputs.unreadable``): ``file`` and ``why``."""

    def attention(self, limit: int = 10) -> list[str]:
        """What an operator must look at first, as plain lines (``findings.attention``)."""
        from kcspec.audit.findings import attention

        return [f"note: {n}" for n in self.notes[:limit]] + attention(
            self.warnings,
            self.by_finding,
            self.finding_sample,
            self.violation_sample,
            self.violations,
            limit,
            self.violation_groups,
            self.by_severity,
        )

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def coverage_matrix(
    profile: Profile, machine: str, observed: Mapping[tuple[str, str], int]
) -> dict[str, Any]:
    table: Mapping[Any, tuple[Any, ...]] = (
        profile.replica_valid_previous if machine == "replica" else profile.partition_valid_previous
    )
    valid = {(p.name, t.name) for t, prevs in table.items() for p in prevs}
    edges = sorted(valid | {e for e in observed if _is_state(table, e)})
    return {
        "profile": profile.name,
        "machine": machine,
        "edges": [
            {"from": f, "to": t, "count": int(observed.get((f, t), 0)), "valid": (f, t) in valid}
            for f, t in edges
        ],
    }


def _is_state(table: Mapping[Any, tuple[Any, ...]], edge: tuple[str, str]) -> bool:
    names = {s.name for s in table}
    return edge[0] in names and edge[1] in names


ROWS_PER_FETCH = 100_000
"""At most about this many rows are held by the driver at once while a JSONL output is streamed."""

SPARK_WRITES_FROM = 100_000
"""From this many rows on, a JSONL output is written by Spark's JSON writer, not streamed through the driver.

Decision (measured): the driver turns about 40,000 rows a second into JSON (10 M log lines with 624,000
findings: 11.3 s wall, 6.6 CPU s in Python); Spark's writer does it in the executors, in parallel, for a fixed
cost of a few small jobs that a small output would feel."""


class Sampler(Protocol):
    """Takes a sample of an output while it is written: handed each row of a streamed output in order
    (``__call__``), or given the whole output to query when Spark writes it (``take``)."""

    def __call__(self, row: dict[str, Any]) -> None: ...

    def take(self, df: DataFrame, order: tuple[str, ...]) -> None: ...


def write_jsonl(df: DataFrame, path: Path, order: tuple[str, ...] = ()) -> int:
    """Write ``df`` as JSON lines in ``order``; the rows written.

    ``toLocalIterator`` holds one whole partition in the driver: a global sort into the session's few shuffle
    partitions put millions of rows in one (a 10 M-line corpus with many findings ran the driver out of heap and
    hung). Streamed rows are range-partitioned into pieces of about ``ROWS_PER_FETCH`` instead, in the same
    order; from ``SPARK_WRITES_FROM`` rows on Spark writes them (``write_jsonl_tallied``)."""
    return write_jsonl_tallied(df, path, order)[0]


def json_line(record: Mapping[str, Any]) -> str:
    """One JSON line as Spark's JSON writer (with ``ignoreNullFields`` off) writes a row: compact, UTF-8."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


@dataclass(frozen=True)
class Dressing:
    """An output's columns made from the rows its sort moves (``make``: a projection, which keeps their order),
    and ``order``, that sort's order in the output's columns. Wide columns computed from narrow ones (names
    by id, texts by kind) are made after the sort, so the sort's shuffle carries only the narrow ones."""

    make: Callable[[DataFrame], DataFrame]
    order: tuple[str, ...]


def write_jsonl_tallied(
    df: DataFrame,
    path: Path,
    order: tuple[str, ...] = (),
    tally: tuple[str, ...] = (),
    sampler: Sampler | None = None,
    known: tuple[int, Counter[tuple[Any, ...]]] | None = None,
    dressing: Dressing | None = None,
) -> tuple[int, Counter[tuple[Any, ...]]]:
    """``write_jsonl``, also counting the rows per value of the ``tally`` columns and sampling them
    (``sampler``). Streamed, both are taken on the way (no query of their own); when Spark writes the output,
    each is one small query (an aggregation; a sort with a limit), unless the caller ``known``s the rows'
    number and tally already (counted where the rows arose): then it is returned as given. With a
    ``dressing``, ``df`` and ``order`` are the rows the sort moves; what is written, tallied and sampled is
    the dressed rows (a sampler's ``take`` is given ``df`` and ``order``, and dresses what it keeps). An empty
    ``df`` costs one count and nothing else."""
    counts: Counter[tuple[Any, ...]] = Counter()
    dress = dressing.make if dressing is not None else (lambda frame: frame)
    if order:
        total = df.count() if known is None else known[0]
        if total == 0:
            path.write_text("", encoding="utf-8")
            return 0, counts
        if total >= SPARK_WRITES_FROM:
            # Decision (measured on 10 M lines, 624,000 findings): the sample's query (a scan of the rows, about
            # 1.5 s) runs in a thread of its own beside the write, so that it fills the gaps where the write's
            # jobs leave cores idle and while the part files are joined, rather than after them
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcspec-sample") as side:
                # given the rows the sort moves: a dressing's sampler dresses its own
                sampling = side.submit(sampler.take, df, order) if sampler is not None else None
                _spark_jsonl(dress(df.orderBy(*order)), path)
                dressed = dress(df)
                if known is not None:
                    counts = Counter(known[1])
                elif tally:
                    for r in dressed.groupBy(*tally).count().collect():
                        counts[tuple(r[c] for c in tally)] += int(r["count"])
                if sampling is not None:
                    sampling.result()
            return total, counts
        pieces = max(1, -(-total // ROWS_PER_FETCH))
        # one piece: all rows into one partition without a shuffle (a range partitioning samples the rows first)
        split = df.coalesce(1) if pieces == 1 else df.repartitionByRange(pieces, *order)
        df = split.sortWithinPartitions(*order)
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for row in dress(df).toLocalIterator():
            record = row.asDict()
            out.write(json_line(record))
            if tally:
                counts[tuple(record[c] for c in tally)] += 1
            if sampler is not None:
                sampler(record)
            n += 1
    return n, counts


def _spark_jsonl(ordered: DataFrame, path: Path) -> None:
    """``ordered`` (a global sort, maybe projected after it) into ``path`` as JSON lines, by Spark's JSON
    writer: its part files (one per range of the sort, in the sort's order) are joined into ``path``, then
    removed with the private folder of this run they were written to."""
    parts = Path(tempfile.mkdtemp(prefix=".jsonl-", dir=path.parent))
    try:
        target = parts / "parts"
        ordered.write.option("ignoreNullFields", "false").json(str(target.resolve()))
        with path.open("wb") as out:
            for part in sorted(target.glob("part-*")):
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
    finally:
        shutil.rmtree(parts, ignore_errors=True)


def rows(df: DataFrame, limit: int | None = None) -> list[dict[str, Any]]:
    data = df.limit(limit).collect() if limit is not None else df.collect()
    return [r.asDict() for r in data]


def write_outputs(out: Path, summary: Summary, coverage_files: Iterable[tuple[str, dict[str, Any]]]) -> None:
    for name, matrix in coverage_files:
        (out / name).write_text(json.dumps(matrix, indent=1) + "\n")
    (out / "stats.json").write_text(json.dumps(summary.as_json(), indent=1, default=str) + "\n")
    (out / "summary.html").write_text(render_html(summary))


@dataclass(frozen=True)
class Cell:
    """A table cell's text with a CSS class (``SEVERITY_CLASS``)."""

    text: str
    css: str


SEVERITY_CLASS = {"error": "bad", "warning": "warn", "expected": "quiet"}
"""How each severity of ``findings.SEVERITIES`` is shown: only a fault in red."""


def _td(c: Any) -> str:
    if isinstance(c, Cell):
        return f"<td class='{c.css}'>{html.escape(c.text)}</td>"
    return f"<td>{html.escape('' if c is None else str(c))}</td>"


def _table(headers: list[str], body: Iterable[Iterable[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    rows_ = "".join("<tr>" + "".join(_td(c) for c in r) + "</tr>" for r in body)
    return f"<table><tr>{head}</tr>{rows_}</table>"


def render_html(s: Summary) -> str:
    """The report page; the verdict is put at its top once, by ``verdict.mark_html``."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kcspec audit</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%;text-align:left}"
        ".bad{color:#b00}.ok{color:#070}.warn{color:#a60}.quiet{color:#777}</style></head><body>",
        "<h1>kcspec audit</h1>",
        f"<p>{s.lines_read} lines read = {s.parsed} parsed + {s.quarantined} quarantined; "
        f"{s.checked} state transition(s) checked.</p>",
        *[f"<p>note: {html.escape(n)}</p>" for n in s.notes],
        *_look_first(s),
        "<h2>Violations by rule</h2>",
        _table(["rule", "count"], sorted(s.by_rule.items())),
        "<h2>Violations by rule and signature</h2>",
        _table(
            ["rule", "signature", "count", "first at", "compared with", "what it checks in spec/"],
            [
                (
                    g["rule"],
                    g["signature"],
                    g["count"],
                    ", ".join(f"{x['file']}:{x['line']}" for x in g["first"]),
                    ", ".join(
                        f"{x['compared_file']}:{x['compared_line']}"
                        for x in g["first"]
                        if x.get("compared_line") is not None
                    ),
                    ", ".join(g.get("spec", ())),
                )
                for g in s.violation_groups
            ],
        ),
        "<h2>Violations (sample)</h2>",
        _table(
            ["file", "line", "rule", "message"],
            [(v["file"], v["line"], v["rule"], v["message"]) for v in s.violation_sample],
        ),
        "<h2>Quarantined lines by reason</h2>",
        _table(["reason", "count"], sorted(s.by_reason.items())),
        "<h2>Quarantined lines (sample)</h2>",
        _table(
            ["file", "line", "reason", "detail", "text"],
            [(q["file"], q["line"], q["reason"], q.get("detail"), q["text"]) for q in s.quarantine_sample],
        ),
        "<h2>Files</h2>",
        _table(
            ["file", "lines", "records", "continuation", "blank", "quarantined"],
            [
                (f["file"], f["lines"], f["record"], f["continuation"], f["blank"], f["quarantined"])
                for f in s.per_file
            ],
        ),
        "<h2>Files skipped (not audited)</h2>",
        _table(["file", "why"], [(f["file"], f["why"]) for f in s.skipped]),
        "<h2>Line layouts per file</h2>",
        _table(
            ["file", "layout", "lines"],
            [(f, name, n) for f, counts in sorted(s.layouts.items()) for name, n in sorted(counts.items())],
        ),
        "<h2>Kafka version from the logs' formats</h2>",
        _table(
            ["history", "versions", "profile for it", "profile used"],
            [
                (name, h["inferred"], h["profile_for_log"] or "none", h.get("profile_used", ""))
                for name, h in sorted(s.version.get("histories", {}).items())
            ],
        ),
        "<h2>Records by kind</h2>",
        _table(["kind", "count"], sorted(s.kinds.items())),
        "<h2>Per broker</h2>",
        _table(
            ["broker", "records", "transitions", "violations", "first", "last"],
            [
                (b["broker"], b["records"], b["transitions"], b["violations"], b["first_ts"], b["last_ts"])
                for b in s.per_broker
            ],
        ),
        "<h2>Per controller epoch</h2>",
        _table(
            ["epoch", "controllers", "records", "transitions", "violations", "first", "last"],
            [
                (
                    e["controller_epoch"],
                    e["controllers"],
                    e["records"],
                    e["transitions"],
                    e["violations"],
                    e["first_ts"],
                    e["last_ts"],
                )
                for e in s.per_epoch
            ],
        ),
        "<h2>Transition coverage</h2>",
    ]
    for m in s.coverage:
        parts.append(f"<h3>{html.escape(m['profile'])} — {html.escape(m['machine'])} machine</h3>")
        parts.append(
            _table(
                ["from", "to", "count", "valid"],
                [(e["from"], e["to"], e["count"], e["valid"]) for e in m["edges"]],
            )
        )
    parts.append("</body></html>\n")
    return "".join(parts)


def _look_first(s: Summary) -> list[str]:
    """The part of the page an operator reads first: warnings, violations with their lines, findings."""
    out = ["<h2>Look at first</h2>"]
    if s.warnings:
        out.append(
            "<ul>" + "".join(f"<li class='bad'>WARNING: {html.escape(w)}</li>" for w in s.warnings) + "</ul>"
        )
    if not (s.warnings or s.violations or s.findings):
        out.append("<p class='ok'>Nothing: no warning, no violation, no finding.</p>")
    if s.violations:
        out.append(f"<h3 class='bad'>{s.violations} violation(s)</h3>")
        out.append(
            _table(
                ["where", "rule", "message", "line", "compared with", "its line"],
                [
                    (
                        f"{v['file']}:{v['line']}",
                        v["rule"],
                        v["message"],
                        v.get("text"),
                        f"{v['compared_file']}:{v['compared_line']}"
                        if v.get("compared_line") is not None
                        else "",
                        v.get("compared_text"),
                    )
                    for v in s.violation_sample
                ],
            )
        )
    if s.findings:
        counts = ", ".join(f"{k}: {n}" for k, n in sorted(s.by_finding.items()))
        graded = ", ".join(f"{n} {k}" for k, n in s.by_severity.items())
        counts += f"; {graded}" if graded else ""
        out.append(f"<h3>{s.findings} finding(s) in the logs ({html.escape(counts)})</h3>")
        out.append(
            _table(
                ["severity", "finding", "where", "what", "line", "exception"],
                [
                    (
                        Cell(f["severity"], SEVERITY_CLASS.get(str(f["severity"]), "")),
                        f["finding"],
                        f"{f['file']}:{f['line']}",
                        f["meaning"],
                        f.get("text"),
                        f.get("exception"),
                    )
                    for f in s.finding_sample
                ],
            )
        )
    return out


SIGNATURE = (
    (r"(partition|replica|topic|of|broker|brokers|controller) [^ ,:()]+", "$1 *"),
    (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}", "<time>"),
    (r" \([^()]*:\d+\)$", ""),
    (r"\d+", "N"),
)
"""How a violation's message becomes its signature: the partition, replica, topic, broker and controller it
is about, its times, the line it names and every number are left out (regex, replacement), so that one fault
repeated over many partitions or writes is one group (a stale controller's 1,126 writes: one row)."""
FIRST_INSTANCES = 3
"""The instances each group of violations shows."""


def violation_groups(violations: DataFrame, first: int = FIRST_INSTANCES) -> list[dict[str, Any]]:
    """``violations`` (``replay.VIOLATION_COLUMNS``) by rule and signature (``SIGNATURE``), most first: each
    group's ``count``, its ``first`` instances by file and line, and ``spec``: where ``spec/`` writes what the rule
    checks (``rule_spans.where``). Only the groups and their first instances
    reach the driver."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    sig = F.col("message")
    for pattern, replacement in SIGNATURE:
        sig = F.regexp_replace(sig, pattern, replacement)
    group = Window.partitionBy("rule", "signature")
    ranked = (
        violations.withColumn("signature", sig)
        .withColumn("count", F.count(F.lit(1)).over(group))
        .withColumn("i", F.row_number().over(group.orderBy("file", "line")))
        .where(F.col("i") <= first)
    )
    return _grouped((r.asDict(), int(r["count"])) for r in ranked.collect())


GROUP_FIELDS = ("file", "line", "ts", "message", "compared_file", "compared_line")
"""What each of a group's first instances shows."""


def signature(message: str | None) -> str | None:
    """A message's signature (``SIGNATURE``, Java's ``$1`` written ``\\1``), as ``violation_groups``' Spark
    expression makes it; ``None`` for no message."""
    if message is None:
        return None
    for pattern, replacement in SIGNATURE:
        message = re.sub(pattern, replacement.replace("$1", r"\1"), message, flags=re.ASCII)
    return message


def violation_groups_of(
    violations: Iterable[Mapping[str, Any]], first: int = FIRST_INSTANCES
) -> list[dict[str, Any]]:
    """``violation_groups`` of violation rows held in this process (the local engine's)."""
    counts: Counter[tuple[Any, Any]] = Counter()
    firsts: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for v in violations:
        key = (v["rule"], signature(v["message"]))
        counts[key] += 1
        firsts.setdefault(key, []).append({**v, "signature": key[1]})
    ranked = []
    for key, rows_ in firsts.items():
        ordered = sorted(rows_, key=lambda x: (str(x["file"]), int(x["line"] or 0)))
        ranked += [(x, counts[key]) for x in ordered[:first]]
    return _grouped(ranked)


def _grouped(ranked: Iterable[tuple[Mapping[str, Any], int]]) -> list[dict[str, Any]]:
    """The groups of ``violation_groups`` from each group's first instances (with their group's count)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r, count in ranked:
        g = out.setdefault(
            (r["rule"], r["signature"]),
            {"rule": r["rule"], "signature": r["signature"], "count": count, "first": []},
        )
        g["first"].append({k: r[k] for k in GROUP_FIELDS if k in r})
    from kcspec.audit.rule_spans import where

    groups = sorted(out.values(), key=lambda g: (-g["count"], g["rule"], g["signature"]))
    for g in groups:
        g["first"].sort(key=lambda x: (str(x["file"]), int(x["line"] or 0)))
        g["spec"] = list(where(str(g["rule"])))  # where spec/ writes what the rule checks
    return groups
