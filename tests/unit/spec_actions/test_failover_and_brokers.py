"""§7.1 failover, §7.2–§7.4 broker startup/failure/bounce, §7.12 resignation, §9 zombie controllers."""

from __future__ import annotations

import pytest
from kcspec.spec.events import (
    BrokerBounce,
    BrokerFailure,
    BrokerStartup,
    ControllerChange,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrResponseReceived,
    NewerControllerElected,
    TopicCreation,
    ZombieControllerWrite,
)
from kcspec.spec.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from kcspec.spec.state import ControllerContext
from kcspec.spec.vocabulary import PartitionReplica, PartitionState, ReplicaState

from tests.support.spec_scenarios import PROFILES, Scenario, start, tp, with_topic

T0 = tp("t", 0)


@pytest.mark.parametrize("profile", PROFILES)
def test_first_failover(profile: str) -> None:
    s = start(profile)
    c = s.state.controller
    s.expect_eq((c.controller_id, c.epoch, c.epoch_zk_version), (1, 1, 1), "controller id/epoch/version")
    s.expect_eq((s.state.zk.controller, s.state.zk.controller_epoch), (1, 1), "ZK /controller and epoch")
    s.expect_eq(dict(c.live_brokers), dict(s.state.zk.brokers), "live brokers with epochs")
    s.expect_eq(s.umr_recipients(), {1, 2, 3}, "step 6 UMR recipients")
    s.expect(all(not r.partition_states for r in s.requests(UpdateMetadataRequest)), "broker-list UMR only")


@pytest.mark.parametrize("profile", PROFILES)
def test_topic_creation_then_leader_failure(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3]])
    s.expect_eq(s.znode(T0), s.cached(T0), "cache = ZK after creation")
    s.expect_eq((s.znode(T0).leader, s.znode(T0).leader_epoch, s.znode(T0).isr), (1, 0, (1, 2, 3)), "new LI")
    s.expect_eq(s.lair_recipients(T0), {1, 2, 3}, "LAIR(isNew) to the ISR")
    s.expect(all(ps.is_new for b in (1, 2, 3) for ps in s.lair_states(b, T0)), "isNew = true")
    s.run(BrokerFailure(1))
    s.expect_eq(s.state.controller.controller_id, -1, "the controller died with its broker")
    s.expect_eq(s.state.zk.controller, -1, "/controller removed with the broker")
    s.run(ControllerFailover(2))
    li = s.znode(T0)
    # 2.8 replica startup moves the dead leader offline first (leader −1, epoch +1), then the election (+1).
    expected = (2, 2, (2, 3)) if profile == "kafka-2.8" else (2, 1, (2, 3))
    s.expect_eq((li.leader, li.leader_epoch, li.isr), expected, "leader/epoch/ISR after failover")
    s.expect_eq(s.state.controller.epoch, 2, "second controller epoch")
    dead = s.state.controller.replica_states[PartitionReplica(T0, 1)]
    want = ReplicaState.OfflineReplica if profile == "kafka-2.8" else ReplicaState.ReplicaDeletionIneligible
    s.expect_eq(dead, want, "initial state of the dead replica (§4.8)")


@pytest.mark.parametrize("profile", PROFILES)
def test_follower_failure_and_restart(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3]]).run(BrokerFailure(3))
    li = s.znode(T0)
    s.expect_eq((li.leader, li.leader_epoch, li.isr), (1, 1, (1, 2)), "follower removed from ISR, epoch +1")
    s.expect_eq(s.state.controller.replica_states[PartitionReplica(T0, 3)], ReplicaState.OfflineReplica, "RS")
    s.expect_eq(s.lair_recipients(T0), {1, 2}, "LAIR to the other assigned replicas (dead one dropped)")
    # P_off = ∅ → broker-list UMR to everyone live.
    s.expect(
        any(not r.partition_states for r in s.requests(UpdateMetadataRequest)) or profile == "kafka-1.1",
        "broker-list UMR",
    )
    s.run(BrokerStartup(3))
    s.expect_eq(
        s.state.controller.replica_states[PartitionReplica(T0, 3)], ReplicaState.OnlineReplica, "back"
    )
    s.expect_eq(s.lair_recipients(T0), {3}, "LAIR(isNew=false) to the restarted broker only")
    s.expect(not any(ps.is_new for ps in s.lair_states(3, T0)), "isNew = false")
    umrs = s.requests(UpdateMetadataRequest)
    if profile == "kafka-2.8":
        s.expect(
            any(r.broker == 1 and not r.partition_states for r in umrs)
            and all(r.partition_states for r in umrs if r.broker == 3),
            "KAFKA-7537: broker list to existing brokers, partitions to the new one",
        )
    else:
        s.expect(all(r.partition_states for r in umrs), "1.1: every UMR carries all partitions")


@pytest.mark.parametrize("profile", PROFILES)
def test_kafka_13225_umr_condition(profile: str) -> None:
    s = with_topic(profile, "t", [[2]]).run(BrokerFailure(2))
    s.expect_eq(s.state.controller.partition_states[T0], PartitionState.OfflinePartition, "offline partition")
    # Broker 3 hosts nothing, but P_off = {t-0} ≠ ∅ and no election succeeds: the brokers never learn that 3 is
    # gone (KAFKA-13225, present in 2.8.2; same condition in 1.1).
    s.run(BrokerFailure(3))
    s.expect_eq(s.last.requests, frozenset(), "no UMR carrying the new broker list")
    s = with_topic(profile, "t", [[1, 2]]).run(BrokerFailure(3))
    s.expect_eq(s.umr_recipients(), {1, 2}, "P_off = ∅: broker-list UMR to every live broker")


def test_bounce_is_failure_then_startup_in_2_8_only() -> None:
    s = with_topic("kafka-2.8", "t", [[2, 1, 3]]).run(BrokerBounce(2))
    li = s.znode(T0)
    s.expect_eq((li.leader, li.leader_epoch, li.isr), (1, 1, (1, 3)), "bounced leader replaced")
    s.expect_eq(s.state.controller.live_brokers[2], s.state.zk.brokers[2], "new broker epoch cached")
    s.expect(2 in s.lair_recipients(T0), "restarted broker gets a LAIR")
    old = with_topic("kafka-1.1", "t", [[2, 1, 3]])
    before = old.state.controller
    old.run(BrokerBounce(2))
    old.expect_eq(old.state.controller, before, "1.1: bounce invisible")
    old.expect(not old.last.requests, "1.1: no requests")


@pytest.mark.parametrize("profile", PROFILES)
def test_resignation_and_controller_change(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]]).run(ControllerResignation())
    s.expect_eq(s.state.controller, ControllerContext(), "context reset")
    s.expect_eq(s.state.zk.controller, -1, "/controller deleted")
    s.expect(s.state.zk.partition_states, "ZK keeps its data")
    s = with_topic(profile, "t", [[1, 2]]).run(NewerControllerElected(2))
    s.expect_eq(s.state.controller.controller_id, 1, "zombie still acting")
    s.run(ControllerChange())
    s.expect_eq(s.state.controller, ControllerContext(), "zombie resigned")


def test_zombie_write_fenced_in_2_8_and_not_in_1_1() -> None:
    for profile, changed in (("kafka-2.8", False), ("kafka-1.1", True)):
        s = with_topic(profile, "t", [[1, 2]]).run(NewerControllerElected(2))
        before = s.znode(T0)
        s.run(ZombieControllerWrite(T0, 2, (2,), 1))
        after = s.znode(T0)
        s.expect_eq(after != before, changed, "zombie write went through")
        if changed:
            s.expect_eq((after.leader, after.leader_epoch, after.zk_version), (2, 1, 1), "1.1 zombie record")


def test_zombie_controller_moved_exception_in_2_8() -> None:
    s = with_topic("kafka-2.8", "t", [[1, 2, 3]]).run(NewerControllerElected(2))
    before = s.znode(T0)
    s.run(BrokerFailure(3))
    s.expect_eq(s.znode(T0), before, "fenced: ISR removal not written")
    s.expect_eq(s.state.controller, ControllerContext(), "ControllerMovedException → resignation")
    s = with_topic("kafka-1.1", "t", [[1, 2, 3]]).run(NewerControllerElected(2), BrokerFailure(3))
    s.expect_eq(s.znode(T0).isr, (1, 2), "1.1 zombie writes the ISR change")
    s.expect_eq(s.state.controller.controller_id, 1, "1.1 zombie keeps acting")


@pytest.mark.parametrize("profile", PROFILES)
def test_log_dir_failure(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3]]).run(LeaderAndIsrResponseReceived(1, (T0,)))
    s.expect(PartitionReplica(T0, 1) in s.state.controller.offline_replicas, "replica marked offline")
    li = s.znode(T0)
    s.expect_eq((li.leader, li.isr), (2, (2, 3)), "leader in an offline dir replaced")
    s.expect(
        s.sr_states(1, T0) and not s.sr_states(1, T0)[0].delete_partition, "SR(delete=false) to broker 1"
    )
    s.run(BrokerStartup(4), TopicCreation("u", ((1, 4),)))
    s.expect_eq(s.znode(tp("u")).leader, 1, "other partitions of broker 1 unaffected")


@pytest.mark.parametrize("profile", PROFILES)
def test_isr_change_then_failover_reads_zk(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2, 3]]).run(IsrChange(T0, (1, 2)))
    li = s.znode(T0)
    s.expect_eq((li.leader_epoch, li.isr, li.zk_version), (0, (1, 2), 1), "ISR-only change keeps the epoch")
    s.expect_eq(s.cached(T0), li, "cache refreshed from ZK")
    s.expect_eq(s.umr_recipients(), {1, 2, 3}, "UMR for the partition")
    s.expect(not s.requests(LeaderAndIsrRequest) and not s.requests(StopReplicaRequest), "no LAIR/SR")
    s.run(ControllerFailover(2))
    s.expect_eq(s.cached(T0), s.znode(T0), "failover caches ZK exactly")


def test_history_is_recorded() -> None:
    s = Scenario("kafka-2.8").run(BrokerStartup(1))
    assert "BrokerStartup(broker_id=1)" in s.describe()
