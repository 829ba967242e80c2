"""Topic deletion (§8, ``TopicDeletionManager``): the procedures other handlers call, and the ``TopicDeletion`` and
``StopReplicaResponseReceived`` actions (and the response to a StopReplica without deletion, which changes nothing).

Procedures (each a ``Work`` step; deletion-disabled clusters make the public ones no-ops, §8 preamble):
``mark_topic_ineligible_for_deletion``, ``resume_deletion_for_topics``, ``enqueue_topics_for_deletion``,
``fail_replica_deletion``, ``complete_replica_deletion``, ``resume_deletions`` (with ``complete_delete_topic``,
``on_topic_deletion``, ``on_partition_deletion``).

Ordering decisions (Kafka iterates hash sets): topics are handled in ascending name order.
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import common
from kcspec.spec.actions.common import Step
from kcspec.spec.events import (
    StopReplicaPartitionErrorsReceived,
    StopReplicaResponseReceived,
    StopReplicaResponseWithoutDeletionReceived,
    TopicDeletion,
)
from kcspec.spec.lang import Action, Block, Expr, Var, and_, if_, let, lift, rule, set_of
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import PartitionState, ReplicaState


def deletion_enabled(w: Expr) -> Expr:
    """``delete.topic.enable`` (§8 preamble)."""
    return w.f("state", "config", "delete_topic_enable")


def partitions_of_topics(s: Expr, topics: object) -> Expr:
    """``topics.flatMap(partitionsForTopic)``."""
    return let(topics, lambda ts: context.all_partitions(s).filter(lambda tp: ts.contains(tp.f("topic"))))


def replicas_of_topics(s: Expr, topics: object) -> Expr:
    """``topics.flatMap(replicasForTopic)``."""
    return context.replicas_of_partitions(s, partitions_of_topics(s, topics))


def reassigning_topics(p: Profile, s: Expr) -> Expr:
    """Topics with a partition in ``partitionsBeingReassigned`` (2.8 set; 1.1 map keys)."""
    if p.kip455_reassignment:
        return s.f("controller", "partitions_being_reassigned").map(lambda tp: tp.f("topic"))
    return s.f("controller", "legacy_reassignments").keys().map(lambda tp: tp.f("topic"))


# ------------------------------------------------------------------------------------------------ predicates


def all_replicas_deleted(s: Expr, topic: object) -> Expr:
    """``areAllReplicasInState(t, ReplicaDeletionSuccessful)`` — vacuously true without replicas (§8 step 1)."""
    return context.replicas_of_topic(s, topic).all(
        lambda pr: context.replica_state(s, pr).eq(ReplicaState.ReplicaDeletionSuccessful)
    )


def any_replica_in_state(s: Expr, topic: object, state: ReplicaState) -> Expr:
    """``isAnyReplicaInState(t, state)``."""
    return context.replicas_of_topic(s, topic).any(lambda pr: context.replica_state(s, pr).eq(state))


def eligible_for_deletion(s: Expr, topic: object) -> Expr:
    """``isTopicEligibleForDeletion(t)`` = queued ∧ no replica ReplicaDeletionStarted ∧ not ineligible (§8)."""
    return and_(
        context.queued_for_deletion(s, topic),
        ~any_replica_in_state(s, topic, ReplicaState.ReplicaDeletionStarted),
        ~s.f("controller", "topics_ineligible_for_deletion").contains(topic),
    )


def retry_candidate(s: Expr, topic: object) -> Expr:
    """§8 ``resumeDeletions`` step 2: not all deleted, none Started, some ReplicaDeletionIneligible."""
    return and_(
        ~all_replicas_deleted(s, topic),
        ~any_replica_in_state(s, topic, ReplicaState.ReplicaDeletionStarted),
        any_replica_in_state(s, topic, ReplicaState.ReplicaDeletionIneligible),
    )


# ------------------------------------------------------------------------------------------------ procedures


def mark_topic_ineligible_for_deletion(w: Expr, topics: object) -> Expr:
    """``markTopicIneligibleForDeletion(T)``: T ∩ queued joins the ineligible set (deletion enabled only, §8).

    Note (code-derived): callers that mark before enqueuing (``TopicDeletion``) mark nothing for topics that are
    not yet queued."""
    b = Block()
    b.x = w
    queued = lift(topics).to_set().inter(common.ctx(b.x).f("topics_to_be_deleted"))
    marked = common.set_ctx(
        b.x, topics_ineligible_for_deletion=common.ctx(b.x).f("topics_ineligible_for_deletion").union(queued)
    )
    return rule("markTopicIneligibleForDeletion", "§8", b.in_(if_(deletion_enabled(b.x), marked, b.x)))


def remove_topic(w: Expr, topic: object) -> Expr:
    """``ControllerContext.removeTopic(t)`` (§3.1): drop t from the deletion sets, ``allTopics``, ``topicIds``, the
    assignments and the leadership cache; partition states are kept."""
    b = Block()
    b.c = common.ctx(w)
    b.tps = b.c.f("assignments").keys().filter(lambda tp: tp.f("topic").eq(topic))
    return b.in_(
        common.set_ctx(
            w,
            topics_to_be_deleted=b.c.f("topics_to_be_deleted").minus(set_of(topic)),
            topics_with_deletion_started=b.c.f("topics_with_deletion_started").minus(set_of(topic)),
            all_topics=b.c.f("all_topics").minus(set_of(topic)),
            topic_ids=b.c.f("topic_ids").delete_all(set_of(topic)),
            assignments=b.c.f("assignments").delete_all(b.tps),
            leadership=b.c.f("leadership").delete_all(b.tps),
        )
    )


def complete_delete_topic(p: Profile, w: Expr, topic: object) -> Expr:
    """``completeDeleteTopic(t)`` (§8 step 1): Successful replicas → NonExistentReplica; [1.1] partitions →
    OfflinePartition → NonExistentPartition; delete ``/brokers/topics/t`` (with its partition-state znodes),
    ``/config/topics/t`` and ``/admin/delete_topics/t`` (fenced); ``removeTopic(t)``.

    Decision: deleting ``/config/topics/t`` removes t's ``unclean.leader.election.enable`` override; faults armed
    on the deleted state znodes disappear with them."""

    def without_topic(z: Expr) -> Expr:
        b = Block()
        b.tps = (
            z.f("assignments")
            .keys()
            .union(z.f("partition_states").keys())
            .filter(lambda tp: tp.f("topic").eq(topic))
        )
        return b.in_(
            z.with_(
                topics=z.f("topics").minus(set_of(topic)),
                topic_ids=z.f("topic_ids").delete_all(set_of(topic)),
                assignments=z.f("assignments").delete_all(b.tps),
                partition_states=z.f("partition_states").delete_all(b.tps),
                faults=z.f("faults").delete_all(b.tps),
                delete_topics=z.f("delete_topics").minus(set_of(topic)),
            )
        )

    def delete_znodes(x: Expr) -> Expr:
        return common.fenced_zk(p, x, without_topic)

    def drop_config(x: Expr) -> Expr:
        return common.unless_moved(
            x,
            lambda y: common.set_config(
                y, unclean_topics=y.f("state", "config", "unclean_topics").minus(set_of(topic))
            ),
        )

    steps: list[Step] = [
        lambda x: replica_state_change(
            p,
            x,
            context.replicas_in_state(common.st(x), topic, ReplicaState.ReplicaDeletionSuccessful),
            ReplicaState.NonExistentReplica,
        )
    ]
    if not p.deletion_started_bookkeeping:
        steps += [
            lambda x: partition_state_change(
                p, x, context.partitions_of_topic(common.st(x), topic), PartitionState.OfflinePartition, None
            ),
            lambda x: partition_state_change(
                p,
                x,
                context.partitions_of_topic(common.st(x), topic),
                PartitionState.NonExistentPartition,
                None,
            ),
        ]
    steps += [delete_znodes, drop_config, lambda x: common.unless_moved(x, lambda y: remove_topic(y, topic))]
    return rule("completeDeleteTopic", "§8", common.pipe(w, *steps))


def on_partition_deletion(p: Profile, w: Expr, topics: object) -> Expr:
    """``onPartitionDeletion(T)`` (§8 step 3): dead replicas → ReplicaDeletionIneligible; live replicas not yet
    deleted → OfflineReplica → ReplicaDeletionStarted (SR delete=true); topics with dead replicas are marked
    ineligible ("offline replicas")."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        b = Block()
        b.all_r = replicas_of_topics(s, topics)
        b.dead = b.all_r.filter(lambda pr: ~context.is_online(s, pr.f("replica"), pr.f("tp")))
        b.retry = b.all_r.minus(b.dead).filter(
            lambda pr: context.replica_state(s, pr).ne(ReplicaState.ReplicaDeletionSuccessful)
        )
        return b.in_(
            common.pipe(
                x,
                lambda y: replica_state_change(p, y, b.dead, ReplicaState.ReplicaDeletionIneligible),
                lambda y: replica_state_change(p, y, b.retry, ReplicaState.OfflineReplica),
                lambda y: replica_state_change(p, y, b.retry, ReplicaState.ReplicaDeletionStarted),
                lambda y: mark_topic_ineligible_for_deletion(y, b.dead.map(lambda pr: pr.f("tp", "topic"))),
            )
        )

    return rule("onPartitionDeletion", "§8", let(w, body))


def on_topic_deletion(p: Profile, w: Expr, topics: object) -> Expr:
    """``onTopicDeletion(T)`` (§8): [2.8] partitions of topics not seen before → OfflinePartition →
    NonExistentPartition, then ``topicsWithDeletionStarted += unseen``; UMR for all partitions of T to every
    live-or-shutting-down broker (leader −2); ``onPartitionDeletion(T)``."""
    steps: list[Step] = []
    if p.deletion_started_bookkeeping:

        def begin(x: Expr) -> Expr:
            b = Block()
            b.unseen = lift(topics).minus(common.ctx(x).f("topics_with_deletion_started"))
            started = Block()
            started.parts = partitions_of_topics(common.st(x), b.unseen)
            start = started.in_(
                common.pipe(
                    x,
                    lambda y: partition_state_change(
                        p, y, started.parts, PartitionState.OfflinePartition, None
                    ),
                    lambda y: partition_state_change(
                        p, y, started.parts, PartitionState.NonExistentPartition, None
                    ),
                    lambda y: common.set_ctx(
                        y,
                        topics_with_deletion_started=common.ctx(y)
                        .f("topics_with_deletion_started")
                        .union(b.unseen),
                    ),
                )
            )
            return b.in_(if_(b.unseen.is_empty(), x, start))

        steps.append(begin)
    steps += [
        lambda x: common.send_update_metadata(
            p, x, context.live_or_shutting_down(common.st(x)), partitions_of_topics(common.st(x), topics)
        ),
        lambda x: on_partition_deletion(p, x, topics),
    ]
    return rule("onTopicDeletion", "§8", common.pipe(w, *steps))


def retry_deletion_for_ineligible_replicas(p: Profile, w: Expr, topics: object) -> Expr:
    """``retryDeletionForIneligibleReplicas(T)`` / [1.1] ``markTopicForDeletionRetry(t)``: every
    ReplicaDeletionIneligible replica of T → OfflineReplica (§8)."""
    b = Block()
    b.x = w
    ineligible = replicas_of_topics(common.st(b.x), topics).filter(
        lambda pr: context.replica_state(common.st(b.x), pr).eq(ReplicaState.ReplicaDeletionIneligible)
    )
    return rule(
        "retryDeletionForIneligibleReplicas",
        "§8",
        b.in_(replica_state_change(p, b.x, ineligible, ReplicaState.OfflineReplica)),
    )


def resume_deletions(p: Profile, w: Expr) -> Expr:
    """``resumeDeletions()`` (§8).

    2.8: every queued topic whose replicas are all ReplicaDeletionSuccessful is completed; the retry candidates
    (§8 step 2) have their ReplicaDeletionIneligible replicas moved back to OfflineReplica in one call; the
    eligible topics go through one ``onTopicDeletion`` call. [1.1] the same decisions are taken topic by topic
    (``markTopicForDeletionRetry(t)`` then ``onTopicDeletion({t})``), in ascending topic order."""
    if p.topic_deletion_batched:

        def body(x: Expr) -> Expr:
            s = common.st(x)
            b = Block()
            b.queued = common.ctx(x).f("topics_to_be_deleted")
            b.done = b.queued.filter(lambda t: all_replicas_deleted(s, t))
            b.retry = b.queued.filter(lambda t: retry_candidate(s, t))
            b.eligible = b.queued.minus(b.done).filter(lambda t: eligible_for_deletion(s, t))
            return b.in_(
                common.pipe(
                    x,
                    lambda y: common.work_fold(
                        b.done.sorted(), y, lambda acc, t: complete_delete_topic(p, acc, t)
                    ),
                    lambda y: if_(
                        b.retry.is_empty(), y, retry_deletion_for_ineligible_replicas(p, y, b.retry)
                    ),
                    lambda y: if_(b.eligible.is_empty(), y, on_topic_deletion(p, y, b.eligible)),
                )
            )

        return rule("resumeDeletions", "§8", let(w, body))

    def one_topic(x: Expr, t: Expr) -> Expr:
        return common.pipe(
            x,
            lambda y: if_(
                all_replicas_deleted(common.st(y), t),
                complete_delete_topic(p, y, t),
                if_(
                    retry_candidate(common.st(y), t),
                    retry_deletion_for_ineligible_replicas(p, y, set_of(t)),
                    y,
                ),
            ),
            lambda y: if_(eligible_for_deletion(common.st(y), t), on_topic_deletion(p, y, set_of(t)), y),
        )

    b = Block()
    b.x = w
    return rule(
        "resumeDeletions",
        "§8",
        b.in_(common.work_fold(common.ctx(b.x).f("topics_to_be_deleted").sorted(), b.x, one_topic)),
    )


def resume_deletion_for_topics(p: Profile, w: Expr, topics: object) -> Expr:
    """``resumeDeletionForTopics(T)`` (§8): T ∩ queued leaves the ineligible set; if non-empty, ``resumeDeletions``."""
    b = Block()
    b.x = w
    b.resumed = lift(topics).to_set().inter(common.ctx(b.x).f("topics_to_be_deleted"))
    eligible_again = common.set_ctx(
        b.x,
        topics_ineligible_for_deletion=common.ctx(b.x).f("topics_ineligible_for_deletion").minus(b.resumed),
    )
    return rule(
        "resumeDeletionForTopics",
        "§8",
        b.in_(if_(deletion_enabled(b.x) & b.resumed.non_empty(), resume_deletions(p, eligible_again), b.x)),
    )


def enqueue_topics_for_deletion(p: Profile, w: Expr, topics: object) -> Expr:
    """``enqueueTopicsForDeletion(T)`` (§8): queue T and ``resumeDeletions`` (deletion enabled only)."""
    b = Block()
    b.x = w
    queued = common.set_ctx(b.x, topics_to_be_deleted=common.ctx(b.x).f("topics_to_be_deleted").union(topics))
    return rule(
        "enqueueTopicsForDeletion", "§8", b.in_(if_(deletion_enabled(b.x), resume_deletions(p, queued), b.x))
    )


def fail_replica_deletion(p: Profile, w: Expr, replicas: object) -> Expr:
    """``failReplicaDeletion(R)`` (§8): replicas of queued topics → ReplicaDeletionIneligible, their topics marked
    ineligible ("replica deletion failure"), ``resumeDeletions`` (deletion enabled only)."""
    b = Block()
    b.x = w
    b.failed = lift(replicas).filter(
        lambda pr: context.queued_for_deletion(common.st(b.x), pr.f("tp", "topic"))
    )
    fail = common.pipe(
        b.x,
        lambda y: replica_state_change(p, y, b.failed, ReplicaState.ReplicaDeletionIneligible),
        lambda y: mark_topic_ineligible_for_deletion(y, b.failed.map(lambda pr: pr.f("tp", "topic"))),
        lambda y: resume_deletions(p, y),
    )
    return rule(
        "failReplicaDeletion", "§8", b.in_(if_(deletion_enabled(b.x) & b.failed.non_empty(), fail, b.x))
    )


def complete_replica_deletion(p: Profile, w: Expr, replicas: object) -> Expr:
    """``completeReplicaDeletion(R)`` (§8): replicas of queued topics → ReplicaDeletionSuccessful; ``resumeDeletions``."""
    b = Block()
    b.x = w
    return rule(
        "completeReplicaDeletion",
        "§8",
        b.in_(
            common.pipe(
                b.x,
                lambda y: replica_state_change(
                    p,
                    y,
                    lift(replicas).filter(
                        lambda pr: context.queued_for_deletion(common.st(y), pr.f("tp", "topic"))
                    ),
                    ReplicaState.ReplicaDeletionSuccessful,
                ),
                lambda y: resume_deletions(p, y),
            )
        ),
    )


def try_topic_deletion(p: Profile, w: Expr) -> Expr:
    """``tryTopicDeletion()`` (§7.1 step 10): ``resumeDeletions`` if deletion is enabled."""
    b = Block()
    b.x = w
    return b.in_(if_(deletion_enabled(b.x), resume_deletions(p, b.x), b.x))


# ------------------------------------------------------------------------------------------------ actions


def process_topic_deletion(p: Profile, w: Expr) -> Expr:
    """The ``TopicDeletion`` event (§8 entry): topics under ``/admin/delete_topics`` unknown to the context have their
    znodes deleted; if deletion is enabled the rest are marked ineligible when a partition is being reassigned
    (a no-op for topics not yet queued, see ``mark_topic_ineligible_for_deletion``) and enqueued; otherwise their
    znodes are deleted too."""

    def body(x: Expr) -> Expr:
        b = Block()
        b.requested = common.zk_of(x).f("delete_topics")
        b.unknown = b.requested.minus(common.ctx(x).f("all_topics"))
        b.known = b.requested.minus(b.unknown)

        def enqueue(v: Expr) -> Expr:
            marked = mark_topic_ineligible_for_deletion(v, b.known.inter(reassigning_topics(p, common.st(v))))
            return enqueue_topics_for_deletion(p, marked, b.known)

        def enqueue_known(y: Expr) -> Expr:  # deletion enabled
            return if_(b.known.is_empty(), y, common.unless_moved(y, enqueue))

        def drop_known(y: Expr) -> Expr:  # deletion disabled: the request znodes are deleted
            return if_(
                b.known.is_empty(),
                y,
                common.fenced_zk(p, y, lambda z: z.with_(delete_topics=z.f("delete_topics").minus(b.known))),
            )

        drop_unknown = common.when(
            lambda _y: b.unknown.non_empty(),
            lambda y: common.fenced_zk(
                p, y, lambda z: z.with_(delete_topics=z.f("delete_topics").minus(b.unknown))
            ),
        )
        return b.in_(
            common.pipe(x, drop_unknown, lambda y: if_(deletion_enabled(y), enqueue_known(y), drop_known(y)))
        )

    return rule("processTopicDeletion", "§8", let(w, body))


def topic_deletion_action(p: Profile) -> Action:
    """``TopicDeletion(T)``: ``/admin/delete_topics`` gains T, then the controller's ``TopicDeletion`` event (§8)."""
    v = common.param_vars(TopicDeletion)
    return common.controller_action(
        TopicDeletion,
        "Topics are marked for deletion under /admin/delete_topics and the controller handles TopicDeletion (§8).",
        guard=v["topics"].non_empty(),
        environment=lambda w: common.set_zk(
            w, delete_topics=common.zk_of(w).f("delete_topics").union(v["topics"].to_set())
        ),
        controller=lambda w: process_topic_deletion(p, w),
    )


def _responding_for_started_replicas(v: dict[str, Var]) -> Expr:
    """A controller is active and every listed partition's replica on the responding broker is in
    ReplicaDeletionStarted: the state a StopReplica response (§8) is about."""
    s = common.S
    return and_(
        common.active(s),
        v["partitions"].non_empty(),
        v["partitions"].all(
            lambda tp: context.replica_state(s, context.replica(tp, v["broker_id"])).eq(
                ReplicaState.ReplicaDeletionStarted
            )
        ),
    )


def stop_replica_response_action(p: Profile) -> Action:
    """``StopReplicaResponseReceived(b, P, error)``: ``TopicDeletionStopReplicaResponseReceived`` (§8)."""
    v = common.param_vars(StopReplicaResponseReceived)
    guard = _responding_for_started_replicas(v)

    def controller(w: Expr) -> Expr:
        b = Block()
        b.replicas = v["partitions"].to_set().map(lambda tp: context.replica(tp, v["broker_id"]))
        return b.in_(
            if_(
                v["error"],
                fail_replica_deletion(p, w, b.replicas),
                complete_replica_deletion(p, w, b.replicas),
            )
        )

    return common.controller_action(
        StopReplicaResponseReceived,
        "A broker answers StopReplica(delete=true) for partitions of topics being deleted (§8): errors fail the "
        "replicas' deletion (ReplicaDeletionIneligible), successes complete it (ReplicaDeletionSuccessful).",
        guard=guard,
        environment=None,
        controller=controller,
    )


def stop_replica_partition_errors_action(p: Profile) -> Action:
    """``StopReplicaPartitionErrorsReceived(b, P, E)``: ``TopicDeletionStopReplicaResponseReceived`` with no
    request error and a partition error for E ⊊ P (§8): ``failReplicaDeletion`` of E's replicas, then, because not
    every partition failed, ``completeReplicaDeletion`` of the others'."""
    v = common.param_vars(StopReplicaPartitionErrorsReceived)
    b, parts, errs = v["broker_id"], v["partitions"], v["partition_errors"]
    s = common.S
    guard = and_(
        common.active(s),
        parts.non_empty(),
        parts.all(
            lambda tp: context.replica_state(s, context.replica(tp, b)).eq(
                ReplicaState.ReplicaDeletionStarted
            )
        ),
        errs.non_empty(),
        errs.to_set().subset_of(parts.to_set()),
        ~parts.to_set().subset_of(errs.to_set()),
    )

    def controller(w: Expr) -> Expr:
        return common.pipe(
            w,
            lambda x: fail_replica_deletion(p, x, errs.to_set().map(lambda tp: context.replica(tp, b))),
            lambda x: complete_replica_deletion(
                p, x, parts.to_set().minus(errs.to_set()).map(lambda tp: context.replica(tp, b))
            ),
        )

    return common.controller_action(
        StopReplicaPartitionErrorsReceived,
        "A broker answers StopReplica(delete=true) with an error for some partitions of topics being deleted and "
        "none for the others (§8): the failed replicas' deletion fails (ReplicaDeletionIneligible), the others' "
        "completes (ReplicaDeletionSuccessful).",
        guard=guard,
        environment=None,
        controller=controller,
    )


def stop_replica_response_without_deletion_action(p: Profile) -> Action:
    """``StopReplicaResponseWithoutDeletionReceived(b, P, error)``: the response to a StopReplica(delete=false).

    §3.4: StopReplica responses become ``TopicDeletionStopReplicaResponseReceived`` only for partitions whose
    request asked ``deletePartition=true`` (KAFKA-9946); §8 names the same filter. Nothing is left, so no event is
    enqueued and the state does not change ([1.1]: no callback is registered for delete=false entries, §3.4)."""
    v = common.param_vars(StopReplicaResponseWithoutDeletionReceived)
    return common.controller_action(
        StopReplicaResponseWithoutDeletionReceived,
        "A broker answers a StopReplica that asked no deletion for partitions whose replicas are being deleted "
        "(§3.4, §8): the response callback keeps only deletePartition=true partitions, so nothing happens.",
        guard=_responding_for_started_replicas(v),
        environment=None,
        controller=None,
    )
