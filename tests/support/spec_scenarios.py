"""Scenario builders for the action tests: run real event sequences through ``SpecMachine`` from ``ClusterState()``
and report failures with the events and the states before and after the offending step."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from kcspec.model.step import SpecMachine
from kcspec.spec.events import BrokerStartup, ControllerEvent, ControllerFailover, TopicCreation
from kcspec.spec.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StepResult,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, TopicPartition

PROFILES = ("kafka-2.8", "kafka-1.1")
Q = TypeVar("Q", LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest)


def tp(topic: str, partition: int = 0) -> TopicPartition:
    return TopicPartition(topic, partition)


@dataclass
class Scenario:
    """A run of events through the spec of one profile, remembering every step for error reports."""

    profile: str
    state: ClusterState = field(default_factory=ClusterState)
    history: list[tuple[ControllerEvent, StepResult]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.machine = SpecMachine(self.profile)

    @property
    def last(self) -> StepResult:
        return self.history[-1][1]

    def run(self, *events: ControllerEvent) -> Scenario:
        for event in events:
            before = self.state
            result = self.machine.step(before, event)
            self.history.append((event, result))
            self.state = result.state
        return self

    def describe(self, last_only: bool = False) -> str:
        lines = [f"profile {self.profile}; events:"]
        lines += [f"  {i}: {e}" for i, (e, _) in enumerate(self.history)]
        if self.history:
            _last_event, r = self.history[-1]
            before = self.history[-2][1].state if len(self.history) > 1 else ClusterState()
            lines.append(f"state before the last step:\n  {before}")
            lines.append(f"state after the last step:\n  {r.state}")
            lines.append("requests of the last step:")
            lines += [f"  {q}" for q in sorted(map(repr, r.requests))]
            lines.append("failures of the last step:")
            lines += [f"  {f}" for f in sorted(map(repr, r.failures))]
        return "\n".join(lines)

    def expect(self, cond: object, what: str) -> None:
        """Assert ``cond``; on failure print ``what`` and the whole scenario."""
        if not cond:
            raise AssertionError(f"{what}\n{self.describe()}")

    def expect_eq(self, actual: object, expected: object, what: str) -> None:
        self.expect(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")

    # -------------------------------------------------------------------- views of the state

    def znode(self, t: TopicPartition) -> LeaderAndIsr:
        return self.state.zk.partition_states[t].leader_and_isr

    def cached(self, t: TopicPartition) -> LeaderAndIsr:
        return self.state.controller.leadership[t].leader_and_isr

    def requests(self, kind: type[Q], broker: int | None = None) -> list[Q]:
        return [
            r for r in self.last.requests if isinstance(r, kind) and (broker is None or r.broker == broker)
        ]

    def lair_states(self, broker: int, t: TopicPartition) -> list[LeaderAndIsrPartitionState]:
        return [
            ps for r in self.requests(LeaderAndIsrRequest, broker) for ps in r.partition_states if ps.tp == t
        ]

    def lair_recipients(self, t: TopicPartition) -> set[int]:
        return {
            r.broker
            for r in self.requests(LeaderAndIsrRequest)
            if any(ps.tp == t for ps in r.partition_states)
        }

    def sr_states(self, broker: int, t: TopicPartition) -> list[StopReplicaPartitionState]:
        return [
            ps for r in self.requests(StopReplicaRequest, broker) for ps in r.partition_states if ps.tp == t
        ]

    def umr_recipients(self) -> set[int]:
        return {r.broker for r in self.requests(UpdateMetadataRequest)}


def start(profile: str, brokers: Iterable[int] = (1, 2, 3), controller: int = 1) -> Scenario:
    """Register ``brokers`` and elect ``controller``."""
    return Scenario(profile).run(*(BrokerStartup(b) for b in brokers), ControllerFailover(controller))


def with_topic(
    profile: str, topic: str, replicas: Sequence[Sequence[int]], brokers: Iterable[int] = (1, 2, 3)
) -> Scenario:
    """A started cluster with one topic created through the controller."""
    return start(profile, brokers).run(TopicCreation(topic, tuple(tuple(r) for r in replicas)))


def run_on_both_engines(
    name: str, initial: ClusterState, events: Sequence[ControllerEvent], profile: str = "kafka-2.8"
) -> ClusterState:
    """Run ``events`` from ``initial`` on the spec and on the reference controller (``crosscheck``: every step must
    agree and keep every invariant, else the failure shows the divergence); the final state."""
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    outcome = crosscheck(name, profile, tuple(events), initial)
    assert outcome.ok, outcome.report()
    machine = SpecMachine(profile)
    state = initial
    for event in events:
        state = machine.step(state, event).state
    return state
