"""§7.9 elections, §6 unclean config trigger, §7.10 controlled shutdown, §7.11 AlterIsr, §3.3 faults."""

from __future__ import annotations

import pytest
from kcspec.spec.events import (
    AutoPreferredReplicaLeaderElection,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerFailover,
    IsrChange,
    ReplicaLeaderElection,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
)
from kcspec.spec.requests import LeaderAndIsrRequest
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, PartitionReplica, ReplicaState, ZkFault

from tests.support.spec_scenarios import PROFILES, Scenario, tp, with_topic

T0 = tp("t", 0)


def moved_away(profile: str, rejoined: bool = True) -> Scenario:
    """t-0 on [2, 3] (controller 1): broker 2 fails and restarts, so 3 leads; ``rejoined``: 2 is back in the ISR."""
    s = with_topic(profile, "t", [[2, 3]]).run(BrokerFailure(2), BrokerStartup(2))
    s.expect_eq(s.znode(T0).leader, 3, "leadership moved away")
    return s.run(IsrChange(T0, (3, 2))) if rejoined else s


@pytest.mark.parametrize("profile", PROFILES)
def test_preferred_election_zk_triggered(profile: str) -> None:
    s = moved_away(profile).run(ReplicaLeaderElection(frozenset({T0})))
    s.expect_eq(s.znode(T0).leader, 2, "preferred replica leads again")
    s.expect_eq(s.state.zk.preferred_replica_election, frozenset(), "znode deleted")
    epoch = s.znode(T0).leader_epoch
    s.run(ReplicaLeaderElection(frozenset({T0})))
    # 2.8 skips partitions already led by their preferred replica; 1.1 re-elects and bumps the epoch.
    s.expect_eq(s.znode(T0).leader_epoch, epoch + (0 if profile == "kafka-2.8" else 1), "already preferred")


@pytest.mark.parametrize("profile", PROFILES)
def test_auto_rebalance(profile: str) -> None:
    s = moved_away(profile).run(AutoPreferredReplicaLeaderElection())
    s.expect_eq(s.znode(T0).leader, 2, "imbalance fixed")
    s.expect_eq(s.state.zk.preferred_replica_election, frozenset(), "auto elections leave no znode")


def test_auto_rebalance_isr_check_kafka_9866() -> None:
    for profile, attempted in (("kafka-2.8", False), ("kafka-1.1", True)):
        s = moved_away(profile, rejoined=False).run(AutoPreferredReplicaLeaderElection())
        s.expect_eq(
            bool(s.last.failures), attempted, f"{profile}: election attempted with preferred not in ISR"
        )
        s.expect_eq(s.znode(T0).leader, 3, "leader unchanged")


def test_unclean_election() -> None:
    s = with_topic("kafka-2.8", "t", [[2, 3]]).run(IsrChange(T0, (2,)), BrokerFailure(2))
    s.expect_eq(s.znode(T0).leader, -1, "no clean leader")
    s.run(ReplicaLeaderElection(frozenset({T0}), ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered))
    s.expect_eq((s.znode(T0).leader, s.znode(T0).isr), (3, (3,)), "admin unclean election")
    for profile, elected in (("kafka-2.8", True), ("kafka-1.1", False)):
        s = with_topic(profile, "t", [[2, 3]]).run(IsrChange(T0, (2,)), BrokerFailure(2))
        s.run(UncleanLeaderElectionEnable("t"))
        s.expect_eq(s.znode(T0).leader == 3, elected, f"{profile}: config change re-triggers elections")
        s.run(BrokerStartup(4))
        s.expect_eq(s.znode(T0).leader, 3, "the next trigger reads the config")


@pytest.mark.parametrize("profile", PROFILES)
def test_controlled_shutdown(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3], [2, 3, 1]]).run(ControlledShutdown(2))
    t1 = tp("t", 1)
    s.expect_eq(s.state.controller.shutting_down, frozenset({2}), "marked shutting down")
    s.expect_eq(
        (s.znode(t1).leader, s.znode(t1).isr), (3, (3, 1)), "led partition moved, ISR − shutting down"
    )
    got_lair = any(ps.tp == t1 for r in s.requests(LeaderAndIsrRequest, 2) for ps in r.partition_states)
    s.expect_eq(got_lair, profile == "kafka-2.8", "KAFKA-7482: LAIR to the shutting-down broker")
    s.expect_eq(
        s.state.controller.replica_states[PartitionReplica(T0, 2)], ReplicaState.OfflineReplica, "follower"
    )
    s.expect_eq(s.znode(T0).isr, (1, 3), "follower left the ISR")
    s.expect(s.sr_states(2, T0), "SR(delete=false) to the follower")


def test_controlled_shutdown_stale_epoch_ignored_in_2_8() -> None:
    s = with_topic("kafka-2.8", "t", [[2, 1]]).run(ControlledShutdown(2, 0))
    s.expect_eq(s.state.controller.shutting_down, frozenset(), "stale broker epoch rejected")


def test_alter_isr_and_stale_leader_epoch() -> None:
    s = with_topic("kafka-2.8", "t", [[1, 2, 3]]).run(IsrChange(T0, (1, 3)))
    li = s.znode(T0)
    s.expect_eq(
        (li.leader_epoch, li.isr, li.zk_version), (0, (1, 3), 1), "AlterIsr keeps the epoch, version +1"
    )
    s.run(IsrChange(T0, (1, 3)))
    s.expect_eq(s.znode(T0).zk_version, 1, "idempotent AlterIsr writes nothing")


@pytest.mark.parametrize("profile", PROFILES)
def test_badversion_fault_is_retried(profile: str) -> None:
    s = with_topic(profile, "t", [[2, 3, 1]]).run(ZkFaultInjection(T0, ZkFault.BADVERSION), BrokerFailure(2))
    li = s.znode(T0)
    s.expect_eq((li.leader, li.leader_epoch), (3, 1), "election retried after BADVERSION")
    s.expect(T0 not in s.state.zk.faults, "fault consumed")


@pytest.mark.parametrize("profile", PROFILES)
def test_connection_loss_on_failover_triggers_controller_move(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]]).run(
        ZkFaultInjection(T0, ZkFault.CONNECTIONLOSS), ControllerFailover(2)
    )
    s.expect_eq(s.state.controller.controller_id, -1, "failover threw: triggerControllerMove resigned")
    s.expect_eq(s.state.zk.controller, -1, "/controller deleted")
    s.run(ControllerFailover(2))
    s.expect_eq(s.state.controller.controller_id, 2, "the next election works")
