"""Reading and writing partition-state znodes the way the controller does (§3.3, §9), with injected faults.

Names exported (all return ``Expr``; ``s`` is an ``Expr[ClusterState]``):

* ``fenced_write_ok(p, s)`` — a fenced controller write passes its ``CheckOp(/controller_epoch, epochZkVersion)``
  (2.8: ``zk.controller_epoch_zk_version == controller.epoch_zk_version``; 1.1 has no fencing: always true).
* ``read_fails(s, tps)`` / ``consume_read_faults(s, tps)`` — a read of the state znodes of ``tps`` throws when a
  ``CONNECTIONLOSS`` fault is armed on any of them (every partition of the call gets ``Left(e)``); the read
  consumes every ``CONNECTIONLOSS`` fault armed on those znodes (one connection loss fails the whole pipelined
  read, so all of them fire together — a modelling decision, the order of Kafka's pipelined reads is not
  specified).
* ``written_by_newer_controller(s, tp)`` — the read-side check: the stored ``controller_epoch`` is greater than
  the controller's epoch (§3.3, both versions).
* ``update_leader_and_isr(p, s, updates)`` — ``updateLeaderAndIsr`` (§3.3): ``updates`` maps partitions to the
  ``LeaderAndIsr`` to write, whose ``zk_version`` is the *expected* version. Evaluates to a ``ZkWrite``.
* ``leader_and_isr_round(p, name, section, w, remaining, …)`` — one round of the read-modify-write of the state
  znodes that both state machines run (``doRemoveReplicasFromIsr`` §4.3, ``doElectLeaderForPartitions`` §5.2b):
  read, sort the read, write conditionally, handle the read fault and the fenced write; ``at_most_two_rounds``
  runs it again for the partitions whose write met a BADVERSION.
* ``create_partition_states(p, s, records)`` — ``createTopicPartitionStatesRaw`` (§3.3, §5.2a): create state
  znodes at version 0, ``NODEEXISTS`` per partition; the whole call throws when a ``CONNECTIONLOSS`` fault is armed
  on the path of one of them. Evaluates to a ``ZkCreate``.

Fault consumption (docs/contracts.md): ``BADVERSION`` fails the next conditional ``setData`` of that znode (the
partition goes to the retry list and the fault is removed); a write whose expected version differs from the
znode's version is also a BADVERSION. When the fencing ``CheckOp`` fails the whole ``multi`` is rejected before
any ``setData`` runs: nothing is written and no fault is consumed. A write or create of an empty map is not
sent to ZooKeeper at all (so it is not fenced either). Creation ignores BADVERSION; a ``CONNECTIONLOSS`` armed on
the path of a state znode still to be created (the fault's znode need not exist) makes the whole
``createTopicPartitionStatesRaw`` call throw before it reaches ZooKeeper — Kafka's pipelined creates fail together
with the client's exception (PartitionStateMachineTest
``testNewPartitionToOnlinePartitionTransitionZkUtilsExceptionFromCreateStates``) — so nothing is created, the
CheckOp is not evaluated (no ControllerMovedException) and every CONNECTIONLOSS armed on the call's paths is
consumed (decision, as for reads). Every successful write increments the znode's version by exactly 1 and stores the writer's
controller epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcspec.spec import spans
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Block, Expr, build_map, if_, let, lift, lit, rec, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import FailureReason
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderIsrAndControllerEpoch, TopicPartition, ZkFault

EMPTY_RECORDS: FMap[TopicPartition, LeaderIsrAndControllerEpoch] = FMap()


@dataclass(frozen=True)
class ZkWrite:
    """The outcome of one ``updateLeaderAndIsr`` call (§3.3).

    ``records`` are the successfully written znodes (new version, the writer's controller epoch); ``retry`` the
    partitions whose conditional set failed with BADVERSION; ``failed`` the partitions whose znode does not exist
    (NONODE → ``Left(e)``); ``moved`` the fencing CheckOp failed (ControllerMovedException, nothing written).
    """

    state: ClusterState
    records: FMap[TopicPartition, LeaderIsrAndControllerEpoch]
    retry: frozenset[TopicPartition]
    failed: frozenset[TopicPartition]
    moved: bool


@dataclass(frozen=True)
class ZkCreate:
    """The outcome of one ``createTopicPartitionStatesRaw`` call: created znodes, NODEEXISTS ones, fencing failure,
    and ``threw``: the whole call threw (a CONNECTIONLOSS fault), nothing created."""

    state: ClusterState
    created: frozenset[TopicPartition]
    exists: frozenset[TopicPartition]
    moved: bool
    threw: bool = False


def fenced_write_ok(p: Profile, s: Expr) -> Expr:
    """A fenced controller write passes its CheckOp on ``/controller_epoch`` (§3.3, §9, KAFKA-6082); 1.1: always."""
    if not p.zk_write_fencing:
        return lit(True)
    return s.f("zk", "controller_epoch_zk_version").eq(s.f("controller", "epoch_zk_version"))


def _fault_is(s: Expr, tp: Expr, fault: ZkFault) -> Expr:
    faults = s.f("zk", "faults")
    return faults.has(tp) & faults.get(tp).eq(fault)


def read_fails(s: Expr, tps: Expr) -> Expr:
    """The read of the state znodes of ``tps`` throws (a CONNECTIONLOSS fault is armed on one of them)."""
    return tps.any(lambda tp: _fault_is(s, tp, ZkFault.CONNECTIONLOSS))


def consume_read_faults(s: Expr, tps: Expr) -> Expr:
    """``s`` after a read of ``tps``: every CONNECTIONLOSS fault armed on those znodes is consumed."""
    consumed = tps.filter(lambda tp: _fault_is(s, tp, ZkFault.CONNECTIONLOSS))
    return s.with_at("zk", faults=s.f("zk", "faults").delete_all(consumed))


def znode_exists(s: Expr, tp: object) -> Expr:
    """The state znode of ``tp`` exists."""
    return s.f("zk", "partition_states").has(tp)


def znode(s: Expr, tp: object) -> Expr:
    """The ``LeaderIsrAndControllerEpoch`` stored in the state znode of ``tp`` (the caller knows it exists)."""
    return s.f("zk", "partition_states").get(tp)


def written_by_newer_controller(s: Expr, tp: object) -> Expr:
    """Read-side check (§3.3): the stored controller epoch is greater than this controller's epoch."""
    return znode(s, tp).f("controller_epoch").gt(s.f("controller", "epoch"))


def update_leader_and_isr(
    p: Profile, s: object, updates: object, controller_epoch: object | None = None
) -> Expr:
    """``updateLeaderAndIsr(updates, ctrlEpoch, ctrlEpochZkVersion)`` (§3.3) → ``ZkWrite``.

    Per partition: znode absent → ``failed``; BADVERSION fault armed (consumed) or expected version ≠ znode
    version → ``retry``; else the znode becomes (LeaderAndIsr with version + 1, ``controller_epoch``, by default
    the controller's epoch). 2.8: a failing CheckOp makes the call ``moved`` with no effect.
    """

    def body(sv: Expr, ups: Expr) -> Expr:
        zk = sv.f("zk")
        ce = sv.f("controller", "epoch") if controller_epoch is None else lift(controller_epoch)
        b = Block()
        b.keys = ups.keys()
        b.nonode = b.keys.filter(lambda tp: ~znode_exists(sv, tp))
        b.retry = b.keys.minus(b.nonode).filter(
            lambda tp: (
                _fault_is(sv, tp, ZkFault.BADVERSION)
                | znode(sv, tp).f("leader_and_isr", "zk_version").ne(ups.get(tp).f("zk_version"))
            )
        )
        b.records = build_map(
            b.keys.minus(b.nonode).minus(b.retry),
            lambda tp: rec(
                LeaderIsrAndControllerEpoch,
                leader_and_isr=ups.get(tp).with_(
                    zk_version=znode(sv, tp).f("leader_and_isr", "zk_version") + 1
                ),
                controller_epoch=ce,
            ),
        )
        written = sv.with_at(
            "zk",
            partition_states=zk.f("partition_states").merge(b.records),
            faults=zk.f("faults").delete_all(
                b.retry.filter(lambda tp: _fault_is(sv, tp, ZkFault.BADVERSION))
            ),
        )
        return b.in_(
            rec(ZkWrite, state=written, records=b.records, retry=b.retry, failed=b.nonode, moved=False)
        )

    def guarded(sv: Expr, ups: Expr) -> Expr:
        nothing = rec(
            ZkWrite, state=sv, records=EMPTY_RECORDS, retry=frozenset(), failed=frozenset(), moved=False
        )
        moved = rec(
            ZkWrite, state=sv, records=EMPTY_RECORDS, retry=frozenset(), failed=frozenset(), moved=True
        )
        return if_(ups.is_empty(), nothing, if_(fenced_write_ok(p, sv), body(sv, ups), moved))

    b = Block()
    b.sv = s
    b.ups = updates
    return rule("updateLeaderAndIsr", "§3.3", b.in_(guarded(b.sv, b.ups)))


@spans.builder
def leader_and_isr_round(
    p: Profile,
    name: str,
    section: str,
    w: Expr,
    remaining: Expr,
    *,
    nothing_done: Callable[[Expr], Expr],
    failed: Callable[[Expr, Expr, FailureReason], Expr],
    updates: Callable[[Expr, Block], Expr],
    written: Callable[[Expr, Block], Expr],
    after_read: Callable[[Expr, Expr], Expr] | None = None,
) -> Expr:
    """One round of the read-modify-write of the state znodes of ``remaining`` (§3.3), the shape both state
    machines share: ``doRemoveReplicasFromIsr`` (replica machine, §4.3 step 3) and ``doElectLeaderForPartitions``
    (partition machine, §5.2b steps 1–4). The round's result is the caller's record (``IsrRemoval``,
    ``ElectionRound``); ``nothing_done(work)`` is that record with ``work`` and no partition done or to retry,
    ``failed(work, tps, reason)`` logs one state-change failure per partition of ``tps``.

    1. Read the znodes (``getTopicPartitionStatesRaw``); a CONNECTIONLOSS armed on one of them fails the whole
       read (``read_fails``, the faults consumed): every partition fails with ``ZkError``, nothing is done.
    2. Sort the read, in the state ``s1`` after it: ``b.missing`` (no znode), ``b.newer`` (written by a newer
       controller, §3.3) and ``b.cands`` (the rest), steps of the round's block ``b``.
    3. ``updates(s1, b)`` binds the round's own steps on ``b`` and returns the map of the ``LeaderAndIsr`` to write;
       ``b.wr`` is ``updateLeaderAndIsr`` of it (conditional on each znode's version: BADVERSION → retry).
    4. A rejected fencing CheckOp (2.8, ControllerMovedException) is ``moved``: nothing done, ``moved`` set.
    5. Otherwise ``written(s1, b)`` is the result, reading ``b.wr`` and the sorted sets.

    ``after_read(s1, round)`` may wrap steps 2–5 (the 1.1 reassignment election's ``NoSuchElementException``).
    The rule ``name``/``section`` names the round; its span is the caller's line (``spans.builder``).
    """
    s = w.f("state")

    def sorted_and_written(s1: Expr) -> Expr:
        zkps = s1.f("zk", "partition_states")
        b = Block()
        b.missing = remaining.filter(lambda tp: ~zkps.has(tp))
        b.newer = remaining.minus(b.missing).filter(lambda tp: written_by_newer_controller(s1, tp))
        b.cands = remaining.minus(b.missing).minus(b.newer)
        new_records = updates(s1, b)
        b.wr = update_leader_and_isr(p, s1, new_records)
        fenced = nothing_done(w.with_(state=s1, moved=True))
        return b.in_(if_(b.wr.f("moved"), fenced, written(s1, b)))

    def read(s1: Expr) -> Expr:
        return sorted_and_written(s1) if after_read is None else after_read(s1, sorted_and_written(s1))

    read_failed = nothing_done(
        failed(w.with_(state=consume_read_faults(s, remaining)), remaining, FailureReason.ZkError)
    )
    return rule(
        name,
        section,
        if_(read_fails(s, remaining), read_failed, let(consume_read_faults(s, remaining), read)),
    )


def at_most_two_rounds(
    b: Block,
    round_: Callable[[Expr, Expr], Expr],
    w: Expr,
    tps: Expr,
    *,
    done: str,
    again: Callable[[Expr], Expr],
    finish: Callable[[Expr, Expr], Expr],
    stop: Callable[[Expr], Expr] | None = None,
) -> Expr:
    """Kafka's ``while (remaining.nonEmpty)`` loop around a ``leader_and_isr_round`` (§4.3 step 3, §5.2b), closing
    the block ``b``: ``b.r1`` is the first round over ``tps`` from ``w``; when it leaves partitions to retry (and
    ``stop(b.r1)`` does not hold), a second round ``r2`` runs over ``again(b.r1)`` from the first round's work.
    ``finish(last, done)`` is the result from the last round and the union of the rounds' ``done`` fields.

    Decision (bounding Kafka's loop, the one ``partition_machine``'s and ``_to_offline_broker``'s docstrings state):
    two rounds. A retry comes from a BADVERSION, the second round re-reads the znodes, and an injected fault is
    one-shot, so one armed fault makes at most one retry round.
    """
    b.r1 = round_(w, tps)
    retry = Block()
    retry.r2 = round_(b.r1.f("work"), again(b.r1))
    retried = retry.in_(finish(retry.r2, b.r1.f(done).union(retry.r2.f(done))))
    one_round = b.r1.f("retry").is_empty()
    if stop is not None:
        one_round = one_round | stop(b.r1)
    return b.in_(if_(one_round, finish(b.r1, b.r1.f(done)), retried))


def create_partition_states(p: Profile, s: object, records: object) -> Expr:
    """``createTopicPartitionStatesRaw(records, ctrlEpochZkVersion)`` (§3.3, §5.2a) → ``ZkCreate``.

    ``records`` maps partitions to the ``LeaderIsrAndControllerEpoch`` to create; each znode is created at version
    0 unless it exists (NODEEXISTS, reported per partition). A CONNECTIONLOSS armed on one of their paths: the call
    ``threw`` (those faults consumed, nothing else changed). 2.8: a failing CheckOp makes the call ``moved``.
    """

    def body(sv: Expr, recs: Expr) -> Expr:
        zk = sv.f("zk")
        b = Block()
        b.exists = recs.keys().filter(lambda tp: znode_exists(sv, tp))
        b.created = recs.keys().minus(b.exists)
        at_version_0 = build_map(
            b.created,
            lambda tp: recs.get(tp).with_(
                leader_and_isr=recs.get(tp).f("leader_and_isr").with_(zk_version=0)
            ),
        )
        written = sv.with_at("zk", partition_states=zk.f("partition_states").merge(at_version_0))
        return b.in_(
            rec(ZkCreate, state=written, created=b.created, exists=b.exists, moved=False, threw=False)
        )

    def guarded(sv: Expr, recs: Expr) -> Expr:
        none: frozenset[TopicPartition] = frozenset()
        nothing = rec(ZkCreate, state=sv, created=none, exists=none, moved=False, threw=False)
        moved = rec(ZkCreate, state=sv, created=none, exists=none, moved=True, threw=False)
        lost = rec(
            ZkCreate,
            state=consume_read_faults(sv, recs.keys()),
            created=none,
            exists=none,
            moved=False,
            threw=True,
        )
        return if_(
            recs.is_empty(),
            nothing,
            if_(read_fails(sv, recs.keys()), lost, if_(fenced_write_ok(p, sv), body(sv, recs), moved)),
        )

    b = Block()
    b.sv = s
    b.recs = records
    return rule("createTopicPartitionStatesRaw", "§3.3", b.in_(guarded(b.sv, b.recs)))
