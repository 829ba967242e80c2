"""Differential testing of a SUT against the reference controller, and replay of trace files.

The search is a seeded random walk: each sequence starts with a bootstrap (brokers register, a
controller fails over, topics are created) and goes on with up to ``MAX_STEPS`` events, each picked at
random among the explorer's candidate events (``kcspec.model.event_candidates``) that the reference
controller accepts in its current state. The sequence runs on the SUT and on the reference side by side,
comparing every step's reply.

It respects what the SUT declares: only event kinds whose capabilities the SUT declared in ``hello`` are
generated (``EVENT_CAPABILITIES``), and an ``unsupported`` reply to an event removes that event kind from
the rest of the run (reported in a note); it never counts as a divergence.

Sequences start from the empty state, where ``config.max_queued_requests`` is 0 and no request ever waits in the
controller's event queue. For a SUT that declares ``callbacks`` (kafka-2.8), every other sequence starts from the
empty state with that bound at ``QUEUE_BOUND`` instead (``initial_state``), so that the queued events and their
callbacks' answers are compared too; the trace of a divergence starts from that state.

It reports every divergence, not the first: divergences are grouped by cause (the first part of the reply that
differs and the first differing path in it, ``kcspec.conformance.signature.Cause``), so that one bug is one group, however many
signatures (exact sets of differing paths) its divergences have; the first sequence of each group is shrunk
(chunks of events, then single events, removed while the reference still accepts the sequence and the SUT still
diverges with the same cause) and written as a trace file (``kcspec.spec.trace.Trace``) that ``kcspec conformance
replay`` runs again; the group's outcome gives how many sequences met it and its signatures. A group is *known*
when a ``--known`` entry matches every signature met in it.

The time budget bounds the whole search: no new sequence starts after the deadline and shrinking stops
there, keeping the smallest sequence found so far. A divergence once found is always reported, shrunk or
not; the budget never turns it into a pass. (This is a plain loop rather than ``hypothesis.find``: ``find``
stops at the first failure, and a predicate that gives up at a deadline makes Hypothesis report a flaky
failure.)
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kcspec.conformance.adapters.base import Adapter, SutFailure
from kcspec.conformance.adapters.inprocess import ControllerSut, dispatch
from kcspec.conformance.known import NO_KNOWN, KnownDeviations
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.reply_diff import Difference, diff_replies
from kcspec.conformance.runner import kind_not_declared
from kcspec.conformance.signature import Cause, Signature
from kcspec.conformance.verdicts import Outcome, Verdict
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import FAULT_KINDS, ExploreConfig
from kcspec.spec import codec
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep
from rich.console import Console

MAX_STEPS = 12
QUEUE_BOUND = 2
"""``config.max_queued_requests`` of the sequences that exercise the event queue (capability ``callbacks``): two
requests can wait, so a resignation answers more than one and a processed request leaves one behind."""
"""Events after the bootstrap in one generated sequence (at most)."""
MAX_SHRINK_RUNS = 120
"""SUT runs spent on shrinking one divergence (at most)."""
MAX_SHRINK_SECONDS = 5.0
"""Seconds spent on shrinking one divergence (at most): a SUT with many distinct divergences still finishes."""
MAX_GROUPS = 30
"""Divergence groups (causes) shrunk and reported in one run; further groups are counted in a note."""
DEFAULT_EXAMPLES = 300
"""Sequences a ``kcspec conformance run --level controller`` tries when ``--differential`` is not given."""
DEFAULT_SECONDS = 40.0
"""The differential part's time limit when ``--budget`` is not given, so that a default run stays near a minute."""
SECTIONS = ("§7", "§8")

EVENT_CAPABILITIES: dict[str, frozenset[m.Capability]] = {
    "ZkFaultInjection": frozenset({m.Capability.controller_events, m.Capability.fault_injection}),
}
"""What a SUT must declare for an event kind to be generated; every other kind needs ``controller_events``."""

QUEUE_KINDS = frozenset(
    {
        "ReplicaLeaderElectionQueued",
        "ControlledShutdownQueued",
        "ApiPartitionReassignmentQueued",
        "ListPartitionReassignmentsQueued",
        "QueuedEventProcessed",
    }
)
"""The event queue's own events (capability ``callbacks``): enabled only below ``config.max_queued_requests``."""

Step = tuple[ControllerEvent, m.StepReply]


class TraceError(ValueError):
    """A trace file that cannot be read or replayed; the message names the file."""


def required_capabilities(kind: str) -> frozenset[m.Capability]:
    return EVENT_CAPABILITIES.get(kind, frozenset({m.Capability.controller_events}))


def undeclared_kinds(
    capabilities: Collection[m.Capability], hello: m.HelloReply | None = None
) -> dict[str, str]:
    """The event kinds a SUT with ``capabilities`` (and, when given, this ``hello``'s event kinds) is not sent,
    each with the reason."""
    out: dict[str, str] = {}
    for kind in sorted(EVENTS_BY_KIND):
        missing = sorted(c.name for c in required_capabilities(kind) - set(capabilities))
        if missing:
            out[kind] = f"{', '.join(missing)} not declared"
        elif hello is not None and not hello.handles(kind):
            out[kind] = kind_not_declared(hello, kind)
    return out


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
    failure: str = ""
    """The ``FailureKind`` name when the SUT failed (crashed, hung, ...) instead of answering."""
    internal: bool = False
    """The SUT answered with an ``internal`` error (it failed while handling a valid event)."""
    initial: ClusterState = field(default_factory=ClusterState)
    """The state the sequence starts from (the empty state, or it with the event queue's bound)."""

    @property
    def signature(self) -> Signature:
        kind = self.events[self.step].kind
        if self.failure:
            return Signature.of_failure(kind, self.failure)
        return Signature.of(kind, self.differences)

    @property
    def cause(self) -> Cause:
        return Cause.of(self.signature)

    @property
    def verdict(self) -> Verdict:
        return Verdict.errored if self.failure or self.internal or not self.differences else Verdict.failed


@dataclass(frozen=True)
class SutRun:
    """What one sequence did on the SUT: a divergence, an ``unsupported`` event kind, or neither."""

    divergence: Divergence | None = None
    unsupported: str | None = None
    """The kind of the event the SUT answered ``unsupported``; the sequence stopped there."""
    restart: bool = False
    """The SUT failed and its session must be started again."""
    load_error: str = ""
    """The SUT refused to load the empty state."""
    beyond: str | None = None
    """The kind of the event the SUT answered ``beyond_scope``; the sequence is dropped (counted, not compared)."""


def explore_config(profile: str) -> ExploreConfig:
    """The configuration the sequences are drawn from: 3 brokers, one topic of 2 partitions, RF 2, all faults."""
    return ExploreConfig(
        profile=profile, brokers=3, topics=1, partitions=2, rf=2, faults=frozenset(FAULT_KINDS)
    )


def bootstrap_events(profile: str) -> tuple[ControllerEvent, ...]:
    return bootstrap(explore_config(profile))


def initial_state(queue_bound: int = 0) -> ClusterState:
    """The empty state, with ``config.max_queued_requests`` at ``queue_bound`` (0: the empty state itself)."""
    empty = ClusterState()
    if queue_bound == 0:
        return empty
    return replace(empty, config=replace(empty.config, max_queued_requests=queue_bound))


def _reference_step(ref: ControllerSut, state: ClusterState, event: ControllerEvent) -> m.StepReply | None:
    dispatch(ref, m.Load(state))
    reply = dispatch(ref, m.Event(event))
    return reply if isinstance(reply, m.StepReply) else None


def generate(
    rng: random.Random,
    profile: str,
    ref: ControllerSut,
    allowed: Callable[[str], bool],
    length: int,
    initial: ClusterState | None = None,
) -> list[Step]:
    """A bootstrap and up to ``length`` random events of the allowed kinds, each with the reference's reply, from
    ``initial`` (default: the empty state)."""
    cfg = explore_config(profile)
    dispatch(ref, m.Hello(m.PROTOCOL_VERSION, profile))
    state = initial if initial is not None else ClusterState()
    out: list[Step] = []
    for event in bootstrap_events(profile):
        reply = _reference_step(ref, state, event)
        if reply is None:
            return out
        out.append((event, reply))
        state = reply.state
    for _ in range(length):
        options = [e for e in candidates(state, cfg) if allowed(e.kind)]
        rng.shuffle(options)
        for event in options:
            reply = _reference_step(ref, state, event)
            if reply is not None:
                out.append((event, reply))
                state = reply.state
                break
        else:
            break
    return out


def reference_steps(
    events: Sequence[ControllerEvent], profile: str, ref: ControllerSut, initial: ClusterState | None = None
) -> list[Step] | None:
    """The reference's replies to ``events`` from ``initial`` (default: the empty state); ``None`` if one of them
    is not enabled."""
    dispatch(ref, m.Hello(m.PROTOCOL_VERSION, profile))
    state = initial if initial is not None else ClusterState()
    out: list[Step] = []
    for event in events:
        reply = _reference_step(ref, state, event)
        if reply is None:
            return None
        out.append((event, reply))
        state = reply.state
    return out


def events_for(choices: list[int], profile: str, ref: ControllerSut) -> list[Step]:
    """The event sequence (with the reference's replies) that ``choices`` pick, after the bootstrap: choice
    ``c`` takes the first enabled candidate from index ``c`` on (used by the bug zoo's Hypothesis search)."""
    cfg = explore_config(profile)
    out = reference_steps(bootstrap_events(profile), profile, ref) or []
    state = out[-1][1].state if out else ClusterState()
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


def run_on_sut(
    adapter: Adapter,
    steps: Sequence[Step],
    order: bool = True,
    metrics: bool = True,
    initial: ClusterState | None = None,
) -> SutRun:
    """Run the events on the SUT from ``initial`` (default: the empty state), comparing each reply with the
    reference's (with each broker's request order unless ``order`` is false, with the controller metrics unless
    ``metrics`` is false)."""
    events = tuple(e for e, _ in steps)
    expected = tuple(StepResult(r.state, r.requests, r.failures, r.answers) for _, r in steps)
    start = initial if initial is not None else ClusterState()
    i = -1
    try:
        loaded = adapter.call(m.Load(start))
        if isinstance(loaded, m.ErrorReply):
            return SutRun(load_error=f"{loaded.code.name}: {loaded.message}")
        for i, (event, ref_reply) in enumerate(steps):
            reply = adapter.call(m.Event(event))
            if isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.unsupported:
                return SutRun(unsupported=event.kind)
            if isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.beyond_scope:
                return SutRun(beyond=event.kind)
            diffs = diff_replies(ref_reply, reply, order=order, metrics=metrics)
            if diffs:
                reason = (
                    f"the SUT refused the event: {reply.code.name}: {reply.message}"
                    if isinstance(reply, m.ErrorReply)
                    else "the SUT's reply differs"
                )
                internal = isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.internal
                div = Divergence(
                    events[: i + 1],
                    i,
                    tuple(diffs),
                    reason,
                    expected[: i + 1],
                    internal=internal,
                    initial=start,
                )
                return SutRun(divergence=div)
    except SutFailure as failure:
        at = max(i, 0)
        div = Divergence(
            events[: at + 1],
            at,
            (),
            f"{failure.kind.name}: {failure}",
            expected[: at + 1],
            failure.stderr,
            failure.kind.name,
            initial=start,
        )
        return SutRun(divergence=div, restart=failure.restart)
    return SutRun()


def compare_run(
    adapter: Adapter,
    steps: list[Step],
    profile: str = "kafka-2.8",
    order: bool = True,
    metrics: bool = True,
) -> Divergence | None:
    """Run the events on the SUT from the empty state; the first step whose reply differs (an ``unsupported``
    reply is not a divergence). A SUT that failed is restarted."""
    run = run_on_sut(adapter, steps, order, metrics)
    if run.restart:
        restart(adapter, profile)
    if run.load_error:
        events = tuple(e for e, _ in steps)
        expected = tuple(StepResult(r.state, r.requests, r.failures, r.answers) for _, r in steps)
        return Divergence(events[:1], 0, (), f"load refused: {run.load_error}", expected[:1])
    return run.divergence


def restart(adapter: Adapter, profile: str) -> None:
    """A new session after a failure; ``SutFailure`` if the SUT cannot be started or greeted."""
    adapter.close()
    adapter.start()
    adapter.call(m.Hello(m.PROTOCOL_VERSION, profile))


def write_trace(path: Path, profile: str, div: Divergence, seed: int) -> None:
    steps = tuple(TraceStep(e, r) for e, r in zip(div.events, div.expected, strict=True))
    note = f"divergence at step {div.step + 1}: {div.reason}; " + "; ".join(
        d.render() for d in div.differences[:5]
    )
    trace = Trace(profile=profile, initial=div.initial, steps=steps, seed=seed, note=note)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(trace.to_json())


def print_divergence(div: Divergence, console: Console, *, differences: bool = True) -> None:
    """The events of a divergence, the diverging one marked, and (unless ``differences`` is false) the
    differences and the SUT's stderr. A ``conformance run`` passes false: its final report lists the outcome's
    differences and stderr, and the same list printed twice only makes the output longer (``replay`` has no such report)."""
    console.print(f"[bold red]divergence[/bold red] after {len(div.events)} events: {div.reason}")
    for i, event in enumerate(div.events):
        marker = "→" if i == div.step else " "
        console.print(f" {marker} {i + 1:2d}. {codec.dumps(event)}", markup=False, highlight=False)
    if not differences:
        if div.differences or div.stderr.strip():
            console.print("     differences and SUT stderr: in the report below", highlight=False)
        return
    for d in div.differences[:30]:
        console.print(f"     {d.render()}", markup=False, highlight=False)
    if div.stderr.strip():
        console.print("     SUT stderr: " + div.stderr.strip()[-800:], markup=False)


@dataclass
class Found:
    """One group (cause) met by the search: its shrunk divergence, how often it was met, its signatures (each
    with the differences of its first divergence, for ``--known``), and the trace."""

    cause: Cause
    first_sequence: int
    original_length: int
    divergence: Divergence
    count: int = 1
    shrunk: bool = False
    shrink_runs: int = 0
    seconds: float = 0.0
    trace: Path | None = None
    signatures: dict[Signature, tuple[Difference, ...]] = field(default_factory=dict)

    @property
    def signature(self) -> Signature:
        """The signature of the shrunk divergence."""
        return self.divergence.signature


@dataclass
class Search:
    """The state of one differential search (``run_differential``)."""

    adapter: Adapter
    ref: ControllerSut
    profile: str
    deadline: float | None
    excluded: dict[str, str]
    """Event kinds not generated, with the reason (not declared, or answered ``unsupported``)."""
    sequences: int = 0
    runs: int = 0
    found: dict[Cause, Found] = field(default_factory=dict)
    beyond: dict[str, int] = field(default_factory=dict)
    """Sequences dropped because the SUT answered ``beyond_scope``, by the kind of the event it refused."""
    overflow: int = 0
    """Divergences with a new signature met after ``MAX_SIGNATURES`` were already reported."""
    stop_reason: str = ""
    stop_verdict: Verdict | None = None
    """The verdict of a search that could not go on (``None``: it ran out of sequences or time)."""
    last_run_seconds: float = 0.0
    """Wall time of the last ``run`` (the sequence on the SUT, and its restart after a failure)."""
    order: bool = True
    """Each broker's request order is compared (the SUT speaks protocol 1.1 or later)."""
    metrics: bool = True
    """The controller metrics of step replies are compared (the SUT declares the ``metrics`` capability)."""
    queue_bound: int = 0
    """``QUEUE_BOUND`` when the SUT declares ``callbacks``: every other sequence starts with the event queue's
    bound; 0: none does."""
    queue_sequences: int = 0
    """Sequences run from the state with the event queue's bound."""

    def initial_for(self, n: int) -> ClusterState:
        """The state sequence ``n`` (0-based) starts from: with the queue's bound for every odd ``n``."""
        return initial_state(self.queue_bound if n % 2 == 1 else 0)

    def stop(self, verdict: Verdict | None, reason: str) -> None:
        self.stop_verdict, self.stop_reason = verdict, reason

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def run(self, steps: Sequence[Step], initial: ClusterState | None = None) -> SutRun:
        self.runs += 1
        started = time.monotonic()
        result = run_on_sut(self.adapter, steps, self.order, self.metrics, initial)
        if result.restart:
            try:
                restart(self.adapter, self.profile)
            except SutFailure as failure:
                self.stop(Verdict.errored, f"the SUT could not be restarted: {failure}")
        self.last_run_seconds = time.monotonic() - started
        return result

    @property
    def gone(self) -> bool:
        """The SUT could not be restarted: the search stops with what it has."""
        return self.stop_verdict is Verdict.errored

    def shrink(self, found: Found) -> None:
        """Remove chunks of events, then single events, while the SUT still diverges with the same cause."""
        started = time.monotonic()
        stop_at = started + MAX_SHRINK_SECONDS
        best = found.divergence
        chunk = max(1, len(best.events) // 2)
        complete = True
        while chunk >= 1 and complete:
            i = 0
            while i < len(best.events):
                spent = found.shrink_runs >= MAX_SHRINK_RUNS or time.monotonic() > stop_at
                if self.gone or self.out_of_time() or spent:
                    complete = False
                    break
                candidate = best.events[:i] + best.events[i + chunk :]
                steps = (
                    reference_steps(candidate, self.profile, self.ref, best.initial) if candidate else None
                )
                if steps is not None:
                    found.shrink_runs += 1
                    result = self.run(steps, best.initial)
                    div = result.divergence
                    if div is not None and div.cause == found.cause:
                        best = div
                        continue
                i += chunk
            chunk //= 2
        found.divergence = best
        found.shrunk = complete
        found.seconds += time.monotonic() - started


def run_differential(
    adapter: Adapter,
    *,
    profile: str,
    examples: int,
    seed: int,
    trace_dir: Path,
    budget: float | None = None,
    console: Console | None = None,
    known: KnownDeviations = NO_KNOWN,
) -> tuple[list[Outcome], list[str]]:
    """Search ``examples`` random sequences (or until ``budget`` seconds) for divergences; one outcome per
    distinct divergence (failed, errored or known, with its shrunk trace), or one passed / not run outcome,
    and the notes for the report."""
    console = console or Console()
    started = time.monotonic()
    deadline = None if budget is None else started + budget
    summary_id = f"{profile}.differential.seed-{seed}"
    description = f"{examples} random event sequences, seed {seed}"

    def single(verdict: Verdict, reason: str, stderr: str = "") -> Outcome:
        return Outcome(
            summary_id,
            "controller",
            SECTIONS,
            description,
            verdict,
            reason,
            stderr=stderr,
            seconds=time.monotonic() - started,
        )

    ref = ReferenceSut()
    try:
        adapter.start()
        hello = adapter.call(m.Hello(m.PROTOCOL_VERSION, profile))
    except SutFailure as failure:
        adapter.close()
        return [single(Verdict.errored, f"cannot open a session: {failure}", failure.stderr)], []
    if not isinstance(hello, m.HelloReply) or m.Capability.controller_events not in hello.capabilities:
        adapter.close()
        return [single(Verdict.not_supported, "the SUT does not declare controller_events")], []
    console.print(
        f"differential: {examples} sequences, seed {seed} (re-run with --seed {seed})", highlight=False
    )
    search = Search(adapter, ref, profile, deadline, undeclared_kinds(hello.capabilities, hello))
    search.order = hello.protocol_minor >= 1
    search.metrics = m.Capability.metrics in hello.capabilities
    if m.Capability.callbacks in hello.capabilities and QUEUE_KINDS.isdisjoint(search.excluded):
        search.queue_bound = QUEUE_BOUND
    try:
        find_divergences(search, examples, seed, console)
    finally:
        adapter.close()
    outcomes, notes = _report(search, examples, seed, trace_dir, known, console, started)
    if search.stop_verdict is not None:
        outcomes.append(
            single(search.stop_verdict, f"{search.stop_reason} (after {search.sequences} sequences)")
        )
    elif not outcomes and search.sequences == 0:
        outcomes = [single(Verdict.skipped, "the time limit (--budget) ran out before the first sequence")]
    elif not outcomes:
        outcomes = [single(Verdict.passed, f"no divergence in {search.sequences} sequences")]
    return outcomes, notes


def find_divergences(search: Search, examples: int, seed: int, console: Console) -> None:
    """Run up to ``examples`` random sequences (seed ``seed``) in ``search`` (its session open), recording and
    shrinking every new signature; stops at the search's deadline or when the SUT cannot go on."""
    setup_kinds = {e.kind for e in bootstrap_events(search.profile)}
    _search(search, random.Random(seed), examples, setup_kinds, console)


def _search(
    search: Search, rng: random.Random, examples: int, setup_kinds: set[str], console: Console
) -> None:
    for n in range(examples):
        if search.out_of_time():
            search.stop(
                None,
                f"the time limit ran out after {search.sequences} of {examples} sequences (--budget to change it)",
            )
            return
        length = rng.randint(1, MAX_STEPS)
        initial = search.initial_for(n)
        allowed = lambda kind: kind not in search.excluded  # noqa: E731
        steps = generate(rng, search.profile, search.ref, allowed, length, initial)
        result = search.run(steps, initial)
        search.sequences += 1
        search.queue_sequences += initial != ClusterState()
        if search.gone:
            _record(search, result, n, console)
            return
        if result.load_error:
            unsupported = result.load_error.startswith("unsupported")
            verdict = Verdict.not_supported if unsupported else Verdict.errored
            search.stop(verdict, f"the SUT refused to load the empty state: {result.load_error}")
            return
        if result.beyond is not None:
            search.beyond[result.beyond] = search.beyond.get(result.beyond, 0) + 1
            continue
        if result.unsupported is not None:
            search.excluded[result.unsupported] = f"the SUT answered unsupported in sequence {n + 1}"
            console.print(
                f"differential: the SUT does not support {result.unsupported}; no longer generated",
                highlight=False,
            )
            if result.unsupported in setup_kinds:
                search.stop(
                    Verdict.not_supported,
                    f"the SUT answered unsupported to {result.unsupported}, which every sequence starts with",
                )
                return
        found = _record(search, result, n, console)
        if found is not None:
            search.shrink(found)
        if search.gone:
            return


def _record(search: Search, result: SutRun, n: int, console: Console) -> Found | None:
    """Count the divergence of sequence ``n`` (0-based); a new signature is returned to be shrunk."""
    div = result.divergence
    if div is None:
        return None
    cause = div.cause
    seen = search.found.get(cause)
    if seen is not None:
        seen.count += 1
        seen.signatures.setdefault(div.signature, div.differences)
        return None
    if len(search.found) >= MAX_GROUPS:
        search.overflow += 1
        return None
    # its seconds: the sequence that met it, then (in ``shrink``) the shrinking
    found = Found(cause, n + 1, len(div.events), div, seconds=search.last_run_seconds)
    found.signatures[div.signature] = div.differences
    search.found[cause] = found
    console.print(
        f"differential: divergence group {len(search.found)} in sequence {n + 1}: {cause.render()}",
        markup=False,
        highlight=False,
    )
    return found


def _report(
    search: Search,
    examples: int,
    seed: int,
    trace_dir: Path,
    known: KnownDeviations,
    console: Console,
    started: float,
) -> tuple[list[Outcome], list[str]]:
    profile = search.profile
    outcomes: list[Outcome] = []
    notes: list[str] = []
    seen_known: set[str] = set()
    for found in search.found.values():
        div = found.divergence
        found.signatures.setdefault(div.signature, div.differences)
        path = trace_dir / f"divergence-{profile}-seed{seed}-{found.cause.slug}.json"
        write_trace(path, profile, div, seed)
        found.trace = path
        entries = [known.match(sig, diffs) for sig, diffs in found.signatures.items()]
        entry = entries[0] if entries and all(e is not None for e in entries) else None
        unknown = [sig for sig, e in zip(found.signatures, entries, strict=True) if e is None]
        shrink = (
            f"shrunk from {found.original_length} events"
            if found.shrunk
            else f"shrinking stopped early ({found.shrink_runs} runs), from {found.original_length} events"
        )
        reason = (
            f"{div.reason} at step {div.step + 1} of {len(div.events)} ({shrink}); group {found.cause.render()} "
            f"met in {found.count} of {search.sequences} sequences ({len(found.signatures)} signature(s)), first in "
            f"sequence {found.first_sequence}; signature {found.signature.render()}; trace {path}"
        )
        if unknown and len(unknown) < len(found.signatures):
            reason += f"; not covered by --known: {unknown[0].render()}"
        reason += "; signatures met: " + json.dumps(
            [sig.to_json() for sig in found.signatures], ensure_ascii=False
        )
        verdict = div.verdict
        if entry is not None:
            seen_known.update(e.where for e in entries if e is not None)
            reason = f"known deviation ({entry.where}: {entry.reason}); {verdict.value}: {reason}"
            verdict = Verdict.known
        else:
            print_divergence(div, console, differences=False)
            console.print(f"trace written to {path}; replay with: kcspec conformance replay {path} --sut ...")
        outcomes.append(
            Outcome(
                f"{profile}.differential.{found.cause.slug}",
                "controller",
                SECTIONS,
                f"random event sequences (seed {seed}) diverging in the {found.cause.part} at "
                f"{found.cause.path}, first at {found.cause.event} ({found.count} sequence(s))",
                verdict,
                reason,
                div.differences,
                div.stderr,
                found.seconds,
                codec.dumps(div.events[div.step]),
            )
        )
        notes.append(f"counterexample trace: {path}")
    elapsed = time.monotonic() - started
    rate = search.sequences / elapsed if elapsed > 0 else 0.0
    notes.insert(
        0,
        f"differential: {search.sequences} of {examples} sequences in {elapsed:.1f} s ({rate:.1f}/s), seed {seed}; "
        f"{len(search.found)} divergence group(s)",
    )
    if search.queue_sequences:
        notes.append(
            f"differential: {search.queue_sequences} of the {search.sequences} sequences started with "
            f"config.max_queued_requests = {search.queue_bound} (the event queue, capability callbacks)"
        )
    if search.stop_reason:
        notes.append(f"differential: {search.stop_reason}")
    if search.overflow:
        notes.append(
            f"differential: {search.overflow} more divergence(s) of new groups not reported "
            f"(at most {MAX_GROUPS} per run)"
        )
    if search.beyond:
        per_kind = ", ".join(f"{n} at {kind}" for kind, n in sorted(search.beyond.items()))
        notes.append(
            f"differential: {sum(search.beyond.values())} sequence(s) dropped, answered beyond_scope ({per_kind})"
        )
    for kind, why in sorted(search.excluded.items()):
        notes.append(f"differential: {kind} not generated ({why})")
    for entry in known.signatures:
        if entry.where not in seen_known:
            ran = search.sequences > 0
            what = "not seen in this run" if ran else "not checked (no sequence ran)"
            notes.append(f"known deviation {what}: {entry.describe()}")
    return outcomes, notes


def replay_file(path: Path, adapter: Adapter, console: Console) -> int:
    """Replay a trace on the SUT against the reference controller; 0 if they agree at every step, else 1."""
    try:
        trace = Trace.from_json(path.read_text(), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read: {exc}") from None
    except codec.CodecError as exc:
        raise TraceError(str(exc)) from None
    ref = ReferenceSut()
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
        order = hello.protocol_minor >= 1
        metrics = m.Capability.metrics in hello.capabilities
        div = (
            compare_run(adapter, steps, trace.profile, order, metrics)
            if trace.initial == ClusterState()
            else _compare_from(adapter, steps, order, metrics)
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


def _compare_from(
    adapter: Adapter,
    steps: list[tuple[ControllerEvent, m.StepReply]],
    order: bool = True,
    metrics: bool = True,
) -> Divergence | None:
    events = tuple(e for e, _ in steps)
    expected = tuple(StepResult(r.state, r.requests, r.failures, r.answers) for _, r in steps)
    for i, (event, ref_reply) in enumerate(steps):
        diffs = diff_replies(ref_reply, adapter.call(m.Event(event)), order=order, metrics=metrics)
        if diffs:
            return Divergence(events[: i + 1], i, tuple(diffs), "the SUT's reply differs", expected[: i + 1])
    return None
