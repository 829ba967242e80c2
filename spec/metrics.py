"""The controller metrics that the state determines, each defined from a ``ClusterState`` in one expression (§3.1).

A controller keeps these gauges as it goes (Kafka 2.8.2: counters of ``ControllerContext`` updated by
``putPartitionState``, ``putPartitionLeadershipInfo``, ``updatePartitionFullReplicaAssignment``,
``queueTopicDeletion`` and ``removeTopic``); the definitions below say what the kept value must equal after every
step. They are derived values, not state: nothing here is part of ``ClusterState``, so no exploration state count
depends on them.

``metrics(profile)`` maps each metric's field name of ``ControllerMetrics`` to its expression over ``Var("s")``.

Decisions where Kafka is silent or throws:

* 2.8 imbalance: a partition whose assignment is unknown or has no replica is not counted (Kafka's
  ``hasPreferredLeader`` takes ``replicas.head`` and would throw ``NoSuchElementException``; no modelled step
  caches leadership for such a partition of a topic not queued for deletion).
* The other gauges of ``KafkaController.updateMetrics`` (global topic and partition counts, topics and replicas to
  delete, ineligible ones) are recomputed from the state after every event in 2.8.2 too; they are not reported.
"""

from __future__ import annotations

from kcspec.spec.lang import Expr, Var, and_, if_
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import PartitionState

s = Var("s")


def _ctx(*path: str) -> Expr:
    return s.f("controller", *path)


def _has_preferred_leader(fa: Expr, li: Expr) -> Expr:
    """2.8 ``hasPreferredLeader`` (§3.1): an adding preferred replica counts as preferred until it joins the ISR."""
    preferred = fa.f("replicas").head(-1)
    return if_(
        fa.f("adding").contains(preferred),
        ~li.f("leader_and_isr", "isr").contains(preferred),
        li.f("leader_and_isr", "leader").eq(preferred),
    )


def offline_partition_count(profile: Profile) -> Expr:
    """``OfflinePartitionsCount`` (§3.1, §11 I19). 2.8: partitions in OfflinePartition whose topic's deletion has
    not started. 1.1: cached partitions whose leader is not a live-or-shutting-down broker (−1 counts), topics
    queued for deletion left out, partition state ignored; 0 without an active controller."""
    if profile.incremental_metrics:
        states = _ctx("partition_states")
        return (
            states.keys()
            .filter(
                lambda tp: and_(
                    states.get(tp).eq(PartitionState.OfflinePartition),
                    ~_ctx("topics_with_deletion_started").contains(tp.f("topic")),
                )
            )
            .size()
        )
    cache = _ctx("leadership")
    count = (
        cache.keys()
        .filter(
            lambda tp: and_(
                ~_ctx("live_brokers").has(cache.get(tp).f("leader_and_isr", "leader")),
                ~_ctx("topics_to_be_deleted").contains(tp.f("topic")),
            )
        )
        .size()
    )
    return if_(_ctx("controller_id").eq(-1), 0, count)


def preferred_replica_imbalance_count(profile: Profile) -> Expr:
    """``PreferredReplicaImbalanceCount`` (§3.1): partitions with leadership info and an assignment, of topics not
    queued for deletion, whose leader is not the preferred replica (head of the assignment). 2.8: while the preferred
    replica is being added (a reassignment), the partition counts iff that replica is already in the ISR. 1.1: no
    such exception; 0 without an active controller."""
    cache, fas = _ctx("leadership"), _ctx("assignments")
    if profile.incremental_metrics:
        return (
            cache.keys()
            .filter(
                lambda tp: and_(
                    ~_ctx("topics_to_be_deleted").contains(tp.f("topic")),
                    fas.has(tp),
                    fas.get(tp).f("replicas").non_empty(),
                    ~_has_preferred_leader(fas.get(tp), cache.get(tp)),
                )
            )
            .size()
        )
    count = (
        fas.keys()
        .filter(
            lambda tp: and_(
                cache.has(tp),
                fas.get(tp).f("replicas").non_empty(),
                cache.get(tp).f("leader_and_isr", "leader").ne(fas.get(tp).f("replicas").head(-1)),
                ~_ctx("topics_to_be_deleted").contains(tp.f("topic")),
            )
        )
        .size()
    )
    return if_(_ctx("controller_id").eq(-1), 0, count)


def metrics(profile: Profile) -> dict[str, Expr]:
    """Each metric (a field name of ``ControllerMetrics``) → its definition over ``Var("s")``."""
    return {
        "offline_partition_count": offline_partition_count(profile),
        "preferred_replica_imbalance_count": preferred_replica_imbalance_count(profile),
    }
