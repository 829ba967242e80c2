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

from kcspec.spec import context, zk
from kcspec.spec.actions import common, deletion
from kcspec.spec.batch import add_leader_and_isr, send
from kcspec.spec.events import ApiPartitionReassignment, ZkPartitionReassignment
from kcspec.spec.lang import Action, Block, Expr, and_, build_map, cond, if_, lift, rec, rule, set_of
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
    b = Block()
    b.origin = context.origin_replicas_of(fa)
    b.full = lift(target).concat(b.origin).distinct()
    return b.in_(
        rec(ReplicaAssignment, replicas=b.full, adding=b.full.minus(b.origin), removing=b.full.minus(target))
    )


# ------------------------------------------------------------------------------------------------ helpers


def stop_removed_replicas(p: Profile, w: Expr, tp: object, removed: object) -> Expr:
    """``stopRemovedReplicasOfReassignedPartition(tp, R)`` (§7.7.2 B4+B5, U3): R → OfflineReplica →
    ReplicaDeletionStarted → ReplicaDeletionSuccessful → NonExistentReplica, four state-machine calls."""
    b = Block()
    b.prs = lift(removed).to_set().map(lambda r: context.replica(tp, r))
    stopped = common.pipe(
        w,
        lambda x: replica_state_change(p, x, b.prs, ReplicaState.OfflineReplica),
        lambda x: replica_state_change(p, x, b.prs, ReplicaState.ReplicaDeletionStarted),
        lambda x: replica_state_change(p, x, b.prs, ReplicaState.ReplicaDeletionSuccessful),
        lambda x: replica_state_change(p, x, b.prs, ReplicaState.NonExistentReplica),
    )
    return rule("stopRemovedReplicasOfReassignedPartition", "§7.7.2", b.in_(stopped))


def is_reassignment_complete(w: Expr, tp: object, fa: Expr, body: Callable[[Expr, Expr], Expr]) -> Expr:
    """``isReassignmentComplete(tp, fa)`` (§7.7.1): ¬fa.isBeingReassigned ∨ (the ZK state znode exists ∧ TRS ⊆ ZK
    ISR). The ZK read may throw; ``body(work, complete)`` continues with the answer (an ``Attempt``)."""
    return if_(
        ~being_reassigned(fa),
        body(w, lift(True)),
        common.then(
            common.read_state_znodes(w, set_of(tp)),
            lambda x: body(
                x,
                zk.znode_exists(common.st(x), tp)
                & context.target_replicas_of(fa)
                .to_set()
                .subset_of(zk.znode(common.st(x), tp).f("leader_and_isr", "isr").to_set()),
            ),
        ),
    )


def update_leader_epoch_and_send_request(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``updateLeaderEpochAndSendRequest(tp, fa)`` (§7.7.2 A1/B3): leader epoch +1 in ZK and in the cache, then one
    batch with LAIR(isNew=false) to ORS and LAIR(isNew=true) to ADD (KAFKA-10314), implicit UMR. An ``Attempt``."""
    return rule(
        "updateLeaderEpochAndSendRequest",
        "§7.7.2",
        common.then_work(
            common.update_leader_epoch(p, w, tp, cache=True),
            lambda x: common.pipe(
                x,
                lambda y: add_leader_and_isr(p, y, context.origin_replicas_of(fa), tp, False),
                lambda y: add_leader_and_isr(p, y, fa.f("adding"), tp, True),
                lambda y: send(p, y),
            ),
        ),
    )


def move_reassigned_partition_leader_if_required(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``moveReassignedPartitionLeaderIfRequired`` (§7.7.2 B3), an ``Attempt`` (no cached leadership throws):
    leader ∉ TRS or not online → Reassign election (a failed election is only logged); else epoch bump + LAIR."""
    b = Block()
    b.x = w
    moved = Block()
    moved.leader = context.leader_of(common.st(b.x), tp)
    elect = common.ok(partition_state_change(p, b.x, set_of(tp), PartitionState.OnlinePartition, REASSIGN))
    move = moved.in_(
        if_(
            fa.f("replicas").contains(moved.leader) & context.is_online(common.st(b.x), moved.leader, tp),
            update_leader_epoch_and_send_request(p, b.x, tp, fa),
            elect,
        )
    )
    return rule(
        "moveReassignedPartitionLeaderIfRequired",
        "§7.7.2",
        b.in_(if_(~context.has_leadership(common.st(b.x), tp), common.thrown(b.x), move)),
    )


def maybe_remove_from_zk_reassignment(p: Profile, w: Expr, remove: Callable[[Expr, Expr], Expr]) -> Expr:
    """``maybeRemoveFromZkReassignment(pred)`` (§7.7.2 B7, §7.7.1): if ``/admin/reassign_partitions`` exists, drop the
    entries ``(tp, replicas)`` matching ``pred`` and rewrite it, or delete it when nothing remains (fenced; the
    re-arming ``ZkPartitionReassignment`` it enqueues finds no znode and does nothing)."""

    def rewritten(z: Expr) -> Expr:
        b = Block()
        b.m = z.f("reassign_partitions")
        return b.in_(
            z.with_(reassign_partitions=b.m.delete_all(b.m.keys().filter(lambda t: remove(t, b.m.get(t)))))
        )

    b = Block()
    b.x = w
    return rule(
        "maybeRemoveFromZkReassignment",
        "§7.7.1",
        b.in_(
            if_(
                common.zk_of(b.x).f("reassign_partitions").is_empty(),
                b.x,
                common.fenced_zk(p, b.x, rewritten),
            )
        ),
    )


def remove_partition_from_reassigning_partitions(p: Profile, w: Expr, tp: object, fa: Expr) -> Expr:
    """``removePartitionFromReassigningPartitions(tp, fa)`` (§7.7.2 B7), an ``Attempt``: tp must be reassigning
    (else IllegalStateException); drop ZK entries ``(tp, fa.replicas)`` (KAFKA-9478: other targets stay); forget tp."""
    b = Block()
    b.x = w
    removed = common.pipe(
        b.x,
        lambda y: maybe_remove_from_zk_reassignment(
            p, y, lambda t, replicas: t.eq(tp) & replicas.eq(fa.f("replicas"))
        ),
        lambda y: common.set_ctx(
            y, partitions_being_reassigned=common.ctx(y).f("partitions_being_reassigned").minus(set_of(tp))
        ),
    )
    return rule(
        "removePartitionFromReassigningPartitions",
        "§7.7.2",
        b.in_(
            if_(
                ~common.ctx(b.x).f("partitions_being_reassigned").contains(tp),
                common.thrown(b.x),
                common.ok(removed),
            )
        ),
    )


# ------------------------------------------------------------------------------------------------ onPartitionReassignment


def update_current_reassignment(p: Profile, w: Expr, tp: Expr, fa_new: Expr) -> Expr:
    """Phase U (§7.7.2): if FA(tp) ≠ FA_new — U1 write the topic znode, U2 FA(tp) := FA_new, U3 stop the replicas no
    longer needed; then tp joins ``partitionsBeingReassigned``. An ``Attempt``."""

    def change(x: Expr, fa_cur: Expr) -> Expr:
        return common.attempt_pipe(
            common.update_replica_assignment_for_partition(p, x, tp, fa_new),
            common.as_attempt(
                lambda y: common.set_ctx(y, assignments=common.ctx(y).f("assignments").put(tp, fa_new))
            ),
            common.as_attempt(lambda y: stop_unneeded(y, fa_cur)),
        )

    def stop_unneeded(y: Expr, fa_cur: Expr) -> Expr:
        b = Block()
        b.unneeded = fa_cur.f("replicas").minus(fa_new.f("replicas"))
        return b.in_(if_(b.unneeded.is_empty(), y, stop_removed_replicas(p, y, tp, b.unneeded)))

    b = Block()
    b.x = w
    b.fa_cur = context.assignment(common.st(b.x), tp)
    updated = b.in_(if_(b.fa_cur.ne(fa_new), change(b.x, b.fa_cur), common.ok(b.x)))
    return rule(
        "updateCurrentReassignment",
        "§7.7.2",
        common.then_work(
            updated,
            lambda y: common.set_ctx(
                y,
                partitions_being_reassigned=common.ctx(y).f("partitions_being_reassigned").union(set_of(tp)),
            ),
        ),
    )


def phase_a(p: Profile, w: Expr, tp: Expr, fa: Expr) -> Expr:
    """Phase A (§7.7.2): A1 epoch bump + LAIR to ORS/ADD; A2 each adding replica → NewReplica, one call each."""
    return rule(
        "reassignmentPhaseA",
        "§7.7.2",
        common.then_work(
            update_leader_epoch_and_send_request(p, w, tp, fa),
            lambda x: common.work_fold(
                fa.f("adding"),
                x,
                lambda acc, r: replica_state_change(
                    p, acc, set_of(context.replica(tp, r)), ReplicaState.NewReplica
                ),
            ),
        ),
    )


def phase_b(p: Profile, w: Expr, tp: Expr, fa: Expr) -> Expr:
    """Phase B (§7.7.2): B1 ADD → OnlineReplica; B2 FA := TRS; B3 leader move; B4/B5 stop RR; B6 write TRS to ZK;
    B7 forget the reassignment (ZK entry too); B8 UMR for tp; B9 ``resumeDeletionForTopics({topic})``."""
    completed = rec(ReplicaAssignment, replicas=context.target_replicas_of(fa), adding=(), removing=())
    b = Block()
    b.done = completed
    phase = common.attempt_pipe(
        common.ok(
            common.pipe(
                w,
                lambda x: replica_state_change(
                    p,
                    x,
                    fa.f("adding").to_set().map(lambda r: context.replica(tp, r)),
                    ReplicaState.OnlineReplica,
                ),
                lambda x: common.set_ctx(x, assignments=common.ctx(x).f("assignments").put(tp, b.done)),
            )
        ),
        lambda x: move_reassigned_partition_leader_if_required(p, x, tp, b.done),
        common.as_attempt(lambda x: stop_removed_replicas(p, x, tp, fa.f("removing"))),
        lambda x: common.update_replica_assignment_for_partition(p, x, tp, b.done),
        lambda x: remove_partition_from_reassigning_partitions(p, x, tp, b.done),
        common.as_attempt(
            lambda x: common.send_update_metadata(
                p, x, context.live_or_shutting_down(common.st(x)), set_of(tp)
            )
        ),
        common.as_attempt(lambda x: deletion.resume_deletion_for_topics(p, x, set_of(tp.f("topic")))),
    )
    return rule("reassignmentPhaseB", "§7.7.2", b.in_(phase))


def on_partition_reassignment(p: Profile, w: Expr, tp: object, fa_new: object) -> Expr:
    """``onPartitionReassignment(tp, FA_new)`` (§7.7.2), an ``Attempt``: mark the topic ineligible for deletion,
    Phase U, then Phase A if the reassignment is not complete, else Phase B."""
    b = Block()
    b.t = tp
    b.fa = fa_new
    marked = deletion.mark_topic_ineligible_for_deletion(lift(w), set_of(b.t.f("topic")))
    reassignment = common.then(
        update_current_reassignment(p, marked, b.t, b.fa),
        lambda x: is_reassignment_complete(
            x,
            b.t,
            b.fa,
            lambda y, complete: if_(complete, phase_b(p, y, b.t, b.fa), phase_a(p, y, b.t, b.fa)),
        ),
    )
    return rule("onPartitionReassignment", "§7.7.2", b.in_(reassignment))


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
                context.queued_for_deletion(common.st(x), tp.f("topic"))
                | context.replicas(common.st(x), tp).is_empty(),
                acc.with_(failed=failed),
            ),
            otherwise=triggered(acc, x, tp, failed),
        )

    def triggered(acc: Expr, x: Expr, tp: Expr, failed: Expr) -> Expr:
        b = Block()
        b.a = on_partition_reassignment(p, x, tp, reassignments.get(tp))
        return b.in_(acc.with_(work=b.a.f("work"), failed=if_(b.a.f("error"), failed, acc.f("failed"))))

    return rule(
        "maybeTriggerPartitionReassignment",
        "§7.7.1",
        reassignments.keys().sorted().fold(rec(Triggered, work=w, failed=frozenset()), one),
    )


def process_zk_partition_reassignment(p: Profile, w: Expr) -> Expr:
    """``processZkPartitionReassignment()`` (§7.7.1) → ``Triggered``: if ``/admin/reassign_partitions`` exists, every
    entry is built with ``reassignTo(target)`` (no validation), triggered, and the failed ones removed from the
    znode."""
    b = Block()
    b.x = w
    b.m = common.zk_of(b.x).f("reassign_partitions")
    trigger = Block()
    trigger.tr = maybe_trigger_partition_reassignment(
        p,
        b.x,
        build_map(b.m.keys(), lambda tp: reassign_to(context.assignment(common.st(b.x), tp), b.m.get(tp))),
    )
    failed_removed = trigger.tr.with_(
        work=maybe_remove_from_zk_reassignment(
            p, trigger.tr.f("work"), lambda t, _r: trigger.tr.f("failed").contains(t)
        )
    )
    triggered = trigger.in_(if_(trigger.tr.f("failed").is_empty(), trigger.tr, failed_removed))
    return rule(
        "processZkPartitionReassignment",
        "§7.7.1",
        b.in_(if_(b.m.is_empty(), rec(Triggered, work=b.x, failed=frozenset()), triggered)),
    )


def maybe_resume_reassignments(p: Profile, w: Expr, should_resume: Callable[[Expr, Expr], Expr]) -> Expr:
    """``maybeResumeReassignments(pred)`` (§7.3 step 5, §7.1 step 9), an ``Attempt``: for every partition being
    reassigned (snapshot, ascending) whose current FA satisfies ``pred``, ``onPartitionReassignment(tp, FA(tp))``;
    no ``try``: the first exception ends the loop and propagates."""

    def resume(y: Expr, tp: Expr) -> Expr:
        b = Block()
        b.fa = context.assignment(common.st(y), tp)
        return b.in_(if_(should_resume(tp, b.fa), on_partition_reassignment(p, y, tp, b.fa), common.ok(y)))

    b = Block()
    b.x = w
    resumed = common.attempt_fold(
        common.ctx(b.x).f("partitions_being_reassigned").sorted(), common.ok(b.x), resume
    )
    return rule("maybeResumeReassignments", "§7.7.1", b.in_(resumed))


def resume_on_broker_startup(p: Profile, w: Expr, new_brokers: Expr) -> Expr:
    """§7.3 step 5: resume every reassignment whose TRS contains a new broker. An ``Attempt``."""
    return maybe_resume_reassignments(
        p, w, lambda _tp, fa: context.target_replicas_of(fa).any(lambda r: new_brokers.contains(r))
    )


def initialize_partition_reassignments(p: Profile, w: Expr) -> Expr:
    """``initializePartitionReassignments`` (§7.1 step 9): the ZooKeeper path first (it supersedes), then resume the
    remaining API reassignments. An ``Attempt``."""
    b = Block()
    b.zk_keys = common.zk_of(lift(w)).f("reassign_partitions").keys()
    b.tr = process_zk_partition_reassignment(p, w)
    return b.in_(
        maybe_resume_reassignments(
            p, b.tr.f("work"), lambda tp, _fa: ~(b.zk_keys.contains(tp) & ~b.tr.f("failed").contains(tp))
        )
    )


def maybe_complete_reassignment(p: Profile, w: Expr, tp: object) -> Expr:
    """``maybeCompleteReassignment(tp)`` (§7.7.1): if ``isReassignmentComplete(tp, FA(tp))`` then
    ``onPartitionReassignment(tp, FA(tp))``. An ``Attempt``."""
    b = Block()
    b.x = w
    b.fa = context.assignment(common.st(b.x), tp)
    completed = is_reassignment_complete(
        b.x,
        tp,
        b.fa,
        lambda y, complete: if_(complete, on_partition_reassignment(p, y, tp, b.fa), common.ok(y)),
    )
    return rule("maybeCompleteReassignment", "§7.7.1", b.in_(completed))


# ------------------------------------------------------------------------------------------------ actions


def validate_replicas(s: Expr, tp: Expr, target: Expr) -> Expr:
    """``validateReplicas`` (§7.7.1) holds: non-empty, no duplicates, ids ≥ 0, adding replicas all live."""
    return and_(
        target.non_empty(),
        target.to_set().size().eq(target.size()),
        target.all(lambda r: r.ge(0)),
        reassign_to(context.assignment(s, tp), target)
        .f("adding")
        .all(lambda r: context.live_brokers(s).contains(r)),
    )


def maybe_build_reassignment(s: Expr, tp: Expr, target: Expr) -> Expr:
    """``maybeBuildReassignment(tp, target)`` (§7.7.1); ``target`` may be ``None`` (cancel). Only called when it
    yields an assignment (see ``buildable``)."""
    b = Block()
    b.fa = context.assignment(s, tp)
    return b.in_(
        if_(target.eq(None), reassign_to(b.fa, context.origin_replicas_of(b.fa)), reassign_to(b.fa, target))
    )


def buildable(s: Expr, tp: Expr, target: Expr) -> Expr:
    """The API request for ``tp`` passes validation and builds a reassignment (a cancel needs one in progress)."""
    return if_(
        target.eq(None),
        being_reassigned(context.assignment(s, tp)),
        validate_replicas(s, tp, target),
    )


def process_api_partition_reassignment(p: Profile, w: Expr, targets: Expr) -> Expr:
    """``processApiPartitionReassignment`` (§7.7.1): validate and build every request against the state before, drop
    the accepted partitions from ``/admin/reassign_partitions`` (API supersedes ZK), then trigger them."""
    return api_reassignment_triggered(p, w, targets).f("work")


def api_reassignment_triggered(p: Profile, w: Expr, targets: Expr) -> Expr:
    """``process_api_partition_reassignment`` → ``Triggered``: the work and the accepted partitions that failed."""
    b = Block()
    b.x = w
    b.accepted = build_map(
        targets.keys().filter(lambda tp: buildable(common.st(b.x), tp, targets.get(tp))),
        lambda tp: maybe_build_reassignment(common.st(b.x), tp, targets.get(tp)),
    )
    superseded = maybe_remove_from_zk_reassignment(p, b.x, lambda t, _r: b.accepted.has(t))
    triggered = maybe_trigger_partition_reassignment(p, superseded, b.accepted)
    return rule("processApiPartitionReassignment", "§7.7.1", b.in_(triggered))


def api_partition_reassignment_action(p: Profile) -> Action:
    """``ApiPartitionReassignment(M)`` (§7.7.1, 2.8 only): ``AlterPartitionReassignments`` handled by the controller."""
    v = common.param_vars(ApiPartitionReassignment)
    return common.controller_action(
        ApiPartitionReassignment,
        "An admin client alters partition reassignments (target list, or None to cancel) (§7.7.1, KIP-455).",
        guard=common.active(common.S) & v["targets"].non_empty(),
        environment=None,
        controller=lambda w: process_api_partition_reassignment(p, w, v["targets"]),
    )


def zk_partition_reassignment_action(p: Profile) -> Action:
    """``ZkPartitionReassignment(M)`` (§7.7.1 ZK path): ``/admin/reassign_partitions`` is created with M."""
    v = common.param_vars(ZkPartitionReassignment)
    return common.controller_action(
        ZkPartitionReassignment,
        "/admin/reassign_partitions is created; the controller handles ZkPartitionReassignment (§7.7.1).",
        guard=v["targets"].non_empty() & common.S.f("zk", "reassign_partitions").is_empty(),
        environment=lambda w: common.set_zk(w, reassign_partitions=v["targets"]),
        controller=lambda w: process_zk_partition_reassignment(p, w).f("work"),
    )
