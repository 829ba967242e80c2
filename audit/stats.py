"""Counts of the stored parse from one aggregation: line numbering, statistics, coverage, fencing epochs.

``line_cube`` scans the stored parse once and groups its lines by (file id, status, kind, controller,
broker, controller epoch, logged transition, for a topic deletion queued or completed its topics and
timestamp, and a record's layout): a table of at most a few cells per file and epoch (plus one per deletion
line), collected to the driver. The JVM reader counts the same cells while it reads (``LineParser.Cube``), so
the pipeline runs no query for them. Everything else is derived from it there, with no further pass over the
corpus:

* ``record_counts`` — records per file; ``kind_counts`` — records per kind;
* ``edge_counts`` — logged successful transitions per (from, to) of a machine (the coverage matrices);
* ``per_broker`` / ``per_epoch`` — the summary's per-broker and per-controller-epoch tables;
* ``epoch_firsts`` — per history, the first timestamp at which each controller epoch acted (the fencing rule);
* ``deletion_intervals`` — per history and topic, when it was queued for deletion and until when (rule I13),
  merged (at most one interval per completed deletion, and one per topic still queued at the end);
* ``layout_counts`` — per file, its records per layout and its other lines.

Timestamps are the longs ``yyyyMMddHHmmssSSS`` of the stored parse (``ts_key``); ``ts_text`` gives the text back.
"""

from __future__ import annotations

import bisect
import gc
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcspec.model.kafka_log import lines as g
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

GROUP = (
    "fid",
    "status",
    "kind",
    "controller_id",
    "broker",
    "controller_epoch",
    "from_state",
    "to_state",
    "del_topics",
    "del_ts",
    "layout",
)
QUEUED, COMPLETED = "topic_deletion_queued", "topic_deletion_completed"
DELETION_KINDS = (QUEUED, COMPLETED)
"""Kinds whose records the cube counts with their topics and timestamp (``del_topics``, ``del_ts``)."""
TRANSITION_KINDS = (
    "replica_transition",
    "partition_transition",
    "replica_transition_failed",
    "partition_transition_failed",
)


@dataclass(frozen=True)
class Cell:
    """Lines of one file that share status, kind, controller, broker, epoch and logged transition (and for
    a deletion queued or completed its topics and timestamp, for a record its layout); timestamps as
    ``ts_key`` longs."""

    fid: int
    status: str
    kind: str | None
    controller_id: int | None
    broker: int | None
    controller_epoch: int | None
    from_state: str | None
    to_state: str | None
    del_topics: str | None
    del_ts: int | None
    layout: str | None
    lines: int
    first_ts: int | None
    last_ts: int | None
    first_line: int | None = None
    """The line of ``first_ts`` (the least line among the cell's lines at that timestamp)."""


def ts_key(ts: Column) -> Column:
    """A log timestamp ``yyyy-MM-dd HH:mm:ss,SSS`` (fixed width, ``lines.TS``) as the long ``yyyyMMddHHmmssSSS``.

    Same order as the text; a long keeps min/max in Spark's fixed-width hash aggregation (a string would make
    it sort the whole input) and is cheaper to shuffle and sort. The JVM reader computes it while parsing."""
    return F.translate(ts, "-: ,", "").cast("long")


def ts_column_text(key: Column) -> Column:
    """``ts_key`` back to the log's text (``yyyy-MM-dd HH:mm:ss,SSS``), as a column. Decision (measured): one
    regular expression over the padded digits; seven substrings of them made the digits seven times (a fifth
    of writing 624,000 findings as JSON)."""
    digits = F.lpad(key.cast("string"), 17, "0")
    return F.regexp_replace(digits, TS_DIGITS, TS_TEXT)


TS_DIGITS = r"^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})$"
"""The 17 digits of a ``ts_key`` in groups: year, month, day, hour, minute, second, millisecond."""
TS_TEXT = "$1-$2-$3 $4:$5:$6,$7"
"""``TS_DIGITS``' groups as the log writes them."""


def ts_text(key: int | None) -> str | None:
    """``ts_key`` back to the log's text."""
    if key is None:
        return None
    d = f"{key:017d}"
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]},{d[14:17]}"


def line_cube(stored: DataFrame) -> list[Cell]:
    """One aggregation over the stored parse (``fid``, ``status``, ``ts`` as a long and the fields)."""
    is_transition = F.col("kind").isin(*TRANSITION_KINDS)
    is_record = F.col("status") == "record"
    is_deletion = F.col("kind").isin(*DELETION_KINDS) & is_record
    cells = (
        stored.select(
            "fid",
            "status",
            "ts",
            "line",
            *[c for c in GROUP[2:6]],
            F.when(is_transition, F.col("from_state")).alias("from_state"),
            F.when(is_transition, F.col("to_state")).alias("to_state"),
            F.when(is_deletion, F.col("topics")).alias("del_topics"),
            F.when(is_deletion, F.col("ts")).alias("del_ts"),
            F.when(is_record, F.col("layout")).alias("layout"),
        )
        .groupBy(*GROUP)
        .agg(
            F.count(F.lit(1)).alias("lines"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
            F.min(F.when(F.col("ts").isNotNull(), F.struct("ts", "line"))).alias("first_at"),
        )
        .collect()
    )
    out = []
    for r in cells:
        d = r.asDict()
        first_at = d.pop("first_at")
        out.append(Cell(**d, first_line=None if first_at is None else first_at["line"]))
    return out


def _read_value(text: str, at: int) -> tuple[str | None, int]:
    if text[at] == "-":
        return None, at + 1
    colon = text.index(":", at)
    end = colon + 1 + int(text[at:colon])
    return text[colon + 1 : end], end


def cells_from_text(text: str) -> list[Cell]:
    """The cells ``LineParser.Cube`` counted while reading (``jvm_parser.cube_text``), one a line: a plain cell
    is U+0001, ``fid``, then status, kind, controller id, broker, controller epoch, from state, to state,
    deletion topics, deletion timestamp and layout, each part followed by U+0001 (U+0002: null), then
    ``lines,first,last,line of first``; a cell with a value that holds U+0001, U+0002 or a line feed comes
    before the plain ones, length-prefixed: ``fid,`` then each value as ``length:value`` or ``-``, then the
    counts (``_prefixed_cell``)."""
    # Decision (measured): Python's cyclic collector is paused while the cells are made. Each of them is an
    # object it tracks, and the 119,000 of 10 M lines set off collections that walked every object the
    # driver holds: 1.0 s with it paused, 1.2-1.8 s without, the more the driver held. Cells hold no cycles.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _cells(text)
    finally:
        if enabled:
            gc.enable()


def _cells(text: str) -> list[Cell]:
    cells: list[Cell] = []
    at = 0
    while at < len(text) and text[at] != PLAIN:
        at = _prefixed_cell(text, at, cells)
    # Decision (measured): the plain cells (all of them, but for a log's junk) are split at U+0001 in C: at
    # 10 M lines (119,000 cells) reading each value by its length took about 1.3 s of the driver while the
    # JVM waited for the rules' pass
    for line in text[at:].split("\n")[:-1]:
        fid, status, kind, cid, broker, epoch, frm, to, topics, dts, layout, counts = line[1:].split(PLAIN)
        lines, first, last, first_line = counts.split(",")
        cells.append(
            Cell(
                int(fid),
                status,
                None if kind == NULL else kind,
                None if cid == NULL else int(cid),
                None if broker == NULL else int(broker),
                None if epoch == NULL else int(epoch),
                None if frm == NULL else frm,
                None if to == NULL else to,
                None if topics == NULL else topics,
                None if dts == NULL else int(dts),
                None if layout == NULL else layout,
                int(lines),
                int(first) if first else None,
                int(last) if last else None,
                int(first_line) if first_line else None,
            )
        )
    # Decision: in the order of their keys, whatever order the reader's hash map and its tasks gave them, so
    # that what is built from them in that order (the records per kind of stats.json) is the same for any
    # number of tasks and either engine (a cell's key is unique: its fields before the counts)
    cells.sort(key=_order)
    return cells


PLAIN = "\u0001"
"""Leads a plain cell's line of ``LineParser.Cube``'s text and ends each of its parts."""
NULL = "\u0002"
"""A null value in a plain cell's line."""


def _prefixed_cell(text: str, at: int, cells: list[Cell]) -> int:
    """The length-prefixed cell at ``at`` into ``cells``; where the next cell starts."""
    comma = text.index(",", at)
    fid = int(text[at:comma])
    at = comma + 1
    values: list[str | None] = []
    for _ in range(10):
        v, at = _read_value(text, at)
        values.append(v)
    end = text.index("\n", at)
    lines, first, last, first_line = text[at:end].split(",")

    def num(v: str | None) -> int | None:
        return None if v is None else int(v)

    cells.append(
        Cell(
            fid=fid,
            status=str(values[0]),
            kind=values[1],
            controller_id=num(values[2]),
            broker=num(values[3]),
            controller_epoch=num(values[4]),
            from_state=values[5],
            to_state=values[6],
            del_topics=values[7],
            del_ts=num(values[8]),
            layout=values[9],
            lines=int(lines),
            first_ts=int(first) if first else None,
            last_ts=int(last) if last else None,
            first_line=int(first_line) if first_line else None,
        )
    )
    return end + 1


def _order(c: Cell) -> tuple[Any, ...]:
    """A cell's place among the cells: its key's fields in turn, ``None`` before any value (each field as a
    flag and a value, flat: the same order as a tuple of ``(v is not None, v)`` pairs, built faster)."""
    return (
        c.fid,
        c.status,
        c.kind is not None,
        "" if c.kind is None else c.kind,
        c.controller_id is not None,
        0 if c.controller_id is None else c.controller_id,
        c.broker is not None,
        0 if c.broker is None else c.broker,
        c.controller_epoch is not None,
        0 if c.controller_epoch is None else c.controller_epoch,
        c.from_state is not None,
        "" if c.from_state is None else c.from_state,
        c.to_state is not None,
        "" if c.to_state is None else c.to_state,
        c.del_topics is not None,
        "" if c.del_topics is None else c.del_topics,
        c.del_ts is not None,
        0 if c.del_ts is None else c.del_ts,
        c.layout is not None,
        "" if c.layout is None else c.layout,
    )


def line_counts(cells: Iterable[Cell]) -> dict[int, int]:
    """File id → lines read."""
    out: dict[int, int] = {}
    for c in cells:
        out[c.fid] = out.get(c.fid, 0) + c.lines
    return out


def _records(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "record"]


def record_counts(cells: Iterable[Cell], names: Sequence[str]) -> dict[str, int]:
    """File name (``names[fid]``) → record lines."""
    out: dict[str, int] = {}
    for c in _records(cells):
        out[names[c.fid]] = out.get(names[c.fid], 0) + c.lines
    return out


def kind_counts(cells: Iterable[Cell], kinds: Iterable[str]) -> dict[str, int]:
    """Records per kind, for the kinds in ``kinds``."""
    wanted = set(kinds)
    out: dict[str, int] = {}
    for c in _records(cells):
        if c.kind in wanted:
            out[c.kind] = out.get(c.kind, 0) + c.lines
    return out


def _state(name: str | None) -> str | None:
    return g.LEGACY_STATE_NAMES.get(name, name) if name is not None else None


def edge_counts(cells: Iterable[Cell], machine: str) -> dict[tuple[str, str], int]:
    """Successful logged transitions of ``machine`` with a logged previous state, per (from, to)."""
    kind = f"{machine}_transition"
    out: dict[tuple[str, str], int] = {}
    for c in _records(cells):
        frm, to = _state(c.from_state), _state(c.to_state)
        if c.kind == kind and frm is not None and to is not None:
            out[(frm, to)] = out.get((frm, to), 0) + c.lines
    return out


def _span(rows: list[Cell]) -> tuple[str | None, str | None]:
    firsts = [c.first_ts for c in rows if c.first_ts is not None]
    lasts = [c.last_ts for c in rows if c.last_ts is not None]
    return (ts_text(min(firsts)) if firsts else None, ts_text(max(lasts)) if lasts else None)


def per_broker(cells: Iterable[Cell], violations: Mapping[int, int]) -> list[dict[str, Any]]:
    """Per broker (the controller id of a record, else its broker id): records, transitions, span, violations."""
    groups: dict[int, list[Cell]] = {}
    for c in _records(cells):
        who = c.controller_id if c.controller_id is not None else c.broker
        if who is not None:
            groups.setdefault(who, []).append(c)
    out = []
    for who, rows in sorted(groups.items()):
        first, last = _span(rows)
        out.append(
            {
                "broker": who,
                "records": sum(c.lines for c in rows),
                "transitions": sum(c.lines for c in rows if c.kind in TRANSITION_KINDS),
                "first_ts": first,
                "last_ts": last,
                "violations": violations.get(who, 0),
            }
        )
    return out


def per_epoch(
    cells: Iterable[Cell], kinds: Iterable[str], violations: Mapping[int, int]
) -> list[dict[str, Any]]:
    """Per controller epoch, over records of ``kinds``: controllers, records, transitions, span, violations."""
    wanted = set(kinds)
    groups: dict[int, list[Cell]] = {}
    for c in _records(cells):
        if c.kind in wanted and c.controller_epoch is not None:
            groups.setdefault(c.controller_epoch, []).append(c)
    out = []
    for epoch, rows in sorted(groups.items()):
        first, last = _span(rows)
        out.append(
            {
                "controller_epoch": epoch,
                "controllers": sorted({c.controller_id for c in rows if c.controller_id is not None}),
                "records": sum(c.lines for c in rows),
                "transitions": sum(c.lines for c in rows if c.kind in TRANSITION_KINDS),
                "first_ts": first,
                "last_ts": last,
                "violations": violations.get(epoch, 0),
            }
        )
    return out


def epoch_firsts(
    cells: Iterable[Cell], kinds: Iterable[str], history: Sequence[int]
) -> dict[int, dict[int, int]]:
    """history id (``history[fid]``) → controller epoch → the first timestamp (``ts_key``) of a record of
    ``kinds`` carrying that epoch."""
    wanted = set(kinds)
    out: dict[int, dict[int, int]] = {}
    for c in _records(cells):
        if c.kind in wanted and c.controller_epoch is not None and c.first_ts is not None:
            epochs = out.setdefault(history[c.fid], {})
            old = epochs.get(c.controller_epoch)
            epochs[c.controller_epoch] = c.first_ts if old is None else min(old, c.first_ts)
    return out


TOPIC_SET_NOISE = r"^(?:Hash)?Set\(|\)$|\s"
"""What ``Set(a, b)`` / ``HashSet(a)`` / ``a, b`` loses to become ``a,b`` (a regex for Spark)."""


def _topics(text: str) -> list[str]:
    """The topics of a deletion line's ``topics`` field (``Set(a, b)``, ``HashSet(a)`` or ``a, b``)."""
    return [t for t in re.sub(TOPIC_SET_NOISE, "", text).split(",") if t]


def deletion_intervals(
    cells: Iterable[Cell], history: Sequence[int]
) -> dict[tuple[int, str], list[tuple[int, int | None]]]:
    """(history id, topic) → disjoint ``(queued, completed)`` timestamps (``ts_key``; ``None`` while open),
    sorted. A topic is queued for deletion from a "Starting topic deletion" / "Handling deletion" record
    until the first "Deletion of topic … successfully completed" record at or after it (a queuing with only
    earlier completions of that topic opens no interval). Queuings that end at the same completion form one
    interval from the earliest of them: such intervals share their end, and those with different ends are
    disjoint, so the earliest queuing whose interval holds a time is that interval's start. Both kinds of
    record are cells of their own (their topics and timestamp are in the cube's key).
    """
    done: dict[tuple[int, str], list[int]] = {}
    queued: list[tuple[int, str, int]] = []
    for c in _records(cells):
        if c.del_ts is None or c.del_topics is None:
            continue
        if c.kind == COMPLETED:
            done.setdefault((history[c.fid], c.del_topics), []).append(c.del_ts)
        elif c.kind == QUEUED:
            queued.extend((history[c.fid], t, c.del_ts) for t in _topics(c.del_topics))
    ends = {k: sorted(v) for k, v in done.items()}
    merged: dict[tuple[int, str, int | None], int] = {}
    for h, topic, q in queued:
        known = ends.get((h, topic))
        if known is None:
            d: int | None = None  # never completed: open
        else:
            at = bisect.bisect_left(known, q)
            if at == len(known):
                continue  # only earlier completions: no interval
            d = known[at]
        key = (h, topic, d)
        merged[key] = min(q, merged.get(key, q))
    out: dict[tuple[int, str], list[tuple[int, int | None]]] = {}
    for (h, topic, d), q in merged.items():
        out.setdefault((h, topic), []).append((q, d))
    return {k: sorted(v, key=lambda iv: iv[0]) for k, v in sorted(out.items())}


def layout_counts(
    cells: Iterable[Cell], names: Sequence[str], not_a_record: str
) -> dict[str, dict[str, int]]:
    """File name → its records per layout and its other lines (under ``not_a_record``): in the files' order,
    then the layouts' (so ``stats.json`` is the same from run to run)."""
    counts: dict[tuple[int, str], int] = {}
    for c in cells:
        layout = c.layout if c.status == "record" and c.layout else not_a_record
        counts[(c.fid, layout)] = counts.get((c.fid, layout), 0) + c.lines
    out: dict[str, dict[str, int]] = {}
    for (fid, layout), n in sorted(counts.items()):
        out.setdefault(names[fid], {})[layout] = n
    return out
