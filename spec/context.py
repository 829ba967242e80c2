"""ControllerContext helper semantics (§3.1) as expressions over a ``ClusterState``.

Every function takes ``s``, an ``Expr`` evaluating to a ``ClusterState``, and returns an ``Expr``; none of
them evaluates anything. They read the *controller's* view (``s.controller``), never ZooKeeper, exactly as
Kafka's ``ControllerContext`` helpers do.

Functions with an ``_with`` suffix take pre-computed sets (the live brokers, the offline-dir replicas) so
that a procedure can compute those sets once with ``let`` instead of once per element.
"""

from __future__ import annotations

from kcspec.spec.lang import Expr, let, lift, lit, rec, rule
from kcspec.spec.vocabulary import (
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
)

EMPTY_ASSIGNMENT = ReplicaAssignment(())
"""``ReplicaAssignment.empty``: what Kafka's context returns for a partition it does not know (§3.1)."""


def ctx(s: Expr) -> Expr:
    """The controller's in-memory context of ``s``."""
    return s.f("controller")


def live_or_shutting_down(s: Expr) -> Expr:
    """``liveOrShuttingDownBrokerIds`` = keys of ``liveBrokerEpochs`` (§3.1)."""
    return s.f("controller", "live_brokers").keys()


def live_brokers(s: Expr) -> Expr:
    """``liveBrokerIds`` = liveOrShuttingDown − shuttingDownBrokerIds (§3.1)."""
    return rule("liveBrokerIds", "§3.1", live_or_shutting_down(s).minus(s.f("controller", "shutting_down")))


def offline_dir_replicas(s: Expr) -> Expr:
    """``replicasOnOfflineDirs`` as a set of ``PartitionReplica``."""
    return s.f("controller", "offline_replicas")


def replica(tp: object, r: object) -> Expr:
    """The ``PartitionReplica`` (tp, r)."""
    return rec(PartitionReplica, tp=tp, replica=r)


def is_online_with(live: Expr, offline: Expr, r: object, tp: object) -> Expr:
    """``isReplicaOnline`` given the broker set to test against and the offline-dir replicas (§3.1)."""
    return rule("isReplicaOnline", "§3.1", live.contains(r) & ~offline.contains(replica(tp, r)))


def is_online(s: Expr, r: object, tp: object, include_shutting_down: bool = False) -> Expr:
    """``isReplicaOnline(r, tp, includeShuttingDownBrokers)`` (§3.1): the broker is live (or live-or-shutting-down
    when ``include_shutting_down``) and ``tp`` is not in one of its offline log dirs."""
    brokers = live_or_shutting_down(s) if include_shutting_down else live_brokers(s)
    return is_online_with(brokers, offline_dir_replicas(s), r, tp)


def assignment(s: Expr, tp: object) -> Expr:
    """FA(tp), the full ``ReplicaAssignment``; ``ReplicaAssignment.empty`` for an unknown partition (§3.1)."""
    return s.f("controller", "assignments").get_or(tp, EMPTY_ASSIGNMENT)


def replicas(s: Expr, tp: object) -> Expr:
    """AR(tp) = FA(tp).replicas, in assignment order (head = preferred replica)."""
    return assignment(s, tp).f("replicas")


def target_replicas_of(fa: Expr) -> Expr:
    """``targetReplicas`` = replicas − removingReplicas, order kept (§3.1, 2.4+)."""
    return rule("targetReplicas", "§3.1", fa.f("replicas").minus(fa.f("removing")))


def origin_replicas_of(fa: Expr) -> Expr:
    """``originReplicas`` = replicas − addingReplicas, order kept (§3.1, 2.4+)."""
    return rule("originReplicas", "§3.1", fa.f("replicas").minus(fa.f("adding")))


def online_replicas_with(live: Expr, offline: Expr, ar: Expr, tp: object) -> Expr:
    """The members of the sequence ``ar`` that are online for ``tp``, order kept."""
    return ar.filter(lambda r: is_online_with(live, offline, r, tp))


def online_replicas(s: Expr, tp: object) -> Expr:
    """``[r ∈ AR(tp) | online(r, tp)]`` in assignment order (§5.2a ``liveReplicas``)."""
    return online_replicas_with(live_brokers(s), offline_dir_replicas(s), replicas(s, tp), tp)


def topic_of(tp: object) -> Expr:
    """The topic of a partition."""
    return lift(tp).f("topic")


def queued_for_deletion(s: Expr, topic: object) -> Expr:
    """``isTopicQueuedUpForDeletion(t)`` = t ∈ topicsToBeDeleted (§3.1)."""
    return s.f("controller", "topics_to_be_deleted").contains(topic)


def deletion_started(s: Expr, topic: object) -> Expr:
    """``isTopicDeletionInProgress(t)`` (context version) = t ∈ topicsWithDeletionStarted (§3.1)."""
    return s.f("controller", "topics_with_deletion_started").contains(topic)


def all_partitions(s: Expr) -> Expr:
    """Every partition with an assignment in the context (``allPartitions``)."""
    return s.f("controller", "assignments").keys()


def partitions_of_topic(s: Expr, topic: object) -> Expr:
    """``partitionsForTopic(t)``: partitions of ``topic`` with an assignment."""
    return all_partitions(s).filter(lambda tp: tp.f("topic").eq(topic))


def replicas_on_brokers(s: Expr, brokers: object) -> Expr:
    """``replicasOnBrokers(B)``: every (tp, r) with r ∈ AR(tp) and r ∈ B."""
    return let(
        brokers,
        lambda bs: all_partitions(s).flat_map(
            lambda tp: replicas(s, tp).filter(lambda r: bs.contains(r)).map(lambda r: replica(tp, r)).to_set()
        ),
    )


def replicas_of_partitions(s: Expr, tps: object) -> Expr:
    """``replicasForPartition(P)``: every (tp, r) with tp ∈ P and r ∈ AR(tp)."""
    return lift(tps).flat_map(lambda tp: replicas(s, tp).map(lambda r: replica(tp, r)).to_set())


def replicas_of_topic(s: Expr, topic: object) -> Expr:
    """``replicasForTopic(t)``: every (tp, r) of the topic's partitions."""
    return replicas_of_partitions(s, partitions_of_topic(s, topic))


def has_leadership(s: Expr, tp: object) -> Expr:
    """LI(tp) is present in ``partitionLeadershipInfo``."""
    return s.f("controller", "leadership").has(tp)


def leadership(s: Expr, tp: object) -> Expr:
    """LI(tp) (the caller must know it is present)."""
    return s.f("controller", "leadership").get(tp)


def leader_of(s: Expr, tp: object) -> Expr:
    """L(tp) from the cache (the caller must know LI(tp) is present)."""
    return leadership(s, tp).f("leader_and_isr", "leader")


def partitions_with_offline_leader(s: Expr) -> Expr:
    """``partitionsWithOfflineLeader`` (§3.1): LI present, leader not online (−1 and shutting-down leaders count),
    topic not queued for deletion."""
    return let(
        live_brokers(s),
        lambda live: (
            s.f("controller", "leadership")
            .keys()
            .filter(
                lambda tp: (
                    ~is_online_with(live, offline_dir_replicas(s), leader_of(s, tp), tp)
                    & ~queued_for_deletion(s, tp.f("topic"))
                )
            )
        ),
    )


def partition_leaders_on_broker(s: Expr, b: object) -> Expr:
    """``partitionLeadersOnBroker(b)`` (§3.1): L(p) = b, |AR(p)| > 1, topic not queued for deletion."""
    return (
        s.f("controller", "leadership")
        .keys()
        .filter(
            lambda tp: (
                leader_of(s, tp).eq(b) & replicas(s, tp).size().gt(1) & ~queued_for_deletion(s, tp.f("topic"))
            )
        )
    )


def partitions_with_leaders(s: Expr) -> Expr:
    """``partitionsWithLeaders`` (§3.1): cached partitions of topics not queued for deletion."""
    return s.f("controller", "leadership").keys().filter(lambda tp: ~queued_for_deletion(s, tp.f("topic")))


def replica_state(s: Expr, pr: object) -> Expr:
    """RS(p, r), NonExistentReplica when the replica has no entry (§2.1 implicit initial state)."""
    return s.f("controller", "replica_states").get_or(pr, ReplicaState.NonExistentReplica)


def partition_state(s: Expr, tp: object) -> Expr:
    """PS(p), NonExistentPartition when the partition has no entry (§2.2 implicit initial state)."""
    return s.f("controller", "partition_states").get_or(tp, PartitionState.NonExistentPartition)


def replicas_in_state(s: Expr, topic: object, state: ReplicaState) -> Expr:
    """``replicasInState(t, state)``: replicas of ``topic`` (from the assignment) whose state is ``state``."""
    return replicas_of_topic(s, topic).filter(lambda pr: replica_state(s, pr).eq(state))


def partitions_in_states(s: Expr, states: frozenset[PartitionState], topic: object | None = None) -> Expr:
    """``partitionsInStates(S)`` / ``partitionsInStates(t, S)`` (§3.1): a filter of ``partitionStates``."""
    ps = s.f("controller", "partition_states")

    def keep(tp: Expr) -> Expr:
        in_state = lit(frozenset(states)).contains(ps.get(tp))
        return in_state if topic is None else in_state & tp.f("topic").eq(topic)

    return ps.keys().filter(keep)
