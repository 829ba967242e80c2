"""Partition reassignment, legacy 12-step algorithm (§7.8, kafka-1.1): ``onPartitionReassignment`` with its two
branches, ``maybeTriggerPartitionReassignment``, ``removePartitionFromReassignedPartitions``, the ISR-change
check, and the ``ZkPartitionReassignment`` action (1.1's ``PartitionReassignment`` event).

RAR is ``controller.legacy_reassignments[tp]``; AR the in-memory assignment; OAR the AR before step 1.
Decisions: step 1 orders ``AR' = distinct(RAR ++ AR)`` (ARCHITECTURE.md); ``newOnly`` (step 3) and the
partitions of ``maybeTriggerPartitionReassignment`` are handled in ascending order (Kafka: hash order).
Procedures that can throw return an ``Attempt`` (``common.Attempt``).
"""

from __future__ import annotations

from kcspec.spec import context as C
from kcspec.spec import zk
from kcspec.spec.actions import common as K
from kcspec.spec.actions import deletion as D
from kcspec.spec.batch import add_leader_and_isr, send
from kcspec.spec.events import ZkPartitionReassignment
from kcspec.spec.lang import Action, Expr, cond, if_, let, lift, rec, rule, set_of
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

RS = ReplicaState
REASSIGN = LeaderElection(ElectionStrategy.ReassignPartitionLeaderElectionStrategy)


def rar_of(w: Expr, tp: object) -> Expr:
    """RAR: the new replicas of the reassignment of ``tp``."""
    return K.ctx(w).f("legacy_reassignments").get(tp)


def plain(replicas: object) -> Expr:
    """A 1.1 assignment: a replica list without adding/removing replicas."""
    return rec(ReplicaAssignment, replicas=replicas, adding=(), removing=())


def update_assigned_replicas_for_partition(p: Profile, w: Expr, tp: Expr, replicas: object) -> Expr:
    """``updateAssignedReplicasForPartition(tp, replicas)`` (§7.8.2 steps 1/10), an ``Attempt``: write the topic's
    in-memory assignment with ``tp ↦ replicas`` to the topic znode (NONODE throws); on success AR(tp) := replicas."""
    return K.then_work(
        K.update_replica_assignment_for_partition(p, w, tp, plain(replicas)),
        lambda x: K.set_ctx(x, assignments=K.ctx(x).f("assignments").put(tp, plain(replicas))),
    )


def update_leader_epoch_and_send_request(p: Profile, w: Expr, tp: Expr, recipients: object) -> Expr:
    """``updateLeaderEpochAndSendRequest(tp, recipients, AR)`` (§7.8.2 steps 2/7), an ``Attempt``: leader epoch +1 in
    ZK only (the cache keeps the old record, KAFKA-9212), then LAIR(isNew=false) with the new record and the
    in-memory AR to ``recipients``; the implicit UMR is built from the stale cache."""
    return rule(
        "updateLeaderEpochAndSendRequest",
        "§7.8.2",
        K.then_work(
            K.update_leader_epoch(p, w, tp, cache=False),
            lambda x: K.pipe(
                x,
                lambda y: add_leader_and_isr(p, y, recipients, tp, False, leader_isr=zk.znode(K.st(x), tp)),
                lambda y: send(p, y),
            ),
        ),
    )


def remove_partition_from_reassigned_partitions(p: Profile, w: Expr, tp: object) -> Expr:
    """``removePartitionFromReassignedPartitions(tp)`` (§7.8.1): ``/admin/reassign_partitions`` := the in-memory
    reassignments without tp (deleted when empty; the re-enqueued event finds no znode), then forget tp."""
    return rule(
        "removePartitionFromReassignedPartitions",
        "§7.8.1",
        let(
            K.ctx(lift(w)).f("legacy_reassignments").delete(tp),
            lambda remaining: K.pipe(
                w,
                lambda x: K.fenced_zk(p, x, lambda z: z.with_(reassign_partitions=remaining)),
                lambda x: K.unless_moved(x, lambda y: K.set_ctx(y, legacy_reassignments=remaining)),
            ),
        ),
    )


def stop_old_replicas(p: Profile, w: Expr, tp: Expr, old: Expr) -> Expr:
    """Steps 8–9 (``stopOldReplicasOfReassignedPartition``): OAR − RAR → OfflineReplica → ReplicaDeletionStarted →
    ReplicaDeletionSuccessful → NonExistentReplica."""
    return let(
        old.map(lambda r: C.replica(tp, r)),
        lambda prs: K.pipe(
            w,
            lambda x: replica_state_change(p, x, prs, RS.OfflineReplica),
            lambda x: replica_state_change(p, x, prs, RS.ReplicaDeletionStarted),
            lambda x: replica_state_change(p, x, prs, RS.ReplicaDeletionSuccessful),
            lambda x: replica_state_change(p, x, prs, RS.NonExistentReplica),
        ),
    )


def move_reassigned_partition_leader_if_required(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 6–7 (§7.8.2), an ``Attempt`` (no cached leadership throws): AR := RAR in memory only; leader ∉ RAR or
    not online → Reassign election (failure only logged); else epoch bump + LAIR to OAR ∪ RAR with replicas RAR."""
    return let(
        w,
        lambda x: if_(
            ~C.has_leadership(K.st(x), tp),
            K.thrown(x),
            let(
                C.leader_of(K.st(x), tp),
                lambda leader: let(
                    C.replicas(K.st(x), tp),
                    lambda old_and_new: let(
                        K.set_ctx(x, assignments=K.ctx(x).f("assignments").put(tp, plain(rar_of(x, tp)))),
                        lambda y: if_(
                            rar_of(x, tp).contains(leader) & C.is_online(K.st(y), leader, tp),
                            update_leader_epoch_and_send_request(p, y, tp, old_and_new),
                            K.ok(
                                partition_state_change(
                                    p, y, set_of(tp), PartitionState.OnlinePartition, REASSIGN
                                )
                            ),
                        ),
                    ),
                ),
            ),
        ),
    )


def not_caught_up(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 1–3 (§7.8.2): AR' = distinct(RAR ++ AR) written to ZK and memory; epoch bump + LAIR to AR'; every
    RAR − OAR replica → NewReplica, one call each."""
    return let(
        rar_of(w, tp),
        lambda rar: let(
            C.replicas(K.st(w), tp),
            lambda ar: let(
                rar.concat(ar).distinct(),
                lambda ar2: K.attempt_pipe(
                    update_assigned_replicas_for_partition(p, w, tp, ar2),
                    lambda x: update_leader_epoch_and_send_request(p, x, tp, ar2),
                    K.as_attempt(
                        lambda x: K.work_fold(
                            rar.to_set().minus(ar.to_set()).sorted(),
                            x,
                            lambda acc, r: replica_state_change(
                                p, acc, set_of(C.replica(tp, r)), RS.NewReplica
                            ),
                        )
                    ),
                ),
            ),
        ),
    )


def caught_up(p: Profile, w: Expr, tp: Expr) -> Expr:
    """Steps 5–12 (§7.8.2) and ``resumeDeletionForTopics({topic})``."""
    return let(
        rar_of(w, tp),
        lambda rar: let(
            C.replicas(K.st(w), tp).to_set().minus(rar.to_set()),
            lambda old: K.attempt_pipe(
                K.ok(
                    K.work_fold(
                        rar,
                        w,
                        lambda acc, r: replica_state_change(
                            p, acc, set_of(C.replica(tp, r)), RS.OnlineReplica
                        ),
                    )
                ),
                lambda x: move_reassigned_partition_leader_if_required(p, x, tp),
                K.as_attempt(lambda x: stop_old_replicas(p, x, tp, old)),
                lambda x: update_assigned_replicas_for_partition(p, x, tp, rar),
                K.as_attempt(lambda x: remove_partition_from_reassigned_partitions(p, x, tp)),
                K.as_attempt(
                    lambda x: K.send_update_metadata(p, x, C.live_or_shutting_down(K.st(x)), set_of(tp))
                ),
                K.as_attempt(lambda x: D.resume_deletion_for_topics(p, x, set_of(tp.f("topic")))),
            ),
        ),
    )


def are_replicas_in_isr(w: Expr, tp: Expr, replicas: Expr, body: K.Step2) -> Expr:
    """``areReplicasInIsr(tp, RAR)``: ZK state exists ∧ RAR ⊆ ZK ISR. The read may throw; ``body(work, answer)``."""
    return K.then(
        K.read_state_znodes(w, set_of(tp)),
        lambda x: body(
            x,
            zk.znode_exists(K.st(x), tp)
            & replicas.to_set().subset_of(zk.znode(K.st(x), tp).f("leader_and_isr", "isr").to_set()),
        ),
    )


def on_partition_reassignment(p: Profile, w: Expr, tp: object) -> Expr:
    """``onPartitionReassignment(tp, ctx)`` (§7.8.2), an ``Attempt``: not all RAR in the ZK ISR → steps 1–3; else
    steps 5–12."""
    return rule(
        "onPartitionReassignment",
        "§7.8.2",
        let(
            tp,
            lambda t: are_replicas_in_isr(
                lift(w),
                t,
                rar_of(lift(w), t),
                lambda x, in_isr: if_(in_isr, caught_up(p, x, t), not_caught_up(p, x, t)),
            ),
        ),
    )


def maybe_trigger_partition_reassignment(p: Profile, w: Expr, tps: Expr) -> Expr:
    """``maybeTriggerPartitionReassignment(P)`` (§7.8.1), an ``Attempt``: per partition (ascending) — topic queued for
    deletion, unknown partition, or AR = RAR → removed from the reassignment; else mark the topic ineligible and run
    ``onPartitionReassignment``, removing the partition if it throws (partial effects remain)."""

    def one(x: Expr, tp: Expr) -> Expr:
        s = K.st(x)
        return cond(
            (~K.ctx(x).f("legacy_reassignments").has(tp), K.thrown(x)),
            (
                C.queued_for_deletion(s, tp.f("topic"))
                | ~K.ctx(x).f("assignments").has(tp)
                | C.replicas(s, tp).eq(rar_of(x, tp)),
                K.ok(remove_partition_from_reassigned_partitions(p, x, tp)),
            ),
            otherwise=let(
                on_partition_reassignment(
                    p, D.mark_topic_ineligible_for_deletion(x, set_of(tp.f("topic"))), tp
                ),
                lambda a: if_(
                    a.f("error"),
                    K.ok(remove_partition_from_reassigned_partitions(p, a.f("work"), tp)),
                    a,
                ),
            ),
        )

    return rule(
        "maybeTriggerPartitionReassignment",
        "§7.8.1",
        let(w, lambda x: K.attempt_fold(lift(tps).sorted(), K.ok(x), one)),
    )


def initialize_partition_reassignments(p: Profile, w: Expr) -> Expr:
    """§7.1 step 9 [1.1]: ``maybeTriggerPartitionReassignment`` of every partition read from the znode at context
    initialisation. An ``Attempt``."""
    return maybe_trigger_partition_reassignment(p, w, K.ctx(w).f("legacy_reassignments").keys())


def resume_on_broker_startup(p: Profile, w: Expr, new_brokers: Expr) -> Expr:
    """§7.3 step 5 [1.1]: ``onPartitionReassignment`` for every partition being reassigned whose RAR contains a new
    broker (ascending; no ``try``). An ``Attempt``."""
    return let(
        w,
        lambda x: K.attempt_fold(
            K.ctx(x)
            .f("legacy_reassignments")
            .keys()
            .filter(lambda tp: rar_of(x, tp).any(lambda r: new_brokers.contains(r)))
            .sorted(),
            K.ok(x),
            lambda y, tp: if_(
                K.ctx(y).f("legacy_reassignments").has(tp), on_partition_reassignment(p, y, tp), K.ok(y)
            ),
        ),
    )


def partition_reassignment_isr_change(p: Profile, w: Expr, tp: object) -> Expr:
    """``PartitionReassignmentIsrChange(tp)`` (§7.8.1), an ``Attempt``: if tp is being reassigned, read its state
    znode; if every RAR member is in the ISR, ``onPartitionReassignment`` (absent znode: only an error line)."""
    return rule(
        "PartitionReassignmentIsrChange",
        "§7.8.1",
        let(
            w,
            lambda x: if_(
                K.ctx(x).f("legacy_reassignments").has(tp),
                are_replicas_in_isr(
                    x,
                    lift(tp),
                    rar_of(x, tp),
                    lambda y, in_isr: if_(in_isr, on_partition_reassignment(p, y, tp), K.ok(y)),
                ),
                K.ok(x),
            ),
        ),
    )


def process_partition_reassignment(p: Profile, w: Expr) -> Expr:
    """1.1 ``PartitionReassignment`` event (§7.8.1): if ``/admin/reassign_partitions`` exists, first record every
    entry in ``partitionsBeingReassigned`` (KAFKA-6193), then ``maybeTriggerPartitionReassignment`` of them all."""
    return let(
        w,
        lambda x: let(
            K.zk_of(x).f("reassign_partitions"),
            lambda m: if_(
                m.is_empty(),
                x,
                maybe_trigger_partition_reassignment(
                    p,
                    K.set_ctx(x, legacy_reassignments=K.ctx(x).f("legacy_reassignments").merge(m)),
                    m.keys(),
                ).f("work"),
            ),
        ),
    )


def zk_partition_reassignment_action(p: Profile) -> Action:
    """``ZkPartitionReassignment(M)`` [1.1]: ``/admin/reassign_partitions`` is created with M; ``PartitionReassignment``."""
    v = K.param_vars(ZkPartitionReassignment)
    return K.controller_action(
        ZkPartitionReassignment,
        "/admin/reassign_partitions is created; the controller handles PartitionReassignment with the legacy "
        "12-step algorithm (§7.8).",
        guard=v["targets"].non_empty() & K.S.f("zk", "reassign_partitions").is_empty(),
        environment=lambda w: K.set_zk(w, reassign_partitions=v["targets"]),
        controller=lambda w: process_partition_reassignment(p, w),
        section="§7.8",
    )
