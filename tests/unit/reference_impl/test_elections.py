"""§6: the four strategies, the unclean rule and their edge cases, in both profiles."""

from __future__ import annotations

import pytest
from kcspec.reference_impl.elections import (
    controlled_shutdown_partition_leader_election,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
)
from kcspec.reference_impl.version import KAFKA_1_1, KAFKA_2_8
from kcspec.spec.events import (
    BrokerFailure,
    ControlledShutdown,
    ReplicaLeaderElection,
    UncleanLeaderElectionEnable,
)
from kcspec.spec.vocabulary import (
    ElectionTrigger,
    ElectionType,
    LeaderAndIsr,
    PartitionState,
    ReplicaAssignment,
)

from tests.support.reference_scenarios import PROFILES, cluster, explain, lair, leader_and_isr, tp

LAI = LeaderAndIsr(1, 4, (1, 2, 3), 7)


def test_offline_algorithm_prefers_assignment_order_over_isr_order() -> None:
    assert offline_partition_leader_election((3, 2, 1), (1, 2, 3), {1, 2, 3}, False) == 3


def test_offline_algorithm_unclean_only_when_enabled() -> None:
    assert offline_partition_leader_election((1, 2), (1,), {2}, False) is None
    assert offline_partition_leader_election((1, 2), (1,), {2}, True) == 2
    assert offline_partition_leader_election((1, 2), (), {2}, False) is None, "empty ISR: clean finds nothing"
    assert offline_partition_leader_election((1, 2), (), set(), True) is None, "no live replica at all"


def test_other_algorithms() -> None:
    assert reassign_partition_leader_election((4, 5), (5, 4), {5}) == 5
    assert reassign_partition_leader_election((4, 5), (1,), {4, 5}) is None
    assert preferred_replica_partition_leader_election((2, 1), (1, 2), {1, 2}) == 2
    assert preferred_replica_partition_leader_election((2, 1), (1,), {1, 2}) is None, (
        "head must be in the ISR"
    )
    assert preferred_replica_partition_leader_election((), (1,), {1}) is None
    assert controlled_shutdown_partition_leader_election((1, 2, 3), (1, 2, 3), {1, 2, 3}, {1}) == 2
    assert controlled_shutdown_partition_leader_election((1, 2), (1,), {1, 2}, {1}) is None


def test_offline_strategy_clean_isr_is_online_subset_and_epoch_bumps() -> None:
    rc = cluster(topics={"foo": ((1, 2, 3),)})
    ctx = rc.kc.ctx
    ctx.remove_live_brokers([2])
    outcome = leader_for_offline(ctx, tp("foo-0"), LAI, False)
    assert outcome.leader_and_isr == LeaderAndIsr(1, 5, (1, 3), 7)
    assert outcome.recipients == (1, 3)
    ctx.remove_live_brokers([1, 3])
    assert leader_for_offline(ctx, tp("foo-0"), LAI, True).leader_and_isr is None


def test_offline_strategy_unclean_isr_is_the_leader_only() -> None:
    rc = cluster(brokers=(1, 2, 3, 4), topics={"foo": ((1, 2, 4),)})
    ctx = rc.kc.ctx
    outcome = leader_for_offline(ctx, tp("foo-0"), LeaderAndIsr(-1, 3, (3,), 1), True)
    assert (outcome.leader_and_isr, outcome.unclean) == (LeaderAndIsr(1, 4, (1,), 1), True)


def test_offline_strategy_keeps_live_non_assigned_isr_members() -> None:
    rc = cluster(brokers=(1, 2, 3, 4), topics={"foo": ((1, 2),)})
    outcome = leader_for_offline(rc.kc.ctx, tp("foo-0"), LeaderAndIsr(-1, 0, (4, 2), 0), False)
    assert outcome.leader_and_isr == LeaderAndIsr(2, 1, (4, 2), 0)


def test_offline_dir_replica_is_not_online() -> None:
    rc = cluster(topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.replicas_on_offline_dirs[1] = {tp("foo-0")}
    outcome = leader_for_offline(rc.kc.ctx, tp("foo-0"), LAI, False)
    assert outcome.leader_and_isr == LeaderAndIsr(2, 5, (2, 3), 7)


def test_preferred_strategy_sends_to_all_assigned_replicas_live_or_not() -> None:
    rc = cluster(topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.remove_live_brokers([3])
    outcome = leader_for_preferred_replica(rc.kc.ctx, tp("foo-0"), LAI)
    assert outcome.leader_and_isr == LeaderAndIsr(1, 5, (1, 2, 3), 7) and outcome.recipients == (1, 2, 3)


def test_reassign_strategy_uses_target_replicas_28_and_rar_11() -> None:
    rc = cluster(brokers=(1, 2, 3, 4, 5), topics={"foo": ((1, 2, 3),)})
    ctx = rc.kc.ctx
    ctx.update_assignment(tp("foo-0"), ReplicaAssignment((4, 5, 1), (4, 5), (1,)))
    outcome = leader_for_reassign(ctx, KAFKA_2_8, tp("foo-0"), LeaderAndIsr(1, 0, (1, 5, 4), 0))
    assert outcome.leader_and_isr == LeaderAndIsr(4, 1, (1, 5, 4), 0) and outcome.recipients == (4, 5)
    ctx.legacy_reassignments[tp("foo-0")] = (5, 4)
    outcome = leader_for_reassign(ctx, KAFKA_1_1, tp("foo-0"), LeaderAndIsr(1, 0, (1, 5, 4), 0))
    assert outcome.leader_and_isr == LeaderAndIsr(5, 1, (1, 5, 4), 0) and outcome.recipients == (5, 4)


def test_controlled_shutdown_recipients_kafka_7482() -> None:
    rc = cluster(topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.add_shutting_down(1)
    modern = leader_for_controlled_shutdown(rc.kc.ctx, KAFKA_2_8, tp("foo-0"), LAI)
    legacy = leader_for_controlled_shutdown(rc.kc.ctx, KAFKA_1_1, tp("foo-0"), LAI)
    assert modern.leader_and_isr == legacy.leader_and_isr == LeaderAndIsr(2, 5, (2, 3), 7)
    assert modern.recipients == (1, 2, 3), "2.8: the shutting-down broker learns it is no longer leader"
    assert legacy.recipients == (2, 3), "1.1 (KAFKA-7482): it does not"


def test_controlled_shutdown_does_not_remove_dead_isr_members() -> None:
    rc = cluster(topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.add_shutting_down(1)
    rc.kc.ctx.remove_live_brokers([3])
    outcome = leader_for_controlled_shutdown(rc.kc.ctx, KAFKA_2_8, tp("foo-0"), LAI)
    assert outcome.leader_and_isr == LeaderAndIsr(2, 5, (2, 3), 7)


@pytest.mark.parametrize("profile", PROFILES)
def test_controlled_shutdown_when_every_isr_member_shuts_down_leaves_leader(profile: str) -> None:
    rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(2))
    result = rc.handle(ControlledShutdown(1))
    assert leader_and_isr(rc, "foo-0").leader == 1, explain(rc, result=result)
    assert [f.reason.name for f in result.failures] == ["NoEligibleLeader"]


@pytest.mark.parametrize("profile", PROFILES)
def test_unclean_config_applies_only_to_partitions_without_live_isr(profile: str) -> None:
    rc = cluster(profile, controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(2))
    rc.handle(BrokerFailure(1))
    from kcspec.spec.events import BrokerStartup

    rc.handle(BrokerStartup(2))
    assert rc.kc.ctx.partition_state(tp("foo-0")) is PartitionState.OfflinePartition, explain(rc)
    result = rc.handle(UncleanLeaderElectionEnable("foo"))
    if profile == "kafka-2.8":
        assert leader_and_isr(rc, "foo-0").leader == 2 and leader_and_isr(rc, "foo-0").isr == (2,), explain(
            rc
        )
        assert lair(result.requests, 2)
    else:
        assert leader_and_isr(rc, "foo-0").leader == -1, (
            "1.1: no re-trigger, config applies at the next election"
        )
        assert not result.requests
        rc.handle(BrokerStartup(4))
        assert leader_and_isr(rc, "foo-0").leader == 2, explain(rc)


def test_admin_unclean_election_allows_unclean_without_config() -> None:
    rc = cluster(controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(2))
    rc.handle(BrokerFailure(1))
    from kcspec.spec.events import BrokerStartup

    rc.handle(BrokerStartup(2))
    rc.handle(
        ReplicaLeaderElection(
            frozenset({tp("foo-0")}), ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered
        )
    )
    assert leader_and_isr(rc, "foo-0").leader == 2, explain(rc)
