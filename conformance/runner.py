"""Run conformance vectors against a SUT through an adapter and collect one verdict per vector.

A session starts with ``hello``; vectors whose profile, level or capabilities the SUT does not
declare are "not supported". Each vector loads its state (if any) and sends its request; the reply is
compared with ``kcspec.conformance.reply_diff``. A misbehaving SUT gives that vector an "errored"
verdict with the failure and the SUT's stderr; the runner restarts the session and goes on. If the
SUT cannot be (re)started ``MAX_RESTART_FAILURES`` times in a row, the remaining vectors are
"skipped" with that reason and the run stops cleanly. A time budget works the same way.

What the runner promises, whatever the SUT does (each tested with a fake SUT in tests/conformance):

* it never crashes: a reply that is not a protocol message — including JSON nested deeper than 64 levels,
  a number literal longer than 100 characters or a lone surrogate escape (``kcspec.spec.bounded_json``) —
  and any exception of an in-process SUT, ``SystemExit`` included, is an errored verdict; values of the
  wrong types from an in-process SUT too; an unexpected exception in kcspec itself exits 3, never 1;
* it never lies: a run in which no vector ran is not a pass (``RunReport.exit_code`` is 2, with the
  reason); the reports are written whatever bytes the SUT sent (JUnit XML stays well-formed);
* it leaves nothing behind: a subprocess SUT runs in its own process group, killed whole on a timeout,
  when the SUT exits, at the end of the session and when ``kcspec`` is interrupted (exit 130 / 143).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kcspec.conformance.adapters.base import Adapter, FailureKind, SutFailure
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.vectors.model import Level, Vector
from kcspec.conformance.verdicts import Outcome, RunReport, SutInfo, Verdict

MAX_RESTART_FAILURES = 3
ERROR_UNSPECIFIED = ("$.message",)
"""An expected error is compared by its code; the message is free text."""


class SessionError(Exception):
    """The SUT could not be brought into a usable session (used for exit code 2 on the first session)."""


@dataclass
class Session:
    """A live session: the adapter and what the SUT declared in ``hello``."""

    adapter: Adapter
    profile: str
    hello: m.HelloReply | None = None
    exchanges: int = 0
    exchange_seconds: float = 0.0
    """Time spent inside ``call``: writing requests and waiting for replies."""
    stop_reason: str = ""
    """Set when the SUT can no longer be used in this run (``SutFailure.stop_run``): the rest is skipped."""

    def open(self) -> m.HelloReply:
        self.adapter.start()
        reply = self.call(m.Hello(m.PROTOCOL_VERSION, self.profile))
        if isinstance(reply, m.ErrorReply):
            raise SessionError(f"the SUT refused hello: {reply.code.name}: {reply.message}")
        assert isinstance(reply, m.HelloReply)
        if reply.protocol_version != m.PROTOCOL_VERSION:
            raise SessionError(
                f"the SUT speaks protocol version {reply.protocol_version}; this suite speaks {m.PROTOCOL_VERSION}"
            )
        self.hello = reply
        return reply

    @property
    def ordered(self) -> bool:
        """Request order is compared: the SUT speaks protocol 1.1 or later (``position`` on every request)."""
        return self.hello is not None and self.hello.protocol_minor >= 1

    def call(self, request: m.RequestMessage) -> m.ResponseMessage:
        self.exchanges += 1
        started = time.monotonic()
        try:
            return self.adapter.call(request)
        finally:
            self.exchange_seconds += time.monotonic() - started

    def info(self) -> SutInfo:
        h = self.hello
        if h is None:
            return SutInfo(self.adapter.description)
        return SutInfo(
            description=self.adapter.description,
            name=h.implementation.name,
            version=h.implementation.version,
            protocol_version=h.protocol_version,
            profiles=h.profiles,
            capabilities=tuple(sorted(c.name for c in h.capabilities)),
        )


Progress = Callable[[Outcome], None]


def kind_not_declared(hello: m.HelloReply, kind: str) -> str:
    """Why the SUT is not sent events of ``kind``."""
    if m.Capability.controller_events not in hello.capabilities:
        return "the SUT does not declare controller_events"
    if hello.event_kinds is not None:
        return f"the SUT does not list event kind {kind} in its hello"
    since = m.KIND_SINCE.get(kind, 0)
    return f"event kind {kind} came with protocol 1.{since}; the SUT declares 1.{hello.protocol_minor}"


UNDECLARED_EVENT_CAPABILITIES: tuple[tuple[m.Capability, str], ...] = (
    (
        m.Capability.metrics,
        "controller metrics not compared: the SUT does not declare the metrics capability (protocol 1.2: "
        "offline_partition_count and preferred_replica_imbalance_count in step replies)",
    ),
    (
        m.Capability.callbacks,
        "the controller's event queue not tested (skipped, unsupported): the SUT does not declare the callbacks "
        "capability (protocol 1.3: queued admin elections and the answers of their callbacks)",
    ),
)
"""The optional capabilities of a SUT that handles controller events, with the report's note when it lacks one."""


def hello_notes(hello: m.HelloReply) -> list[str]:
    """The report's notes about the SUT's ``hello``: what was ignored, and what is not compared."""
    from kcspec.spec.events import EVENTS_BY_KIND

    notes = hello.warnings(EVENTS_BY_KIND)
    if hello.protocol_minor < 1:
        notes.append(order_note(hello))
    if m.Capability.controller_events in hello.capabilities:
        notes += [note for cap, note in UNDECLARED_EVENT_CAPABILITIES if cap not in hello.capabilities]
    skipped = sorted(k for k in EVENTS_BY_KIND if not hello.handles(k))
    if skipped and m.Capability.controller_events in hello.capabilities:
        notes.append(f"event kinds not tested (not declared by the SUT, not supported): {', '.join(skipped)}")
    return notes


def order_note(hello: m.HelloReply) -> str:
    """The report's note for a SUT whose requests are compared as a set (it declares protocol 1.0)."""
    return (
        f"request order not compared: the SUT declares protocol 1.{hello.protocol_minor}; each request's "
        f"position (its place in its broker's send order) came with 1.{m.PROTOCOL_MINOR} (PROTOCOL.md's changelog)"
    )


def select_vectors(vectors: Iterable[Vector], profile: str, level: Level) -> list[Vector]:
    """The vectors of ``profile`` at ``level`` or below, in a stable order."""
    return [v for v in vectors if v.profile == profile and v.level.value <= level.value]


def open_session(adapter: Adapter, profile: str) -> Session:
    """Start the first session; ``SessionError`` when the SUT cannot start or greet (exit code 2)."""
    session = Session(adapter, profile)
    try:
        session.open()
    except SutFailure as failure:
        adapter.close()
        tail = f"\nstderr:\n{failure.stderr}" if failure.stderr.strip() else ""
        raise SessionError(f"cannot open a session with {adapter.description}: {failure}{tail}") from None
    except SessionError:
        adapter.close()  # it answered, but not as a SUT of this suite: it must not outlive the run
        raise
    return session


def run_vectors(
    session: Session,
    vectors: Sequence[Vector],
    *,
    deadline: float | None = None,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Run ``vectors`` in ``session`` (already open); returns one outcome per vector."""
    outcomes: list[Outcome] = []
    stop_reason = ""
    restart_failures = 0
    for vector in vectors:
        if not stop_reason and session.stop_reason:
            stop_reason = session.stop_reason
        if not stop_reason and deadline is not None and time.monotonic() > deadline:
            stop_reason = "the time budget (--budget) ran out before this vector"
        if not stop_reason and session.hello is None:
            try:
                session.open()
                restart_failures = 0
            except (SutFailure, SessionError) as exc:
                restart_failures += 1
                if restart_failures >= MAX_RESTART_FAILURES:
                    stop_reason = f"the SUT could not be restarted ({exc})"
                else:
                    outcome = _outcome(vector, Verdict.errored, f"the SUT could not be restarted: {exc}")
                    outcomes.append(outcome)
                    if progress:
                        progress(outcome)
                    continue
        outcome = _outcome(vector, Verdict.skipped, stop_reason) if stop_reason else run_one(session, vector)
        outcomes.append(outcome)
        if progress:
            progress(outcome)
    return outcomes


def _outcome(v: Vector, verdict: Verdict, reason: str = "", **kw: object) -> Outcome:
    return Outcome(
        id=v.id,
        level=v.level.name,
        sections=v.sections,
        description=v.description,
        verdict=verdict,
        reason=reason,
        **kw,  # type: ignore[arg-type]
    )


def run_one(session: Session, vector: Vector) -> Outcome:
    """Load the vector's state, send its request, compare; never raises for SUT misbehaviour."""
    hello = session.hello
    assert hello is not None
    missing = sorted(c.name for c in vector.capabilities - hello.capabilities)
    if missing:
        return _outcome(vector, Verdict.not_supported, f"the SUT does not declare {', '.join(missing)}")
    if vector.profile not in hello.profiles:
        return _outcome(vector, Verdict.not_supported, f"the SUT does not implement profile {vector.profile}")
    if isinstance(vector.request, m.Event) and not hello.handles(vector.request.event.kind):
        return _outcome(vector, Verdict.not_supported, kind_not_declared(hello, vector.request.event.kind))
    started = time.perf_counter()
    try:
        if vector.state is not None:
            loaded = session.call(m.Load(vector.state))
            if isinstance(loaded, m.ErrorReply):
                verdict = Verdict.not_supported if loaded.code is m.ErrorCode.unsupported else Verdict.errored
                return _outcome(
                    vector,
                    verdict,
                    f"load refused: {loaded.code.name}: {loaded.message}",
                    seconds=time.perf_counter() - started,
                )
        reply = session.call(vector.request)
    except SutFailure as failure:
        if failure.restart:
            session.hello = None
        if failure.stop_run:
            session.stop_reason = f"the run stopped after an earlier vector: {failure.detail}"
        request_line = m.to_line(0, vector.request).decode()
        return _outcome(
            vector,
            Verdict.errored,
            f"{failure.kind.name}: {failure}",
            stderr=failure.stderr,
            seconds=time.perf_counter() - started,
            request=request_line,
        )
    seconds = time.perf_counter() - started
    if (
        isinstance(reply, m.ErrorReply)
        and reply.code in (m.ErrorCode.unsupported, m.ErrorCode.beyond_scope)
        and not isinstance(vector.expected, m.ErrorReply)
    ):
        return _outcome(
            vector,
            Verdict.not_supported,
            f"the SUT answered {reply.code.name}: {reply.message}",
            seconds=seconds,
        )
    unspecified = vector.unspecified + (
        ERROR_UNSPECIFIED if isinstance(vector.expected, m.ErrorReply) else ()
    )
    try:
        diffs = diff_replies(
            vector.expected,
            reply,
            unspecified,
            order=session.ordered,
            metrics=m.Capability.metrics in hello.capabilities,
        )
    except Exception as exc:  # only an in-process SUT can hand over values of the wrong types
        return _outcome(
            vector,
            Verdict.errored,
            f"the SUT's reply is not a valid protocol value ({type(exc).__name__}: {exc}): {reply!r:.300}",
            seconds=seconds,
            request=m.to_line(0, vector.request).decode(),
        )
    if not diffs:
        return _outcome(vector, Verdict.passed, seconds=seconds)
    if isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.internal:
        return _outcome(
            vector,
            Verdict.errored,
            f"internal error in the SUT: {reply.message}",
            differences=tuple(diffs),
            seconds=seconds,
            request=m.to_line(0, vector.request).decode(),
        )
    return _outcome(
        vector,
        Verdict.failed,
        f"{len(diffs)} difference(s) from the expected reply",
        differences=tuple(diffs),
        seconds=seconds,
        request=m.to_line(0, vector.request).decode(),
    )


def run(
    adapter: Adapter,
    vectors: Iterable[Vector],
    *,
    profile: str,
    level: Level,
    budget: float | None = None,
    progress: Progress | None = None,
    session: Session | None = None,
) -> RunReport:
    """Open a session (unless ``session``, already open, is given), run the selected vectors, close;
    ``SessionError`` if the SUT cannot start at all."""
    started = time.monotonic()
    selected = select_vectors(vectors, profile, level)
    session = session if session is not None else open_session(adapter, profile)
    info = session.info()
    try:
        outcomes = run_vectors(
            session, selected, deadline=None if budget is None else started + budget, progress=progress
        )
    finally:
        adapter.close()
    notes: list[str] = hello_notes(session.hello) if session.hello is not None else []
    if info.profiles and profile not in info.profiles:
        notes.append(f"the SUT does not implement profile {profile}; every vector is not supported")
    return RunReport(
        sut=info,
        profile=profile,
        level=level.name,
        outcomes=tuple(outcomes),
        seconds=time.monotonic() - started,
        exchanges=session.exchanges,
        notes=tuple(notes),
        exchange_seconds=session.exchange_seconds,
    )


__all__ = [
    "FailureKind",
    "RunReport",
    "Session",
    "SessionError",
    "open_session",
    "run",
    "run_one",
    "run_vectors",
]
