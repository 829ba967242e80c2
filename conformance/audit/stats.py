"""Counts of the stored parse from one aggregation: line numbering, statistics, coverage, fencing epochs.

``line_cube`` scans the stored parse once and groups its lines by (file id, status, kind, controller,
broker, controller epoch, logged transition, and for a completed topic deletion its topic and timestamp): a
table of at most a few cells per file and epoch (plus one per completed deletion), collected to the driver.
Everything else is derived from it there, with no further pass over the corpus:

* ``record_counts`` — records per file; ``kind_counts`` — records per kind;
* ``edge_counts`` — logged successful transitions per (from, to) of a machine (the coverage matrices);
* ``per_broker`` / ``per_epoch`` — the summary's per-broker and per-controller-epoch tables;
* ``epoch_firsts`` — per history, the first timestamp at which each controller epoch acted (the fencing rule);
* ``deletion_intervals`` — per history and topic, when it was queued for deletion and until when (rule I13):
  one more query, over the deletion records only, with the completions from the cube; collected merged (at
  most one interval per completed deletion, and one per topic still queued at the end).

Timestamps are the longs ``yyyyMMddHHmmssSSS`` of the stored parse (``ts_key``); ``ts_text`` gives the text back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcspec.conformance.audit import lines as g
from kcspec.conformance.audit.local_frames import local_frame
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
)
QUEUED, COMPLETED = "topic_deletion_queued", "topic_deletion_completed"
TRANSITION_KINDS = (
    "replica_transition",
    "partition_transition",
    "replica_transition_failed",
    "partition_transition_failed",
)


@dataclass(frozen=True)
class Cell:
    """Lines of one file that share status, kind, controller, broker, epoch and logged transition (and for
    a completed deletion its topic and timestamp); timestamps as ``ts_key`` longs."""

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
    lines: int
    first_ts: int | None
    last_ts: int | None


def ts_key(ts: Column) -> Column:
    """A log timestamp ``yyyy-MM-dd HH:mm:ss,SSS`` (fixed width, ``lines.TS``) as the long ``yyyyMMddHHmmssSSS``.

    Same order as the text; a long keeps min/max in Spark's fixed-width hash aggregation (a string would make
    it sort the whole input) and is cheaper to shuffle and sort. The JVM reader computes it while parsing."""
    return F.translate(ts, "-: ,", "").cast("long")


def ts_column_text(key: Column) -> Column:
    """``ts_key`` back to the log's text (``yyyy-MM-dd HH:mm:ss,SSS``), as a column."""
    d = F.lpad(key.cast("string"), 17, "0")
    parts: list[Column] = []
    for sep, (start, width) in zip(
        ("", "-", "-", " ", ":", ":", ","),
        ((1, 4), (5, 2), (7, 2), (9, 2), (11, 2), (13, 2), (15, 3)),
        strict=True,
    ):
        parts += [F.lit(sep), F.substring(d, start, width)]
    return F.when(key.isNotNull(), F.concat(*parts))


def ts_text(key: int | None) -> str | None:
    """``ts_key`` back to the log's text."""
    if key is None:
        return None
    d = f"{key:017d}"
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]},{d[14:17]}"


def line_cube(stored: DataFrame) -> list[Cell]:
    """One aggregation over the stored parse (``fid``, ``status``, ``ts`` as a long and the fields)."""
    is_transition = F.col("kind").isin(*TRANSITION_KINDS)
    is_deletion = (F.col("kind") == COMPLETED) & (F.col("status") == "record")
    cells = (
        stored.select(
            "fid",
            "status",
            "ts",
            *[c for c in GROUP[2:6]],
            F.when(is_transition, F.col("from_state")).alias("from_state"),
            F.when(is_transition, F.col("to_state")).alias("to_state"),
            F.when(is_deletion, F.col("topics")).alias("del_topics"),
            F.when(is_deletion, F.col("ts")).alias("del_ts"),
        )
        .groupBy(*GROUP)
        .agg(
            F.count(F.lit(1)).alias("lines"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
        .collect()
    )
    return [Cell(**r.asDict()) for r in cells]


def _read_value(text: str, at: int) -> tuple[str | None, int]:
    if text[at] == "-":
        return None, at + 1
    colon = text.index(":", at)
    end = colon + 1 + int(text[at:colon])
    return text[colon + 1 : end], end


def cells_from_text(text: str) -> list[Cell]:
    """The cells ``LineParser.Cube`` counted while reading (``jvm_parser.cube_text``): per line
    ``fid,`` then status, kind, controller id, broker, controller epoch, from state, to state, deletion topic
    and deletion timestamp (each ``length:value`` or ``-``), then ``lines,first,last``."""
    cells: list[Cell] = []
    at = 0
    while at < len(text):
        comma = text.index(",", at)
        fid = int(text[at:comma])
        at = comma + 1
        values: list[str | None] = []
        for _ in range(9):
            v, at = _read_value(text, at)
            values.append(v)
        end = text.index("\n", at)
        lines, first, last = text[at:end].split(",")
        at = end + 1

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
                lines=int(lines),
                first_ts=int(first) if first else None,
                last_ts=int(last) if last else None,
            )
        )
    return cells


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


def deletion_intervals(
    stored: DataFrame, cells: Iterable[Cell], history: Sequence[int]
) -> dict[tuple[int, str], list[tuple[int, int | None]]]:
    """(history id, topic) → disjoint ``(queued, completed)`` timestamps (``ts_key``; ``None`` while open),
    sorted. A topic is queued for deletion from a "Starting topic deletion" / "Handling deletion" record
    until the first "Deletion of topic … successfully completed" record at or after it (a queuing with only
    earlier completions of that topic opens no interval). Queuings that end at the same completion form one
    interval from the earliest of them: such intervals share their end, and those with different ends are
    disjoint, so the earliest queuing whose interval holds a time is that interval's start.
    """
    done: dict[tuple[int, str], set[int]] = {}
    for c in _records(cells):
        if c.kind == COMPLETED and c.del_ts is not None and c.del_topics is not None:
            done.setdefault((history[c.fid], c.del_topics), set()).add(c.del_ts)
    spark = stored.sparkSession
    rows = [(h, t, sorted(ds)) for (h, t), ds in sorted(done.items())]
    completions = local_frame(spark, rows, "hid int, topic string, ends array<long>")
    topic = F.explode(F.split(F.regexp_replace(F.col("topics"), TOPIC_SET_NOISE, ""), ","))
    queued = (
        stored.where((F.col("status") == "record") & (F.col("kind") == QUEUED))
        .select("hid", topic.alias("topic"), F.col("ts").alias("q"))
        .where(F.col("topic") != "")
        .join(F.broadcast(completions), ["hid", "topic"], "left")
    )
    # the first completion at or after q (``ends`` is sorted); none at all: open; only earlier ones: no interval
    after = F.filter("ends", lambda d: d >= F.col("q"))
    merged = (
        queued.where(F.col("ends").isNull() | (F.size(after) > 0))
        .groupBy("hid", "topic", F.when(F.col("ends").isNotNull(), after[0]).alias("d"))
        .agg(F.min("q").alias("q"))
        .collect()
    )
    out: dict[tuple[int, str], list[tuple[int, int | None]]] = {}
    for r in merged:
        out.setdefault((int(r["hid"]), str(r["topic"])), []).append(
            (int(r["q"]), None if r["d"] is None else int(r["d"]))
        )
    return {k: sorted(v) for k, v in sorted(out.items())}
