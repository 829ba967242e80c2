"""ZooKeeper ``create`` faults: ``createTopicPartitionStatesRaw`` throwing while partitions go NewPartition →
OnlinePartition (§5.2a step 4), on the spec and on the reference controller."""

from __future__ import annotations

import pytest
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.model.step import SpecMachine
from kcspec.spec.events import (
    BrokerBounce,
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    TopicCreation,
    ZkFaultInjection,
)
from kcspec.spec.requests import FailureReason, LeaderAndIsrRequest, StateChangeFailure
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import PartitionState, TopicPartition, ZkFault

TP = TopicPartition("t", 0)
EVENTS: tuple[ControllerEvent, ...] = (
    BrokerStartup(0),
    ControllerFailover(0),
    TopicCreation("t", ((1,),)),  # broker 1 is down: t-0 stays NewPartition, without a state znode
    ZkFaultInjection(TP, ZkFault.CONNECTIONLOSS),  # armed on the path of the znode still to be created
    BrokerStartup(1),  # onBrokerStartup: t-0 New → Online, whose create throws
)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_create_exception_leaves_partitions_new(profile: str) -> None:
    """``PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransitionZkUtilsExceptionFromCreateStates``:
    ``createTopicPartitionStatesRaw`` throws; the partition stays NewPartition, logged as failed with target
    NewPartition (Kafka's quirk, §5.2a step 4), no state znode, no leadership, no LeaderAndIsr; the fault is
    consumed, so the next attempt (a bounce, 2.8) creates the znode."""
    outcome = crosscheck("create-fault", profile, (*EVENTS, BrokerBounce(1)))
    assert outcome.ok, outcome.report()
    machine = SpecMachine(profile)
    state = ClusterState()
    for event in EVENTS:
        result = machine.step(state, event)
        state = result.state
    assert state.controller.partition_states[TP] is PartitionState.NewPartition, state
    assert TP not in state.zk.partition_states and TP not in state.controller.leadership, state
    assert not state.zk.faults, state
    assert (
        StateChangeFailure("partition", TP, -1, "NewPartition", "NewPartition", FailureReason.ZkError)
        in result.failures
    ), result.failures
    assert not any(isinstance(r, LeaderAndIsrRequest) for r in result.requests), result.requests
    if profile == "kafka-2.8":
        bounced = machine.step(state, BrokerBounce(1)).state
        assert bounced.controller.partition_states[TP] is PartitionState.OnlinePartition, bounced


def test_badversion_cannot_wait_on_a_missing_znode() -> None:
    """Only a connection loss can be armed on the path of a state znode still to be created (a BADVERSION needs a
    znode to set)."""
    machine = SpecMachine("kafka-2.8")
    state = ClusterState()
    for event in EVENTS[:3]:
        state = machine.step(state, event).state
    assert machine.enabled(state, ZkFaultInjection(TP, ZkFault.CONNECTIONLOSS))
    assert not machine.enabled(state, ZkFaultInjection(TP, ZkFault.BADVERSION))
