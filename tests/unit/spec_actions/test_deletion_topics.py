"""§8 topic deletion and §7.6 topic creation / partition expansion."""

from __future__ import annotations

import pytest
from kcspec.spec.events import (
    BrokerFailure,
    BrokerStartup,
    ControllerFailover,
    PartitionExpansion,
    StopReplicaResponseReceived,
    TopicCreation,
    TopicDeletion,
)
from kcspec.spec.requests import UpdateMetadataRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import PartitionReplica, PartitionState, ReplicaAssignment, ReplicaState

from tests.support.spec_scenarios import PROFILES, run_on_both_engines, start, tp, with_topic

T0 = tp("t", 0)
RS = ReplicaState


@pytest.mark.parametrize("profile", PROFILES)
def test_deletion_happy_path(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]]).run(TopicDeletion(("t",)))
    states = s.state.controller.replica_states
    s.expect(all(states[PartitionReplica(T0, b)] == RS.ReplicaDeletionStarted for b in (1, 2)), "Started")
    for b in (1, 2):
        s.expect(any(ps.delete_partition for ps in s.sr_states(b, T0)), f"SR(delete=true) to {b}")
    umr_leaders = {ps.leader for r in s.requests(UpdateMetadataRequest) for ps in r.partition_states}
    s.expect(umr_leaders == {-2}, "UMR carries leader −2 for the deleting topic")
    ps = s.state.controller.partition_states.get(T0)
    if profile == "kafka-2.8":
        s.expect_eq(ps, PartitionState.NonExistentPartition, "2.8: partition NonExistent at onTopicDeletion")
        s.expect("t" in s.state.controller.topics_with_deletion_started, "deletion started")
        s.expect(all(p.leader_epoch == -2 for p in s.sr_states(1, T0)), "SR leader epoch −2 (KIP-570)")
    else:
        s.expect_eq(ps, PartitionState.OnlinePartition, "1.1: partition states change at completion")
    s.run(StopReplicaResponseReceived(1, (T0,)))
    s.expect_eq(
        s.state.controller.replica_states[PartitionReplica(T0, 1)], RS.ReplicaDeletionSuccessful, "done"
    )
    s.expect("t" in s.state.controller.topics_to_be_deleted, "still queued")
    s.run(StopReplicaResponseReceived(2, (T0,)))
    s.expect("t" not in s.state.controller.topics_to_be_deleted, "dequeued")
    s.expect("t" not in s.state.controller.all_topics, "removed from the context")
    s.expect(T0 not in s.state.zk.assignments and T0 not in s.state.zk.partition_states, "znodes deleted")
    s.expect_eq(s.state.zk.delete_topics, frozenset(), "/admin/delete_topics/t deleted")
    s.expect_eq(s.state.controller.partition_states.get(T0), PartitionState.NonExistentPartition, "kept")
    s.expect(not any(pr.tp == T0 for pr in s.state.controller.replica_states), "replica entries removed")
    s.run(TopicCreation("t", ((2, 1),)))
    s.expect_eq((s.znode(T0).leader, s.znode(T0).leader_epoch), (2, 0), "re-created topic starts at epoch 0")


@pytest.mark.parametrize("profile", PROFILES)
def test_deletion_with_dead_replica_waits_for_restart(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3]]).run(BrokerFailure(3), TopicDeletion(("t",)))
    c = s.state.controller
    s.expect("t" in c.topics_ineligible_for_deletion, "ineligible: offline replica")
    s.expect_eq(c.replica_states[PartitionReplica(T0, 1)], RS.ReplicaDeletionStarted, "live replica started")
    dead = c.replica_states[PartitionReplica(T0, 3)]
    # 1.1 accepts ReplicaDeletionIneligible only from ReplicaDeletionStarted (§2.1).
    want = RS.ReplicaDeletionIneligible if profile == "kafka-2.8" else RS.OfflineReplica
    s.expect_eq(dead, want, "dead replica state")
    s.run(StopReplicaResponseReceived(1, (T0,)), StopReplicaResponseReceived(2, (T0,)))
    s.expect("t" in s.state.controller.topics_to_be_deleted, "cannot complete while a replica is down")
    s.run(BrokerStartup(3))
    s.expect_eq(
        s.state.controller.replica_states[PartitionReplica(T0, 3)],
        RS.ReplicaDeletionStarted,
        "resumed on restart",
    )
    s.expect("t" not in s.state.controller.topics_ineligible_for_deletion, "eligible again")
    s.run(StopReplicaResponseReceived(3, (T0,)))
    s.expect("t" not in s.state.controller.all_topics, "deletion completed")


@pytest.mark.parametrize("profile", PROFILES)
def test_stop_replica_error_marks_ineligible_and_retries(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]]).run(
        TopicDeletion(("t",)), StopReplicaResponseReceived(1, (T0,), True)
    )
    c = s.state.controller
    s.expect("t" in c.topics_ineligible_for_deletion, "marked ineligible (replica deletion failure)")
    s.expect_eq(c.replica_states[PartitionReplica(T0, 1)], RS.ReplicaDeletionIneligible, "failed replica")


@pytest.mark.parametrize("profile", PROFILES)
def test_deletion_disabled_and_unknown_topics(profile: str) -> None:
    s = with_topic(profile, "t", [[1]]).run(TopicDeletion(("nope",)))
    s.expect_eq(s.state.zk.delete_topics, frozenset(), "znode of an unknown topic deleted")
    s.expect_eq(s.state.controller.topics_to_be_deleted, frozenset(), "nothing queued")


@pytest.mark.parametrize("profile", PROFILES)
def test_creation_without_live_replica_then_startup(profile: str) -> None:
    s = start(profile).run(TopicCreation("t", ((4, 5),)))
    s.expect_eq(s.state.controller.partition_states[T0], PartitionState.NewPartition, "stays NewPartition")
    s.expect(T0 not in s.state.zk.partition_states, "no state znode")
    s.expect_eq(
        s.state.controller.replica_states[PartitionReplica(T0, 4)], RS.OnlineReplica, "replicas Online"
    )
    s.run(BrokerStartup(5))
    s.expect_eq(s.state.controller.partition_states[T0], PartitionState.OnlinePartition, "initialised later")
    s.expect_eq((s.znode(T0).leader, s.znode(T0).isr), (5, (5,)), "leader = first live replica")


@pytest.mark.parametrize("profile", PROFILES)
def test_partition_expansion(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]]).run(PartitionExpansion("t", ((1, 2), (2, 3))))
    t1 = tp("t", 1)
    s.expect_eq((s.znode(t1).leader, s.znode(t1).isr), (2, (2, 3)), "new partition initialised")
    s.expect_eq(s.state.controller.assignments[t1], ReplicaAssignment((2, 3)), "assignment cached")


def test_expansion_during_deletion_kafka_6612() -> None:
    for profile, restored in (("kafka-2.8", True), ("kafka-1.1", False)):
        s = with_topic(profile, "t", [[1, 2, 3]]).run(BrokerFailure(3), TopicDeletion(("t",)))
        s.run(PartitionExpansion("t", ((1, 2, 3), (1, 2))))
        t1 = tp("t", 1)
        s.expect_eq(t1 not in s.state.zk.assignments, restored, f"{profile}: added partition reverted in ZK")
        s.expect(t1 not in s.state.controller.assignments, "never created")


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_initialises_deletion_with_ineligible_topics_among_those_queued(profile: str) -> None:
    """Kafka's ``TopicDeletionManagerTest.testInitialization`` (2.8.2): ``init(toBeDeleted = {foo, bar},
    ineligible = {bar, baz})`` leaves ``topicsIneligibleForDeletion = {bar}``: a topic not queued for deletion is
    never ineligible. In Kafka the controller calls ``init`` at failover with the topics of ``/admin/delete_topics``
    and those with an offline replica (or being reassigned), as here: foo (replicas 1, 2) and bar (1, 3) are queued,
    bar and baz (2, 3) have a replica on the dead broker 3. Both engines, every step compared."""
    events = [
        *(BrokerStartup(b) for b in (1, 2, 3)),
        ControllerFailover(1),
        TopicCreation("foo", ((1, 2),)),
        TopicCreation("bar", ((1, 3),)),
        TopicCreation("baz", ((2, 3),)),
        BrokerFailure(3),
        TopicDeletion(("foo", "bar")),
        ControllerFailover(2),
    ]
    state = run_on_both_engines("testInitialization", ClusterState(), events, profile)
    assert state.controller.topics_to_be_deleted == frozenset({"foo", "bar"}), state.controller
    assert state.controller.topics_ineligible_for_deletion == frozenset({"bar"}), state.controller
