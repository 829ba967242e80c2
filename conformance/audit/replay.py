"""Replay of recorded history against the spec: the rules, each a Spark query over parsed records or facts.

The transition tables come from the profile (``Profile.replica_valid_previous`` /
``partition_valid_previous``, i.e. ``kcspec.spec.tables``) and are shipped to the JVM as literal maps;
nothing here restates them (DESIGN.md rule 1).

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

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from kcspec.conformance.audit import lines as g
from kcspec.conformance.audit import stats
from kcspec.conformance.audit.local_frames import local_frame
from kcspec.spec.profiles import Profile
from pyspark.sql import Column, DataFrame, SparkSession, Window
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


def table_map(table: Mapping[S, tuple[S, ...]]) -> Column:
    """A literal ``map<string, array<string>>``: target state name → valid previous state names."""
    items: list[Column] = []
    for target, prevs in table.items():
        items += [F.lit(target.name), F.array(*[F.lit(p.name) for p in prevs])]
    return F.create_map(*items)


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


@dataclass(frozen=True)
class Check:
    """One rule evaluated on a row: when it is violated, the message in words, the machine it concerns."""

    rule: str
    when: Column
    message: Column
    machine: Column
    compared: tuple[Column, Column] | None = None
    """The file id and line of the earlier record the rule compared this one with, if any."""


def _emit(df: DataFrame, checks: list[Check]) -> DataFrame:
    """The violations of ``checks`` on the rows of ``df`` in one pass (a row yields none, one or several).

    Rows are the stored parse's: the result has ``LOG_VIOLATION_COLUMNS`` (file id, timestamp key); the
    pipeline gives them file names and timestamp text (``named``)."""
    found = F.filter(
        F.array(
            *[
                F.when(
                    c.when,
                    F.struct(
                        F.lit(c.rule).alias("rule"),
                        F.lit(RULES[c.rule].section).alias("section"),
                        F.concat(F.lit(RULES[c.rule].text + ": "), c.message).alias("message"),
                        c.machine.cast("string").alias("machine"),
                        (c.compared[0] if c.compared else F.lit(None)).cast("int").alias("compared_fid"),
                        (c.compared[1] if c.compared else F.lit(None)).cast("long").alias("compared_line"),
                    ),
                )
                for c in checks
            ]
        ),
        lambda v: v.isNotNull(),
    )
    # rows where some rule holds are rare: the (interpreted) array of violations is built for those only
    fires = checks[0].when
    for c in checks[1:]:
        fires = fires | c.when
    hits = df.where(F.coalesce(fires, F.lit(False))).select(
        "fid",
        "line",
        "ts",
        "topic",
        "partition",
        "replica",
        "controller_id",
        "controller_epoch",
        F.explode(found).alias("_v"),
    )
    return hits.select(
        "fid",
        "line",
        "ts",
        F.col("_v.rule").alias("rule"),
        F.col("_v.section").alias("section"),
        F.col("_v.message").alias("message"),
        F.col("_v.machine").alias("machine"),
        "topic",
        "partition",
        F.col("replica").cast("int").alias("replica"),
        F.col("controller_id").cast("int").alias("controller_id"),
        F.col("controller_epoch").cast("int").alias("controller_epoch"),
        F.col("_v.compared_fid").alias("compared_fid"),
        F.col("_v.compared_line").alias("compared_line"),
    )


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


def _normalised(events: DataFrame) -> DataFrame:
    """``events`` with ``machine`` (transition records only) and their legacy state names normalised."""
    machine = F.when(F.col("kind").startswith("replica_transition"), "replica").when(
        F.col("kind").startswith("partition_transition"), "partition"
    )
    legacy_map = F.create_map(*[F.lit(x) for kv in g.LEGACY_STATE_NAMES.items() for x in kv])

    def norm(c: str) -> Column:
        return F.when(F.col("machine").isNotNull(), F.coalesce(legacy_map[F.col(c)], F.col(c))).otherwise(
            F.col(c)
        )

    with_machine = events.withColumn("machine", machine)
    return with_machine.withColumn("from_state", norm("from_state")).withColumn("to_state", norm("to_state"))


def _machine_states(events: DataFrame, profile: Profile) -> DataFrame:
    """``_normalised`` rows (normalised again if they are already) with ``valid_prev`` from the profile."""
    rep = table_map(profile.replica_valid_previous)
    par = table_map(profile.partition_valid_previous)
    return _normalised(events).withColumn(
        "valid_prev",
        F.when(F.col("machine") == "replica", rep[F.col("to_state")]).when(
            F.col("machine") == "partition", par[F.col("to_state")]
        ),
    )


def log_rules(
    spark: SparkSession,
    events: DataFrame,
    failed: DataFrame,
    profile: Profile,
    firsts: Mapping[int, Mapping[int, int]],
    deletions: Mapping[tuple[int, str], list[tuple[int, int | None]]],
    names: Column,
) -> DataFrame:
    """All violations found in parsed Kafka log records: ``events`` holds the stored parse's records of
    ``WRITE_KINDS`` (others are ignored), ``failed`` those of ``FAILED_KINDS`` (a subset of ``events``).

    Three queries over the stored parse: ``row_rules`` (rules that look at one record, among them the deletion
    rule against the deletion intervals collected from the statistics), ``history_rules`` (rules that compare
    a record with the one before it: one shuffle, one sort per window) and ``failure_rules`` (failed
    transitions with the exception line that follows them: the stored parse's ``exception``). ``firsts``
    (history id → controller epoch → first ``ts_key`` at which it acted) and ``deletions``
    (``stats.epoch_firsts`` and ``stats.deletion_intervals``) come from the statistics; ``names`` is an array
    column of file names by file id (the leader-epoch rule's message names the earlier write).

    Decision (measured): the failure rules are a query of their own over ``failed`` (a second scan, of failed
    transitions only) rather than a part of the row pass. With their two rules in it, the row pass's generated
    method grew past the 8000 bytes the session lets whole-stage code generation emit
    (``spark.sql.codegen.hugeMethodLimit``: HotSpot compiles no larger method), so the whole pass ran without
    it: 7.8-8.5 JVM CPU s on 2.2 M lines against 2.5 for the row pass without them plus 1.6-2.1 for this query.
    """
    fence = fence_table(spark, firsts)
    dels = deletion_table(spark, deletions)
    history = history_rules(events, profile, names)
    return (
        row_rules(events, profile, fence, dels)
        .unionByName(history)
        .unionByName(failure_rules(failed, profile))
    )


def _valid_list() -> Column:
    return F.concat_ws(",", F.col("valid_prev"))


def _lisr_state() -> Column:
    return F.concat(
        F.lit("partition "),
        _tp(),
        F.lit(": leader "),
        F.col("leader").cast("string"),
        F.lit(", ISR ["),
        F.col("isr"),
        F.lit("], leader epoch "),
        F.coalesce(F.col("leader_epoch").cast("string"), F.lit("?")),
        F.lit(" ("),
        F.col("kind"),
        F.lit(")"),
    )


def row_rules(
    events: DataFrame,
    profile: Profile,
    fence: DataFrame,
    deletions: DataFrame | None = None,
) -> DataFrame:
    """Rules about one record: invalid transitions, leader/ISR invariants, writes by a fenced controller,
    elections for a topic queued for deletion (``deletions``: ``deletion_table``, ``None`` when empty)."""
    writes = events.where(F.col("kind").isin(*WRITE_KINDS)).withColumns(
        {"raw_from": F.col("from_state"), "raw_to": F.col("to_state")}
    )
    ev = _machine_states(writes, profile).join(F.broadcast(fence), ["hid", "controller_epoch"], "left")
    if deletions is not None:
        # only elections look their topic up (a null key joins nothing); the intervals of a topic are
        # disjoint, so an election joins at most the one that holds it
        election = (
            (F.col("kind") == "partition_transition")
            & (F.col("raw_to") == "OnlinePartition")
            & F.col("raw_from").isin("OfflinePartition", "OnlinePartition")
        )
        ev = ev.withColumn("elected_topic", F.when(election, F.col("topic")))
        d = deletions.alias("d")
        ev = (
            ev.alias("e")
            .join(
                F.broadcast(d),
                (F.col("e.hid") == F.col("d.hid"))
                & (F.col("e.elected_topic") == F.col("d.topic"))
                & (F.col("e.ts") > F.col("d.q"))
                & (F.col("d.d").isNull() | (F.col("e.ts") < F.col("d.d"))),
                "left",
            )
            .select("e.*", F.col("d.q").alias("deletion_queued"))
        )
    ok_transition = F.col("kind").isin("replica_transition", "partition_transition")
    lisr = F.col("kind").isin(*LEADER_ISR_KINDS) & F.col("isr").isNotNull()
    isr_a = _isr_array()
    partition = F.lit("partition")
    checks = [
        Check(
            "invalid-transition",
            ok_transition
            & F.col("from_state").isNotNull()
            & ~F.array_contains("valid_prev", F.col("from_state")),
            F.concat(
                _element(),
                F.lit(" from "),
                F.col("from_state"),
                F.lit(" to "),
                F.col("to_state"),
                F.lit(" (valid previous states: "),
                _valid_list(),
                F.lit(")"),
            ),
            F.col("machine"),
        ),
        Check(
            "leader-not-in-isr",
            lisr & (F.col("leader") >= 0) & ~F.array_contains(isr_a, F.col("leader")),
            _lisr_state(),
            partition,
        ),
        Check("empty-isr", lisr & (F.col("leader") != -2) & (F.size(isr_a) == 0), _lisr_state(), partition),
        Check(
            "stale-controller-write",
            F.col("kind").isin(*WRITE_KINDS)
            & F.col("fence_ts").isNotNull()
            & (F.col("ts") > F.col("fence_ts")),
            F.concat(
                F.col("kind"),
                F.lit(" by controller "),
                F.col("controller_id").cast("string"),
                F.lit(" with epoch "),
                F.col("controller_epoch").cast("string"),
                F.lit(" after controller epoch "),
                F.col("newer_epoch").cast("string"),
                F.lit(" acted at "),
                F.col("fence_text"),
            ),
            F.lit(None),
        ),
    ]
    if deletions is not None:
        # the deletion rule reads the states as logged (not normalised)
        checks.append(
            Check(
                "election-for-deleting-topic",
                F.col("deletion_queued").isNotNull(),
                F.concat(
                    F.lit("partition "),
                    _tp(),
                    F.lit(" moved "),
                    F.col("raw_from"),
                    F.lit(" → OnlinePartition while topic "),
                    F.col("topic"),
                    F.lit(" was queued for deletion (since "),
                    stats.ts_column_text(F.col("deletion_queued")),
                    F.lit(")"),
                ),
                F.lit("partition"),
            )
        )
    return _emit(ev, checks)


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
HISTORY_ORDER = ("controller_epoch", "ts", "fid", "line")
"""The order of a group's rows (ascending, nulls first: Spark's default, as the windows the pass replaced)."""

EPOCH_WRITE_TARGET = "OnlinePartition"
"""The partition transitions (with a leader epoch) that are controller writes of the leader-epoch rule."""
NEW_HISTORY_STATE = "NewPartition"
"""A write from this state starts a new leader-epoch history (creation writes epoch 0)."""
HISTORY_KINDS = ("replica_transition", "partition_transition", "isr_removal")
"""The kinds the history rules read: the two machines' transitions, and ISR removals (writes)."""
MACHINES = ("replica", "partition")
"""``machine`` of a ``HISTORY_KINDS[0]`` / ``HISTORY_KINDS[1]`` row (``_normalised``)."""
HISTORY_RULES = ("invalid-from-tracked", "previous-state-mismatch", "leader-epoch-not-increasing")
"""The rules ``history_rules`` evaluates (``RULES`` codes)."""


def history_rows(events: DataFrame) -> DataFrame:
    """The records the history rules read: every logged transition (tracked rules) and every controller
    write (leader-epoch rule: a transition to ``EPOCH_WRITE_TARGET`` with a leader epoch, or an ISR removal);
    ``HISTORY_COLUMNS`` and ``leader_epoch`` only."""
    replica, partition, removal = HISTORY_KINDS
    kind = F.col("kind")
    transition = kind.isin(replica, partition)
    write = (
        (kind == partition) & (F.col("to_state") == EPOCH_WRITE_TARGET) & F.col("leader_epoch").isNotNull()
    ) | (kind == removal)
    return events.where(transition | write).select(*HISTORY_COLUMNS, "leader_epoch")


def history_config(profile: Profile) -> str:
    """What ``HistoryRules.java`` reads of the spec and of these rules, as one string (records split by
    U+0003, units by U+0002): the legacy state names (``lines.LEGACY_STATE_NAMES``), both machines' tables
    of valid previous states (the profile's), the states reachable through transitions an INFO log may not
    show (``hidden_reach`` of ``trace_only_targets``), the kinds, states and machine names above and the
    rules' codes, sections and texts (``RULES``). Nothing of it is restated in Java."""
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
    return "\u0003".join("\u0002".join(r) for r in records)


def _table_records(machine: str, table: Mapping[S, tuple[S, ...]], hidden: frozenset[str]) -> list[list[str]]:
    """``history_config``'s records of one machine: its valid previous states per target, and per state the
    states reachable from it through transitions to ``hidden`` targets (``hidden_reach``)."""
    records = [["valid", machine, target.name, *[p.name for p in prevs]] for target, prevs in table.items()]
    reach = hidden_reach(table, hidden)
    return records + [["hidden", machine, state, *targets] for state, targets in sorted(reach.items())]


def history_rules(events: DataFrame, profile: Profile, names: Column) -> DataFrame:
    """Rules comparing a record with an earlier one of its partition history, in one pass
    (``HistoryRules.java``) over one shuffle and one sort:

    * tracked previous state (§2.3, I20): the tracked previous state of an element (machine, replica) is the
      target of its previous logged transition in the same controller epoch, by position (ts, file, line);
      a new controller rebuilds its states from ZooKeeper without logging transitions, so tracking restarts.
      Decision: the tracked previous state may have moved on through transitions an INFO-level log does not
      show (their lines are TRACE); a mismatch is reported only when no such hidden path explains it.
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
    repartition (still two sorts). Leading the sort with the keys' hash (as the windows did, for the sort's
    8-byte prefix) cost about 2 JVM CPU s more.

    The result has ``LOG_VIOLATION_COLUMNS``; the leader-epoch message ends with the earlier write's file
    name (``names``) and line, appended here."""
    spark: Any = events.sparkSession  # its JVM (py4j) is untyped
    keys = [F.col(k) for k in HISTORY_KEYS]
    rows = history_rows(events).repartition(*keys).sortWithinPartitions(*keys, *HISTORY_ORDER)
    jvm = spark.sparkContext._jvm
    jtype = spark._jsparkSession.parseDataType(_parse_datatype_string(LOG_VIOLATION_SCHEMA).json())
    jdf = jvm.kcspec.audit.HistoryRules.apply(rows._jdf, history_config(profile), jtype)
    found = DataFrame(jdf, spark)
    epoch = F.col("rule") == HISTORY_RULES[2]
    earlier = F.concat(
        F.col("message"),
        F.element_at(names, F.col("compared_fid") + 1),
        F.lit(":"),
        F.col("compared_line").cast("string"),
    )
    return found.withColumn("message", F.when(epoch, earlier).otherwise(F.col("message")))


LOG_VIOLATION_SCHEMA = (
    "fid int, line long, ts long, rule string, section string, message string, machine string, topic string, "
    "partition int, replica int, controller_id int, controller_epoch int, compared_fid int, compared_line long"
)
"""The types of ``LOG_VIOLATION_COLUMNS`` (those ``_emit`` gives), for the rows ``HistoryRules.java`` makes."""


def failure_rules(events: DataFrame, profile: Profile) -> DataFrame:
    """Failed transitions against the valid previous states Kafka printed in the exception that follows them
    (``exception``: the record's first continuation line, null when none follows)."""
    failed = _machine_states(events.where(F.col("kind").isin(*FAILED_KINDS)), profile)
    return _emit(failed, _failure_checks(profile))


def _failure_checks(profile: Profile) -> list[Check]:
    """The failure rules over rows with ``exception`` (null: none follows) and ``_machine_states`` columns."""
    printed = F.regexp_extract(
        F.coalesce("exception", F.lit("")), r"should be in (?:the|one of) (\S+) states", 1
    )
    return [
        Check(
            "rejected-valid-transition",
            (printed != "") & F.array_contains("valid_prev", F.col("from_state")),
            F.concat(
                _element(),
                F.lit(" from "),
                F.col("from_state"),
                F.lit(" to "),
                F.col("to_state"),
                F.lit(" was rejected; the spec's valid previous states are "),
                _valid_list(),
            ),
            F.col("machine"),
        ),
        Check(
            "valid-previous-list-differs",
            (printed != "") & (printed != _valid_list()),
            F.concat(
                F.lit("Kafka printed "),
                printed,
                F.lit(" for target "),
                F.col("to_state"),
                F.lit(", profile " + profile.name + " has "),
                _valid_list(),
            ),
            F.col("machine"),
        ),
    ]


def deletion_table(
    spark: SparkSession, deletions: Mapping[tuple[int, str], list[tuple[int, int | None]]]
) -> DataFrame | None:
    """``(hid, topic, q, d)``: the deletion intervals of ``stats.deletion_intervals`` (``ts_key``s, ``d`` null
    while open), one row each; ``None`` when there are none."""
    if not deletions:
        return None
    rows = [(h, t, q, d) for (h, t), iv in sorted(deletions.items()) for q, d in iv]
    return local_frame(spark, rows, "hid int, topic string, q long, d long")


ACTING_KINDS = (*WRITE_KINDS, "controller_elected")
"""Records that show a controller epoch acting (the fencing rule's first timestamps)."""


def fence_table(spark: SparkSession, firsts: Mapping[int, Mapping[int, int]]) -> DataFrame:
    """``(hid, controller_epoch, fence_ts, fence_text, newer_epoch)``: when a newer epoch first acted after
    each epoch (``fence_ts`` a ``ts_key``, ``fence_text`` its text)."""
    rows = []
    for history, epochs in firsts.items():
        for e in epochs:
            newer = [(epochs[n], n) for n in epochs if n > e]
            if newer:
                ts, n = min(newer)
                rows.append((history, e, ts, stats.ts_text(ts), n))
    return local_frame(
        spark, rows, "hid int, controller_epoch int, fence_ts long, fence_text string, newer_epoch int"
    )


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
