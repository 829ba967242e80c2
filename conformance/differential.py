"""Differential testing of a SUT against the reference controller, and replay of trace files.

Hypothesis draws a list of integers; each picks one enabled event among the explorer's candidate
events (``kcspec.conformance.explore.events``) in the reference controller's current state, after a
bootstrap (brokers register, a controller fails over, topics are created). The sequence is run on
the SUT and on the reference side by side, comparing every step's reply. ``hypothesis.find`` shrinks
the first divergence to a minimal sequence, which is printed as a readable diff and written as a
trace file (``kcspec.spec.trace.Trace``) that ``kcspec conformance replay`` runs again.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample
from kcspec.conformance.adapters.base import Adapter, SutFailure
from kcspec.conformance.adapters.inprocess import ControllerSut, dispatch
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import EngineUnavailable, ReferenceSut
from kcspec.conformance.reply_diff import Difference, diff_replies
from kcspec.conformance.verdicts import Outcome, Verdict
from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep
from rich.console import Console

MAX_STEPS = 12


class TraceError(ValueError):
    """A trace file that cannot be read or replayed; the message names the file."""


@dataclass(frozen=True)
class Divergence:
    events: tuple[ControllerEvent, ...]
    step: int
    """Index of the diverging event in ``events``."""
    differences: tuple[Difference, ...]
    reason: str
    expected: tuple[StepResult, ...]
    """The reference's results for events[0..step]."""
    stderr: str = ""


def _reference_step(ref: ControllerSut, state: ClusterState, event: ControllerEvent) -> m.StepReply | None:
    dispatch(ref, m.Load(state))
    reply = dispatch(ref, m.Event(event))
    return reply if isinstance(reply, m.StepReply) else None


def events_for(
    choices: list[int], profile: str, ref: ControllerSut
) -> list[tuple[ControllerEvent, m.StepReply]]:
    """The event sequence (with the reference's replies) that ``choices`` pick, after the bootstrap."""
    from kcspec.conformance.explore.config import FAULT_KINDS, ExploreConfig
    from kcspec.conformance.explore.events import bootstrap, candidates

    cfg = ExploreConfig(
        profile=profile, brokers=3, topics=1, partitions=2, rf=2, faults=frozenset(FAULT_KINDS)
    )
    dispatch(ref, m.Hello(m.PROTOCOL_VERSION, profile))
    state = ClusterState()
    out: list[tuple[ControllerEvent, m.StepReply]] = []
    for event in bootstrap(cfg):
        reply = _reference_step(ref, state, event)
        if reply is None:
            break
        out.append((event, reply))
        state = reply.state
    for choice in choices:
        options = candidates(state, cfg)
        reply = None
        for k in range(len(options)):
            event = options[(choice + k) % len(options)]
            reply = _reference_step(ref, state, event)
            if reply is not None:
                out.append((event, reply))
                state = reply.state
                break
        if reply is None:
            break
    return out


def compare_run(
    adapter: Adapter, steps: list[tuple[ControllerEvent, m.StepReply]], profile: str = "kafka-2.8"
) -> Divergence | None:
    """Run the events on the SUT from the empty state; the first step whose reply differs."""
    events = tuple(e for e, _ in steps)
    expected = tuple(StepResult(r.state, r.requests, r.failures) for _, r in steps)
    try:
        loaded = adapter.call(m.Load(ClusterState()))
        if isinstance(loaded, m.ErrorReply):
            return Divergence(events[:1], 0, (), f"load refused: {loaded.message}", expected[:1])
        for i, (event, ref_reply) in enumerate(steps):
            reply = adapter.call(m.Event(event))
            diffs = diff_replies(ref_reply, reply)
            if diffs:
                return Divergence(
                    events[: i + 1], i, tuple(diffs), "the SUT's reply differs", expected[: i + 1]
                )
    except SutFailure as failure:
        if failure.restart:
            adapter.start()
            adapter.call(m.Hello(m.PROTOCOL_VERSION, profile))
        return Divergence(
            events, len(events) - 1, (), f"{failure.kind.name}: {failure}", expected, failure.stderr
        )
    return None


def write_trace(path: Path, profile: str, div: Divergence, seed: int) -> None:
    steps = tuple(TraceStep(e, r) for e, r in zip(div.events, div.expected, strict=True))
    note = f"divergence at step {div.step + 1}: {div.reason}; " + "; ".join(
        d.render() for d in div.differences[:5]
    )
    trace = Trace(profile=profile, initial=ClusterState(), steps=steps, seed=seed, note=note)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(trace.to_json())


def print_divergence(div: Divergence, console: Console) -> None:
    console.print(f"[bold red]divergence[/bold red] after {len(div.events)} events: {div.reason}")
    for i, event in enumerate(div.events):
        marker = "→" if i == div.step else " "
        console.print(f" {marker} {i + 1:2d}. {codec.dumps(event)}", markup=False, highlight=False)
    for d in div.differences[:30]:
        console.print(f"     {d.render()}", markup=False, highlight=False)
    if div.stderr.strip():
        console.print("     SUT stderr: " + div.stderr.strip()[-800:], markup=False)


def run_differential(
    adapter: Adapter,
    *,
    profile: str,
    examples: int,
    seed: int,
    trace_dir: Path,
    budget: float | None = None,
    console: Console | None = None,
) -> tuple[list[Outcome], list[str]]:
    """Search for a divergence; one outcome (passed, failed with the minimal trace, or not run and why)."""
    console = console or Console()
    ident = f"{profile}.differential.seed-{seed}"
    sections = ("§7", "§8")

    def outcome(
        verdict: Verdict, reason: str, differences: tuple[Difference, ...] = (), stderr: str = ""
    ) -> Outcome:
        description = f"{examples} random event sequences, seed {seed}"
        return Outcome(ident, "controller", sections, description, verdict, reason, differences, stderr)

    try:
        ref = ReferenceSut()
    except EngineUnavailable as exc:
        return [outcome(Verdict.skipped, f"the reference controller is unavailable: {exc}")], []
    adapter.start()
    hello = adapter.call(m.Hello(m.PROTOCOL_VERSION, profile))
    if not isinstance(hello, m.HelloReply) or m.Capability.controller_events not in hello.capabilities:
        adapter.close()
        return [outcome(Verdict.not_supported, "the SUT does not declare controller_events")], []
    started = time.monotonic()

    def diverges(choices: list[int]) -> bool:
        if budget is not None and time.monotonic() - started > budget:
            return False
        return compare_run(adapter, events_for(choices, profile, ref), profile) is not None

    try:
        minimal = find(
            st.lists(st.integers(0, 1 << 16), max_size=MAX_STEPS),
            diverges,
            settings=settings(
                max_examples=examples,
                database=None,
                deadline=None,
                phases=[Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck),
            ),
            random=random.Random(seed),
        )
    except NoSuchExample:
        adapter.close()
        return [outcome(Verdict.passed, f"no divergence in {examples} sequences")], []
    div = compare_run(adapter, events_for(minimal, profile, ref), profile)
    adapter.close()
    if div is None:
        return [
            outcome(
                Verdict.errored, "a divergence was found but did not reproduce (a non-deterministic SUT?)"
            )
        ], []
    path = trace_dir / f"divergence-{profile}-seed{seed}.json"
    write_trace(path, profile, div, seed)
    print_divergence(div, console)
    console.print(f"trace written to {path}; replay with: kcspec conformance replay {path} --sut ...")
    verdict = Verdict.failed if div.differences else Verdict.errored
    return [
        outcome(
            verdict,
            f"{div.reason} at step {div.step + 1} of {len(div.events)}; trace {path}",
            differences=div.differences,
            stderr=div.stderr,
        )
    ], [f"counterexample trace: {path}"]


def replay_file(path: Path, adapter: Adapter, console: Console) -> int:
    """Replay a trace on the SUT against the reference controller; 0 if they agree at every step, else 1."""
    try:
        trace = Trace.from_json(path.read_text(), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read: {exc}") from None
    except codec.CodecError as exc:
        raise TraceError(str(exc)) from None
    try:
        ref = ReferenceSut()
    except EngineUnavailable as exc:
        raise TraceError(f"the reference controller is unavailable: {exc}") from None
    dispatch(ref, m.Hello(m.PROTOCOL_VERSION, trace.profile))
    state = trace.initial
    steps: list[tuple[ControllerEvent, m.StepReply]] = []
    for i, event in enumerate(trace.events):
        reply = _reference_step(ref, state, event)
        if reply is None:
            raise TraceError(
                f"{path}: event {i + 1} ({event.kind}) is not enabled for the reference controller"
            )
        steps.append((event, reply))
        state = reply.state
    try:
        adapter.start()
        hello = adapter.call(m.Hello(m.PROTOCOL_VERSION, trace.profile))
        if not isinstance(hello, m.HelloReply) or m.Capability.controller_events not in hello.capabilities:
            adapter.close()
            raise TraceError(
                f"{adapter.description} does not declare controller_events: a trace replays controller events"
            )
        if trace.initial != ClusterState():
            adapter.call(m.Load(trace.initial))
        div = (
            compare_run(adapter, steps, trace.profile)
            if trace.initial == ClusterState()
            else _compare_from(adapter, steps)
        )
    except SutFailure as failure:
        console.print(f"[bold red]the SUT failed:[/bold red] {failure}", highlight=False)
        return 1
    finally:
        adapter.close()
    if div is None:
        console.print(f"[green]the SUT agrees with the reference on all {len(steps)} steps of {path}[/green]")
        return 0
    print_divergence(div, console)
    return 1


def _compare_from(adapter: Adapter, steps: list[tuple[ControllerEvent, m.StepReply]]) -> Divergence | None:
    events = tuple(e for e, _ in steps)
    expected = tuple(StepResult(r.state, r.requests, r.failures) for _, r in steps)
    for i, (event, ref_reply) in enumerate(steps):
        diffs = diff_replies(ref_reply, adapter.call(m.Event(event)))
        if diffs:
            return Divergence(events[: i + 1], i, tuple(diffs), "the SUT's reply differs", expected[: i + 1])
    return None
