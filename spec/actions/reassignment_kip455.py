"""Partition reassignment, KIP-455 variant (§7.7, kafka-2.8): ``onPartitionReassignment`` with phases U/A/B, the API
and ZooKeeper entry points, resumption and completion checks, and the ``ApiPartitionReassignment`` /
``ZkPartitionReassignment`` actions.

Procedures that Kafka lets throw return an ``Attempt`` (``common.Attempt``). ``maybe_trigger_partition_reassignment``
catches per partition (UNKNOWN_SERVER_ERROR, partial effects remain) and returns a ``Triggered`` record naming
the partitions that failed, which the ZooKeeper path removes from ``/admin/reassign_partitions``.

Ordering decision: Kafka iterates the reassignment map / the ``partitionsBeingReassigned`` set in hash order;
the spec handles partitions in ascending ``TopicPartition`` order, each against the state left by the previous.
API error codes are replies to the admin client, not state, so they are not modelled beyond which partitions
are acted on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcspec.spec import context as C
from kcspec.spec import zk
from kcspec.spec.actions import common as K
from kcspec.spec.actions import deletion as D
from kcspec.spec.batch import add_leader_and_isr, send
from kcspec.spec.events import ApiPartitionReassignment, ZkPartitionReassignment
from kcspec.spec.lang import Action, Expr, and_, build_map, cond, if_, let, lift, rec, rule, set_of
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderElection,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)
from kcspec.spec.work import Work

RS = ReplicaState
REASSIGN = LeaderElection(ElectionStrategy.ReassignPartitionLeaderElectionStrategy)


@dataclass(frozen=True)
class Triggered:
    """The result of ``maybeTriggerPartitionReassignment``: the work, and the partitions answered with an error."""

    work: Work
    failed: frozenset[TopicPartition] = frozenset()


# ------------------------------------------------------------------------------------------------ ReplicaAssignment


def being_reassigned(fa: Expr) -> Expr:
    """``isBeingReassigned`` = adding ≠ ∅ ∨ removing ≠ ∅ (§3.1)."""
    return fa.f("adding").non_empty() | fa.f("removing").non_empty()


def reassign_to(fa: Expr, target: object) -> Expr:
    """``reassignTo(T)`` (§3.1): full = distinct(T ++ origin), adding = full − origin, removing = full − T."""
    return let(
        C.origin_replicas_of(fa),
        lambda origin: let(
            lift(target).concat(origin).distinct(),
            lambda full: rec(
                ReplicaAssignment, replicas=full, adding=full.minus(origin), removing=full.minus(target)
            ),
        ),
    )


# ------------------------------------------------------------------------------------------------ helpers


def stop_removed_replicas(p: Profile, w: Expr, tp: object, removed: object) -> Expr:
    """``stopRemovedReplicasOfReassignedPartition(tp, R)`` (§7.7.2 B4+B5, U3): R → OfflineReplica →
    ReplicaDeletionStarted → ReplicaDeletionSuccessful → NonExistentReplica, four state-machine calls."""
    return rule(
        "stopRemovedReplicasOfReassignedPartition",
        "§7.7.2",
        let(
            lift(removed).to_set().map(lambda r: C.replica(tp, r)),
            lambda prs: K.pipe(
                w,
                lambda x: replica_state_change(p, x, prs, RS.OfflineReplica),
                lambda x: replica_state_change(p, x, prs, RS.ReplicaDeletionStarted),
                lambda x: replica_state_change(p, x, prs, RS.ReplicaDeletionSuccessful),
                lambda x: replica_state_change(p, x, prs, RS.NonExistentReplica),
            ),
        ),
    )


def is_reassignment_complete(w: Expr, tp: object, fa: Expr, body: Callable[[Expr, Expr], Expr]) -> Expr:
    """``isReassignmentComplete(tp, fa)`` (§7.7.1): ¬fa.isBeingReassigned ∨ (the ZK state znode exists ∧ TRS ⊆ ZK
    ISR). The ZK read may throw; ``body(work, complete)`` continues with the answer (an ``Attempt``)."""
    return if_(
        ~being_reassigned(fa),
        body(w, lift(True)),
        K.then(
            K.read_state_znodes(w, set_of(tp)),
            lambda x: body(
                x,
                zk.znode_exists(K.st(x), tp)
                & C.target_replicas_of(fa)
                .to_set()
                .subset_of(zk.znode(K.st(x), tp).f("leader_and_isr", "isr").to_set()),
            ),
        ),
    )


def update_leader_epoch_and_send_request(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``updateLeaderEpochAndSendRequest(tp, fa)`` (§7.7.2 A1/B3): leader epoch +1 in ZK and in the cache, then one
    batch with LAIR(isNew=false) to ORS and LAIR(isNew=true) to ADD (KAFKA-10314), implicit UMR. An ``Attempt``."""
    return rule(
        "updateLeaderEpochAndSendRequest",
        "§7.7.2",
        K.then_work(
            K.update_leader_epoch(p, w, tp, cache=True),
            lambda x: K.pipe(
                x,
                lambda y: add_leader_and_isr(p, y, C.origin_replicas_of(fa), tp, False),
                lambda y: add_leader_and_isr(p, y, fa.f("adding"), tp, True),
                lambda y: send(p, y),
            ),
        ),
    )


def move_reassigned_partition_leader_if_required(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``moveReassignedPartitionLeaderIfRequired`` (§7.7.2 B3), an ``Attempt`` (no cached leadership throws):
    leader ∉ TRS or not online → Reassign election (a failed election is only logged); else epoch bump + LAIR."""
    return rule(
        "moveReassignedPartitionLeaderIfRequired",
        "§7.7.2",
        let(
            w,
            lambda x: if_(
                ~C.has_leadership(K.st(x), tp),
                K.thrown(x),
                let(
                    C.leader_of(K.st(x), tp),
                    lambda leader: if_(
                        fa.f("replicas").contains(leader) & C.is_online(K.st(x), leader, tp),
                        update_leader_epoch_and_send_request(p, x, tp, fa),
                        K.ok(
                            partition_state_change(p, x, set_of(tp), PartitionState.OnlinePartition, REASSIGN)
                        ),
                    ),
                ),
            ),
        ),
    )


def maybe_remove_from_zk_reassignment(p: Profile, w: Expr, remove: Callable[[Expr, Expr], Expr]) -> Expr:
    """``maybeRemoveFromZkReassignment(pred)`` (§7.7.2 B7, §7.7.1): if ``/admin/reassign_partitions`` exists, drop the
    entries ``(tp, replicas)`` matching ``pred`` and rewrite it, or delete it when nothing remains (fenced; the
    re-arming ``ZkPartitionReassignment`` it enqueues finds no znode and does nothing)."""
    return rule(
        "maybeRemoveFromZkReassignment",
        "§7.7.1",
        let(
            w,
            lambda x: if_(
                K.zk_of(x).f("reassign_partitions").is_empty(),
                x,
                K.fenced_zk(
                    p,
                    x,
                    lambda z: let(
                        z.f("reassign_partitions"),
                        lambda m: z.with_(
                            reassign_partitions=m.delete_all(m.keys().filter(lambda t: remove(t, m.get(t))))
                        ),
                    ),
                ),
            ),
        ),
    )


def remove_partition_from_reassigning_partitions(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``removePartitionFromReassigningPartitions(tp, fa)`` (§7.7.2 B7), an ``Attempt``: tp must be reassigning
    (else IllegalStateException); drop ZK entries ``(tp, fa.replicas)`` (KAFKA-9478: other targets stay); forget tp."""
    return rule(
        "removePartitionFromReassigningPartitions",
        "§7.7.2",
        let(
            w,
            lambda x: if_(
                ~K.ctx(x).f("partitions_being_reassigned").contains(tp),
                K.thrown(x),
                K.ok(
                    K.pipe(
                        x,
                        lambda y: maybe_remove_from_zk_reassignment(
                            p, y, lambda t, replicas: t.eq(tp) & replicas.eq(fa.f("replicas"))
                        ),
                        lambda y: K.set_ctx(
                            y,
                            partitions_being_reassigned=K.ctx(y)
                            .f("partitions_being_reassigned")
                            .minus(set_of(tp)),
                        ),
                    )
                ),
            ),
        ),
    )


# ------------------------------------------------------------------------------------------------ onPartitionReassignment


def update_current_reassignment(p: Profile, w: Expr, tp: Expr, fa_new: Expr) -> Expr:
    """Phase U (§7.7.2): if FA(tp) ≠ FA_new — U1 write the topic znode, U2 FA(tp) := FA_new, U3 stop the replicas no
    longer needed; then tp joins ``partitionsBeingReassigned``. An ``Attempt``."""

    def change(x: Expr, fa_cur: Expr) -> Expr:
        return K.attempt_pipe(
            K.update_replica_assignment_for_partition(p, x, tp, fa_new),
            K.as_attempt(lambda y: K.set_ctx(y, assignments=K.ctx(y).f("assignments").put(tp, fa_new))),
            K.as_attempt(
                lambda y: let(
                    fa_cur.f("replicas").minus(fa_new.f("replicas")),
                    lambda unneeded: if_(unneeded.is_empty(), y, stop_removed_replicas(p, y, tp, unneeded)),
                )
            ),
        )

    return rule(
        "updateCurrentReassignment",
        "§7.7.2",
        K.then_work(
            let(
                w,
                lambda x: let(
                    C.assignment(K.st(x), tp),
                    lambda fa_cur: if_(fa_cur.ne(fa_new), change(x, fa_cur), K.ok(x)),
                ),
            ),
            lambda y: K.set_ctx(
                y,
                partitions_being_reassigned=K.ctx(y).f("partitions_being_reassigned").union(set_of(tp)),
            ),
        ),
    )


def phase_a(p: Profile, w: Expr, tp: Expr, fa: Expr) -> Expr:
    """Phase A (§7.7.2): A1 epoch bump + LAIR to ORS/ADD; A2 each adding replica → NewReplica, one call each."""
    return rule(
        "reassignmentPhaseA",
        "§7.7.2",
        K.then_work(
            update_leader_epoch_and_send_request(p, w, tp, fa),
            lambda x: K.work_fold(
                fa.f("adding"),
                x,
                lambda acc, r: replica_state_change(p, acc, set_of(C.replica(tp, r)), RS.NewReplica),
            ),
        ),
    )


def phase_b(p: Profile, w: Expr, tp: Expr, fa: Expr) -> Expr:
    """Phase B (§7.7.2): B1 ADD → OnlineReplica; B2 FA := TRS; B3 leader move; B4/B5 stop RR; B6 write TRS to ZK;
    B7 forget the reassignment (ZK entry too); B8 UMR for tp; B9 ``resumeDeletionForTopics({topic})``."""
    completed = rec(ReplicaAssignment, replicas=C.target_replicas_of(fa), adding=(), removing=())
    return rule(
        "reassignmentPhaseB",
        "§7.7.2",
        let(
            completed,
            lambda done: K.attempt_pipe(
                K.ok(
                    K.pipe(
                        w,
                        lambda x: replica_state_change(
                            p, x, fa.f("adding").to_set().map(lambda r: C.replica(tp, r)), RS.OnlineReplica
                        ),
                        lambda x: K.set_ctx(x, assignments=K.ctx(x).f("assignments").put(tp, done)),
                    )
                ),
                lambda x: move_reassigned_partition_leader_if_required(p, x, tp, done),
                K.as_attempt(lambda x: stop_removed_replicas(p, x, tp, fa.f("removing"))),
                lambda x: K.update_replica_assignment_for_partition(p, x, tp, done),
                lambda x: remove_partition_from_reassigning_partitions(p, x, tp, done),
                K.as_attempt(
                    lambda x: K.send_update_metadata(p, x, C.live_or_shutting_down(K.st(x)), set_of(tp))
                ),
                K.as_attempt(lambda x: D.resume_deletion_for_topics(p, x, set_of(tp.f("topic")))),
            ),
        ),
    )


def on_partition_reassignment(p: Profile, w: Expr, tp: object, fa_new: object) -> Expr:
    """``onPartitionReassignment(tp, FA_new)`` (§7.7.2), an ``Attempt``: mark the topic ineligible for deletion,
    Phase U, then Phase A if the reassignment is not complete, else Phase B."""
    return rule(
        "onPartitionReassignment",
        "§7.7.2",
        let(
            tp,
            lambda t: let(
                fa_new,
                lambda fa: K.then(
                    update_current_reassignment(
                        p, D.mark_topic_ineligible_for_deletion(lift(w), set_of(t.f("topic"))), t, fa
                    ),
                    lambda x: is_reassignment_complete(
                        x,
                        t,
                        fa,
                        lambda y, complete: if_(complete, phase_b(p, y, t, fa), phase_a(p, y, t, fa)),
                    ),
                ),
            ),
        ),
    )


# ------------------------------------------------------------------------------------------------ entry points


def maybe_trigger_partition_reassignment(p: Profile, w: Expr, reassignments: Expr) -> Expr:
    """``maybeTriggerPartitionReassignment(tp ↦ FA)`` (§7.7.1) → ``Triggered``: topics queued for deletion and
    unknown partitions fail (UNKNOWN_TOPIC_OR_PARTITION); others run ``onPartitionReassignment``, whose exception
    is caught (UNKNOWN_SERVER_ERROR, partial effects remain); ControllerMovedException stops everything."""

    def one(acc: Expr, tp: Expr) -> Expr:
        x = acc.f("work")
        failed = acc.f("failed").union(set_of(tp))
        return cond(
            (x.f("moved"), acc),
            (
                C.queued_for_deletion(K.st(x), tp.f("topic")) | C.replicas(K.st(x), tp).is_empty(),
                acc.with_(failed=failed),
            ),
            otherwise=let(
                on_partition_reassignment(p, x, tp, reassignments.get(tp)),
                lambda a: acc.with_(work=a.f("work"), failed=if_(a.f("error"), failed, acc.f("failed"))),
            ),
        )

    return rule(
        "maybeTriggerPartitionReassignment",
        "§7.7.1",
        reassignments.keys().sorted().fold(rec(Triggered, work=w, failed=frozenset()), one),
    )


def process_zk_partition_reassignment(p: Profile, w: Expr) -> Expr:
    """``processZkPartitionReassignment()`` (§7.7.1) → ``Triggered``: if ``/admin/reassign_partitions`` exists, every
    entry is built with ``reassignTo(target)`` (no validation), triggered, and the failed ones removed from the
    znode."""
    return rule(
        "processZkPartitionReassignment",
        "§7.7.1",
        let(
            w,
            lambda x: let(
                K.zk_of(x).f("reassign_partitions"),
                lambda m: if_(
                    m.is_empty(),
                    rec(Triggered, work=x, failed=frozenset()),
                    let(
                        maybe_trigger_partition_reassignment(
                            p,
                            x,
                            build_map(m.keys(), lambda tp: reassign_to(C.assignment(K.st(x), tp), m.get(tp))),
                        ),
                        lambda tr: if_(
                            tr.f("failed").is_empty(),
                            tr,
                            tr.with_(
                                work=maybe_remove_from_zk_reassignment(
                                    p, tr.f("work"), lambda t, _r: tr.f("failed").contains(t)
                                )
                            ),
                        ),
                    ),
                ),
            ),
        ),
    )


def maybe_resume_reassignments(p: Profile, w: Expr, should_resume: Callable[[Expr, Expr], Expr]) -> Expr:
    """``maybeResumeReassignments(pred)`` (§7.3 step 5, §7.1 step 9), an ``Attempt``: for every partition being
    reassigned (snapshot, ascending) whose current FA satisfies ``pred``, ``onPartitionReassignment(tp, FA(tp))``;
    no ``try``: the first exception ends the loop and propagates."""
    return rule(
        "maybeResumeReassignments",
        "§7.7.1",
        let(
            w,
            lambda x: K.attempt_fold(
                K.ctx(x).f("partitions_being_reassigned").sorted(),
                K.ok(x),
                lambda y, tp: let(
                    C.assignment(K.st(y), tp),
                    lambda fa: if_(should_resume(tp, fa), on_partition_reassignment(p, y, tp, fa), K.ok(y)),
                ),
            ),
        ),
    )


def resume_on_broker_startup(p: Profile, w: Expr, new_brokers: Expr) -> Expr:
    """§7.3 step 5: resume every reassignment whose TRS contains a new broker. An ``Attempt``."""
    return maybe_resume_reassignments(
        p, w, lambda _tp, fa: C.target_replicas_of(fa).any(lambda r: new_brokers.contains(r))
    )


def initialize_partition_reassignments(p: Profile, w: Expr) -> Expr:
    """``initializePartitionReassignments`` (§7.1 step 9): the ZooKeeper path first (it supersedes), then resume the
    remaining API reassignments. An ``Attempt``."""
    return let(
        K.zk_of(lift(w)).f("reassign_partitions").keys(),
        lambda zk_keys: let(
            process_zk_partition_reassignment(p, w),
            lambda tr: maybe_resume_reassignments(
                p,
                tr.f("work"),
                lambda tp, _fa: ~(zk_keys.contains(tp) & ~tr.f("failed").contains(tp)),
            ),
        ),
    )


def maybe_complete_reassignment(p: Profile, w: Expr, tp: object) -> Expr:
    """``maybeCompleteReassignment(tp)`` (§7.7.1): if ``isReassignmentComplete(tp, FA(tp))`` then
    ``onPartitionReassignment(tp, FA(tp))``. An ``Attempt``."""
    return rule(
        "maybeCompleteReassignment",
        "§7.7.1",
        let(
            w,
            lambda x: let(
                C.assignment(K.st(x), tp),
                lambda fa: is_reassignment_complete(
                    x,
                    tp,
                    fa,
                    lambda y, complete: if_(complete, on_partition_reassignment(p, y, tp, fa), K.ok(y)),
                ),
            ),
        ),
    )


# ------------------------------------------------------------------------------------------------ actions


def validate_replicas(s: Expr, tp: Expr, target: Expr) -> Expr:
    """``validateReplicas`` (§7.7.1) holds: non-empty, no duplicates, ids ≥ 0, adding replicas all live."""
    return and_(
        target.non_empty(),
        target.to_set().size().eq(target.size()),
        target.all(lambda r: r.ge(0)),
        reassign_to(C.assignment(s, tp), target).f("adding").all(lambda r: C.live_brokers(s).contains(r)),
    )


def maybe_build_reassignment(s: Expr, tp: Expr, target: Expr) -> Expr:
    """``maybeBuildReassignment(tp, target)`` (§7.7.1); ``target`` may be ``None`` (cancel). Only called when it
    yields an assignment (see ``buildable``)."""
    return let(
        C.assignment(s, tp),
        lambda fa: if_(target.eq(None), reassign_to(fa, C.origin_replicas_of(fa)), reassign_to(fa, target)),
    )


def buildable(s: Expr, tp: Expr, target: Expr) -> Expr:
    """The API request for ``tp`` passes validation and builds a reassignment (a cancel needs one in progress)."""
    return if_(
        target.eq(None),
        being_reassigned(C.assignment(s, tp)),
        validate_replicas(s, tp, target),
    )


def process_api_partition_reassignment(p: Profile, w: Expr, targets: Expr) -> Expr:
    """``processApiPartitionReassignment`` (§7.7.1): validate and build every request against the state before, drop
    the accepted partitions from ``/admin/reassign_partitions`` (API supersedes ZK), then trigger them."""
    return rule(
        "processApiPartitionReassignment",
        "§7.7.1",
        let(
            w,
            lambda x: let(
                build_map(
                    targets.keys().filter(lambda tp: buildable(K.st(x), tp, targets.get(tp))),
                    lambda tp: maybe_build_reassignment(K.st(x), tp, targets.get(tp)),
                ),
                lambda accepted: maybe_trigger_partition_reassignment(
                    p,
                    maybe_remove_from_zk_reassignment(p, x, lambda t, _r: accepted.has(t)),
                    accepted,
                ).f("work"),
            ),
        ),
    )


def api_partition_reassignment_action(p: Profile) -> Action:
    """``ApiPartitionReassignment(M)`` (§7.7.1, 2.8 only): ``AlterPartitionReassignments`` handled by the controller."""
    v = K.param_vars(ApiPartitionReassignment)
    return K.controller_action(
        ApiPartitionReassignment,
        "An admin client alters partition reassignments (target list, or None to cancel) (§7.7.1, KIP-455).",
        guard=K.active(K.S) & v["targets"].non_empty(),
        environment=None,
        controller=lambda w: process_api_partition_reassignment(p, w, v["targets"]),
    )


def zk_partition_reassignment_action(p: Profile) -> Action:
    """``ZkPartitionReassignment(M)`` (§7.7.1 ZK path): ``/admin/reassign_partitions`` is created with M."""
    v = K.param_vars(ZkPartitionReassignment)
    return K.controller_action(
        ZkPartitionReassignment,
        "/admin/reassign_partitions is created; the controller handles ZkPartitionReassignment (§7.7.1).",
        guard=v["targets"].non_empty() & K.S.f("zk", "reassign_partitions").is_empty(),
        environment=lambda w: K.set_zk(w, reassign_partitions=v["targets"]),
        controller=lambda w: process_zk_partition_reassignment(p, w).f("work"),
    )
