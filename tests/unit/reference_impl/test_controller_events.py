"""§7.1–§7.12 and §8: every event handler, end to end through ``ReferenceController.handle``, in both profiles."""

from __future__ import annotations

import pytest
from kcspec.reference_impl import EventNotEnabled, ReferenceController
from kcspec.spec.events import (
    ApiPartitionReassignment,
    AutoPreferredReplicaLeaderElection,
    BrokerBounce,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerChange,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrResponseReceived,
    NewerControllerElected,
    PartitionExpansion,
    ReplicaLeaderElection,
    StopReplicaResponseReceived,
    TopicCreation,
    TopicDeletion,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    ElectionTrigger,
    ElectionType,
    LeaderAndIsr,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

from tests.support.reference_scenarios import (
    PROFILES,
    cluster,
    explain,
    lair,
    leader_and_isr,
    recipients,
    replica_state,
    stop_replica,
    tp,
    umr,
)

R = ReplicaState
P = PartitionState


def test_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"kafka-2\.8, kafka-1\.1"):
        ReferenceController("kafka-0.8")


@pytest.mark.parametrize("profile", PROFILES)
def test_guard_refuses_disabled_events(profile: str) -> None:
    rc = cluster(profile, controller=None)
    with pytest.raises(EventNotEnabled):
        rc.handle(ControllerResignation())
    with pytest.raises(EventNotEnabled):
        rc.handle(BrokerStartup(1))
    assert not rc.enabled(ControlledShutdown(1))
    assert rc.enabled(ApiPartitionReassignment(FMap({tp("x-0"): (1,)}))) is False


@pytest.mark.parametrize("profile", PROFILES)
def test_snapshot_load_round_trip(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3), (3, 1))})
    rc.handle(BrokerFailure(3))
    state = rc.snapshot()
    again = ReferenceController(profile, state)
    assert again.snapshot() == state
    a, b = rc.handle(BrokerStartup(3)), again.handle(BrokerStartup(3))
    assert (a.state, a.requests, a.failures) == (b.state, b.requests, b.failures)


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_rebuilds_the_context_and_sends_umr_first(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    result = rc.handle(ControllerFailover(2))
    ctrl = result.state.controller
    assert (ctrl.controller_id, ctrl.epoch, ctrl.epoch_zk_version) == (2, 2, 2)
    assert result.state.zk.controller == 2
    assert ctrl.partition_states[tp("foo-0")] is P.OnlinePartition
    assert {pr.replica: s for pr, s in ctrl.replica_states.items()} == {
        1: R.OnlineReplica,
        2: R.OnlineReplica,
        3: R.OnlineReplica,
    }
    assert recipients(result.requests, LeaderAndIsrRequest) == {1, 2, 3}
    assert any(line.endswith("Resigned (kafka.controller.KafkaController)") for line in rc.controller_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_resignation_and_controller_change_reset_the_context(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.handle(NewerControllerElected(2))
    result = rc.handle(ControllerChange())
    assert result.state.controller == ClusterState().controller
    assert result.state.zk.controller == 2 and result.state.zk.controller_epoch == 2
    rc.handle(ControllerFailover(3))
    result = rc.handle(ControllerResignation())
    assert result.state.zk.controller == -1 and result.state.controller.controller_id == -1


@pytest.mark.parametrize("profile", PROFILES)
def test_controller_broker_failure_kills_the_controller(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    result = rc.handle(BrokerFailure(1))
    assert result.state.controller.controller_id == -1 and result.state.zk.controller == -1
    assert not result.requests


@pytest.mark.parametrize("profile", PROFILES)
def test_broker_failure_elects_new_leaders_and_shrinks_isr(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((2, 3, 1),), "bar": ((1, 3),)})
    result = rc.handle(BrokerFailure(2))
    assert leader_and_isr(rc, "foo-0") == LeaderAndIsr(3, 1, (3, 1), 1), explain(rc, result=result)
    assert replica_state(rc, "foo-0", 2) is R.OfflineReplica
    assert result.state.zk.brokers.keys() == {1, 3}
    assert 2 not in {r.broker for r in result.requests}


def test_kafka_13225_no_umr_when_an_offline_leader_exists_but_nothing_changes() -> None:
    """2.8.2: broker 2 hosts nothing, but a partition already has leader -1 ⇒ no broker-list UMR at all."""
    rc = cluster("kafka-2.8", brokers=(1, 2, 3), controller=3, topics={"foo": ((1,),)})
    rc.handle(BrokerFailure(1))
    assert leader_and_isr(rc, "foo-0").leader == -1
    result = rc.handle(BrokerFailure(2))
    assert not [r for r in result.requests if isinstance(r, UpdateMetadataRequest)], explain(
        rc, result=result
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_broker_startup_brings_replicas_online_and_elects_offline_partitions(profile: str) -> None:
    rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(1))
    rc.handle(BrokerFailure(2))
    result = rc.handle(BrokerStartup(2))
    assert replica_state(rc, "foo-0", 2) is R.OnlineReplica
    assert leader_and_isr(rc, "foo-0").leader == 2, explain(rc, result=result)
    if profile == "kafka-2.8":
        full = umr(result.requests, 2)
        assert any(r.partition_states for r in full), "KAFKA-7537: the new broker gets the partition states"


def test_bounce_is_failure_then_startup_in_28_and_invisible_in_11() -> None:
    rc = cluster("kafka-2.8", topics={"foo": ((2, 1),)})
    before = leader_and_isr(rc, "foo-0")
    result = rc.handle(BrokerBounce(2))
    assert leader_and_isr(rc, "foo-0").leader_epoch > before.leader_epoch
    assert result.state.controller.live_brokers[2] == result.state.zk.brokers[2]
    rc = cluster("kafka-1.1", topics={"foo": ((2, 1),)})
    before = leader_and_isr(rc, "foo-0")
    result = rc.handle(BrokerBounce(2))
    assert leader_and_isr(rc, "foo-0") == before and not result.requests
    assert result.state.controller.live_brokers[2] != result.state.zk.brokers[2]


@pytest.mark.parametrize("profile", PROFILES)
def test_controlled_shutdown_moves_leadership_and_offlines_followers(profile: str) -> None:
    rc = cluster(profile, controller=3, topics={"led": ((1, 2, 3),), "followed": ((2, 1),)})
    result = rc.handle(ControlledShutdown(1))
    assert leader_and_isr(rc, "led-0") == LeaderAndIsr(2, 1, (2, 3), 1), explain(rc, result=result)
    assert replica_state(rc, "followed-0", 1) is R.OfflineReplica
    assert leader_and_isr(rc, "followed-0").isr == (2,)
    assert result.state.controller.shutting_down == frozenset({1})
    got_lair = any(s.tp == tp("led-0") for r in lair(result.requests, 1) for s in r.partition_states)
    assert got_lair == (profile == "kafka-2.8"), "KAFKA-7482"
    assert stop_replica(result.requests, 1)


def test_controlled_shutdown_stale_broker_epoch_is_rejected_28_only() -> None:
    for profile, changes in (("kafka-2.8", False), ("kafka-1.1", True)):
        rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
        result = rc.handle(ControlledShutdown(1, 0))
        assert (1 in result.state.controller.shutting_down) == changes, profile


@pytest.mark.parametrize("profile", PROFILES)
def test_topic_creation_and_expansion(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    result = rc.handle(PartitionExpansion("foo", ((1, 2), (2, 3))))
    assert result.state.controller.partition_states[tp("foo-1")] is P.OnlinePartition
    assert leader_and_isr(rc, "foo-1") == LeaderAndIsr(2, 0, (2, 3), 0)


def test_expansion_during_deletion_is_reverted_in_28_only() -> None:
    for profile, reverted in (("kafka-2.8", True), ("kafka-1.1", False)):
        rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
        rc.handle(BrokerFailure(2))
        rc.handle(TopicDeletion(("foo",)))
        result = rc.handle(PartitionExpansion("foo", ((1, 2), (1, 3))))
        assert (tp("foo-1") not in result.state.zk.assignments) == reverted, profile
        assert tp("foo-1") not in result.state.controller.assignments


@pytest.mark.parametrize("profile", PROFILES)
def test_topic_deletion_end_to_end(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    result = rc.handle(TopicDeletion(("foo",)))
    assert replica_state(rc, "foo-0", 1) is R.ReplicaDeletionStarted
    deletes = [
        s
        for b in (1, 2)
        for r in stop_replica(result.requests, b)
        for s in r.partition_states
        if s.delete_partition
    ]
    assert len(deletes) == 2
    rc.handle(StopReplicaResponseReceived(1, (tp("foo-0"),)))
    result = rc.handle(StopReplicaResponseReceived(2, (tp("foo-0"),)))
    state = result.state
    assert tp("foo-0") not in state.zk.assignments and tp("foo-0") not in state.zk.partition_states
    assert "foo" not in state.zk.delete_topics and "foo" not in state.controller.all_topics
    assert state.controller.partition_states[tp("foo-0")] is P.NonExistentPartition
    assert not state.controller.replica_states
    assert any("Deletion of topic foo successfully completed" in line for line in rc.controller_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_stop_replica_error_marks_ineligible_then_retries(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.handle(TopicDeletion(("foo",)))
    result = rc.handle(StopReplicaResponseReceived(1, (tp("foo-0"),), error=True))
    assert "foo" in result.state.controller.topics_ineligible_for_deletion
    assert replica_state(rc, "foo-0", 1) is R.ReplicaDeletionIneligible, "no retry while a replica is Started"
    rc.handle(StopReplicaResponseReceived(2, (tp("foo-0"),)))
    assert replica_state(rc, "foo-0", 2) is R.ReplicaDeletionSuccessful
    assert replica_state(rc, "foo-0", 1) is R.OfflineReplica, "retried back to OfflineReplica, not restarted"


def test_deletion_of_unknown_topic_only_deletes_the_znode() -> None:
    for profile in PROFILES:
        rc = cluster(profile)
        result = rc.handle(TopicDeletion(("nope",)))
        assert not result.state.zk.delete_topics and not result.requests


def test_kip455_reassignment_via_zk_then_isr_catch_up() -> None:
    rc = cluster("kafka-2.8", brokers=(1, 2, 3, 4), topics={"foo": ((1, 2),)})
    result = rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (3, 4)})))
    fa = result.state.controller.assignments[tp("foo-0")]
    assert fa == ReplicaAssignment((3, 4, 1, 2), (3, 4), (1, 2)), explain(rc, result=result)
    assert result.state.zk.assignments[tp("foo-0")] == fa
    assert leader_and_isr(rc, "foo-0").leader_epoch == 1, "A1 bumps the epoch"
    adding = {s.is_new for b in (3, 4) for r in lair(result.requests, b) for s in r.partition_states}
    assert adding == {True}, "KAFKA-10314"
    result = rc.handle(IsrChange(tp("foo-0"), (1, 2, 3, 4)))
    state = result.state
    assert state.controller.assignments[tp("foo-0")] == ReplicaAssignment((3, 4)), explain(rc, result=result)
    assert state.zk.assignments[tp("foo-0")] == ReplicaAssignment((3, 4))
    assert leader_and_isr(rc, "foo-0").leader == 3 and set(leader_and_isr(rc, "foo-0").isr) == {3, 4}
    assert not state.zk.reassign_partitions and not state.controller.partitions_being_reassigned
    assert replica_state(rc, "foo-0", 1) is R.NonExistentReplica


def test_kip455_api_reassignment_cancel() -> None:
    rc = cluster("kafka-2.8", brokers=(1, 2, 3), topics={"foo": ((1, 2),)})
    rc.handle(ApiPartitionReassignment(FMap({tp("foo-0"): (1, 3)})))
    assert rc.kc.ctx.assignment(tp("foo-0")) == ReplicaAssignment((1, 3, 2), (3,), (2,))
    result = rc.handle(ApiPartitionReassignment(FMap({tp("foo-0"): None})))
    assert result.state.controller.assignments[tp("foo-0")] == ReplicaAssignment((1, 2)), explain(
        rc, result=result
    )
    assert 3 not in result.state.zk.assignments[tp("foo-0")].replicas


def test_kip455_api_rejects_dead_adding_replicas() -> None:
    rc = cluster("kafka-2.8", brokers=(1, 2), topics={"foo": ((1, 2),)})
    result = rc.handle(ApiPartitionReassignment(FMap({tp("foo-0"): (1, 7)})))
    assert (
        result.state.controller.assignments[tp("foo-0")] == ReplicaAssignment((1, 2)) and not result.requests
    )


def test_legacy_reassignment_12_steps_and_kafka_9212_stale_cache() -> None:
    rc = cluster("kafka-1.1", brokers=(1, 2, 3, 4), topics={"foo": ((1, 2),)})
    result = rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (3, 4)})))
    assert result.state.controller.assignments[tp("foo-0")] == ReplicaAssignment((3, 4, 1, 2))
    assert result.state.controller.legacy_reassignments == {tp("foo-0"): (3, 4)}
    zk_epoch = leader_and_isr(rc, "foo-0").leader_epoch
    assert rc.kc.ctx.leadership[tp("foo-0")].leader_and_isr.leader_epoch == zk_epoch - 1, (
        "KAFKA-9212: cache not updated"
    )
    stale = {s.leader_epoch for r in umr(result.requests, 1) for s in r.partition_states}
    assert stale == {zk_epoch - 1}
    result = rc.handle(IsrChange(tp("foo-0"), (1, 2, 3, 4)))
    state = result.state
    assert state.controller.assignments[tp("foo-0")] == ReplicaAssignment((3, 4)), explain(rc, result=result)
    assert state.zk.assignments[tp("foo-0")] == ReplicaAssignment((3, 4))
    assert not state.zk.reassign_partitions and not state.controller.legacy_reassignments
    assert leader_and_isr(rc, "foo-0").leader == 3


def test_legacy_reassignment_to_the_current_list_is_ignored() -> None:
    rc = cluster("kafka-1.1", topics={"foo": ((1, 2),)})
    result = rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (1, 2)})))
    assert not result.state.zk.reassign_partitions and not result.requests
    assert any("is already assigned to replicas 1,2" in line for line in rc.controller_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_zk_preferred_election(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((2, 1),)})
    rc.handle(BrokerBounce(2)) if profile == "kafka-2.8" else rc.handle(ControlledShutdown(2))
    if profile == "kafka-1.1":
        rc.kc.ctx.remove_shutting_down(2)
    assert leader_and_isr(rc, "foo-0").leader == 1, explain(rc)
    rc.handle(IsrChange(tp("foo-0"), (1, 2)))
    result = rc.handle(ReplicaLeaderElection(frozenset({tp("foo-0")})))
    assert leader_and_isr(rc, "foo-0").leader == 2, explain(rc, result=result)
    assert not result.state.zk.preferred_replica_election
    assert any(
        "completed preferred replica leader election. New leader is 2" in line for line in rc.controller_log
    )


def test_preferred_election_on_already_preferred_partition_11_re_elects() -> None:
    for profile, bumped in (("kafka-2.8", False), ("kafka-1.1", True)):
        rc = cluster(profile, topics={"foo": ((1, 2),)})
        before = leader_and_isr(rc, "foo-0").leader_epoch
        rc.handle(ReplicaLeaderElection(frozenset({tp("foo-0")})))
        assert (leader_and_isr(rc, "foo-0").leader_epoch > before) == bumped, profile


@pytest.mark.parametrize("profile", PROFILES)
def test_auto_rebalance(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((2, 1),)})
    rc.handle(BrokerFailure(2))
    rc.handle(BrokerStartup(2))
    rc.handle(IsrChange(tp("foo-0"), (1, 2)))
    result = rc.handle(AutoPreferredReplicaLeaderElection())
    assert leader_and_isr(rc, "foo-0").leader == 2, explain(rc, result=result)


@pytest.mark.parametrize("profile", PROFILES)
def test_isr_change(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    before = leader_and_isr(rc, "foo-0")
    result = rc.handle(IsrChange(tp("foo-0"), (1, 3)))
    after = leader_and_isr(rc, "foo-0")
    assert after == LeaderAndIsr(1, before.leader_epoch, (1, 3), before.zk_version + 1), (
        "leader epoch unchanged"
    )
    assert rc.kc.ctx.leadership[tp("foo-0")].leader_and_isr == after
    assert recipients(result.requests, UpdateMetadataRequest) == {1, 2, 3}
    assert not result.state.zk.isr_change_notifications


def test_zombie_write_event() -> None:
    for profile, applied in (("kafka-2.8", False), ("kafka-1.1", True)):
        rc = cluster(profile, topics={"foo": ((1, 2),)})
        rc.handle(NewerControllerElected(2))
        before = leader_and_isr(rc, "foo-0")
        rc.handle(ZombieControllerWrite(tp("foo-0"), 2, (2,), 1))
        assert (leader_and_isr(rc, "foo-0") != before) == applied, profile


@pytest.mark.parametrize("profile", PROFILES)
def test_leader_and_isr_storage_error_marks_replica_offline(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((2, 1, 3),)})
    result = rc.handle(LeaderAndIsrResponseReceived(2, (tp("foo-0"),)))
    assert result.state.controller.offline_replicas == frozenset(
        {__import__("kcspec.spec.vocabulary", fromlist=["x"]).PartitionReplica(tp("foo-0"), 2)}
    )
    assert leader_and_isr(rc, "foo-0").leader == 1, explain(rc, result=result)
    assert replica_state(rc, "foo-0", 2) is R.OfflineReplica
    assert any("Mark replicas foo-0 on broker 2 as offline" in line for line in rc.state_change_log)


@pytest.mark.parametrize("profile", PROFILES)
def test_failover_resumes_pending_deletion_and_preferred_election(profile: str) -> None:
    rc = cluster(profile, controller=None)
    from kcspec.spec.events import TopicCreation as TC

    rc.handle(TC("foo", ((1, 2),)))
    rc.handle(TopicDeletion(("foo",)))
    rc.handle(ControllerFailover(1))
    state = rc.snapshot()
    assert tp("foo-0") not in state.zk.assignments or state.controller.topics_to_be_deleted, explain(rc)
    assert not state.zk.delete_topics or "foo" in state.controller.topics_to_be_deleted


def test_stop_replica_response_requires_deletion_started() -> None:
    rc = cluster(topics={"foo": ((1, 2),)})
    assert not rc.enabled(StopReplicaResponseReceived(1, (tp("foo-0"),)))
    assert rc.enabled(TopicCreation("bar", ((1,),)))
    assert not rc.enabled(TopicCreation("foo", ((1,),)))
    assert not rc.enabled(TopicCreation("bar", ((1, 1),)))
    assert not rc.enabled(PartitionExpansion("foo", ((2, 1), (1,))))
    assert rc.enabled(IsrChange(TopicPartition("foo", 0), (1,)))
    assert not rc.enabled(IsrChange(TopicPartition("foo", 0), (2,)))
    assert not rc.enabled(
        ReplicaLeaderElection(frozenset({tp("foo-0")}), ElectionType.UNCLEAN, ElectionTrigger.ZkTriggered)
    )
    assert isinstance(rc.handle(BrokerStartup(5)).requests, frozenset)
    assert all(
        isinstance(r, LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest) for r in rc._sent
    )
