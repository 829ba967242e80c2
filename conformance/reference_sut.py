"""The reference controller and the declarative spec as in-process SUTs (``ControllerSut``).

``ReferenceSut`` serves ``kcspec.reference_impl`` over the protocol: ``kcspec serve-reference`` runs
it behind the subprocess path so the suite tests itself end to end, and vector generation uses it as
an oracle. ``SpecSut`` answers from the declarative spec (``kcspec.model``); vector generation
cross-checks the two and keeps only answers on which they agree. Both reach their engines through
ordinary imports: ``ReferenceSut`` calls ``kcspec.reference_impl`` (``ReferenceController`` and the functions of
its elections and state machines), ``SpecSut`` the spec's rules compiled by ``kcspec.model``.

Decision: ``SpecSut``'s imports are written in its methods, so that the kit's modules that use only the reference
controller (differential testing, trace replay, the session mutants) do not load the spec's evaluator: measured
with ``python -X importtime`` (busy 2-core machine), ``kcspec.model.evaluate`` costs about 0.1 s of import, the
reference controller (imported at the top) about 0.05 s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from kcspec.conformance.adapters.inprocess import ControllerSut, SutError
from kcspec.conformance.protocol import messages as m
from kcspec.reference_impl import PROFILES as REFERENCE_PROFILES
from kcspec.reference_impl import ReferenceController
from kcspec.reference_impl import elections as reference_elections
from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.errors import ControllerMovedException
from kcspec.reference_impl.replica_state_machine import group_replicas
from kcspec.spec import codec
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import ControllerMetrics, Request, StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    ElectionInput,
    ElectionResult,
    ElectionStrategy,
    LeaderElection,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

PROFILES = ("kafka-2.8", "kafka-1.1")


def _results(pairs: dict[str, str]) -> FMap[str, str]:
    return FMap(pairs)


def step_reply(
    result: StepResult,
    results: dict[str, str] | None = None,
    sent: Sequence[Request] = (),
    metrics: ControllerMetrics | None = None,
) -> m.StepReply:
    """The reply of a step; ``sent``: its requests in the order they were sent (none: the order is not known);
    ``metrics``: the controller's gauges after the step (an ``event``)."""
    state = result.state
    if not isinstance(state, ClusterState):
        raise TypeError(f"a step result's state is a {type(state).__name__}, not a ClusterState")
    return m.StepReply(
        state=state,
        requests=result.requests,
        failures=result.failures,
        results=_results(results or {}),
        send_order=m.send_order(sent),
        metrics=metrics,
        answers=result.answers,
    )


def element_results_replicas(state: ClusterState, replicas: tuple[PartitionReplica, ...]) -> dict[str, str]:
    states = state.controller.replica_states
    return {codec.pr_text(r): states.get(r, ReplicaState.NonExistentReplica).name for r in replicas}


def element_results_partitions(state: ClusterState, partitions: tuple[TopicPartition, ...]) -> dict[str, str]:
    states = state.controller.partition_states
    return {codec.tp_text(p): states.get(p, PartitionState.NonExistentPartition).name for p in partitions}


ELECTION_TP = TopicPartition("election", 0)
"""The partition an ``elect`` request is asked about in the reference controller's context (any name works)."""


class ReferenceSut(ControllerSut):
    """The reference controller behind protocol v1.

    ``event`` is ``ReferenceController.handle``. The machine levels use the reference controller's own modules:
    ``elect`` runs ``reference_impl.elections.leader_for_*`` in a context built from the election input, and the
    ``*_state_change`` requests call ``handle_state_changes`` of the loaded controller's replica or partition
    state machine, reporting the requests and failures that call appended. A ControllerMovedException (2.8
    fencing) ends such a call with what it had done, as the spec's ``Work.moved`` does.
    """

    name = "kcspec-reference"
    version = "1"
    profiles = PROFILES
    capabilities = frozenset(m.Capability)
    protocol_minor = m.PROTOCOL_MINOR

    def __init__(self) -> None:
        self.profile = "kafka-2.8"
        self._ctrl: ReferenceController | None = None

    def hello(self, profile: str) -> None:
        if profile not in PROFILES:
            raise SutError(m.ErrorCode.unsupported, f"unknown profile {profile!r}")
        self.profile = profile

    def load(self, state: ClusterState) -> None:
        self._ctrl = ReferenceController(self.profile, state)

    def _controller(self) -> ReferenceController:
        if self._ctrl is None:
            raise SutError(m.ErrorCode.no_state, "no state loaded")
        return self._ctrl

    def event(self, event: ControllerEvent) -> m.StepReply:
        ctrl = self._controller()
        if not ctrl.enabled(event):
            raise SutError(m.ErrorCode.not_enabled, f"{event.kind} is not enabled in the loaded state")
        sent: list[Request] = []
        return step_reply(ctrl.handle(event, sent=sent), sent=sent, metrics=ctrl.metrics())

    def snapshot(self) -> ClusterState:
        state: ClusterState = self._controller().snapshot()
        return state

    # ------------------------------------------------------------------------------------ elections (§6)

    def _election_context(self, inp: ElectionInput, strategy: ElectionStrategy) -> ControllerContext:
        """A context in which ``isReplicaOnline`` answers as ``inp`` says, with the assignment (or, for the
        Reassign strategy, the target replicas) of ``inp``."""
        online, reachable, down = inp.online, inp.online_or_shutting_down, inp.shutting_down
        if not online <= reachable or online & down or not reachable - online <= down:
            raise SutError(
                m.ErrorCode.invalid_input,
                "inconsistent election input: online must be online_or_shutting_down minus shutting_down",
            )
        ctx = ControllerContext()
        ctx.shutting_down = set(down)
        ctx.add_live_brokers(dict.fromkeys(reachable | down, 0))
        for r in down - reachable:
            ctx.replicas_on_offline_dirs.setdefault(r, set()).add(ELECTION_TP)
        reassign = strategy is ElectionStrategy.ReassignPartitionLeaderElectionStrategy
        replicas = inp.target_replicas if reassign else inp.assignment
        ctx.update_assignment(ELECTION_TP, ReplicaAssignment(replicas))
        ctx.legacy_reassignments[ELECTION_TP] = inp.target_replicas
        return ctx

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        el = reference_elections
        version = REFERENCE_PROFILES[self.profile]
        ctx = self._election_context(inp, strategy)
        lai = inp.leader_and_isr
        S = ElectionStrategy
        if strategy is S.OfflinePartitionLeaderElectionStrategy:
            out = el.leader_for_offline(ctx, ELECTION_TP, lai, inp.allow_unclean or inp.unclean_enabled)
        elif strategy is S.ReassignPartitionLeaderElectionStrategy:
            out = el.leader_for_reassign(ctx, version, ELECTION_TP, lai)
        elif strategy is S.PreferredReplicaPartitionLeaderElectionStrategy:
            out = el.leader_for_preferred_replica(ctx, ELECTION_TP, lai)
        else:
            out = el.leader_for_controlled_shutdown(ctx, version, ELECTION_TP, lai)
        if out.leader_and_isr is None:
            return ElectionResult(-1, lai.isr, tuple(out.recipients), False)
        return ElectionResult(
            out.leader_and_isr.leader, out.leader_and_isr.isr, tuple(out.recipients), bool(out.unclean)
        )

    # ------------------------------------------------------------------------------------ state machines

    def _machine_call(self, machine: Any, call: Callable[[], object]) -> tuple[ClusterState, m.StepReply]:
        """Run one ``handle_state_changes`` call; the post-state and the requests and failures it produced."""
        ctrl = self._controller()
        sent: list[Any] = machine.batch.sent
        failures: list[Any] = machine.failures
        n_sent, n_failures = len(sent), len(failures)
        with contextlib.suppress(ControllerMovedException):
            call()
        state: ClusterState = ctrl.snapshot()
        new = sent[n_sent:]
        return state, m.StepReply(
            state, frozenset(new), frozenset(failures[n_failures:]), send_order=m.send_order(new)
        )

    def replica_state_change(
        self, replicas: tuple[PartitionReplica, ...], target: ReplicaState
    ) -> m.StepReply:
        machine = self._controller().kc.replica_sm
        groups = group_replicas(dict.fromkeys(replicas))
        state, reply = self._machine_call(machine, lambda: machine.handle_state_changes(groups, target))
        return replace(reply, results=_results(element_results_replicas(state, replicas)))

    def partition_state_change(
        self, partitions: tuple[TopicPartition, ...], target: PartitionState, election: LeaderElection | None
    ) -> m.StepReply:
        machine = self._controller().kc.partition_sm
        unique = list(dict.fromkeys(partitions))
        state, reply = self._machine_call(
            machine, lambda: machine.handle_state_changes(unique, target, election)
        )
        return replace(reply, results=_results(element_results_partitions(state, partitions)))


class SpecSut(ControllerSut):
    """The declarative spec behind protocol v1 (an oracle for vector generation).

    The spec says what a step sends, not in which order: it speaks protocol 1.0 (no ``position``, its requests
    compared as a set) and lists every event kind, those of later minor versions included."""

    name = "kcspec-spec"
    version = "1"
    profiles = PROFILES
    capabilities = frozenset(m.Capability)
    protocol_minor = 0
    event_kinds = frozenset(EVENTS_BY_KIND)

    def __init__(self) -> None:
        self.profile = "kafka-2.8"
        self._state: ClusterState | None = None

    def hello(self, profile: str) -> None:
        if profile not in PROFILES:
            raise SutError(m.ErrorCode.unsupported, f"unknown profile {profile!r}")
        self.profile = profile
        # The profile's actions are compiled (or loaded from the code cache) now, within the adapter's startup
        # timeout, not on the first event under the per-message one.
        from kcspec.model.step import SpecMachine

        SpecMachine(profile)

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
        from kcspec.spec.work import Work

        work = _spec_replica_change(self.profile, target)(
            {"w": Work(self._loaded()), "rs": frozenset(replicas)}
        )
        self._state = work.state
        return m.StepReply(
            work.state, work.sent, work.failures, _results(element_results_replicas(work.state, replicas))
        )

    def partition_state_change(
        self, partitions: tuple[TopicPartition, ...], target: PartitionState, election: LeaderElection | None
    ) -> m.StepReply:
        from kcspec.spec.work import Work

        fn = _spec_partition_change(self.profile, target, election)
        work = fn({"w": Work(self._loaded()), "ps": frozenset(partitions)})
        self._state = work.state
        return m.StepReply(
            work.state, work.sent, work.failures, _results(element_results_partitions(work.state, partitions))
        )

    def event(self, event: ControllerEvent) -> m.StepReply:
        from kcspec.model.metrics import spec_metrics
        from kcspec.model.step import SpecMachine

        machine = SpecMachine(self.profile)
        state = self._loaded()
        if not machine.enabled(state, event):
            raise SutError(m.ErrorCode.not_enabled, f"{event.kind} is not enabled in the loaded state")
        result = machine.step(state, event)
        metrics = spec_metrics(self.profile, result.state)
        reply = step_reply(result, metrics=metrics)
        self._state = reply.state
        return reply

    def snapshot(self) -> ClusterState:
        return self._loaded()


Compiled = Callable[[dict[str, Any]], Any]


@cache
def _spec_election(profile: str, strategy: ElectionStrategy) -> Compiled:
    from kcspec.model import evaluate
    from kcspec.spec import elections, lang
    from kcspec.spec.profiles import get_profile

    expr = elections.elect(get_profile(profile), strategy, lang.var("inp"))
    return evaluate.compile_expr(expr, ("inp",))


@cache
def _spec_replica_change(profile: str, target: ReplicaState) -> Compiled:
    from kcspec.model import evaluate
    from kcspec.spec import lang, replica_machine
    from kcspec.spec.profiles import get_profile

    expr = replica_machine.replica_state_change(get_profile(profile), lang.var("w"), lang.var("rs"), target)
    return evaluate.compile_expr(expr, ("w", "rs"))


@cache
def _spec_partition_change(profile: str, target: PartitionState, election: LeaderElection | None) -> Compiled:
    from kcspec.model import evaluate
    from kcspec.spec import lang, partition_machine
    from kcspec.spec.profiles import get_profile

    expr = partition_machine.partition_state_change(
        get_profile(profile), lang.var("w"), lang.var("ps"), target, election
    )
    return evaluate.compile_expr(expr, ("w", "ps"))
