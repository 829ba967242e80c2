"""The broker-response variants: a StopReplica response with some partitions in error and a LeaderAndIsr response
with partitions answered NONE. The spec and the reference controller must agree on them step by step, on their
effect, and on when they cannot happen."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.conformance.scenarios import SCENARIOS_BY_NAME, cluster, tp
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import (
    ControllerEvent,
    LeaderAndIsrPartitionResultsReceived,
    LeaderAndIsrResponseReceived,
    StaleAlterIsrReceived,
    StopReplicaPartitionErrorsReceived,
    TopicCreation,
    TopicDeletion,
)
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState, ControllerContext
from kcspec.spec.vocabulary import PartitionReplica, ReplicaState

PROFILES = ("kafka-2.8", "kafka-1.1")
E0, E1, E2, F0, F1 = tp("e", 0), tp("e", 1), tp("e", 2), tp("f", 0), tp("f", 1)


def _run(profile: str, events: list[ControllerEvent]) -> tuple[ClusterState, list[StepResult]]:
    """Run ``events`` on the spec and the reference controller side by side; both must accept and agree."""
    spec, ref = SpecMachine(profile), ReferenceController(profile)
    state = ClusterState()
    results = []
    for event in events:
        assert spec.enabled(state, event) and ref.enabled(event), event
        expected, actual = spec.step(state, event), ref.handle(event)
        assert actual == expected, f"{profile}: {event} differs"
        results.append(expected)
        state = expected.state
    return state, results


def _deleting(profile: str) -> list[ControllerEvent]:
    return [*cluster(3), TopicCreation("e", ((0, 1), (1, 2), (1, 0))), TopicDeletion(("e",))]


def _offline(profile: str) -> list[ControllerEvent]:
    return [*cluster(3), TopicCreation("f", ((2, 0), (0, 2))), LeaderAndIsrResponseReceived(2, (F0, F1))]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_partition_errors_scenario_agrees_step_by_step(profile: str) -> None:
    scenario = SCENARIOS_BY_NAME["partition-errors"]
    outcome = crosscheck(scenario.name, profile, scenario.events(profile))
    assert outcome.divergence is None, outcome.divergence


@pytest.mark.parametrize("profile", PROFILES)
def test_a_stop_replica_response_fails_the_partitions_in_error_and_completes_the_others(profile: str) -> None:
    state, _ = _run(
        profile, [*_deleting(profile), StopReplicaPartitionErrorsReceived(1, (E0, E1, E2), (E1,))]
    )
    states = state.controller.replica_states
    assert states[PartitionReplica(E1, 1)] is ReplicaState.ReplicaDeletionIneligible
    assert states[PartitionReplica(E0, 1)] is ReplicaState.ReplicaDeletionSuccessful
    assert states[PartitionReplica(E2, 1)] is ReplicaState.ReplicaDeletionSuccessful
    assert "e" in state.controller.topics_ineligible_for_deletion


@pytest.mark.parametrize("profile", PROFILES)
def test_partitions_answered_none_leave_the_offline_replicas(profile: str) -> None:
    back = LeaderAndIsrPartitionResultsReceived(2, (F0,), (F1,))
    state, results = _run(profile, [*_offline(profile), back])
    assert state.controller.offline_replicas == frozenset({PartitionReplica(F1, 2)})
    assert results[-1].requests == frozenset(), "f-1 was offline already: nothing newly offline"
    again = LeaderAndIsrPartitionResultsReceived(2, (F1,), (F0,))
    state, results = _run(profile, [*_offline(profile), back, again])
    assert state.controller.offline_replicas == frozenset({PartitionReplica(F0, 2)})
    assert results[-1].requests, "f-0 is newly offline: onReplicasBecomeOffline sends requests"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("setup", "event"),
    [
        (_deleting, StopReplicaPartitionErrorsReceived(1, (E0, E1, E2), (E0, E1, E2))),  # all in error
        (_deleting, StopReplicaPartitionErrorsReceived(1, (E0, E1), ())),  # none in error
        (_deleting, StopReplicaPartitionErrorsReceived(1, (E0, E1), (E2,))),  # an error for an unlisted one
        (_deleting, StopReplicaPartitionErrorsReceived(2, (E0, E1), (E1,))),  # e-0 has no replica on 2
        (_offline, StopReplicaPartitionErrorsReceived(2, (F0, F1), (F1,))),  # nothing is being deleted
        (_offline, LeaderAndIsrPartitionResultsReceived(2, (), (F0,))),  # nothing answered NONE
        (
            _offline,
            LeaderAndIsrPartitionResultsReceived(2, (F0,), (F0,)),
        ),  # NONE and an error for one partition
        (_offline, LeaderAndIsrPartitionResultsReceived(1, (F0,))),  # broker 1 holds no replica of f-0
        (_offline, LeaderAndIsrPartitionResultsReceived(5, (F0,))),  # an unknown broker
    ],
)
def test_both_implementations_refuse_what_cannot_happen(
    profile: str, setup: object, event: ControllerEvent
) -> None:
    events = setup(profile)  # type: ignore[operator]
    state, _ = _run(profile, events)
    ref = ReferenceController(profile, state)
    assert not SpecMachine(profile).enabled(state, event), event
    assert not ref.enabled(event), event


@pytest.mark.parametrize("profile", PROFILES)
def test_without_a_controller_neither_variant_can_happen(profile: str) -> None:
    state, _ = _run(profile, [*_offline(profile)])
    idle = replace(state, controller=ControllerContext())
    for event in (LeaderAndIsrPartitionResultsReceived(2, (F0,)),):
        assert not SpecMachine(profile).enabled(idle, event)
        assert not ReferenceController(profile, idle).enabled(event)


def _stale_alter_isr_candidates(state: ClusterState) -> list[StaleAlterIsrReceived]:
    """Every AlterIsr from a registered broker, for every partition, with each value current or one to two older,
    and ISRs of one or two assigned replicas (the guards decide which can happen)."""
    out = []
    for part, stored in sorted(state.zk.partition_states.items()):
        current = stored.leader_and_isr
        assigned = state.zk.assignments[part].replicas if part in state.zk.assignments else ()
        isrs = [(r,) for r in assigned] + [(a, b) for a in assigned for b in assigned if a != b]
        for broker, epoch in sorted(state.zk.brokers.items()):
            for be in {epoch, epoch - 1}:
                for le in {current.leader_epoch, current.leader_epoch - 1}:
                    for zv in {current.zk_version, current.zk_version - 2}:
                        for isr in isrs:
                            out.append(StaleAlterIsrReceived(broker, be, part, le, isr, zv))
    return out


def test_stale_alter_isr_agrees_with_the_reference_along_the_scenarios() -> None:
    """kafka-2.8: in every state of the built-in scenarios, the spec and the reference controller accept the same
    stale AlterIsr requests and handle each the same way; some are accepted and some change nothing but the
    requests sent."""
    from kcspec.conformance.scenarios import SCENARIOS

    profile = "kafka-2.8"
    spec = SpecMachine(profile)
    enabled = 0
    for scenario in SCENARIOS[:8]:
        state = ClusterState()
        for event in scenario.events(profile):
            if not spec.enabled(state, event):
                continue
            state = spec.step(state, event).state
            for stale in _stale_alter_isr_candidates(state):
                ref = ReferenceController(profile, state)
                on = spec.enabled(state, stale)
                assert ref.enabled(stale) == on, f"{scenario.name}: {stale}"
                if on:
                    enabled += 1
                    assert ref.handle(stale) == spec.step(state, stale), f"{scenario.name}: {stale}"
    assert enabled > 50, enabled


def test_stale_alter_isr_exists_only_with_alter_isr() -> None:
    state, _ = _run("kafka-1.1", [*cluster(3), TopicCreation("f", ((2, 0),))])
    stale = StaleAlterIsrReceived(2, state.zk.brokers[2] - 1, F0, 0, (2,), 0)
    assert not SpecMachine("kafka-1.1").enabled(state, stale)
    assert not ReferenceController("kafka-1.1", state).enabled(stale)
