"""The reference controller and the declarative spec as in-process SUTs (``ControllerSut``).

``ReferenceSut`` serves ``kcspec.reference_impl`` over the protocol: ``kcspec serve-reference`` runs
it behind the subprocess path so the suite tests itself end to end, and vector generation uses it as
an oracle. ``SpecSut`` answers from the declarative spec (``kcspec.model``); vector generation
cross-checks the two and keeps only answers on which they agree. Both import their engines lazily
and report an engine that is not importable as ``EngineUnavailable`` with the reason.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any

from kcspec.conformance.adapters.inprocess import ControllerSut, SutError
from kcspec.conformance.protocol import messages as m
from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    ElectionInput,
    ElectionResult,
    ElectionStrategy,
    LeaderElection,
    PartitionReplica,
    PartitionState,
    ReplicaState,
    TopicPartition,
)

PROFILES = ("kafka-2.8", "kafka-1.1")


class EngineUnavailable(RuntimeError):
    """The reference controller or the spec cannot be imported (yet); the message says which part."""


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise EngineUnavailable(f"{name} is not available: {exc}") from None


def _results(pairs: dict[str, str]) -> Any:
    from kcspec.spec.fmap import FMap

    return FMap(pairs)


def step_reply(result: StepResult, results: dict[str, str] | None = None) -> m.StepReply:
    state = result.state
    if not isinstance(state, ClusterState):
        raise TypeError(f"a step result's state is a {type(state).__name__}, not a ClusterState")
    return m.StepReply(
        state=state, requests=result.requests, failures=result.failures, results=_results(results or {})
    )


def element_results_replicas(state: ClusterState, replicas: tuple[PartitionReplica, ...]) -> dict[str, str]:
    states = state.controller.replica_states
    return {codec.pr_text(r): states.get(r, ReplicaState.NonExistentReplica).name for r in replicas}


def element_results_partitions(state: ClusterState, partitions: tuple[TopicPartition, ...]) -> dict[str, str]:
    states = state.controller.partition_states
    return {codec.tp_text(p): states.get(p, PartitionState.NonExistentPartition).name for p in partitions}


class ReferenceSut(ControllerSut):
    """The reference controller behind protocol v1."""

    name = "kcspec-reference"
    version = "1"
    profiles = PROFILES
    capabilities = frozenset({m.Capability.controller_events, m.Capability.fault_injection})

    def __init__(self) -> None:
        self._ri = _import("kcspec.reference_impl")
        self.profile = "kafka-2.8"
        self._ctrl: Any = None

    def hello(self, profile: str) -> None:
        if profile not in PROFILES:
            raise SutError(m.ErrorCode.unsupported, f"unknown profile {profile!r}")
        self.profile = profile

    def load(self, state: ClusterState) -> None:
        self._ctrl = self._ri.ReferenceController(self.profile, state)

    def _controller(self) -> Any:
        if self._ctrl is None:
            raise SutError(m.ErrorCode.no_state, "no state loaded")
        return self._ctrl

    def event(self, event: ControllerEvent) -> m.StepReply:
        ctrl = self._controller()
        if not ctrl.enabled(event):
            raise SutError(m.ErrorCode.not_enabled, f"{event.kind} is not enabled in the loaded state")
        return step_reply(ctrl.handle(event))

    def snapshot(self) -> ClusterState:
        state: ClusterState = self._controller().snapshot()
        return state


class SpecSut(ControllerSut):
    """The declarative spec behind protocol v1 (an oracle for vector generation)."""

    name = "kcspec-spec"
    version = "1"
    profiles = PROFILES
    capabilities = frozenset(m.Capability)

    def __init__(self) -> None:
        self._step = _import("kcspec.model.step")
        self.profile = "kafka-2.8"
        self._state: ClusterState | None = None

    def hello(self, profile: str) -> None:
        if profile not in PROFILES:
            raise SutError(m.ErrorCode.unsupported, f"unknown profile {profile!r}")
        self.profile = profile

    def load(self, state: ClusterState) -> None:
        self._state = state

    def _loaded(self) -> ClusterState:
        if self._state is None:
            raise SutError(m.ErrorCode.no_state, "no state loaded")
        return self._state

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        result: ElectionResult = _spec_election(self.profile, strategy)({"inp": inp})
        return result

    def replica_state_change(
        self, replicas: tuple[PartitionReplica, ...], target: ReplicaState
    ) -> m.StepReply:
        work_cls = _import("kcspec.spec.work").Work
        work = _spec_replica_change(self.profile, target)(
            {"w": work_cls(self._loaded()), "rs": frozenset(replicas)}
        )
        self._state = work.state
        return m.StepReply(
            work.state, work.sent, work.failures, _results(element_results_replicas(work.state, replicas))
        )

    def partition_state_change(
        self, partitions: tuple[TopicPartition, ...], target: PartitionState, election: LeaderElection | None
    ) -> m.StepReply:
        work_cls = _import("kcspec.spec.work").Work
        fn = _spec_partition_change(self.profile, target, election)
        work = fn({"w": work_cls(self._loaded()), "ps": frozenset(partitions)})
        self._state = work.state
        return m.StepReply(
            work.state, work.sent, work.failures, _results(element_results_partitions(work.state, partitions))
        )

    def event(self, event: ControllerEvent) -> m.StepReply:
        machine = self._step.SpecMachine(self.profile)
        state = self._loaded()
        if not machine.enabled(state, event):
            raise SutError(m.ErrorCode.not_enabled, f"{event.kind} is not enabled in the loaded state")
        reply = step_reply(machine.step(state, event))
        self._state = reply.state
        return reply

    def snapshot(self) -> ClusterState:
        return self._loaded()


Compiled = Callable[[dict[str, Any]], Any]


@cache
def _spec_election(profile: str, strategy: ElectionStrategy) -> Compiled:
    lang = _import("kcspec.spec.lang")
    elections = _import("kcspec.spec.elections")
    evaluate = _import("kcspec.model.evaluate")
    prof = _import("kcspec.spec.profiles").get_profile(profile)
    fn: Compiled = evaluate.compile_expr(elections.elect(prof, strategy, lang.var("inp")), ("inp",))
    return fn


@cache
def _spec_replica_change(profile: str, target: ReplicaState) -> Compiled:
    lang = _import("kcspec.spec.lang")
    machine = _import("kcspec.spec.replica_machine")
    evaluate = _import("kcspec.model.evaluate")
    prof = _import("kcspec.spec.profiles").get_profile(profile)
    expr = machine.replica_state_change(prof, lang.var("w"), lang.var("rs"), target)
    fn: Compiled = evaluate.compile_expr(expr, ("w", "rs"))
    return fn


@cache
def _spec_partition_change(profile: str, target: PartitionState, election: LeaderElection | None) -> Compiled:
    lang = _import("kcspec.spec.lang")
    machine = _import("kcspec.spec.partition_machine")
    evaluate = _import("kcspec.model.evaluate")
    prof = _import("kcspec.spec.profiles").get_profile(profile)
    expr = machine.partition_state_change(prof, lang.var("w"), lang.var("ps"), target, election)
    fn: Compiled = evaluate.compile_expr(expr, ("w", "ps"))
    return fn
