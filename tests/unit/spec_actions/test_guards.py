"""Guards: events that cannot happen in a state raise ``EventNotEnabled``; profile-only events are absent."""

from __future__ import annotations

import dataclasses

import pytest
from kcspec.model.step import EventNotEnabled, SpecMachine
from kcspec.spec.actions import registry
from kcspec.spec.events import (
    EVENT_TYPES,
    ApiPartitionReassignment,
    BrokerBounce,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerChange,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrResponseReceived,
    PartitionExpansion,
    ReplicaLeaderElection,
    StopReplicaResponseReceived,
    TopicCreation,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, ZkFault

from tests.support.spec_scenarios import PROFILES, Scenario, start, tp, with_topic


@pytest.mark.parametrize("profile", PROFILES)
def test_one_action_per_event_kind(profile: str) -> None:
    actions = registry.build(get_profile(profile))
    expected = {e.kind for e in EVENT_TYPES}
    if profile == "kafka-1.1":
        # KIP-455, KIP-497; admin elections (and so their queue) are KIP-460's
        expected -= {
            "ApiPartitionReassignment",
            "StaleAlterIsrReceived",
            "ReplicaLeaderElectionQueued",
            "ControlledShutdownQueued",
            "ApiPartitionReassignmentQueued",
            "ListPartitionReassignmentsQueued",
            "QueuedEventProcessed",
        }
    assert set(actions) == expected, f"{profile}: {sorted(set(actions) ^ expected)}"
    for name, action in actions.items():
        event = next(e for e in EVENT_TYPES if e.kind == name)
        assert [p.name for p in action.params] == [f.name for f in dataclasses.fields(event)], name


def _refused(s: Scenario, event: ControllerEvent) -> None:
    with pytest.raises(EventNotEnabled):
        s.machine.step(s.state, event)


@pytest.mark.parametrize("profile", PROFILES)
def test_without_controller(profile: str) -> None:
    s = Scenario(profile).run(BrokerStartup(1))
    for event in (
        ControllerResignation(),
        ControllerChange(),
        ControlledShutdown(1),
        ReplicaLeaderElection(frozenset({tp("t")})),
        LeaderAndIsrResponseReceived(1, (tp("t"),)),
    ):
        _refused(s, event)
    _refused(s, ControllerFailover(7))
    _refused(s, BrokerStartup(1))
    _refused(s, BrokerStartup(-1))
    _refused(s, BrokerFailure(2))


@pytest.mark.parametrize("profile", PROFILES)
def test_topic_and_partition_guards(profile: str) -> None:
    s = with_topic(profile, "t", [[1, 2]])
    _refused(s, TopicCreation("t", ((1,),)))
    _refused(s, TopicCreation("u", ()))
    _refused(s, TopicCreation("u", ((1, 1),)))
    _refused(s, TopicCreation("u", ((),)))
    _refused(s, PartitionExpansion("t", ((1, 2),)))
    _refused(s, PartitionExpansion("t", ((2, 1), (3,))))
    _refused(s, PartitionExpansion("u", ((1,), (2,))))
    _refused(s, StopReplicaResponseReceived(1, (tp("t"),)))
    _refused(s, BrokerBounce(1))
    _refused(s, IsrChange(tp("t"), (2,)))
    _refused(s, IsrChange(tp("t"), (1, 1)))
    _refused(s, ZombieControllerWrite(tp("t"), 1, (1,), 1))
    _refused(s, ZkPartitionReassignment(FMap()))
    s.run(ZkFaultInjection(tp("t"), ZkFault.BADVERSION))
    _refused(s, ZkFaultInjection(tp("t"), ZkFault.CONNECTIONLOSS))


def test_profile_only_events() -> None:
    s = start("kafka-1.1")
    _refused(s, ApiPartitionReassignment(FMap({tp("t"): (1,)})))
    _refused(
        s,
        ReplicaLeaderElection(
            frozenset({tp("t")}), ElectionType.PREFERRED, ElectionTrigger.AdminClientTriggered
        ),
    )
    s28 = start("kafka-2.8")
    s28.run(
        ReplicaLeaderElection(
            frozenset({tp("t")}), ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered
        )
    )
    for profile in PROFILES:
        s = start(profile)
        _refused(
            s, ReplicaLeaderElection(frozenset({tp("t")}), ElectionType.UNCLEAN, ElectionTrigger.ZkTriggered)
        )
        _refused(s, ReplicaLeaderElection(frozenset({tp("t")}), trigger=ElectionTrigger.AutoTriggered))


def test_enabled_matches_step() -> None:
    m = SpecMachine("kafka-2.8")
    assert not m.enabled(ClusterState(), BrokerFailure(1))
    assert m.enabled(ClusterState(), BrokerStartup(1))
