"""Replay of recorded history against the spec: the rules over parsed Kafka log records (``log_rules``: one
pass of ``HistoryRules.java`` over the records sorted by partition history) and over trace facts
(``trace_rules``: Spark queries).

The transition tables come from the profile (``Profile.replica_valid_previous`` /
``partition_valid_previous``, i.e. ``kcspec.spec.tables``) and are shipped to the JVM as data (literal maps,
or ``history_config``'s string); nothing here restates them (DESIGN.md rule 1).

Histories are grouped per partition (partition machine, leader/ISR records) and per replica (replica
machine) and ordered by controller epoch, then position (timestamp, file, line). The *tracked* previous
state of an element is the target of its previous logged transition in the same controller epoch (a new
controller rebuilds its states from ZooKeeper without logging transitions, so tracking restarts).

Decisions where the semantics document is silent:
* "Leader in ISR unless the election was unclean": an unclean election writes ISR = [leader] (§6), so
  leader ∈ ISR holds after it too and the rule is checked on every leader/ISR record with leader ≥ 0;
  leader −2 (UpdateMetadata for a topic being deleted, §3.2) is exempt from I1 and I3.
* Leader-epoch monotonicity (I6) is checked on controller *writes* only (Online transitions with a
  LeaderAndIsr and ISR removals); requests carry cached values and may repeat an epoch. A transition from
  NewPartition starts a new history (creation writes epoch 0; a re-created topic restarts at 0). An ISR
  removal that repeats the previous leader epoch is Kafka logging a partition it did not write (the replica
  was not in its ISR, §4.3 step 3c), so it is exempt from the "equal epoch" case.
* Histories: files are grouped into independent histories (``hid`` column: the file's directory by
  default, or each file on its own) — controller epochs of different clusters are not comparable.
* Fencing compares timestamps of different brokers' files; clock skew between brokers can make it report
  a write that was in fact earlier. The first timestamp at which an epoch acted is the earliest record
  carrying that epoch (state-change lines, or the controller's own election line).
* No election for topics queued for deletion (I13): a topic is queued from a "Starting topic deletion" /
  "Handling deletion" line until "Deletion of topic … successfully completed"; New→Online is exempt (§11).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from kcspec.audit import eras as eras_
from kcspec.audit import findings, stats
from kcspec.model.kafka_log import lines as g
from kcspec.spec.profiles import Profile
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import _parse_datatype_string

S = TypeVar("S", bound=Enum)


@dataclass(frozen=True)
class Rule:
    code: str
    section: str
    text: str


RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule(
            "invalid-transition",
            "§2.1/§2.2, I20",
            "logged transition is not valid from the logged previous state",
        ),
        Rule("invalid-from-tracked", "§2.3, I20", "transition is not valid from the tracked previous state"),
        Rule(
            "previous-state-mismatch", "§2.3", "logged previous state differs from the tracked previous state"
        ),
        Rule("rejected-valid-transition", "§2.3 step 4", "Kafka rejected a transition the spec allows"),
        Rule(
            "valid-previous-list-differs",
            "§10.3",
            "the valid previous states Kafka printed differ from the spec",
        ),
        Rule("leader-not-in-isr", "§11 I1", "leader is not in the ISR"),
        Rule("empty-isr", "§11 I3", "ISR is empty"),
        Rule(
            "leader-epoch-not-increasing", "§11 I6", "leader epoch did not increase across controller writes"
        ),
        Rule("election-for-deleting-topic", "§11 I13", "leader election for a topic queued for deletion"),
        Rule(
            "stale-controller-write",
            "§9, I8",
            "a write by an older controller after a newer controller acted",
        ),
        Rule("unreachable-state-change", "§2.1/§2.2", "state changed along no path of valid transitions"),
        Rule("controller-epoch-decreased", "§11 I9", "ZooKeeper controller epoch decreased"),
    )
}

VIOLATION_COLUMNS = (
    "file",
    "line",
    "ts",
    "rule",
    "section",
    "message",
    "machine",
    "topic",
    "partition",
    "replica",
    "controller_id",
    "controller_epoch",
    "compared_file",
    "compared_line",
)
"""A violation: where (file, line, ts), which rule, in words, about what; ``compared_file``/``compared_line``
name the earlier line a history rule compared the offending line with (null for rules about one line)."""

WRITE_KINDS = (
    "replica_transition",
    "partition_transition",
    "isr_removal",
    "lair_sent",
    "umr_sent",
    "stop_replica_sent",
    "reassign_lair_sent",
    "replica_transition_failed",
    "partition_transition_failed",
)
FAILED_KINDS = ("replica_transition_failed", "partition_transition_failed")
LEADER_ISR_KINDS = ("partition_transition", "isr_removal", "lair_sent", "umr_sent", "reassign_lair_sent")


def reachable(table: Mapping[S, tuple[S, ...]]) -> dict[str, list[str]]:
    """state → states reachable in one or more valid transitions (derived from the table)."""
    succ: dict[str, set[str]] = {}
    for target, prevs in table.items():
        for p in prevs:
            succ.setdefault(p.name, set()).add(target.name)
    out: dict[str, list[str]] = {}
    for start in {s.name for s in table} | set(succ):
        seen: set[str] = set()
        todo = list(succ.get(start, ()))
        while todo:
            s = todo.pop()
            if s not in seen:
                seen.add(s)
                todo.extend(succ.get(s, ()))
        out[start] = sorted(seen)
    return out


def _violation(df: DataFrame, rule: str, message: Column, machine: Column | None = None) -> DataFrame:
    r = RULES[rule]
    return df.select(
        "file",
        "line",
        "ts",
        F.lit(r.code).alias("rule"),
        F.lit(r.section).alias("section"),
        F.concat(F.lit(r.text + ": "), message).alias("message"),
        (machine if machine is not None else F.col("machine")).alias("machine"),
        "topic",
        "partition",
        F.col("replica").cast("int").alias("replica"),
        F.col("controller_id").cast("int").alias("controller_id"),
        F.col("controller_epoch").cast("int").alias("controller_epoch"),
        F.lit(None).cast("string").alias("compared_file"),
        F.lit(None).cast("long").alias("compared_line"),
    )


def _tp() -> Column:
    return F.concat(F.col("topic"), F.lit("-"), F.col("partition").cast("string"))


def _element() -> Column:
    return F.when(
        F.col("machine") == "replica",
        F.concat(F.lit("replica "), F.col("replica").cast("string"), F.lit(" of "), _tp()),
    ).otherwise(F.concat(F.lit("partition "), _tp()))


def _isr_array() -> Column:
    return F.when(F.col("isr") == "", F.array().cast("array<int>")).otherwise(
        F.split(F.col("isr"), ",").cast("array<int>")
    )


def trace_only_targets(profile: Profile, machine: str) -> frozenset[str]:
    """Target states whose success line Kafka logs only at TRACE, invisible with the default INFO configuration
    (§10.1, §10.3, §10.4): every replica transition; in 2.8 the partition transitions to OfflinePartition and
    NonExistentPartition; in 1.1 every partition transition (KAFKA-8470 moved New/Online to INFO in 2.6)."""
    if machine == "replica":
        return frozenset(s.name for s in profile.replica_valid_previous)
    if profile.offline_replica_state_change_line:  # 2.8-era logging
        return frozenset({"OfflinePartition", "NonExistentPartition"})
    return frozenset(s.name for s in profile.partition_valid_previous)


def traced_epochs(
    cells: Iterable[stats.Cell], profile: Profile, history: Sequence[int]
) -> frozenset[tuple[int, int]]:
    """(history id, controller epoch) whose log is at TRACE, as the log itself shows: it holds a transition
    whose success line Kafka logs only at TRACE (``trace_only_targets``: any replica transition; a partition
    transition to a target the profile's INFO level hides). Such a line comes from ``state.change.logger`` at
    TRACE, which logs every transition of both machines, so no transition of that controller epoch is hidden
    and the tracked rules (``history_rules``) check every one.

    Decision: one controller epoch is one controller's logging (the tracked rules compare within an epoch);
    a log level changed at run time in the middle of an epoch would make this read the whole epoch as TRACE."""
    traced = {
        "replica": trace_only_targets(profile, "replica"),
        "partition": trace_only_targets(profile, "partition"),
    }
    out: set[tuple[int, int]] = set()
    for c in cells:
        if c.status != "record" or c.controller_epoch is None or c.to_state is None:
            continue
        machine = (
            MACHINES[0] if c.kind == HISTORY_KINDS[0] else MACHINES[1] if c.kind == HISTORY_KINDS[1] else None
        )
        to = g.LEGACY_STATE_NAMES.get(c.to_state, c.to_state)
        if machine is not None and to in traced[machine]:
            out.add((history[c.fid], c.controller_epoch))
    return frozenset(out)


def hidden_reach(table: Mapping[S, tuple[S, ...]], hidden: frozenset[str]) -> dict[str, list[str]]:
    """state → states reachable from it through transitions whose lines may be absent from an INFO log."""
    succ: dict[str, set[str]] = {}
    for target, prevs in table.items():
        if target.name in hidden:
            for p in prevs:
                succ.setdefault(p.name, set()).add(target.name)
    out: dict[str, list[str]] = {}
    for start in {s.name for s in table}:
        seen: set[str] = set()
        todo = list(succ.get(start, ()))
        while todo:
            s = todo.pop()
            if s not in seen:
                seen.add(s)
                todo.extend(succ.get(s, ()))
        out[start] = sorted(seen)
    return out


LOG_VIOLATION_COLUMNS = ("fid", *VIOLATION_COLUMNS[1:-2], "compared_fid", "compared_line")
"""Violations of log rules before ``named``: the file's id instead of its name, ``ts`` as ``stats.ts_key``."""


def named(violations: DataFrame, names: Column) -> DataFrame:
    """Log-rule violations with ``file`` (``names``: an array column of file names by id) and ``ts`` as text."""
    return violations.select(
        F.element_at(names, F.col("fid") + 1).alias("file"),
        "line",
        stats.ts_column_text(F.col("ts")).alias("ts"),
        *VIOLATION_COLUMNS[3:-2],
        F.element_at(names, F.col("compared_fid") + 1).alias("compared_file"),
        "compared_line",
    )


def log_rules(
    events: DataFrame,
    profile: Profile,
    firsts: Mapping[int, Mapping[int, int]] | eras_.Eras,
    deletions: Mapping[tuple[int, str], list[tuple[int, int | None]]],
    names: Column,
    rows: int = 0,
    traced: Iterable[tuple[int, int]] = (),
) -> DataFrame:
    """All violations found in parsed Kafka log records: ``events`` holds the stored parse's records of
    ``WRITE_KINDS`` (others are ignored), with their ``exception`` (a failed transition's first continuation
    line). ``firsts`` (``eras.find``'s eras and fences, or for one era per history: history id → controller
    epoch → first ``ts_key`` at which it acted) and ``deletions`` (``stats.deletion_intervals``) come from the
    statistics; ``names`` is an array
    column of file names by file id (the leader-epoch rule's message names the earlier write); ``rows``, when
    known, is how many records ``events`` holds (``history_rules`` sorts them in pieces of ``SORT_ROWS``).

    One pass (``HistoryRules.java``) over one shuffle of the records by partition history and one sort
    evaluates every rule: those about one record (invalid transitions, leader/ISR invariants, writes by a
    fenced controller, elections for a topic queued for deletion, failed transitions against the valid
    previous states Kafka printed) and those comparing a record with an earlier one of its history (see
    ``history_rules``).

    Decision (measured): the rules about one record were a Spark query of their own (a scan with two
    broadcast joins, then the failed transitions' own scan); in the pass they cost no scan and no join, and
    the shuffle carries the records they read anyway."""
    found = eras_of(firsts)
    return history_rules(
        events,
        profile,
        names,
        fence_records(found),
        deletion_records(deletions),
        rows,
        found.starts_of(),
        traced,
    )


HISTORY_COLUMNS = (
    "fid",
    "line",
    "ts",
    "hid",
    "kind",
    "topic",
    "partition",
    "replica",
    "controller_id",
    "controller_epoch",
    "from_state",
    "to_state",
)
"""What the history rules read (and shuffle), with ``leader_epoch``: nothing else of a record crosses the
shuffle."""

HISTORY_KEYS = ("hid", "topic", "partition")
"""A partition history: the rows ``history_rules`` shuffles together and walks as one group."""
ERA = "era"
"""A row's controller-epoch era in its history (``eras``), computed just before the pass's sort (``_walk``)."""
HISTORY_ORDER = (ERA, "controller_epoch", "ts", "fid", "line")
"""The order of a group's rows (ascending, nulls first: Spark's default, as the windows the pass replaced); an
era's rows come before the next era's, and what the rules remember is reset between eras."""

EPOCH_WRITE_TARGET = "OnlinePartition"
"""The partition transitions (with a leader epoch) that are controller writes of the leader-epoch rule."""
NEW_HISTORY_STATE = "NewPartition"
"""A write from this state starts a new leader-epoch history (creation writes epoch 0)."""
HISTORY_KINDS = ("replica_transition", "partition_transition", "isr_removal")
"""The kinds the history rules read: the two machines' transitions, and ISR removals (writes)."""
MACHINES = ("replica", "partition")
"""``machine`` of a replica / partition transition's violation."""
ELECTION = ("partition_transition", "OnlinePartition", "OfflinePartition", "OnlinePartition")
"""An election (rule I13): the kind, the target state as logged, the previous states as logged (§11: New →
Online is a topic's creation, not an election)."""
LEADER_DURING_DELETE = -2
"""``LeaderAndIsr.LeaderDuringDelete``: the leader of a partition whose topic is being deleted (§3.2); its
UpdateMetadata requests are exempt from the empty-ISR rule (I3) and the leader-in-ISR rule (I1, leader < 0)."""
PRINTED_VALID_PREVIOUS = r"should be in (?:the|one of) (\S+) states"
"""What Kafka prints in a rejected transition's exception before the valid previous states (§10.3)."""
ROW_RULES = {
    "rule-invalid": "invalid-transition",
    "rule-not-in-isr": "leader-not-in-isr",
    "rule-empty-isr": "empty-isr",
    "rule-stale": "stale-controller-write",
    "rule-deleting": "election-for-deleting-topic",
    "rule-rejected": "rejected-valid-transition",
    "rule-list-differs": "valid-previous-list-differs",
}
"""The rules about one record, by the name ``HistoryRules.java`` reads them under."""
HISTORY_RULES = ("invalid-from-tracked", "previous-state-mismatch", "leader-epoch-not-increasing")
"""The rules ``history_rules`` evaluates (``RULES`` codes)."""


LOG_ROW_COLUMNS = (*HISTORY_COLUMNS, "leader_epoch", "leader", "isr", "exception")
"""What the log rules' pass reads of a record (and shuffles): nothing else of it crosses the shuffle."""


def history_rows(events: DataFrame) -> DataFrame:
    """The records the log rules read: every record of ``events`` (``WRITE_KINDS``), ``PASS_COLUMNS`` only
    (a column the caller's frame lacks is null; ``role`` is ``event``). The history rules read every logged
    transition (tracked rules) and every controller write (leader-epoch rule: a transition to
    ``EPOCH_WRITE_TARGET`` with a leader epoch, or an ISR removal); the pass skips the other records for them."""
    have = set(events.columns)
    rows = events.select(
        *[F.col(c) if c in have else F.lit(None).alias(c) for c in LOG_ROW_COLUMNS],
        F.lit(ROLES["event"]).alias("role"),
        *[F.lit(None).alias(c) for c in PASS_COLUMNS[len(LOG_ROW_COLUMNS) + 1 : -1]],
    )
    return rows.withColumn(GROUP, _group())


def eras_of(firsts: Mapping[int, Mapping[int, int]] | eras_.Eras) -> eras_.Eras:
    """``firsts`` as ``eras.Eras``: as it is, or (history id → controller epoch → first ``ts_key`` at which it
    acted) one era per history, fenced where a newer epoch first acted (the acts' lines unknown)."""
    if isinstance(firsts, eras_.Eras):
        return firsts
    acts = {
        h: [eras_.Act(ts, ts, e, -1, None, False) for e, ts in epochs.items()] for h, epochs in firsts.items()
    }
    fences = [f for h, mine in acts.items() for f in eras_.fences_of(h, 0, mine)]
    return eras_.Eras((), tuple(fences))


def fence_records(found: eras_.Eras) -> list[list[str]]:
    """``history_config``'s fence records: per history, era and controller epoch, when a newer epoch first
    acted after it (a ``ts_key``, its text), which, and where (file id and line, empty when unknown): the
    stale-controller-write rule (§9, I8) and the line it compares with."""

    def text(v: int | None) -> str:
        return "" if v is None or v < 0 else str(v)

    return [
        [
            "fence",
            str(f.history),
            str(f.era),
            str(f.epoch),
            str(f.ts),
            str(stats.ts_text(f.ts)),
            str(f.newer),
            text(f.fid),
            text(f.line),
        ]
        for f in found.fences
    ]


def deletion_records(deletions: Mapping[tuple[int, str], list[tuple[int, int | None]]]) -> list[list[str]]:
    """``history_config``'s deletion records: per history and topic, each interval it was queued for deletion
    (``stats.deletion_intervals``: queued, completed or "" while open, the queuing's text), for rule I13."""
    return [
        ["deletion", str(h), topic, str(q), "" if d is None else str(d), str(stats.ts_text(q))]
        for (h, topic), intervals in sorted(deletions.items())
        for q, d in intervals
    ]


def history_config(
    profile: Profile,
    fences: list[list[str]] | None = None,
    deletions: list[list[str]] | None = None,
    traced: Iterable[tuple[int, int]] = (),
) -> str:
    """What ``HistoryRules.java`` reads of the spec and of these rules, as one string (records split by
    U+0003, units by U+0002): the legacy state names (``lines.LEGACY_STATE_NAMES``), both machines' tables
    of valid previous states (the profile's), the states reachable through transitions an INFO log may not
    show (``hidden_reach`` of ``trace_only_targets``), the kinds, states and machine names above and the
    rules' codes, sections and texts (``RULES``), and the controller epochs whose log is at TRACE
    (``traced_epochs``: no transition hidden). Nothing of it is restated in Java."""
    records = [["legacy", old, new] for old, new in g.LEGACY_STATE_NAMES.items()]
    records += _table_records(
        "replica", profile.replica_valid_previous, trace_only_targets(profile, "replica")
    )
    records += _table_records(
        "partition", profile.partition_valid_previous, trace_only_targets(profile, "partition")
    )
    records += [
        ["kinds", *HISTORY_KINDS],
        ["states", EPOCH_WRITE_TARGET, NEW_HISTORY_STATE],
        ["machines", *MACHINES],
    ]
    for name, code in zip(("rule-from-tracked", "rule-mismatch", "rule-epoch"), HISTORY_RULES, strict=True):
        records.append([name, code, RULES[code].section, RULES[code].text])
    records += [
        ["replica-machine-kinds", *[k for k in WRITE_KINDS if k.startswith("replica_transition")]],
        ["partition-machine-kinds", *[k for k in WRITE_KINDS if k.startswith("partition_transition")]],
        ["transition-kinds", *HISTORY_KINDS[:2]],
        ["leader-isr-kinds", *LEADER_ISR_KINDS],
        ["write-kinds", *WRITE_KINDS],
        ["failed-kinds", *FAILED_KINDS],
        ["election", *ELECTION],
        ["leader-during-delete", str(LEADER_DURING_DELETE)],
        ["printed-list", PRINTED_VALID_PREVIOUS],
        ["profile", profile.name],
        ["roles", *[str(ROLES[r]) for r in ("event", "finding", "quarantined")]],
        ["outputs", *OUTPUTS],
    ]
    for name, code in ROW_RULES.items():
        records.append([name, code, RULES[code].section, RULES[code].text])
    records += fences or []
    records += deletions or []
    records += [["traced", str(h), str(e)] for h, e in sorted(traced)]
    return "\u0003".join("\u0002".join(r) for r in records)


def _table_records(machine: str, table: Mapping[S, tuple[S, ...]], hidden: frozenset[str]) -> list[list[str]]:
    """``history_config``'s records of one machine: its valid previous states per target, and per state the
    states reachable from it through transitions to ``hidden`` targets (``hidden_reach``)."""
    records = [["valid", machine, target.name, *[p.name for p in prevs]] for target, prevs in table.items()]
    reach = hidden_reach(table, hidden)
    return records + [["hidden", machine, state, *targets] for state, targets in sorted(reach.items())]


def history_rules(
    events: DataFrame,
    profile: Profile,
    names: Column,
    fences: list[list[str]] | None = None,
    deletions: list[list[str]] | None = None,
    rows: int = 0,
    starts: Mapping[int, list[int]] | None = None,
    traced: Iterable[tuple[int, int]] = (),
) -> DataFrame:
    """The log rules' pass (``HistoryRules.java``) over one shuffle and one sort of ``events`` (``starts``:
    where each history's eras 1, 2, … begin, ``eras.Eras.starts_of``): the rules about
    one record (``log_rules``; with no ``fences`` / ``deletions`` records, no write is fenced and no topic is
    queued for deletion), and the rules comparing a record with an earlier one of its partition history:

    * tracked previous state (§2.3, I20): the tracked previous state of an element (machine, replica) is the
      target of its previous logged transition in the same controller epoch, by position (ts, file, line);
      a new controller rebuilds its states from ZooKeeper without logging transitions, so tracking restarts.
      Decision: the tracked previous state may have moved on through transitions an INFO-level log does not
      show (their lines are TRACE); a mismatch is reported only when no such hidden path explains it. In a
      controller epoch whose log is at TRACE (``traced``, ``traced_epochs``) nothing is hidden: every
      transition is checked.
    * leader-epoch monotonicity (§11 I6) across controller writes of a partition, by controller epoch, then
      position. §4.3 steps 3c and 4: a partition whose ISR does not hold the replica is not written, yet its
      (unchanged) record is logged "after removing replica"; an ISR removal with the previous leader epoch
      is that restatement, not a write. Only a lower epoch is a violation there.

    Decision (measured): the rows of both rules are shuffled once by ``HISTORY_KEYS`` and sorted once within
    partitions by the keys and ``HISTORY_ORDER``. Each group's rows come in the order both windows this
    replaced used (the epoch rule's writes by controller epoch and position; an element's transitions in one
    controller epoch by position; nulls first), so one walk per group finds every "previous" row they found.
    On 10 M lines (local[2], warm JVM): 10.2-11.9 JVM CPU s (5.4-6.3 s wall), against 19.4-20.1 (11 s) for
    the two windows (each its own shuffle and sort) and 19.7-20.0 (11 s) for the two windows over one shared
    repartition (still two sorts). The sort is led by ``GROUP``, the keys' hash, computed once per row before
    the shuffle: Spark's sort compares an 8-byte prefix of its first key before the rows, and rows of
    different histories then differ there (led by the history id, which a cluster's rows share, every
    comparison compared the rows: the topics' bytes were a fifth of the pass's time). On 10 M lines: the sort
    7.7-9.6 → 5.9-6.6 JVM CPU s. (Hashing in the sort's own key, as the windows did, cost about 2 JVM CPU s
    more: the hash was computed at every comparison.)

    The result has ``LOG_VIOLATION_COLUMNS`` (``violations_of``). The audit itself runs the same pass over
    the reader's rows as ``shuffled`` leaves them (``log_pass``), findings and quarantined lines included."""
    spark: Any = events.sparkSession
    split = history_rows(events).repartition(spread(spark, rows), GROUP)
    config = history_config(profile, fences, deletions, traced)
    return violations_of(_walk(split, config, starts), names)


def pass_rows(parsed: DataFrame) -> DataFrame:
    """What of the JVM reader's parse (``jvm_parser.stored_schema``) crosses the log rules' shuffle,
    ``PASS_COLUMNS``: the records the rules read (``WRITE_KINDS``: role ``event``), the findings
    (``findings.FINDING_KINDS``: role ``finding``; a record may be both) and the quarantined lines (role
    ``quarantined``, with their text and reason). Nothing else of a line goes further: the reader counted it."""
    record = F.col("status") == "record"
    quarantined = F.col("status") == "quarantined"
    role = (
        F.when(record & F.col("kind").isin(*WRITE_KINDS), ROLES["event"]).otherwise(0)
        + F.when(record & F.col("kind").isin(*findings.FINDING_KINDS), ROLES["finding"]).otherwise(0)
        + F.when(quarantined, ROLES["quarantined"]).otherwise(0)
    )
    text = F.when(quarantined, F.col("text")).alias("text")
    rows = parsed.select(*LOG_ROW_COLUMNS, role.alias("role"), "broker", text, "reason", _group())
    return rows.where(F.col("role") > 0)


def _group() -> Column:
    """``GROUP``: the hash of a row's ``HISTORY_KEYS``."""
    return F.hash(*HISTORY_KEYS).alias(GROUP)


def shuffled(rows: DataFrame, records: int) -> DataFrame:
    """``rows`` (``pass_rows``) shuffled for the log rules' pass, the shuffle computed: when this returns, the
    logs have been read and parsed (the reader's cells are counted) and the rows lie in the shuffle's files,
    which every pass over the result reads (``log_pass``). A partition history's records go to one partition
    (hashed by ``HISTORY_KEYS``); findings and quarantined lines that are no such record are spread by their
    position. ``records`` is about how many rows there are (``spread``).

    Decision (measured): the parse is not stored. It was written as Parquet once and read again by the rules'
    pass, the findings and the quarantine; the shuffle the pass needs carries all three, and the reader's
    cells, which the pass's fence and deletion data come from, are known once the shuffle's map stage has run
    (``HistoryRules.materialized``). On 10 M lines: parse and store 53.5 JVM CPU s, then 26.4 for the pass
    and 14.7 for the findings, against about 52 for parse and shuffle, 18 for the pass (prototype, cold JVM)."""
    spark: Any = rows.sparkSession
    event = F.coalesce(F.col("role"), F.lit(ROLES["event"])).bitwiseAND(ROLES["event"]) != 0
    by = F.when(event, F.col(GROUP)).otherwise(F.hash("fid", "line"))
    split = rows.repartition(spread(spark, records), by)
    return DataFrame(spark.sparkContext._jvm.kcspec.audit.HistoryRules.materialized(split._jdf), spark)


def log_pass(
    rows: DataFrame,
    profile: Profile,
    firsts: Mapping[int, Mapping[int, int]] | eras_.Eras,
    deletions: Mapping[tuple[int, str], list[tuple[int, int | None]]],
    fids: list[int] | None = None,
    passthrough: bool = True,
    traced: Iterable[tuple[int, int]] = (),
) -> DataFrame:
    """The log rules' pass over ``shuffled`` rows, as ``log_rules`` describes it, with ``RESULT_COLUMNS``:
    each violation (``what`` = ``OUTPUTS[0]``), and, when ``passthrough``, each finding and quarantined line
    as it came (``OUTPUTS[1]``, ``OUTPUTS[2]``). ``fids``: the files whose records the rules read (all if
    ``None``; a history audited with another profile is another pass, which passes nothing on); ``traced``:
    the (history, controller epoch) pairs whose log is at TRACE (``traced_epochs``)."""
    if fids is not None or not passthrough:
        role = F.coalesce(F.col("role"), F.lit(ROLES["event"]))
        event = role.bitwiseAND(ROLES["event"]) != 0
        if fids is not None:
            event = event & F.col("fid").isin(fids)
        others = role.bitwiseAND(ROLES["finding"] | ROLES["quarantined"]) if passthrough else F.lit(0)
        rows = rows.withColumn("role", F.when(event, ROLES["event"]).otherwise(0) + others)
        rows = rows.where(F.col("role") > 0)
    found = eras_of(firsts)
    config = history_config(profile, fence_records(found), deletion_records(deletions), traced)
    return _walk(rows, config, found.starts_of())


def era_column(starts: Mapping[int, list[int]] | None) -> Column:
    """A row's era (``ERA``): how many of its history's era starts (``ts_key``, ascending) its timestamp has
    reached; 0 without eras or without a timestamp."""
    if not starts:
        return F.lit(0)
    table = F.create_map(
        *[x for h, ts in sorted(starts.items()) for x in (F.lit(h), F.array(*[F.lit(t) for t in ts]))]
    )
    mine = F.coalesce(table[F.col("hid")], F.array().cast("array<long>"))
    reached = F.filter(mine, lambda s: s <= F.coalesce(F.col("ts"), F.lit(-1)))
    return F.size(reached)


def _walk(split: DataFrame, config: str, starts: Mapping[int, list[int]] | None = None) -> DataFrame:
    """``HistoryRules.apply`` over ``split`` (rows already partitioned by history) with their ``ERA``
    (``era_column`` of ``starts``), sorted within its partitions by ``GROUP``, ``HISTORY_KEYS`` and
    ``HISTORY_ORDER``: rows of ``RESULT_SCHEMA``."""
    spark: Any = split.sparkSession
    split = split.withColumn(ERA, era_column(starts))
    rows_sorted = split.sortWithinPartitions(GROUP, *HISTORY_KEYS, *HISTORY_ORDER)
    jvm = spark.sparkContext._jvm
    jtype = spark._jsparkSession.parseDataType(_parse_datatype_string(RESULT_SCHEMA).json())
    return DataFrame(jvm.kcspec.audit.HistoryRules.apply(rows_sorted._jdf, config, jtype), spark)


def violations_of(result: DataFrame, names: Column) -> DataFrame:
    """The violations among a pass's ``result`` rows, ``LOG_VIOLATION_COLUMNS``; the leader-epoch message ends
    with the earlier write's file name (``names``) and line, the stale-controller-write message with the newer
    epoch's first act's, appended here (the file names live in Python)."""
    found = result.where(F.col("what") == OUTPUTS[0]).select(*LOG_VIOLATION_COLUMNS)
    epoch = F.col("rule") == HISTORY_RULES[2]
    stale = (F.col("rule") == ROW_RULES["rule-stale"]) & F.col("compared_fid").isNotNull()
    where = F.concat(
        F.element_at(names, F.col("compared_fid") + 1),
        F.lit(":"),
        F.col("compared_line").cast("string"),
    )
    message = (
        F.when(epoch, F.concat(F.col("message"), where))
        .when(stale, F.concat(F.col("message"), F.lit(" ("), where, F.lit(")")))
        .otherwise(F.col("message"))
    )
    return found.withColumn("message", message)


def spread(spark: Any, records: int) -> int:
    """How many partitions the log rules' shuffle has: the session's number, or more, so that each holds
    about ``SORT_ROWS`` of ``records`` rows."""
    return max(int(spark.conf.get("spark.sql.shuffle.partitions")), -(-records // SORT_ROWS))


SORT_ROWS = 250_000
"""Decision (measured): the log rules' pass sorts its records in shuffle partitions of about this many rows, at
least the session's number. The session's few partitions (2 per core) made each sort of a 10 M-line corpus
spill to disk; in pieces of this size it stays in memory: 22.2 and 21.2 → 19.5 and 18.5 JVM CPU s (4 against
32 partitions, same minutes, 2 cores)."""


LOG_VIOLATION_SCHEMA = (
    "fid int, line long, ts long, rule string, section string, message string, machine string, topic string, "
    "partition int, replica int, controller_id int, controller_epoch int, compared_fid int, compared_line long"
)
"""The types of ``LOG_VIOLATION_COLUMNS``, for the rows ``HistoryRules.java`` makes."""


RESULT_SCHEMA = (
    LOG_VIOLATION_SCHEMA
    + ", what string, kind string, broker int, exception string, text string, reason string"
    + ", from_state string, to_state string"
)
"""The rows of the log rules' pass (``log_pass``): a violation's ``LOG_VIOLATION_COLUMNS``, or a finding or
quarantined line passed on (its record's fields, ``kind``, ``broker``, ``exception``, a finding's logged
``from_state`` and ``to_state``; a line's ``text`` and ``reason``); ``what`` says which (``OUTPUTS``)."""

ROLES = {"event": 1, "finding": 2, "quarantined": 4}
"""What a row of the pass is for (bits of ``role``): a record the rules read, a finding, a quarantined line."""
OUTPUTS = ("violation", "finding", "quarantined")
"""``what`` of the pass's rows."""
GROUP = "group"
"""The hash of a row's ``HISTORY_KEYS``, which the log rules' shuffle partitions by and its sort is led by."""
PASS_COLUMNS = (*LOG_ROW_COLUMNS, "role", "broker", "text", "reason", GROUP)
"""What crosses the log rules' shuffle (``pass_rows``)."""


ACTING_KINDS = (*WRITE_KINDS, "controller_elected")
"""Records that show a controller epoch acting (the fencing rule's first timestamps)."""


def trace_rules(facts: DataFrame, profile: Profile) -> DataFrame:
    """Violations in canonical JSONL traces (state facts per step; see ``traces``)."""
    reach = {
        "replica": reachable(profile.replica_valid_previous),
        "partition": reachable(profile.partition_valid_previous),
    }
    base = facts.withColumn("ts", F.lit(None).cast("string"))
    st = base.where(F.col("fact").isin("replica_state", "partition_state")).withColumn(
        "machine", F.when(F.col("fact") == "replica_state", "replica").otherwise("partition")
    )
    w = Window.partitionBy("file", "machine", "topic", "partition", "replica", "controller_epoch").orderBy(
        "step"
    )
    st = st.withColumn("prev", F.lag("state").over(w))
    items: list[Column] = []
    for machine, table in reach.items():
        for s, targets in table.items():
            items += [
                F.lit(f"{machine}:{s}"),
                F.array(*[F.lit(t) for t in targets]) if targets else F.array().cast("array<string>"),
            ]
    rmap = F.create_map(*items)
    changed = st.where(F.col("prev").isNotNull() & (F.col("prev") != F.col("state")))
    bad = changed.where(
        ~F.coalesce(
            F.array_contains(rmap[F.concat(F.col("machine"), F.lit(":"), F.col("prev"))], F.col("state")),
            F.lit(False),
        )
    )
    out = [
        _violation(
            bad,
            "unreachable-state-change",
            F.concat(
                _element(),
                F.lit(" went from "),
                F.col("prev"),
                F.lit(" to "),
                F.col("state"),
                F.lit(" at step "),
                F.col("step").cast("string"),
            ),
        )
    ]
    zn = (
        base.where(F.col("fact") == "znode")
        .withColumn("machine", F.lit("partition"))
        .withColumn("isr_a", _isr_array())
    )
    zw = Window.partitionBy("file", "topic", "partition").orderBy("step")
    zn = zn.withColumn("prev_version", F.lag("zk_version").over(zw)).withColumn(
        "prev_epoch", F.lag("leader_epoch").over(zw)
    )
    fresh = zn.where(F.col("prev_version").isNull() | (F.col("prev_version") != F.col("zk_version")))
    state = F.concat(
        F.lit("partition "),
        _tp(),
        F.lit(" znode at step "),
        F.col("step").cast("string"),
        F.lit(": leader "),
        F.col("leader").cast("string"),
        F.lit(", ISR ["),
        F.col("isr"),
        F.lit("], leader epoch "),
        F.col("leader_epoch").cast("string"),
    )
    out.append(
        _violation(
            fresh.where((F.col("leader") >= 0) & ~F.array_contains("isr_a", F.col("leader"))),
            "leader-not-in-isr",
            state,
        )
    )
    out.append(_violation(fresh.where((F.col("leader") != -2) & (F.size("isr_a") == 0)), "empty-isr", state))
    out.append(
        _violation(
            zn.where(F.col("prev_epoch").isNotNull() & (F.col("leader_epoch") < F.col("prev_epoch"))),
            "leader-epoch-not-increasing",
            F.concat(state, F.lit(" after leader epoch "), F.col("prev_epoch").cast("string")),
        )
    )
    steps = base.where(F.col("fact") == "step").withColumn("machine", F.lit(None).cast("string"))
    sw = Window.partitionBy("file").orderBy("step")
    steps = steps.withColumn("prev_zk", F.lag("zk_controller_epoch").over(sw))
    out.append(
        _violation(
            steps.where(F.col("zk_controller_epoch") < F.col("prev_zk")),
            "controller-epoch-decreased",
            F.concat(
                F.lit("step "),
                F.col("step").cast("string"),
                F.lit(": "),
                F.col("prev_zk").cast("string"),
                F.lit(" → "),
                F.col("zk_controller_epoch").cast("string"),
            ),
        )
    )
    result = out[0]
    for df in out[1:]:
        result = result.unionByName(df)
    return result
