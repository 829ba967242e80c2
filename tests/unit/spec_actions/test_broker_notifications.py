"""Broker notifications carrying several brokers: one ``BrokerChange`` with new, dead and bounced brokers (§7.2) and
``LogDirEventNotification`` (§7.5). The spec and the reference controller must agree on them step by step, on their
effect, and on when they cannot happen."""

from __future__ import annotations

import pytest
from kcspec.conformance.scenarios import SCENARIOS_BY_NAME, cluster, tp
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import (
    BrokerChange,
    BrokerFailure,
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    LogDirEventNotification,
    TopicCreation,
    TopicDeletion,
    ZkPartitionReassignment,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import LeaderAndIsrRequest, StepResult, UpdateMetadataRequest
from kcspec.spec.state import ClusterState

PROFILES = ("kafka-2.8", "kafka-1.1")


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


def _enabled(profile: str, events: list[ControllerEvent], event: ControllerEvent) -> tuple[bool, bool]:
    state, _ = _run(profile, events)
    ref = ReferenceController(profile, state)
    return SpecMachine(profile).enabled(state, event), ref.enabled(event)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_broker_batches_scenario_agrees_step_by_step(profile: str) -> None:
    scenario = SCENARIOS_BY_NAME["broker-batches"]
    outcome = crosscheck(scenario.name, profile, scenario.events(profile))
    assert outcome.divergence is None, outcome.report()


@pytest.mark.parametrize("profile", PROFILES)
def test_new_brokers_register_in_the_listed_order_and_start_in_one_call(profile: str) -> None:
    state, results = _run(profile, [*cluster(3), BrokerChange(new_broker_ids=(3, 4))])
    assert state.zk.brokers[4] == state.zk.brokers[3] + 1, "consecutive zxids, new brokers in ascending order"
    assert set(state.controller.live_brokers) == {0, 1, 2, 3, 4}
    umr_to = {r.broker for r in results[-1].requests if isinstance(r, UpdateMetadataRequest)}
    assert {3, 4} <= umr_to


def test_kafka_1_1_drops_the_dead_brokers_before_starting_the_new_ones() -> None:
    """1.1.1 sets ``liveBrokers = curBrokers`` first: no UpdateMetadata of the startup reaches the dead broker and it
    is not in any live-broker list; 2.8.2 removes it only before ``onBrokerFailure``."""
    events = [
        *cluster(3),
        TopicCreation("t", ((1, 2),)),
        BrokerChange(new_broker_ids=(3,), dead_broker_ids=(2,)),
    ]
    lists = {}
    for profile in PROFILES:
        _, results = _run(profile, events)
        lists[profile] = [
            r.live_brokers for r in results[-1].requests if isinstance(r, UpdateMetadataRequest)
        ]
    assert all(2 not in live for live in lists["kafka-1.1"])
    assert any(2 in live for live in lists["kafka-2.8"])


@pytest.mark.parametrize("profile", PROFILES)
def test_a_log_dir_notification_sends_a_leader_and_isr_for_every_replica_on_the_brokers(profile: str) -> None:
    events = [*cluster(3), TopicCreation("t", ((1, 2), (2, 0), (0, 1)))]
    _, results = _run(profile, [*events, LogDirEventNotification((2,))])
    lair = [r for r in results[-1].requests if isinstance(r, LeaderAndIsrRequest)]
    assert {r.broker for r in lair} == {2}
    assert {ps.tp for r in lair for ps in r.partition_states} == {tp("t", 0), tp("t", 1)}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "event",
    [
        BrokerChange(new_broker_ids=(3,)),  # one broker: BrokerStartup
        BrokerChange(new_broker_ids=(4, 3)),  # not ascending
        BrokerChange(new_broker_ids=(3,), dead_broker_ids=(0,)),  # 0 is the active controller
        BrokerChange(dead_broker_ids=(1, 5)),  # 5 is not registered
        BrokerChange(new_broker_ids=(1, 3)),  # 1 is registered already
        LogDirEventNotification(()),
        LogDirEventNotification((2,)),  # 2 has died
    ],
    ids=lambda e: type(e).__name__,
)
def test_the_guards_agree_on_what_cannot_happen(profile: str, event: ControllerEvent) -> None:
    events = [
        *cluster(3),
        TopicCreation("t", ((1, 2),)),
        BrokerFailure(2),
        BrokerStartup(5),
        BrokerFailure(5),
    ]
    assert _enabled(profile, events, event) == (False, False)


@pytest.mark.parametrize("profile", PROFILES)
def test_several_brokers_at_once_are_out_of_the_model_while_a_reassignment_is_in_flight(profile: str) -> None:
    """onBrokerStartup can throw while a reassignment is in flight, which would end processBrokerChange before the
    later groups (the dead broker would stay live: found by the fuzz campaign, seed 1): both guards say no."""
    events = [*cluster(3), TopicCreation("t", ((0, 1),)), ZkPartitionReassignment(FMap({tp("t", 0): (1, 2)}))]
    state, _ = _run(profile, events)
    assert state.controller.partitions_being_reassigned or state.controller.legacy_reassignments
    change = BrokerChange(new_broker_ids=(3,), dead_broker_ids=(1,))
    assert _enabled(profile, events, change) == (False, False)
    assert _enabled(profile, events[:-1], change) == (True, True)


def _fuzz_887560551() -> tuple[list[ControllerEvent], BrokerChange]:
    """The run of ``kcspec fuzz --seed 887560551 --profile kafka-2.8`` that left broker 1 live after it died: t1-0
    has no live replica when it is created (no leadership znode), is reassigned, and t1 is queued for deletion; then
    2 registers while 1 disappears."""
    events: list[ControllerEvent] = [
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1, 2),)),
        TopicCreation("t1", ((1, 2, 3),)),
        ZkPartitionReassignment(FMap({tp("t1", 0): (2, 3, 0)})),
        TopicDeletion(("t1",)),
        BrokerStartup(1),
    ]
    return events, BrokerChange(new_broker_ids=(2,), dead_broker_ids=(1,))


def _w6_violated(profile: str, state: ClusterState) -> bool:
    return any(v.name.startswith("W6 ") for v in InvariantChecker(profile).check_state(state))


def test_kafka_2_8_leaves_a_dead_broker_live_when_starting_the_new_ones_throws_so_it_is_left_out() -> None:
    """2.8.2's processBrokerChange runs onBrokerStartup(new) before removing the dead brokers, and
    maybeResumeReassignments has no try: resuming t1-0 on broker 2 throws (IllegalStateException, no leadership
    znode to bump), the event ends and broker 1 stays live although deregistered. Kafka does this too, so the spec
    and the reference controller are right; W6 describes states where every broker change was handled, so the guard
    leaves this input out (no partition being reassigned) and both guards refuse it."""
    profile = "kafka-2.8"
    events, change = _fuzz_887560551()
    state, _ = _run(profile, events)
    assert not _w6_violated(profile, state)
    assert state.controller.partitions_being_reassigned == {tp("t1", 0)}
    assert _enabled(profile, events, change) == (False, False)
    # past its guard, the reference controller shows what Kafka 2.8.2 would do, and why the input is left out
    ref = ReferenceController(profile, state)
    ref.run(change, guard_checked=True)
    after = ref.snapshot()
    assert any("Error processing event BrokerChange" in line for line in ref.controller_log), (
        ref.controller_log[-5:]
    )
    assert (set(after.controller.live_brokers), set(after.zk.brokers)) == ({0, 1, 2}, {0, 2})
    assert _w6_violated(profile, after)


def test_kafka_1_1_handles_the_same_change_and_its_live_brokers_are_the_registered_ones() -> None:
    """1.1.1 replaces the live set with the registered brokers before onBrokerStartup, and its ZK reassignment of
    t1-0 (no leadership) is not in flight: the change is enabled, spec and reference agree, W6 holds."""
    profile = "kafka-1.1"
    events, change = _fuzz_887560551()
    state, _ = _run(profile, [*events, change])
    assert (set(state.controller.live_brokers), set(state.zk.brokers)) == ({0, 2}, {0, 2})
    assert not _w6_violated(profile, state)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_broker_change_during_reassignment_near_misses_are_refused_only_for_the_reassignment(
    profile: str,
) -> None:
    """The scenario's not_enabled vectors check the guard's reassignment condition: its near misses are refused by
    both guards at its end, and accepted by both one step earlier, before the reassignment."""
    scenario = SCENARIOS_BY_NAME["broker-change-during-reassignment"]
    events = list(scenario.events(profile))
    outcome = crosscheck(scenario.name, profile, tuple(events))
    assert outcome.divergence is None, outcome.report()
    state, _ = _run(profile, events)
    assert state.controller.partitions_being_reassigned or state.controller.legacy_reassignments
    misses = scenario.not_enabled(profile)
    assert misses and {e.kind for e in misses} == {"BrokerChange"}
    for miss in misses:
        assert _enabled(profile, events, miss) == (False, False), miss
        assert _enabled(profile, events[:-1], miss) == (True, True), miss
