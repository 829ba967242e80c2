"""Counts of the stored parse from one aggregation: line numbering, statistics, coverage, fencing epochs.

``line_cube`` scans the stored parse once and groups its lines by (file split, status, kind, controller,
broker, controller epoch, logged transition): a table of at most a few cells per file and epoch, collected to
the driver. Everything else is derived from it there, with no further pass over the corpus:

* ``split_table`` — per file split, its line count and first row id (the line numbering of ``spark_job``);
* ``record_counts`` — records per file; ``kind_counts`` — records per kind;
* ``edge_counts`` — logged successful transitions per (from, to) of a machine (the coverage matrices);
* ``per_broker`` / ``per_epoch`` — the summary's per-broker and per-controller-epoch tables;
* ``epoch_firsts`` — per history, the first timestamp at which each controller epoch acted (the fencing rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kcspec.conformance.audit import lines as g
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

GROUP = (
    "uri",
    "block",
    "status",
    "kind",
    "controller_id",
    "broker",
    "controller_epoch",
    "from_state",
    "to_state",
)
TRANSITION_KINDS = (
    "replica_transition",
    "partition_transition",
    "replica_transition_failed",
    "partition_transition_failed",
)


@dataclass(frozen=True)
class Cell:
    """Lines of one file split that share status, kind, controller, broker, epoch and logged transition."""

    uri: str
    block: int
    status: str
    kind: str | None
    controller_id: int | None
    broker: int | None
    controller_epoch: int | None
    from_state: str | None
    to_state: str | None
    lines: int
    first_rid: int
    first_ts: str | None
    last_ts: str | None


def _ts_key(ts: str) -> Column:
    """A log timestamp ``yyyy-MM-dd HH:mm:ss,SSS`` (fixed width, ``lines.TS``) as the long ``yyyyMMddHHmmssSSS``.

    Same order as the text; a long keeps min/max in Spark's fixed-width hash aggregation (a string would make
    it sort the whole input)."""
    return F.translate(F.col(ts), "-: ,", "").cast("long")


def _ts_text(key: int | None) -> str | None:
    if key is None:
        return None
    d = f"{key:017d}"
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]},{d[14:17]}"


def line_cube(stored: DataFrame) -> list[Cell]:
    """One aggregation over the stored parse (``uri``, ``block``, ``rid``, ``status``, ``ts`` and the fields)."""
    is_transition = F.col("kind").isin(*TRANSITION_KINDS)
    cells = (
        stored.select(
            "uri",
            "block",
            "rid",
            "status",
            _ts_key("ts").alias("ts"),
            *[c for c in GROUP[3:7]],
            F.when(is_transition, F.col("from_state")).alias("from_state"),
            F.when(is_transition, F.col("to_state")).alias("to_state"),
        )
        .groupBy(*GROUP)
        .agg(
            F.count(F.lit(1)).alias("lines"),
            F.min("rid").alias("first_rid"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
        .collect()
    )
    return [
        Cell(**dict(r.asDict(), first_ts=_ts_text(r["first_ts"]), last_ts=_ts_text(r["last_ts"])))
        for r in cells
    ]


def split_table(cells: Iterable[Cell]) -> dict[tuple[str, int], tuple[int, int]]:
    """(uri, block) → (lines, first row id) of every file split."""
    out: dict[tuple[str, int], tuple[int, int]] = {}
    for c in cells:
        key = (c.uri, int(c.block))
        n, first = out.get(key, (0, c.first_rid))
        out[key] = (n + c.lines, min(first, c.first_rid))
    return out


def _records(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "record"]


def record_counts(cells: Iterable[Cell], name: Callable[[str], str]) -> dict[str, int]:
    """File name (``name`` of its URI) → record lines."""
    out: dict[str, int] = {}
    for c in _records(cells):
        out[name(c.uri)] = out.get(name(c.uri), 0) + c.lines
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
    return (min(firsts) if firsts else None, max(lasts) if lasts else None)


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
    cells: Iterable[Cell], kinds: Iterable[str], history: Callable[[str], str]
) -> dict[str, dict[int, str]]:
    """history → controller epoch → the first timestamp of a record of ``kinds`` carrying that epoch."""
    wanted = set(kinds)
    out: dict[str, dict[int, str]] = {}
    for c in _records(cells):
        if c.kind in wanted and c.controller_epoch is not None and c.first_ts is not None:
            epochs = out.setdefault(history(c.uri), {})
            old = epochs.get(c.controller_epoch)
            epochs[c.controller_epoch] = c.first_ts if old is None else min(old, c.first_ts)
    return out
