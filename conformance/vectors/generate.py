"""Generate the conformance vectors: ask the oracles (the declarative spec and the reference controller)
for the answer to every input of ``inputs.py`` and keep the inputs on which they agree.

Each oracle is an in-process ``ControllerSut``. An oracle that cannot answer a request (its engine
is not importable, or it answers "unsupported") is left out for that request; an input no oracle can
answer, or on which two oracles disagree, becomes no vector and is listed in the result so that the
gap is visible, never silent.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from kcspec.conformance.adapters.inprocess import ControllerSut, dispatch
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.reply_diff import Difference, diff_replies
from kcspec.conformance.vectors import inputs
from kcspec.conformance.vectors.model import Vector, VectorReply, level_of
from kcspec.spec.events import BrokerStartup, ControllerEvent, ZkFaultInjection
from kcspec.spec.state import ClusterState

PROFILES = ("kafka-2.8", "kafka-1.1")


@dataclass
class Generation:
    vectors: list[Vector] = field(default_factory=list)
    disagreements: list[tuple[str, tuple[Difference, ...]]] = field(default_factory=list)
    unanswered: list[tuple[str, str]] = field(default_factory=list)
    oracles: list[str] = field(default_factory=list)
    seconds: float = 0.0


def default_oracles() -> list[ControllerSut]:
    """The spec and the reference controller (the vectors keep the answers on which they agree)."""
    return [SpecSut(), ReferenceSut()]


def _ask(oracle: ControllerSut, profile: str, case: inputs.Case) -> VectorReply | str:
    """The oracle's reply, or the reason it cannot answer."""
    try:
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, profile))
        if case.state is not None:
            loaded = dispatch(oracle, m.Load(case.state))
            if isinstance(loaded, m.ErrorReply):
                return f"{oracle.name} refused load: {loaded.message}"
        reply = dispatch(oracle, case.request)
    except Exception as exc:
        return f"{oracle.name} raised {type(exc).__name__}: {exc}"
    if isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.unsupported:
        return f"{oracle.name}: {reply.message}"
    if isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.internal:
        return f"{oracle.name} internal error: {reply.message}"
    if not isinstance(reply, m.ElectionReply | m.StepReply | m.ErrorReply):
        return f"{oracle.name} answered {type(reply).__name__}"
    return reply


def _settle(
    profile: str, case: inputs.Case, oracles: Sequence[ControllerSut], gen: Generation
) -> VectorReply | None:
    answers: list[tuple[str, VectorReply]] = []
    reasons: list[str] = []
    for oracle in oracles:
        answer = _ask(oracle, profile, case)
        if isinstance(answer, str):
            reasons.append(answer)
        else:
            answers.append((oracle.name, answer))
    ident = f"{profile}.{case.id}"
    if not answers:
        gen.unanswered.append((ident, "; ".join(reasons) or "no oracle"))
        return None
    _first_name, first = answers[0]
    for _name, other in answers[1:]:
        unspecified = ("$.message",) if isinstance(first, m.ErrorReply) else _unspecified(first)
        diffs = diff_replies(first, other, unspecified)
        if diffs:
            gen.disagreements.append((ident, tuple(diffs)))
            return None
    return _with_send_order(first, [a for _n, a in answers])


def _with_send_order(first: VectorReply, answers: Sequence[VectorReply]) -> VectorReply:
    """``first`` with the send order of the first oracle that knows it. Decision: the declarative spec's requests
    are a set (it states what is sent, not when), so the expected per-broker order comes from the reference
    controller, whose batches send in §3.4's order; the two agree on everything else."""
    if not isinstance(first, m.StepReply) or first.ordered:
        return first
    for other in answers:
        if isinstance(other, m.StepReply) and other.ordered and other.requests == first.requests:
            return replace(first, send_order=other.send_order)
    return first


def required_capabilities(case: inputs.Case) -> frozenset[m.Capability]:
    """What a SUT must declare for ``case``: the case's own capabilities, and ``fault_injection``
    whenever ZooKeeper faults are armed in its state or injected by its request — a SUT without fault
    injection cannot load such a state, whichever request follows."""
    caps = case.capabilities
    request = case.request
    faulty = (case.state is not None and bool(case.state.zk.faults)) or (
        isinstance(request, m.Event) and isinstance(request.event, ZkFaultInjection)
    )
    return caps | {m.Capability.fault_injection} if faulty else caps


def _vector(profile: str, case: inputs.Case, expected: VectorReply) -> Vector:
    return Vector(
        id=f"{profile}.{case.id}",
        profile=profile,
        level=level_of(case.request),
        capabilities=required_capabilities(case),
        sections=tuple(dict.fromkeys(case.sections)),
        description=case.description,
        state=case.state,
        request=case.request,
        expected=expected,
        unspecified=_unspecified(expected),
    )


def _unspecified(expected: VectorReply) -> tuple[str, ...]:
    """A failed election has no result in Kafka: only ``leader`` -1 is specified (§5.2b step 3)."""
    if isinstance(expected, m.ElectionReply) and expected.result.leader == -1:
        return ("$.result.isr", "$.result.recipients", "$.result.unclean")
    return ()


def machine_cases(profile: str) -> Iterator[inputs.Case]:
    from kcspec.spec import tables

    yield from inputs.election_cases()
    replica_table = (
        tables.REPLICA_VALID_PREVIOUS_2_8 if profile == "kafka-2.8" else tables.REPLICA_VALID_PREVIOUS_1_1
    )
    yield from inputs.replica_cases(replica_table)
    yield from inputs.partition_cases(tables.PARTITION_VALID_PREVIOUS)


def event_cases(profile: str, oracle: ControllerSut) -> Iterator[inputs.Case]:
    """Every step of every built-in scenario (§7–§9), from the state the oracle reached before it, and
    one event that is not enabled per scenario; then the failovers of the ported ``/feature`` tests and every step
    of the ported topic-ID tests."""
    from kcspec.conformance.scenarios import SCENARIOS

    for scenario in SCENARIOS:
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, profile))
        state, _ = yield from _steps(
            oracle,
            scenario.name,
            f"scenario {scenario.name}",
            scenario.sections,
            ClusterState(),
            scenario.events(profile),
        )
        for j, miss in enumerate(scenario.not_enabled(profile)):
            yield inputs.Case(
                f"event.{scenario.name}.not-enabled.{j:02d}.{miss.kind}",
                (miss.section, *scenario.sections),
                f"scenario {scenario.name}, end: {_event_text(miss)} is not enabled (its guard is false)",
                frozenset({m.Capability.controller_events}),
                state,
                m.Event(miss),
            )
        registered = sorted(state.zk.brokers)
        if registered:
            yield inputs.Case(
                f"event.{scenario.name}.not-enabled.BrokerStartup",
                ("§7.2",),
                f"scenario {scenario.name}, end: BrokerStartup({registered[0]}) of a registered broker is not enabled",
                frozenset({m.Capability.controller_events}),
                state,
                m.Event(BrokerStartup(registered[0])),
            )
    yield from inputs.feature_znode_cases()
    yield from _kafka_test_cases(profile, oracle)
    if profile == "kafka-2.8":
        yield from event_queue_cases(profile, oracle)


def _steps(
    oracle: ControllerSut,
    name: str,
    text: str,
    sections: tuple[str, ...],
    state: ClusterState,
    events: Sequence[ControllerEvent],
    first: int = 0,
    caps: set[m.Capability] | None = None,
) -> Generator[inputs.Case, None, tuple[ClusterState, bool]]:
    """A vector per event, each from the state the oracle reached before it (numbered from ``first``). Returns the
    last state the oracle reached, and whether every event stepped (the events after one that did not are left
    out: they would have no state to start from). ``caps``: what a SUT needs beyond controller events (and fault
    injection, for a state or event with ZooKeeper faults)."""
    for i, event in enumerate(events, start=first):
        fault = isinstance(event, ZkFaultInjection) or bool(state.zk.faults)
        needs = {m.Capability.controller_events, *(caps or ())}
        needs |= {m.Capability.fault_injection} if fault else set()
        yield inputs.Case(
            f"event.{name}.{i:02d}.{event.kind}",
            (event.section, *event.exercises, *sections),
            f"{text}, step {i + 1}: {_event_text(event)}",
            frozenset(needs),
            state,
            m.Event(event),
        )
        dispatch(oracle, m.Load(state))
        reply = dispatch(oracle, m.Event(event))
        if not isinstance(reply, m.StepReply):
            return state, False
        state = reply.state
    return state, True


def _kafka_test_cases(profile: str, oracle: ControllerSut) -> Iterator[inputs.Case]:
    """Every step of the ported topic-ID tests of Kafka's ``ControllerIntegrationTest`` (``inputs.TOPIC_ID_TESTS``)
    and of the runs without AlterIsr (``inputs.ISR_NOTIFICATION_TESTS``): each phase starts from the state the last
    one reached, with the phase's IBP in its config."""
    for sequence in (*inputs.TOPIC_ID_TESTS, *inputs.ISR_NOTIFICATION_TESTS):
        if profile not in sequence.profiles:
            continue
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, profile))
        state, done = ClusterState(), 0
        for ibp, events in sequence.phases:
            state = replace(state, config=replace(state.config, inter_broker_protocol=ibp))
            state, stepped = yield from _steps(
                oracle, f"kafka-test.{sequence.name}", sequence.doc, sequence.sections, state, events, done
            )
            if not stepped:
                break
            done += len(events)


def event_queue_cases(profile: str, oracle: ControllerSut) -> Iterator[inputs.Case]:
    """Every step of the event-queue runs (``inputs.EVENT_QUEUE_CASES``), from the state the oracle reached before
    it; a SUT needs the ``callbacks`` capability for them (their states carry the queue's bound)."""
    for run in inputs.EVENT_QUEUE_CASES:
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, profile))
        _state, stepped = yield from _steps(
            oracle,
            f"queue.{run.name}",
            run.description,
            (),
            run.initial,
            run.events,
            caps={m.Capability.callbacks},
        )
        if not stepped:
            raise ValueError(f"event-queue run {run.name}: an event was refused (see the oracle's reply)")


def _event_text(event: ControllerEvent) -> str:
    from kcspec.spec import codec

    text = codec.dumps(event)
    return text if len(text) <= 200 else text[:197] + "..."


def generate(
    profiles: Iterable[str] = PROFILES,
    oracles: Sequence[ControllerSut] | None = None,
    *,
    include_events: bool = True,
) -> Generation:
    started = time.monotonic()
    gen = Generation()
    if oracles is None:
        oracles = default_oracles()
    gen.oracles = [o.name for o in oracles]
    for profile in profiles:
        cases: list[inputs.Case] = list(machine_cases(profile))
        if include_events and oracles:
            try:
                cases.extend(event_cases(profile, oracles[-1]))
            except Exception as exc:
                gen.unanswered.append((f"{profile}.event.*", f"{type(exc).__name__}: {exc}"))
        for case in cases:
            expected = _settle(profile, case, oracles, gen)
            if expected is not None:
                gen.vectors.append(_vector(profile, case, expected))
    gen.seconds = time.monotonic() - started
    return gen
