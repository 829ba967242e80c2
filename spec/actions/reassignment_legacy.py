"""Partition reassignment, legacy 12-step algorithm (§7.8, kafka-1.1): ``onPartitionReassignment`` with its two
branches, ``maybeTriggerPartitionReassignment``, ``removePartitionFromReassignedPartitions``, the ISR-change
check, and the ``ZkPartitionReassignment`` action (1.1's ``PartitionReassignment`` event).

RAR is ``controller.legacy_reassignments[tp]``; AR the in-memory assignment; OAR the AR before step 1.
Decisions: step 1 orders ``AR' = distinct(RAR ++ AR)`` (docs/contracts.md); ``newOnly`` (step 3) and the
partitions of ``maybeTriggerPartitionReassignment`` are handled in ascending order (Kafka: hash order).
Procedures that can throw return an ``Attempt`` (``common.Attempt``).
"""

from __future__ import annotations

from kcspec.spec import context, zk
from kcspec.spec.actions import common, deletion
from kcspec.spec.batch import add_leader_and_isr, send
from kcspec.spec.events import ZkPartitionReassignment
from kcspec.spec.lang import Action, Block, Expr, cond, if_, lift, rec, rule, set_of
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderElection,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
)

REASSIGN = LeaderElection(ElectionStrategy.ReassignPartitionLeaderElectionStrategy)


def rar_of(w: Expr, tp: object) -> Expr:
    """RAR: the new replicas of the reassignment of ``tp``."""
    return common.ctx(w).f("legacy_reassignments").get(tp)


def plain(replicas: object) -> Expr:
    """A 1.1 assignment: a replica list without adding/removing replicas."""
    return rec(ReplicaAssignment, replicas=replicas, adding=(), removing=())


def update_assigned_replicas_for_partition(p: Profile, w: Expr, tp: Expr, replicas: object) -> Expr:
    """``updateAssignedReplicasForPartition(tp, replicas)`` (§7.8.2 steps 1/10), an ``Attempt``: write the topic's
    in-memory assignment with ``tp ↦ replicas`` to the topic znode (NONODE throws); on success AR(tp) := replicas."""
    return common.then_work(
        common.update_replica_assignment_for_partition(p, w, tp, plain(replicas)),
        lambda x: common.set_ctx(x, assignments=common.ctx(x).f("assignments").put(tp, plain(replicas))),
    )


def update_leader_epoch_and_send_request(p: Profile, w: Expr, tp: Expr, recipients: object) -> Expr:
    """``updateLeaderEpochAndSendRequest(tp, recipients, AR)`` (§7.8.2 steps 2/7), an ``Attempt``: leader epoch +1 in
    ZK only (the cache keeps the old record, KAFKA-9212), then LAIR(isNew=false) with the new record and the
    in-memory AR to ``recipients``; the implicit UMR is built from the stale cache."""
    return rule(
        "updateLeaderEpochAndSendRequest",
        "§7.8.2",
        common.then_work(
            common.update_leader_epoch(p, w, tp, cache=False),
            lambda x: common.pipe(
                x,
                lambda y: add_leader_and_isr(
                    p, y, recipients, tp, False, leader_isr=zk.znode(common.st(x), tp)
                ),
                lambda y: send(p, y),
            ),
        ),
    )


def remove_partition_from_reassigned_partitions(p: Profile, w: Expr, tp: object) -> Expr:
    """``removePartitionFromReassignedPartitions(tp)`` (§7.8.1): ``/admin/reassign_partitions`` := the in-memory
    reassignments without tp (deleted when empty; the re-enqueued event finds no znode), then forget tp."""
    b = Block()
    b.remaining = common.ctx(lift(w)).f("legacy_reassignments").delete(tp)
    removed = common.pipe(
        w,
        lambda x: common.fenced_zk(p, x, lambda z: z.with_(reassign_partitions=b.remaining)),
        lambda x: common.unless_moved(x, lambda y: common.set_ctx(y, legacy_reassignments=b.remaining)),
    )
    return rule("removePartitionFromReassignedPartitions", "§7.8.1", b.in_(removed))


def stop_old_replicas(p: Profile, w: Expr, tp: Expr, old: Expr) -> Expr:
    """Steps 8–9 (``stopOldReplicasOfReassignedPartition``): OAR − RAR → OfflineReplica → ReplicaDeletionStarted →
    ReplicaDeletionSuccessful → NonExistentReplica."""
    b = Block()
    b.prs = old.map(lambda r: context.replica(tp, r))
    return b.in_(
        common.pipe(
            w,
            lambda x: replica_state_change(p, x, b.prs, ReplicaState.OfflineReplica),
            lambda x: replica_state_change(p, x, b.prs, ReplicaState.ReplicaDeletionStarted),
            lambda x: replica_state_change(p, x, b.prs, ReplicaState.ReplicaDeletionSuccessful),
            lambda x: replica_state_change(p, x, b.prs, ReplicaState.NonExistentReplica),
        )
    )


def move_reassigned_partition_leader_if_required(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 6–7 (§7.8.2), an ``Attempt`` (no cached leadership throws): AR := RAR in memory only; leader ∉ RAR or
    not online → Reassign election (failure only logged); else epoch bump + LAIR to OAR ∪ RAR with replicas RAR."""
    b = Block()
    b.x = w
    move = Block()
    move.leader = context.leader_of(common.st(b.x), tp)
    move.old_and_new = context.replicas(common.st(b.x), tp)
    move.y = common.set_ctx(b.x, assignments=common.ctx(b.x).f("assignments").put(tp, plain(rar_of(b.x, tp))))
    elect = common.ok(partition_state_change(p, move.y, set_of(tp), PartitionState.OnlinePartition, REASSIGN))
    moved = move.in_(
        if_(
            rar_of(b.x, tp).contains(move.leader) & context.is_online(common.st(move.y), move.leader, tp),
            update_leader_epoch_and_send_request(p, move.y, tp, move.old_and_new),
            elect,
        )
    )
    return b.in_(if_(~context.has_leadership(common.st(b.x), tp), common.thrown(b.x), moved))


def not_caught_up(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 1–3 (§7.8.2): AR' = distinct(RAR ++ AR) written to ZK and memory; epoch bump + LAIR to AR'; every
    RAR − OAR replica → NewReplica, one call each."""
    b = Block()
    b.rar = rar_of(w, tp)
    b.ar = context.replicas(common.st(w), tp)
    b.ar2 = b.rar.concat(b.ar).distinct()
    return b.in_(
        common.attempt_pipe(
            update_assigned_replicas_for_partition(p, w, tp, b.ar2),
            lambda x: update_leader_epoch_and_send_request(p, x, tp, b.ar2),
            common.as_attempt(
                lambda x: common.work_fold(
                    b.rar.to_set().minus(b.ar.to_set()).sorted(),
                    x,
                    lambda acc, r: replica_state_change(
                        p, acc, set_of(context.replica(tp, r)), ReplicaState.NewReplica
                    ),
                )
            ),
        )
    )


def caught_up(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 5–12 (§7.8.2) and ``resumeDeletionForTopics({topic})``."""
    b = Block()
    b.rar = rar_of(w, tp)
    b.old = context.replicas(common.st(w), tp).to_set().minus(b.rar.to_set())
    return b.in_(
        common.attempt_pipe(
            common.ok(
                common.work_fold(
                    b.rar,
                    w,
                    lambda acc, r: replica_state_change(
                        p, acc, set_of(context.replica(tp, r)), ReplicaState.OnlineReplica
                    ),
                )
            ),
            lambda x: move_reassigned_partition_leader_if_required(p, x, tp),
            common.as_attempt(lambda x: stop_old_replicas(p, x, tp, b.old)),
            lambda x: update_assigned_replicas_for_partition(p, x, tp, b.rar),
            common.as_attempt(lambda x: remove_partition_from_reassigned_partitions(p, x, tp)),
            common.as_attempt(
                lambda x: common.send_update_metadata(
                    p, x, context.live_or_shutting_down(common.st(x)), set_of(tp)
                )
            ),
            common.as_attempt(lambda x: deletion.resume_deletion_for_topics(p, x, set_of(tp.f("topic")))),
        )
    )


def are_replicas_in_isr(w: Expr, tp: Expr, replicas: Expr, body: common.Step2) -> Expr:
    """``areReplicasInIsr(tp, RAR)``: ZK state exists ∧ RAR ⊆ ZK ISR. The read may throw; ``body(work, answer)``."""
    return common.then(
        common.read_state_znodes(w, set_of(tp)),
        lambda x: body(
            x,
            zk.znode_exists(common.st(x), tp)
            & replicas.to_set().subset_of(zk.znode(common.st(x), tp).f("leader_and_isr", "isr").to_set()),
        ),
    )


def on_partition_reassignment(p: Profile, w: Expr, tp: object) -> Expr:
    """``onPartitionReassignment(tp, ctx)`` (§7.8.2), an ``Attempt``: not all RAR in the ZK ISR → steps 1–3; else
    steps 5–12."""
    b = Block()
    b.t = tp
    reassignment = are_replicas_in_isr(
        lift(w),
        b.t,
        rar_of(lift(w), b.t),
        lambda x, in_isr: if_(in_isr, caught_up(p, x, b.t), not_caught_up(p, x, b.t)),
    )
    return rule("onPartitionReassignment", "§7.8.2", b.in_(reassignment))


def maybe_trigger_partition_reassignment(p: Profile, w: Expr, tps: Expr) -> Expr:
    """``maybeTriggerPartitionReassignment(P)`` (§7.8.1), an ``Attempt``: per partition (ascending) — topic queued for
    deletion, unknown partition, or AR = RAR → removed from the reassignment; else mark the topic ineligible and run
    ``onPartitionReassignment``, removing the partition if it throws (partial effects remain)."""

    def one(x: Expr, tp: Expr) -> Expr:
        s = common.st(x)
        return cond(
            (~common.ctx(x).f("legacy_reassignments").has(tp), common.thrown(x)),
            (
                context.queued_for_deletion(s, tp.f("topic"))
                | ~common.ctx(x).f("assignments").has(tp)
                | context.replicas(s, tp).eq(rar_of(x, tp)),
                common.ok(remove_partition_from_reassigned_partitions(p, x, tp)),
            ),
            otherwise=triggered(x, tp),
        )

    def triggered(x: Expr, tp: Expr) -> Expr:
        b = Block()
        b.a = on_partition_reassignment(
            p, deletion.mark_topic_ineligible_for_deletion(x, set_of(tp.f("topic"))), tp
        )
        return b.in_(
            if_(
                b.a.f("error"),
                common.ok(remove_partition_from_reassigned_partitions(p, b.a.f("work"), tp)),
                b.a,
            )
        )

    b = Block()
    b.x = w
    return rule(
        "maybeTriggerPartitionReassignment",
        "§7.8.1",
        b.in_(common.attempt_fold(lift(tps).sorted(), common.ok(b.x), one)),
    )


def initialize_partition_reassignments(p: Profile, w: Expr) -> Expr:
    """§7.1 step 9 [1.1]: ``maybeTriggerPartitionReassignment`` of every partition read from the znode at context
    initialisation. An ``Attempt``."""
    return maybe_trigger_partition_reassignment(p, w, common.ctx(w).f("legacy_reassignments").keys())


def resume_on_broker_startup(p: Profile, w: Expr, new_brokers: Expr) -> Expr:
    """§7.3 step 5 [1.1]: ``onPartitionReassignment`` for every partition being reassigned whose RAR contains a new
    broker (ascending; no ``try``). An ``Attempt``."""
    b = Block()
    b.x = w
    affected = (
        common.ctx(b.x)
        .f("legacy_reassignments")
        .keys()
        .filter(lambda tp: rar_of(b.x, tp).any(lambda r: new_brokers.contains(r)))
        .sorted()
    )
    return b.in_(
        common.attempt_fold(
            affected,
            common.ok(b.x),
            lambda y, tp: if_(
                common.ctx(y).f("legacy_reassignments").has(tp),
                on_partition_reassignment(p, y, tp),
                common.ok(y),
            ),
        )
    )


def partition_reassignment_isr_change(p: Profile, w: Expr, tp: object) -> Expr:
    """``PartitionReassignmentIsrChange(tp)`` (§7.8.1), an ``Attempt``: if tp is being reassigned, read its state
    znode; if every RAR member is in the ISR, ``onPartitionReassignment`` (absent znode: only an error line)."""
    b = Block()
    b.x = w
    checked = are_replicas_in_isr(
        b.x,
        lift(tp),
        rar_of(b.x, tp),
        lambda y, in_isr: if_(in_isr, on_partition_reassignment(p, y, tp), common.ok(y)),
    )
    return rule(
        "PartitionReassignmentIsrChange",
        "§7.8.1",
        b.in_(if_(common.ctx(b.x).f("legacy_reassignments").has(tp), checked, common.ok(b.x))),
    )


def process_partition_reassignment(p: Profile, w: Expr) -> Expr:
    """1.1 ``PartitionReassignment`` event (§7.8.1): if ``/admin/reassign_partitions`` exists, first record every
    entry in ``partitionsBeingReassigned`` (KAFKA-6193), then ``maybeTriggerPartitionReassignment`` of them all."""
    b = Block()
    b.x = w
    b.m = common.zk_of(b.x).f("reassign_partitions")
    recorded = common.set_ctx(b.x, legacy_reassignments=common.ctx(b.x).f("legacy_reassignments").merge(b.m))
    return b.in_(
        if_(b.m.is_empty(), b.x, maybe_trigger_partition_reassignment(p, recorded, b.m.keys()).f("work"))
    )


def zk_partition_reassignment_action(p: Profile) -> Action:
    """``ZkPartitionReassignment(M)`` [1.1]: ``/admin/reassign_partitions`` is created with M; ``PartitionReassignment``."""
    v = common.param_vars(ZkPartitionReassignment)
    return common.controller_action(
        ZkPartitionReassignment,
        "/admin/reassign_partitions is created; the controller handles PartitionReassignment with the legacy "
        "12-step algorithm (§7.8).",
        guard=v["targets"].non_empty() & common.S.f("zk", "reassign_partitions").is_empty(),
        environment=lambda w: common.set_zk(w, reassign_partitions=v["targets"]),
        controller=lambda w: process_partition_reassignment(p, w),
        section="§7.8",
    )
