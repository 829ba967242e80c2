"""The log rules' one pass (``replay.history_rules``, ``HistoryRules.java``) on a small history where both
rules fire: ties in time broken by file and line, several controller epochs (an epoch's later writes may carry
earlier timestamps), a record without a timestamp or controller epoch (nulls sort first), two replicas of one
partition tracked apart, 0.8.1 state names, a NewPartition restart, and an ISR removal that restates the
previous leader epoch. The expected violations are what the two Spark windows the pass replaced found on the
same rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit import replay
from kcspec.spec.profiles import KAFKA_2_8

pytestmark = pytest.mark.spark

SCHEMA = (
    "fid int, line long, ts long, hid int, kind string, topic string, partition int, replica int, "
    "controller_id int, controller_epoch int, from_state string, to_state string, leader_epoch int"
)
PT, RT, ISR = "partition_transition", "replica_transition", "isr_removal"
NAMES = ("a.log", "b.log", "c.log", "d.log")
"""File names by file id; file 3 is the only file of history 1, files 0-2 are history 0's."""

# fid, line, ts, kind, topic, partition, replica, controller_epoch, from, to, leader epoch (hid 0, controller 7)
ROWS: list[tuple[Any, ...]] = [
    # t-0, controller epoch 1: creation, then writes tied in time (the file, then the line, orders them)
    (0, 1, 100, PT, "t", 0, None, 1, "NonExistentPartition", "NewPartition", None),
    (0, 2, 100, PT, "t", 0, None, 1, "NewPartition", "OnlinePartition", 0),
    (0, 3, 200, ISR, "t", 0, None, 1, None, None, 1),
    (1, 1, 200, ISR, "t", 0, None, 1, None, None, 1),  # restates epoch 1: exempt
    (0, 5, 300, PT, "t", 0, None, 1, "OnlinePartition", "OfflinePartition", None),
    (0, 6, 310, PT, "t", 0, None, 1, "OnlinePartition", "OnlinePartition", 1),  # mismatch; epoch not raised
    # t-0, controller epoch 2: earlier timestamps, ordered after epoch 1 all the same
    (
        2,
        0,
        None,
        PT,
        "t",
        0,
        None,
        2,
        "OnlinePartition",
        "OnlinePartition",
        5,
    ),  # no timestamp: first of epoch 2
    (2, 1, 50, PT, "t", 0, None, 2, "OfflinePartition", "OnlinePartition", 0),  # epoch 0 after 5
    (2, 2, 60, ISR, "t", 0, None, 2, None, None, 0),  # restates epoch 0: exempt
    (
        2,
        3,
        70,
        PT,
        "t",
        0,
        None,
        2,
        "NonExistentPartition",
        "NewPartition",
        None,
    ),  # explained by hidden lines
    (2, 4, 80, PT, "t", 0, None, 2, "NewPartition", "OnlinePartition", 0),  # restart: exempt
    (2, 5, 90, ISR, "t", 0, None, 2, None, None, None),  # a removal without an epoch: compared with nothing
    (2, 6, 95, ISR, "t", 0, None, 2, None, None, 0),
    # t-0, two replicas tracked apart (replica 2's odd from-state is no replica state: a mismatch)
    (0, 10, 100, RT, "t", 0, 1, 1, "NonExistentReplica", "NewReplica", None),
    (0, 11, 100, RT, "t", 0, 2, 1, "NonExistentReplica", "NewReplica", None),
    (0, 12, 150, RT, "t", 0, 1, 1, "NewReplica", "OnlineReplica", None),
    (0, 13, 150, RT, "t", 0, 2, 1, "NonExistentPartition", "OnlineReplica", None),
    (
        0,
        14,
        160,
        RT,
        "t",
        0,
        1,
        2,
        "OfflineReplica",
        "OnlineReplica",
        None,
    ),  # new controller epoch: untracked
    # t-1: 0.8.1 names, a write without a controller epoch (sorts first), both tracked rules on one line
    (0, 20, 100, PT, "t", 1, None, None, "OfflinePartition", "OnlinePartition", 3),
    (0, 21, 100, PT, "t", 1, None, 1, "NotExists", "New", None),
    (0, 22, 110, PT, "t", 1, None, 1, "New", "OnlinePartition", 0),
    (0, 23, 110, PT, "t", 1, None, 1, "OfflinePartition", "OnlinePartition", 0),  # epoch 0 again
    (0, 24, 120, PT, "t", 1, None, 1, "OnlinePartition", "NonExistentPartition", None),
    (0, 25, 130, PT, "t", 1, None, 1, "NewPartition", "OnlinePartition", 1),  # left in NonExistent, from New
    # another history: the same partition, compared with nothing of history 0
    (3, 30, 100, PT, "t", 1, None, 1, "OfflinePartition", "OnlinePartition", 0),
]

ROW_OF = {(r[0], r[1]): r for r in ROWS}


def _v(
    fid: int, line: int, rule: str, message: str, machine: str, compared: tuple[int, int]
) -> tuple[Any, ...]:
    """A violation row of ``LOG_VIOLATION_COLUMNS`` for the row at (fid, line)."""
    r = ROW_OF[(fid, line)]
    text = replay.RULES[rule]
    return (
        fid,
        line,
        r[2],
        rule,
        text.section,
        f"{text.text}: {message}",
        machine,
        r[4],
        r[5],
        r[6],
        7,
        r[7],
        *compared,
    )


EXPECTED = {
    _v(
        0,
        6,
        "previous-state-mismatch",
        "partition t-0 logged from OnlinePartition but its previous transition in this controller epoch left it "
        "in OfflinePartition",
        "partition",
        (0, 5),
    ),
    _v(
        0,
        6,
        "leader-epoch-not-increasing",
        "partition t-0 written with leader epoch 1 after leader epoch 1 at b.log:1",
        "partition",
        (1, 1),
    ),
    _v(
        2,
        1,
        "leader-epoch-not-increasing",
        "partition t-0 written with leader epoch 0 after leader epoch 5 at c.log:0",
        "partition",
        (2, 0),
    ),
    _v(
        0,
        13,
        "previous-state-mismatch",
        "replica 2 of t-0 logged from NonExistentPartition but its previous transition in this controller epoch "
        "left it in NewReplica",
        "replica",
        (0, 11),
    ),
    # the NewPartition exemption reads the state as logged: the 0.8.1 name "New" is not exempt
    _v(
        0,
        22,
        "leader-epoch-not-increasing",
        "partition t-1 written with leader epoch 0 after leader epoch 3 at a.log:20",
        "partition",
        (0, 20),
    ),
    _v(
        0,
        23,
        "leader-epoch-not-increasing",
        "partition t-1 written with leader epoch 0 after leader epoch 0 at a.log:22",
        "partition",
        (0, 22),
    ),
    _v(
        0,
        25,
        "invalid-from-tracked",
        "partition t-1 was last left in NonExistentPartition, cannot go to OnlinePartition (valid previous "
        "states: NewPartition,OnlinePartition,OfflinePartition)",
        "partition",
        (0, 24),
    ),
    _v(
        0,
        25,
        "previous-state-mismatch",
        "partition t-1 logged from NewPartition but its previous transition in this controller epoch left it in "
        "NonExistentPartition",
        "partition",
        (0, 24),
    ),
}


def _events() -> list[tuple[Any, ...]]:
    """``ROWS`` as the stored parse's columns (``SCHEMA``): history 1 for file 3, controller 7 throughout."""
    return [(f, n, ts, int(f == 3), k, t, p, r, 7, ce, a, b, e) for f, n, ts, k, t, p, r, ce, a, b, e in ROWS]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=3, app="kcspec-test-history-pass")


def test_both_history_rules_find_exactly_the_windows_violations(spark: Any) -> None:
    from pyspark.sql import functions as F

    events = spark.createDataFrame(_events(), SCHEMA)
    names = F.array(*[F.lit(n) for n in NAMES])
    found = replay.history_rules(events, KAFKA_2_8, names)
    assert tuple(found.columns) == replay.LOG_VIOLATION_COLUMNS
    # the same pass evaluates the rules about one record (their own test below): here the history rules
    history = {tuple(r) for r in found.collect() if r["rule"] in replay.HISTORY_RULES}
    assert history == EXPECTED


# ---------------------------------------------------------------------------------------- rules about one record
# Each rule about one record fires once or is exempt: an invalid transition (and 0.8 names normalised), a leader
# outside the ISR (an ISR written with spaces still holds it), an empty ISR (LeaderDuringDelete exempt), a write
# by controller epoch 1 after epoch 2 acted, elections inside and around a topic's deletion interval (creation
# exempt), and failed transitions against the states Kafka printed. The expected rows are what the Spark queries
# the pass replaced (row_rules, failure_rules) found on the same rows.
ROW_SCHEMA = (
    "fid int, line long, ts long, hid int, kind string, topic string, partition int, replica int, "
    "controller_id int, controller_epoch int, from_state string, to_state string, leader_epoch int, "
    "leader int, isr string, exception string"
)
RF, PF = "replica_transition_failed", "partition_transition_failed"
LAIR, UMR = "lair_sent", "umr_sent"
PRINTED = (
    "kafka.common.StateChangeFailedException: Replica 1 for partition t-0 should be in the {} states "
    "before moving to OnlineReplica state. Instead it is in {} state"
)
# fid, line, ts, hid, kind, topic, partition, replica, controller, epoch, from, to, leader epoch, leader, isr, exception
ROW_CASES: list[tuple[Any, ...]] = [
    (
        0,
        1,
        100,
        0,
        RT,
        "t",
        0,
        1,
        7,
        1,
        "NonExistentReplica",
        "OnlineReplica",
        None,
        None,
        None,
        None,
    ),  # invalid
    (0, 2, 101, 0, RT, "t", 0, 2, 7, 1, "NewReplica", "OnlineReplica", None, None, None, None),  # valid
    (0, 3, 102, 0, PT, "t", 0, None, 7, 1, "NewPartition", "OnlinePartition", 0, 1, "1,2", None),  # valid
    (0, 4, 103, 0, LAIR, "t", 0, None, 7, 1, None, None, 0, 3, "1,2", None),  # leader not in ISR
    (0, 5, 104, 0, UMR, "t", 0, None, 7, 1, None, None, 1, 1, "", None),  # empty ISR, leader not in it
    (0, 6, 105, 0, UMR, "t", 0, None, 7, 1, None, None, None, -2, "", None),  # LeaderDuringDelete: exempt
    (0, 7, 106, 0, LAIR, "t", 0, None, 7, 1, None, None, 2, 2, "1, 2", None),  # spaces in the ISR: in it
    (
        0,
        8,
        300,
        0,
        ISR,
        "t",
        1,
        None,
        7,
        1,
        None,
        None,
        3,
        1,
        "1",
        None,
    ),  # epoch 1 writes after epoch 2 acted
    (1, 1, 200, 0, PT, "t", 1, None, 8, 2, "OfflinePartition", "OnlinePartition", 2, 1, "1", None),
    (
        1,
        2,
        160,
        0,
        PT,
        "d",
        0,
        None,
        8,
        2,
        "OfflinePartition",
        "OnlinePartition",
        1,
        1,
        "1",
        None,
    ),  # deleting
    (1, 3, 170, 0, PT, "d", 1, None, 8, 2, "NewPartition", "OnlinePartition", 0, 1, "1", None),  # creation
    (1, 4, 140, 0, PT, "d", 2, None, 8, 2, "OnlinePartition", "OnlinePartition", 1, 1, "1", None),  # before
    (1, 5, 210, 0, PT, "d", 3, None, 8, 2, "OnlinePartition", "OnlinePartition", 1, 1, "1", None),  # after
    (
        1,
        6,
        201,
        0,
        RF,
        "t",
        0,
        1,
        8,
        2,
        "OfflineReplica",
        "OnlineReplica",
        None,
        None,
        None,
        PRINTED.format("NewReplica,OnlineReplica", "OfflineReplica"),
    ),  # rejected a valid one; list differs
    (
        1,
        7,
        202,
        0,
        RF,
        "t",
        0,
        2,
        8,
        2,
        "NonExistentReplica",
        "OnlineReplica",
        None,
        None,
        None,
        PRINTED.format(
            "NewReplica,OnlineReplica,OfflineReplica,ReplicaDeletionIneligible", "NonExistentReplica"
        ),
    ),
    (1, 8, 203, 0, PF, "t", 1, None, 8, 2, "OfflinePartition", "OnlinePartition", None, None, None, None),
    (
        2,
        1,
        100,
        1,
        PT,
        "t",
        0,
        None,
        9,
        1,
        "OnlinePartition",
        "NonExistentPartition",
        None,
        None,
        None,
        None,
    ),  # other history
    (2, 2, 400, 1, RT, "t", 0, 1, 9, 1, "New", "Online", None, None, None, None),  # 0.8 names: normalised
]
ROW_FIRSTS = {0: {1: 100, 2: 150}, 1: {1: 100}}
ROW_DELETIONS: dict[tuple[int, str], list[tuple[int, int | None]]] = {(0, "d"): [(150, 205)]}
ROW_EXPECTED = {
    (
        0,
        1,
        100,
        "invalid-transition",
        "§2.1/§2.2, I20",
        "logged transition is not valid from the logged previous state: replica 1 of t-0 from NonExistentReplica to OnlineReplica (valid previous states: NewReplica,OnlineReplica,OfflineReplica,ReplicaDeletionIneligible)",
        "replica",
        "t",
        0,
        1,
        7,
        1,
        None,
        None,
    ),
    (
        0,
        4,
        103,
        "leader-not-in-isr",
        "§11 I1",
        "leader is not in the ISR: partition t-0: leader 3, ISR [1,2], leader epoch 0 (lair_sent)",
        "partition",
        "t",
        0,
        None,
        7,
        1,
        None,
        None,
    ),
    (
        0,
        5,
        104,
        "empty-isr",
        "§11 I3",
        "ISR is empty: partition t-0: leader 1, ISR [], leader epoch 1 (umr_sent)",
        "partition",
        "t",
        0,
        None,
        7,
        1,
        None,
        None,
    ),
    (
        0,
        5,
        104,
        "leader-not-in-isr",
        "§11 I1",
        "leader is not in the ISR: partition t-0: leader 1, ISR [], leader epoch 1 (umr_sent)",
        "partition",
        "t",
        0,
        None,
        7,
        1,
        None,
        None,
    ),
    (
        0,
        8,
        300,
        "stale-controller-write",
        "§9, I8",
        "a write by an older controller after a newer controller acted: isr_removal by controller 7 with epoch 1 after controller epoch 2 acted at 0000-00-00 00:00:00,150",
        None,
        "t",
        1,
        None,
        7,
        1,
        None,
        None,
    ),
    (
        1,
        2,
        160,
        "election-for-deleting-topic",
        "§11 I13",
        "leader election for a topic queued for deletion: partition d-0 moved OfflinePartition → OnlinePartition while topic d was queued for deletion (since 0000-00-00 00:00:00,150)",
        "partition",
        "d",
        0,
        None,
        8,
        2,
        None,
        None,
    ),
    (
        1,
        6,
        201,
        "rejected-valid-transition",
        "§2.3 step 4",
        "Kafka rejected a transition the spec allows: replica 1 of t-0 from OfflineReplica to OnlineReplica was rejected; the spec's valid previous states are NewReplica,OnlineReplica,OfflineReplica,ReplicaDeletionIneligible",
        "replica",
        "t",
        0,
        1,
        8,
        2,
        None,
        None,
    ),
    (
        1,
        6,
        201,
        "valid-previous-list-differs",
        "§10.3",
        "the valid previous states Kafka printed differ from the spec: Kafka printed NewReplica,OnlineReplica for target OnlineReplica, profile kafka-2.8 has NewReplica,OnlineReplica,OfflineReplica,ReplicaDeletionIneligible",
        "replica",
        "t",
        0,
        1,
        8,
        2,
        None,
        None,
    ),
    (
        2,
        1,
        100,
        "invalid-transition",
        "§2.1/§2.2, I20",
        "logged transition is not valid from the logged previous state: partition t-0 from OnlinePartition to NonExistentPartition (valid previous states: OfflinePartition)",
        "partition",
        "t",
        0,
        None,
        9,
        1,
        None,
        None,
    ),
}


def test_the_rules_about_one_record_find_exactly_the_spark_queries_violations(spark: Any) -> None:
    from pyspark.sql import functions as F

    events = spark.createDataFrame(ROW_CASES, ROW_SCHEMA)
    names = F.array(*[F.lit(n) for n in ("a.log", "b.log", "c.log")])
    found = replay.log_rules(events, KAFKA_2_8, ROW_FIRSTS, ROW_DELETIONS, names)
    one_record = {tuple(r) for r in found.collect() if r["rule"] not in replay.HISTORY_RULES}
    assert one_record == ROW_EXPECTED
