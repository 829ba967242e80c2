"""The gauges the reference ``ControllerContext`` keeps (§3.1), called as Kafka's own unit tests call
``ControllerContext`` and ``PartitionStateMachine``: each test ports one Kafka test method (named in its docstring)
and asserts what it asserts."""

from __future__ import annotations

from kcspec.reference_impl.context import ControllerContext
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaAssignment,
    TopicPartition,
)

TP1, TP2, TP3 = TopicPartition("A", 0), TopicPartition("A", 1), TopicPartition("B", 0)


def _li(leader: int, isr: tuple[int, ...]) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, isr, 0), 0)


def test_preferred_replica_imbalance_metric() -> None:
    """``ControllerContextTest.testPreferredReplicaImbalanceMetric`` (2.8.2), with ``tp1``, ``tp2`` of topic ``A`` and
    ``tp3`` of topic ``B``; removing every topic at the end."""
    ctx = ControllerContext()
    for tp in (TP1, TP2, TP3):
        ctx.update_assignment(tp, ReplicaAssignment((1, 2, 3)))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.put_leadership(TP1, _li(1, (1, 2, 3)))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.put_leadership(TP2, _li(2, (2, 3, 1)))
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.put_leadership(TP3, _li(3, (3, 1, 2)))
    assert ctx.preferred_replica_imbalance_count == 2
    ctx.update_assignment(TP1, ReplicaAssignment((2, 3, 1)))
    ctx.update_assignment(TP2, ReplicaAssignment((2, 3, 1)))
    assert ctx.preferred_replica_imbalance_count == 2
    ctx.queue_topic_deletion({TP3.topic})
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.put_leadership(TP3, _li(1, (3, 1, 2)))
    assert ctx.preferred_replica_imbalance_count == 1
    for topic in ("A", "B"):
        ctx.remove_topic(topic)
    assert ctx.preferred_replica_imbalance_count == 0


def test_preferred_replica_imbalance_metric_on_concurrent_topic_deletion() -> None:
    """``ControllerContextTest.testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion`` (3.3.0, KAFKA-13572):
    queueing an already queued topic again does not clean its imbalance twice."""
    ctx = ControllerContext()
    tp_a, tp_b = TopicPartition("A", 0), TopicPartition("B", 0)
    ctx.update_assignment(tp_a, ReplicaAssignment((1, 2, 3)))
    ctx.update_assignment(tp_b, ReplicaAssignment((1, 2, 3)))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.queue_topic_deletion({"A"})
    ctx.put_leadership(tp_a, _li(-1, (1, 2, 3)))  # every partition goes offline during the deletion
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.queue_topic_deletion({"A", "B"})  # /admin/delete_topics/A still exists
    assert ctx.preferred_replica_imbalance_count == 0


def test_adding_preferred_replica_counts_once_in_the_isr() -> None:
    """§3.1 ``hasPreferredLeader``: while the preferred replica is being added, the partition is imbalanced iff that
    replica is already in the ISR (whoever leads)."""
    ctx = ControllerContext()
    tp = TopicPartition("A", 0)
    ctx.update_assignment(tp, ReplicaAssignment((4, 1, 2), (4,), (2,)))
    ctx.put_leadership(tp, _li(1, (1, 2)))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.put_leadership(tp, _li(1, (1, 2, 4)))
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.update_assignment(tp, ReplicaAssignment((4, 1)))  # reassignment complete: the leader must be 4 now
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.put_leadership(tp, _li(4, (1, 4)))
    assert ctx.preferred_replica_imbalance_count == 0


PARTITIONS = [TopicPartition("test", p) for p in range(4)]


def test_updating_offline_partitions_count() -> None:
    """``PartitionStateMachineTest.testUpdatingOfflinePartitionsCount`` (2.8.2), on the context's
    ``putPartitionState`` bookkeeping: New → Offline counts every partition, Offline → Online none."""
    ctx = ControllerContext()
    ctx.put_partition_states(PARTITIONS, PartitionState.NewPartition)
    ctx.put_partition_states(PARTITIONS, PartitionState.OfflinePartition)
    assert ctx.offline_partition_count == len(PARTITIONS)
    for tp in PARTITIONS:
        ctx.put_partition_state(tp, PartitionState.OnlinePartition)
    assert ctx.offline_partition_count == 0


def test_no_offline_partitions_change_for_topics_being_deleted() -> None:
    """``PartitionStateMachineTest.testNoOfflinePartitionsChangeForTopicsBeingDeleted`` (2.8.2): partitions of a topic
    whose deletion has started do not count. Not expressible as events: no kcspec event creates partitions of such a
    topic (KAFKA-6612 reverts an expansion), so it is ported at the context level only."""
    ctx = ControllerContext()
    ctx.queue_topic_deletion({"test"})
    ctx.topics_with_deletion_started.add("test")
    ctx.put_partition_states(PARTITIONS, PartitionState.NewPartition)
    ctx.put_partition_states(PARTITIONS, PartitionState.OfflinePartition)
    assert ctx.offline_partition_count == 0


def test_recount_agrees_with_the_bookkeeping() -> None:
    """A context loaded from a snapshot starts from ``recount_metrics``: the same values the step-by-step
    bookkeeping reached."""
    ctx = ControllerContext()
    for tp in (TP1, TP2, TP3):
        ctx.update_assignment(tp, ReplicaAssignment((1, 2, 3)))
    ctx.put_leaderships({TP1: _li(2, (2, 1)), TP2: _li(1, (1,)), TP3: _li(3, (3,))})
    ctx.put_partition_states([TP1, TP3], PartitionState.OfflinePartition)
    kept = (ctx.offline_partition_count, ctx.preferred_replica_imbalance_count)
    assert kept == (2, 2)
    ctx.recount_metrics()
    assert (ctx.offline_partition_count, ctx.preferred_replica_imbalance_count) == kept
