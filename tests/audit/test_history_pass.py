"""The history rules' one pass (``replay.history_rules``, ``HistoryRules.java``) on a small history where both
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

from kcspec.conformance.audit import replay
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
    from kcspec.conformance.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=3, app="kcspec-test-history-pass")


def test_both_history_rules_find_exactly_the_windows_violations(spark: Any) -> None:
    from pyspark.sql import functions as F

    events = spark.createDataFrame(_events(), SCHEMA)
    names = F.array(*[F.lit(n) for n in NAMES])
    found = replay.history_rules(events, KAFKA_2_8, names)
    assert tuple(found.columns) == replay.LOG_VIOLATION_COLUMNS
    assert {tuple(r) for r in found.collect()} == EXPECTED
