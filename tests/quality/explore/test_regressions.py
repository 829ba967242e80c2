"""Regression corpus: minimal event sequences on which the spec and the reference controller once disagreed
(or an invariant was mis-stated), each found by exploration or stateful testing. Every sequence must now run
with both implementations agreeing and every invariant holding, in both profiles."""

from __future__ import annotations

import pytest
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.spec.events import (
    ApiPartitionReassignment,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    NewerControllerElected,
    PartitionExpansion,
    StopReplicaResponseReceived,
    TopicCreation,
    TopicDeletion,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import TopicPartition, ZkFault

T0 = TopicPartition("t0", 0)


def _interrupted_removal_keeps_replica_state(profile: str) -> list[ControllerEvent]:
    """Found by stateful testing (2.8): cancelling an API reassignment whose partition znode fails with
    CONNECTIONLOSS aborts the adding replica's removal after the assignment is reverted, so replica 3 keeps
    NewReplica outside AR — why "replica states belong to assigned replicas" is not an invariant. (1.1 has no
    cancellation: the same ZooKeeper fault during a ZooKeeper reassignment is run there and must agree too.)"""
    tp = TopicPartition("t1", 0)
    setup: list[ControllerEvent] = [
        *(BrokerStartup(b) for b in range(4)),
        ControllerFailover(0),
        TopicCreation("t1", ((0, 1, 2),)),
    ]
    if profile == "kafka-1.1":
        return [
            *setup,
            ZkFaultInjection(tp, ZkFault.CONNECTIONLOSS),
            ZkPartitionReassignment(FMap({tp: (2, 3, 0)})),
        ]
    return [
        *setup,
        ApiPartitionReassignment(FMap({tp: (2, 3, 0)})),
        ZkFaultInjection(tp, ZkFault.CONNECTIONLOSS),
        ApiPartitionReassignment(FMap({tp: None})),
    ]


def _alter_isr_completes_reassignment(profile: str) -> list[ControllerEvent]:
    """Found by ``kcspec explore`` (depth 3): an ISR change that puts every target replica in the ISR completes the
    reassignment even though the replica being removed is not in the ISR (§7.11, §7.7.1: TRS ⊆ ZK ISR)."""
    return [
        *(BrokerStartup(b) for b in range(3)),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1),)),
        ControlledShutdown(0),
        ZkPartitionReassignment(FMap({T0: (1, 2)})),
        IsrChange(T0, (1, 2)),
    ]


def _failover_that_throws(profile: str) -> list[ControllerEvent]:
    """Found by stateful testing: resuming a reassignment of a partition that never got a leader makes the failover
    throw, so the new controller resigns within the step (§7.1 step 3); its requests still carry its epoch (I9)."""
    t01 = TopicPartition("t0", 1)
    reassign: ControllerEvent = (
        ApiPartitionReassignment(FMap({t01: (2, 3, 0)}))
        if profile == "kafka-2.8"
        else ZkPartitionReassignment(FMap({t01: (2, 3, 0)}))
    )
    return [
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1, 2), (1, 2, 3))),
        TopicCreation("t1", ((1, 2, 3), (2, 3, 0))),
        reassign,
        BrokerFailure(0),
        BrokerStartup(0),
        TopicDeletion(("t0",)),
        ControllerFailover(0),
    ]


def _deletion_drops_topic_config(profile: str) -> list[ControllerEvent]:
    """Found by stateful testing (swarm): completing a topic deletion deletes ``/config/topics/<t>``, so the topic's
    ``unclean.leader.election.enable`` override is gone (§8 completeDeleteTopic)."""
    return [
        *(BrokerStartup(b) for b in range(3)),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1, 2),)),
        UncleanLeaderElectionEnable("t0"),
        TopicDeletion(("t0",)),
        *(StopReplicaResponseReceived(b, (T0,)) for b in range(3)),
        TopicCreation("t0", ((2, 1, 0),)),
        BrokerFailure(2),
        BrokerFailure(1),
        BrokerFailure(0),
    ]


def _restore_keeps_topic_config(profile: str) -> list[ControllerEvent]:
    """Found by stateful testing: adding partitions to a topic queued for deletion whose partitions never had a
    leader restores its znode to no partitions (KAFKA-6612, §7.6) — the topic still exists, so its config override
    stays."""
    return [
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1, 2),)),
        TopicCreation("t1", ((1, 2, 3),)),
        TopicDeletion(("t1",)),
        UncleanLeaderElectionEnable("t1"),
        PartitionExpansion("t1", ((1, 2, 3), (2, 3, 0))),
    ]


def _restore_keeps_topic_znode(profile: str) -> list[ControllerEvent]:
    """Found by ``kcspec fuzz --budget 60s --seed 887560551`` (W10 violated, 2.8): adding a partition to a topic
    queued for deletion whose only partition never got a state znode restores the topic znode to no partitions
    (KAFKA-6612, §7.6) while its replica on broker 1 is being deleted. When the topic's existence was read from its
    partitions, the next TopicChange took t1 for deleted and dropped it from the deletion queue with the replica
    still in ReplicaDeletionStarted. The topic znode exists apart from its partitions: t1 stays, a second
    TopicCreation of t1 is not enabled, and the StopReplica response completes the deletion, which deletes the znode
    so that t1 can be created again. (1.1 neither restores nor resumes the deletion at the broker's startup: the
    sequence up to the second TopicCreation must agree there too.)"""
    events: list[ControllerEvent] = [
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t1", ((1,),)),
        TopicDeletion(("t1",)),
        BrokerStartup(1),
        PartitionExpansion("t1", ((1,), (0,))),
        TopicCreation("t2", ((0,),)),
    ]
    if profile == "kafka-1.1":
        return events
    return [*events, StopReplicaResponseReceived(1, (TopicPartition("t1", 0),)), TopicCreation("t1", ((0,),))]


def _fenced_offline_move_stops_at_the_broker(profile: str) -> list[ControllerEvent]:
    """Found by exploration under IBP 2.6-IV0 (3 brokers, RF 2, ZooKeeper and controller faults; it fails under
    every IBP): a zombie controller deletes t0, whose reassignment (0, 1) → (1, 2) left replica 2 in the assignment
    with no replica state (its znode read failed with CONNECTIONLOSS). Moving the topic's replicas to
    OfflineReplica, the ISR write for broker 0's replica is fenced (ControllerMovedException) and the call ends:
    Kafka checks the transitions of each broker's replicas as it reaches that broker (``groupBy(_.replica)``, then
    ``doHandleStateChanges``), so replica 2's invalid NonExistentReplica → OfflineReplica is never logged. The spec
    once checked every replica before the first broker and logged it."""
    return [
        *(BrokerStartup(b) for b in range(3)),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1),)),
        ZkFaultInjection(T0, ZkFault.CONNECTIONLOSS),
        ZkPartitionReassignment(FMap({T0: (1, 2)})),
        NewerControllerElected(1),
        TopicDeletion(("t0",)),
    ]


CASES = {
    "fenced-offline-move-stops-at-the-broker": _fenced_offline_move_stops_at_the_broker,
    "restore-keeps-topic-znode": _restore_keeps_topic_znode,
    "restore-keeps-topic-config": _restore_keeps_topic_config,
    "alter-isr-completes-reassignment": _alter_isr_completes_reassignment,
    "failover-that-throws": _failover_that_throws,
    "deletion-drops-topic-config": _deletion_drops_topic_config,
    "interrupted-removal-keeps-replica-state": _interrupted_removal_keeps_replica_state,
}


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name: str, profile: str) -> None:
    outcome = crosscheck(name, profile, tuple(CASES[name](profile)))
    assert outcome.ok, outcome.report()


def test_kafka_1_1_controlled_shutdown_elects_for_a_topic_queued_for_deletion() -> None:
    """Found as a counterexample to induction (``kcspec prove --induction``), an expected one: 1.1 controlled
    shutdown acts on the *cached* leader and has no deletion filter (§7.10), and a zombie controller (no fencing in
    1.1, KAFKA-6082) has rewritten the znode's leader, so I13's 1.1 exemption (stated over the znode's leader)
    does not apply. Both implementations agree on every step; I13 is violated at the last one, in 1.1 only."""
    tp = TopicPartition("t", 0)
    events = (
        *(BrokerStartup(b) for b in range(3)),
        ControllerFailover(0),
        TopicCreation("t", ((0, 1, 2),)),
        BrokerFailure(2),
        ControllerResignation(),
        TopicDeletion(("t",)),
        # t is queued for deletion and ineligible (a replica is offline): t-0 keeps leader 0
        ControllerFailover(0),
        ZombieControllerWrite(tp, -1, (0, 1), 1),
        ControlledShutdown(0, -1),
    )
    agree = crosscheck("zombie-then-controlled-shutdown", "kafka-1.1", events, check_invariants=False)
    assert agree.ok, agree.report()
    outcome = crosscheck("zombie-then-controlled-shutdown", "kafka-1.1", events)
    assert outcome.divergence is not None and outcome.divergence.kind == "invariant", outcome.report()
    assert outcome.divergence.step == len(events)
    assert [v.name.split()[0] for v in outcome.divergence.violations] == ["I13"]
    fenced = crosscheck("zombie-then-controlled-shutdown", "kafka-2.8", events)  # 2.8 fences the zombie
    assert fenced.ok, fenced.report()


def test_a_topic_znode_restored_to_no_partitions_still_exists() -> None:
    """The state after the KAFKA-6612 restore of ``restore-keeps-topic-znode`` (2.8): t1's topic znode has no
    partition and t1 is still known and queued for deletion on both engines."""
    events = _restore_keeps_topic_znode("kafka-2.8")[:7]
    for sut in (ReferenceSut(), SpecSut()):
        state = ClusterState()
        sut.hello("kafka-2.8")
        sut.load(state)
        for event in events:
            reply = sut.event(event)
            assert isinstance(reply, m.StepReply), (type(sut).__name__, event, reply)
            state = reply.state
        zk, ctx = state.zk, state.controller
        assert "t1" in zk.topics and not any(tp.topic == "t1" for tp in zk.assignments), (
            type(sut).__name__,
            zk,
        )
        assert "t1" in ctx.all_topics and "t1" in ctx.topics_to_be_deleted, (type(sut).__name__, ctx)
