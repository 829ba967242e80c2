"""§5 and §2.2/§2.3: every partition transition in both profiles, initialisation, elections and the retry loop."""

from __future__ import annotations

import pytest
from kcspec.spec.events import BrokerFailure, TopicCreation, ZkFaultInjection
from kcspec.spec.requests import MACHINE_PARTITION, FailureReason, StateChangeFailure
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ZkFault,
)

from tests.support.reference_scenarios import PROFILES, cluster, explain, lair, leader_and_isr, tp

P = PartitionState
VALID = {
    P.NewPartition: {P.NonExistentPartition},
    P.OnlinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.OfflinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.NonExistentPartition: {P.OfflinePartition},
}
OFFLINE = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy)
PREFERRED = LeaderElection(ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("current", list(P), ids=lambda s: s.name)
@pytest.mark.parametrize("target", list(P), ids=lambda s: s.name)
def test_transition_table(profile: str, current: PartitionState, target: PartitionState) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    ctx = rc.kc.ctx
    if current is P.NewPartition:
        ctx.remove_leadership(tp("foo-0"))
        del rc.zk.partition_states[tp("foo-0")]
    ctx.put_partition_state(tp("foo-0"), current)
    rc._failures.clear()
    rc.kc.partition_sm.handle_state_changes([tp("foo-0")], target, OFFLINE)
    where = f"{profile}: {current.name} -> {target.name}\n" + explain(rc)
    if current in VALID[target]:
        assert not rc._failures, where
        assert ctx.partition_state(tp("foo-0")) is target, where
    else:
        assert list(rc._failures) == [
            StateChangeFailure(
                MACHINE_PARTITION, tp("foo-0"), -1, current.name, target.name, FailureReason.InvalidTransition
            )
        ], where
        assert ctx.partition_state(tp("foo-0")) is current, where
        assert rc.state_change_log[-1].startswith(
            "java.lang.IllegalStateException: Partition foo-0 should be in one of"
        )


@pytest.mark.parametrize("profile", PROFILES)
def test_new_partition_initialisation_first_live_replica_leads(profile: str) -> None:
    rc = cluster(profile, brokers=(1, 3))
    result = rc.handle(TopicCreation("foo", ((2, 3, 1),)))
    assert leader_and_isr(rc, "foo-0") == LeaderAndIsr(3, 0, (3, 1), 0), explain(rc)
    assert rc.kc.ctx.partition_state(tp("foo-0")) is P.OnlinePartition
    for broker in (3, 1):
        (state,) = lair(result.requests, broker)[0].partition_states
        assert state.is_new
    assert not lair(result.requests, 2)


@pytest.mark.parametrize("profile", PROFILES)
def test_new_partition_without_live_replica_stays_new(profile: str) -> None:
    rc = cluster(profile, brokers=(1,))
    result = rc.handle(TopicCreation("foo", ((2, 3),)))
    assert result.failures == {
        StateChangeFailure(
            MACHINE_PARTITION,
            tp("foo-0"),
            -1,
            "NewPartition",
            "OnlinePartition",
            FailureReason.NoAssignedReplicaAlive,
        )
    }
    assert rc.kc.ctx.partition_state(tp("foo-0")) is P.NewPartition
    assert rc.state_change_log[-1] == (
        "kafka.common.StateChangeFailedException: Controller 1 epoch 1 encountered error during state change of "
        "partition foo-0 from New to Online, assigned replicas are [], live brokers are [Set(1)]. No assigned "
        "replica is alive."
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_creation_node_exists_fails_per_partition(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.kc.ctx.remove_leadership(tp("foo-0"))
    rc.kc.ctx.put_partition_state(tp("foo-0"), P.NewPartition)
    rc.kc.partition_sm.handle_state_changes([tp("foo-0")], P.OnlinePartition, OFFLINE)
    assert [f.reason for f in rc._failures] == [FailureReason.NodeExists]
    assert (
        rc.state_change_log[-1]
        == "org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_election_bumps_epoch_even_for_the_same_leader(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    before = leader_and_isr(rc, "foo-0")
    results = rc.kc.partition_sm.handle_state_changes([tp("foo-0")], P.OnlinePartition, PREFERRED)
    after = leader_and_isr(rc, "foo-0")
    assert after == LeaderAndIsr(1, before.leader_epoch + 1, before.isr, before.zk_version + 1)
    assert results == {tp("foo-0"): after}


@pytest.mark.parametrize("profile", PROFILES)
def test_election_failure_keeps_state(profile: str) -> None:
    rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(1))
    rc.handle(BrokerFailure(2))
    assert rc.kc.ctx.partition_state(tp("foo-0")) is P.OfflinePartition, explain(rc)
    rc._failures.clear()
    rc.kc.partition_sm.handle_state_changes([tp("foo-0")], P.OnlinePartition, OFFLINE)
    assert [f.reason for f in rc._failures] == [FailureReason.NoEligibleLeader]
    assert rc.kc.ctx.partition_state(tp("foo-0")) is P.OfflinePartition
    assert rc.state_change_log[-1].endswith(
        "Failed to elect leader for partition foo-0 under strategy OfflinePartitionLeaderElectionStrategy"
        + ("(false)" if profile == "kafka-2.8" else "")
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_election_with_newer_controller_epoch_in_zk_aborts(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    stored = rc.zk.partition_states[tp("foo-0")]
    rc.zk.partition_states[tp("foo-0")] = LeaderIsrAndControllerEpoch(stored.leader_and_isr, 7)
    rc.kc.partition_sm.handle_state_changes([tp("foo-0")], P.OnlinePartition, PREFERRED)
    assert [f.reason for f in rc._failures] == [FailureReason.WrittenByNewerController]
    first = "Aborted" if profile == "kafka-2.8" else "aborted"
    assert rc.state_change_log[-1] == (
        f"kafka.common.StateChangeFailedException: {first} leader election for partition foo-0 since the "
        "LeaderAndIsr path was already written by another controller. This probably means that the current "
        "controller 1 went through a soft failure and another controller was elected with epoch 7."
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_connection_loss_fails_the_whole_read(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2), (2, 1))})
    rc.handle(ZkFaultInjection(tp("foo-1"), ZkFault.CONNECTIONLOSS))
    rc.kc.partition_sm.handle_state_changes([tp("foo-0"), tp("foo-1")], P.OnlinePartition, PREFERRED)
    assert sorted((f.tp.partition, f.reason) for f in rc._failures) == [
        (0, FailureReason.ZkError),
        (1, FailureReason.ZkError),
    ]
    assert not rc.zk.faults, "a consumed fault is removed"


def test_badversion_retry_28_retries_only_the_remaining_partition() -> None:
    rc = cluster("kafka-2.8", topics={"foo": ((1, 2), (2, 1))})
    rc.handle(ZkFaultInjection(tp("foo-1"), ZkFault.BADVERSION))
    e0, e1 = leader_and_isr(rc, "foo-0").leader_epoch, leader_and_isr(rc, "foo-1").leader_epoch
    rc.kc.partition_sm.handle_state_changes([tp("foo-0"), tp("foo-1")], P.OnlinePartition, PREFERRED)
    assert (leader_and_isr(rc, "foo-0").leader_epoch, leader_and_isr(rc, "foo-1").leader_epoch) == (
        e0 + 1,
        e1 + 1,
    )
    assert any(
        "Retrying leader election with strategy PreferredReplicaPartitionLeaderElectionStrategy for partitions "
        "List(foo-1)" in line
        for line in rc.controller_log
    )


def test_badversion_retry_11_re_elects_the_full_list() -> None:
    """§5.2b [1.1]: the retry re-runs the election on the original list, bumping foo-0 twice."""
    rc = cluster("kafka-1.1", topics={"foo": ((1, 2), (2, 1))})
    rc.handle(ZkFaultInjection(tp("foo-1"), ZkFault.BADVERSION))
    e0, e1 = leader_and_isr(rc, "foo-0").leader_epoch, leader_and_isr(rc, "foo-1").leader_epoch
    rc.kc.partition_sm.handle_state_changes([tp("foo-0"), tp("foo-1")], P.OnlinePartition, PREFERRED)
    assert (leader_and_isr(rc, "foo-0").leader_epoch, leader_and_isr(rc, "foo-1").leader_epoch) == (
        e0 + 2,
        e1 + 1,
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_missing_znode_fails_the_election(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    del rc.zk.partition_states[tp("foo-0")]
    rc.kc.partition_sm.handle_state_changes([tp("foo-0")], P.OnlinePartition, PREFERRED)
    assert [f.reason for f in rc._failures] == [FailureReason.LeaderAndIsrMissing]
    assert rc.state_change_log[-1].endswith(
        "LeaderAndIsr information doesn't exist for partition foo-0 in OnlinePartition state"
    )
