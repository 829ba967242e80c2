"""§7.1 failover edge cases, §7.11 AlterIsr error handling, §8 deletion details and §7.7/§7.8 recovery."""

from __future__ import annotations

import pytest
from kcspec.spec.events import (
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    NewerControllerElected,
    StopReplicaResponseReceived,
    TopicDeletion,
    ZkFaultInjection,
    ZkPartitionReassignment,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import ReplicaAssignment, ReplicaState, ZkFault

from tests.support.reference_scenarios import PROFILES, cluster, explain, leader_and_isr, replica_state, tp

R = ReplicaState


@pytest.mark.parametrize("profile", PROFILES)
def test_connection_loss_during_failover_moves_the_controller(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.handle(ControllerResignation())
    rc.handle(ZkFaultInjection(tp("foo-0"), ZkFault.CONNECTIONLOSS))
    result = rc.handle(ControllerFailover(2))
    assert result.state.controller.controller_id == -1, explain(rc, result=result)
    assert result.state.zk.controller == -1, "triggerControllerMove deletes /controller"
    assert result.state.zk.controller_epoch == 2
    assert any("Trigger controller movement immediately" in line for line in rc.controller_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_clears_isr_notifications_and_pending_preferred_election(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((2, 1),)})
    rc.handle(ControllerResignation())
    rc.zk.preferred_replica_election.add(tp("foo-0"))
    rc.zk.isr_change_notifications.add(tp("foo-0"))
    result = rc.handle(ControllerFailover(1))
    assert not result.state.zk.preferred_replica_election
    assert not result.state.zk.isr_change_notifications


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_completes_deletion_of_unknown_queued_topic(profile: str) -> None:
    rc = cluster(profile)
    rc.handle(ControllerResignation())
    rc.handle(TopicDeletion(("ghost",)))
    result = rc.handle(ControllerFailover(2))
    assert not result.state.zk.delete_topics and not result.state.controller.topics_to_be_deleted


def test_alter_isr_at_a_zombie_28_does_not_resign() -> None:
    """2.8.2 ``processAlterIsr`` catches every Throwable, including the fencing ControllerMovedException."""
    rc = cluster("kafka-2.8", topics={"foo": ((1, 2, 3),)})
    rc.handle(NewerControllerElected(2))
    before = rc.zk.partition_states[tp("foo-0")]
    result = rc.handle(IsrChange(tp("foo-0"), (1, 2)))
    assert result.state.controller.controller_id == 1 and rc.zk.partition_states[tp("foo-0")] == before
    assert not result.requests
    assert any("Error when processing AlterIsr" in line for line in rc.controller_log)


def test_controlled_shutdown_at_a_zombie_28_resigns() -> None:
    rc = cluster("kafka-2.8", controller=3, topics={"foo": ((1, 2),)})
    rc.handle(NewerControllerElected(2))
    result = rc.handle(ControlledShutdown(1))
    assert result.state.controller.controller_id == -1, explain(rc, result=result)


def test_alter_isr_badversion_is_invalid_update_version() -> None:
    rc = cluster("kafka-2.8", topics={"foo": ((1, 2, 3),)})
    rc.handle(ZkFaultInjection(tp("foo-0"), ZkFault.BADVERSION))
    before = leader_and_isr(rc, "foo-0")
    result = rc.handle(IsrChange(tp("foo-0"), (1, 2)))
    assert leader_and_isr(rc, "foo-0") == before and not result.state.zk.faults
    assert result.requests, "UpdateMetadata is still sent for the requested partition"


def test_isr_change_connection_loss_11_keeps_cache_and_deletes_notification() -> None:
    rc = cluster("kafka-1.1", topics={"foo": ((1, 2, 3),)})
    rc.handle(ZkFaultInjection(tp("foo-0"), ZkFault.CONNECTIONLOSS))
    result = rc.handle(IsrChange(tp("foo-0"), (1, 2)))
    assert leader_and_isr(rc, "foo-0").isr == (1, 2), "the leader's own write went through"
    assert rc.kc.ctx.leadership[tp("foo-0")].leader_and_isr.isr == (1, 2, 3)
    assert not result.state.zk.isr_change_notifications and not result.requests
    assert any("Error processing event IsrChangeNotification" in line for line in rc.controller_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_deletion_resumes_when_the_dead_broker_returns(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    rc.handle(BrokerFailure(3))
    rc.handle(TopicDeletion(("foo",)))
    assert "foo" in rc.kc.ctx.topics_ineligible_for_deletion
    rc.handle(StopReplicaResponseReceived(1, (tp("foo-0"),)))
    rc.handle(StopReplicaResponseReceived(2, (tp("foo-0"),)))
    result = rc.handle(BrokerStartup(3))
    if profile == "kafka-2.8":
        assert replica_state(rc, "foo-0", 3) is R.ReplicaDeletionStarted, explain(rc, result=result)
        result = rc.handle(StopReplicaResponseReceived(3, (tp("foo-0"),)))
        assert tp("foo-0") not in result.state.zk.assignments, explain(rc, result=result)
    else:
        # 1.1: the dead replica stayed OfflineReplica (Ineligible only from Started), so it restarts too
        assert replica_state(rc, "foo-0", 3) is R.ReplicaDeletionStarted, explain(rc, result=result)


@pytest.mark.parametrize("profile", PROFILES)
def test_reassignment_of_a_deleting_topic_is_refused(profile: str) -> None:
    rc = cluster(profile, brokers=(1, 2, 3), topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(2))
    rc.handle(TopicDeletion(("foo",)))
    result = rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (1, 3)})))
    assert result.state.controller.assignments[tp("foo-0")].replicas == (1, 2)
    assert not result.state.zk.reassign_partitions


def test_kip455_failover_resumes_in_flight_reassignment_with_another_epoch_bump() -> None:
    rc = cluster("kafka-2.8", brokers=(1, 2, 3, 4), topics={"foo": ((1, 2),)})
    rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (3, 4)})))
    epoch = leader_and_isr(rc, "foo-0").leader_epoch
    rc.handle(ControllerResignation())
    result = rc.handle(ControllerFailover(2))
    assert result.state.controller.partitions_being_reassigned == frozenset({tp("foo-0")})
    assert result.state.controller.assignments[tp("foo-0")] == ReplicaAssignment((3, 4, 1, 2), (3, 4), (1, 2))
    assert leader_and_isr(rc, "foo-0").leader_epoch == epoch + 1, explain(rc, result=result)


def test_legacy_failover_recomputes_new_only_as_empty() -> None:
    rc = cluster("kafka-1.1", brokers=(1, 2, 3, 4), topics={"foo": ((1, 2),)})
    rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (3, 4)})))
    rc.handle(ControllerResignation())
    result = rc.handle(ControllerFailover(2))
    assert result.state.controller.assignments[tp("foo-0")] == ReplicaAssignment((3, 4, 1, 2))
    assert result.state.controller.legacy_reassignments == {tp("foo-0"): (3, 4)}
    assert not result.failures, "no NewReplica transitions: newOnly is empty after failover"
