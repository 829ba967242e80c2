"""The in-process adapter: a Python controller implements ``ControllerSut`` and is tested without a subprocess.

Subclass ``ControllerSut``, set ``name``/``version``/``profiles``/``capabilities`` and override the
methods of the capabilities you declare; a method you do not override answers "unsupported". Raise
``SutError`` to refuse a request with a protocol error code. Run it with
``kcspec conformance run --adapter my_module:MyController`` or expose it over the subprocess protocol
with ``kcspec.conformance.adapters.serve.serve(MyController())``.

Whatever the SUT raises is its failure, not the runner's: any ``BaseException`` — ``SystemExit`` from a
``sys.exit()``, a ``KeyboardInterrupt`` the SUT raises itself, ``GeneratorExit``... — becomes an errored
verdict for that request. Only a real interrupt of ``kcspec`` (SIGINT or SIGTERM received while the SUT
runs) goes on up and ends the run: the adapter watches those two signals for the length of a session.

With a ``timeout`` each call runs in a worker thread and a call that has not returned after ``timeout`` seconds
is an errored verdict ("did not return within T s"). A thread cannot be killed: the hung call keeps its
thread (a daemon, which does not keep the process alive) and the SUT's state is no longer trustworthy, so the
failure stops the run (``SutFailure.stop_run``) and every later call fails at once the same way.
"""

from __future__ import annotations

import signal
import threading
import traceback
from types import FrameType
from typing import Any, ClassVar

from kcspec.conformance.adapters.base import FailureKind, SutFailure
from kcspec.conformance.protocol import messages as m
from kcspec.spec.events import ControllerEvent
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


class SutError(Exception):
    """Refuse a request: becomes an ``error`` reply with ``code``."""

    def __init__(self, code: m.ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ControllerSut:
    """Base class of an in-process system under test (the typed form of protocol v1)."""

    name: ClassVar[str] = "unnamed-controller"
    version: ClassVar[str] = "0"
    profiles: ClassVar[tuple[str, ...]] = ("kafka-2.8",)
    capabilities: ClassVar[frozenset[m.Capability]] = frozenset()
    protocol_minor: ClassVar[int] = m.PROTOCOL_MINOR
    event_kinds: ClassVar[frozenset[str] | None] = None
    """The event kinds handled (``HelloReply.event_kinds``); ``None``: every kind of ``protocol_minor``."""
    """The minor version of protocol v1 implemented (1.1: each request's ``position`` in ``StepReply.send_order``);
    a SUT written against 1.0 sets 0 and its requests are compared as a set."""

    def hello(self, profile: str) -> None:
        """Called when a session opens; ``profile`` is the semantics profile the suite will test."""
        self.profile = profile

    def load(self, state: ClusterState) -> None:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not load states")

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not implement elections")

    def replica_state_change(
        self, replicas: tuple[PartitionReplica, ...], target: ReplicaState
    ) -> m.StepReply:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not implement the replica state machine")

    def partition_state_change(
        self, partitions: tuple[TopicPartition, ...], target: PartitionState, election: LeaderElection | None
    ) -> m.StepReply:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not implement the partition state machine")

    def event(self, event: ControllerEvent) -> m.StepReply:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not implement controller events")

    def snapshot(self) -> ClusterState:
        raise SutError(m.ErrorCode.unsupported, f"{self.name} does not implement snapshot")

    def shutdown(self) -> None:
        """Release resources; the session ends."""


def dispatch(sut: ControllerSut, request: m.RequestMessage) -> m.ResponseMessage:
    """Answer one request with ``sut``; ``SutError`` becomes an error reply, other exceptions propagate."""
    try:
        match request:
            case m.Hello(profile=profile):
                sut.hello(profile)
                return m.HelloReply(
                    protocol_version=m.PROTOCOL_VERSION,
                    implementation=m.Implementation(sut.name, sut.version),
                    profiles=tuple(sut.profiles),
                    capabilities=frozenset(sut.capabilities),
                    protocol_minor=sut.protocol_minor,
                    event_kinds=sut.event_kinds,
                )
            case m.Load(state=state):
                sut.load(state)
                return m.Ok()
            case m.Elect(strategy=strategy, input=inp):
                return m.ElectionReply(sut.elect(strategy, inp))
            case m.ReplicaStateChange(replicas=replicas, target=target):
                return sut.replica_state_change(replicas, target)
            case m.PartitionStateChange(partitions=partitions, target=ptarget, election=election):
                return sut.partition_state_change(partitions, ptarget, election)
            case m.Event(event=event):
                return sut.event(event)
            case m.Snapshot():
                return m.StateReply(sut.snapshot())
            case m.Shutdown():
                sut.shutdown()
                return m.Ok()
    except SutError as exc:
        return m.ErrorReply(exc.code, exc.message)
    raise TypeError(f"not a protocol request: {request!r}")


def _through_the_wire(reply: m.ResponseMessage) -> m.ResponseMessage:
    """``reply`` encoded and decoded as on the subprocess path: a value of the wrong type (capabilities as
    strings, a profile list that is not a tuple of strings) is a malformed reply, or comes back in its
    canonical form. Used for ``hello`` only (once a session): the round trip of a large state costs
    milliseconds, and a wrong value in other replies is caught when it is compared."""
    try:
        _, decoded = m.parse_response(m.to_line(0, reply))
    except (m.ProtocolError, TypeError, ValueError, AttributeError) as exc:
        raise SutFailure(FailureKind.malformed, f"hello: {exc}", restart=False) from None
    return decoded


class _SignalWatch:
    """Notes that SIGINT or SIGTERM arrived, then lets the handler that was installed act as before."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received = False
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if self._previous or threading.current_thread() is not threading.main_thread():
            return  # handlers can only be set in the main thread; elsewhere every interrupt counts as real
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)

    def remove(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        previous = self._previous.get(signum)
        if previous is signal.SIG_IGN:
            return
        if callable(previous):
            previous(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def interrupted(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the run being interrupted rather than something the SUT raised."""
        if self.received:
            return True
        return isinstance(exc, KeyboardInterrupt) and not self._previous


class InProcessAdapter:
    """Runs a ``ControllerSut`` in the runner's own process."""

    def __init__(self, sut: ControllerSut, timeout: float | None = None) -> None:
        self.sut = sut
        self.timeout = timeout
        self._stderr = ""
        self._signals = _SignalWatch()
        self._hung: str | None = None
        """Why the SUT is unusable: a call that never returned (its thread still runs)."""

    @property
    def description(self) -> str:
        return f"in-process {type(self.sut).__module__}:{type(self.sut).__qualname__}"

    def start(self) -> None:
        self._stderr = ""
        self._signals.install()

    def _dispatch(self, request: m.RequestMessage) -> m.ResponseMessage:
        """``dispatch`` in a worker thread, waiting at most ``timeout`` seconds (without one, in this thread)."""
        if self._hung is not None:
            raise SutFailure(FailureKind.timeout, self._hung, self._stderr, restart=False, stop_run=True)
        if self.timeout is None:
            return dispatch(self.sut, request)
        result: list[m.ResponseMessage] = []
        raised: list[BaseException] = []

        def work() -> None:
            try:
                result.append(dispatch(self.sut, request))
            except BaseException as exc:  # handed to the calling thread, which judges it
                raised.append(exc)

        worker = threading.Thread(target=work, name=f"sut-{type(request).__name__}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            self._hung = (
                f"{type(request).__name__} did not return within {self.timeout:g} s; an in-process SUT cannot "
                "be stopped, so the run stops here and reports what it has"
            )
            raise SutFailure(FailureKind.timeout, self._hung, restart=False, stop_run=True)
        if raised:
            raise raised[0]
        return result[0]

    def call(self, request: m.RequestMessage) -> m.ResponseMessage:
        try:
            reply = self._dispatch(request)
        except SutFailure:
            raise
        except BaseException as exc:
            if self._signals.interrupted(exc):
                raise
            self._stderr = traceback.format_exc()
            what = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, SystemExit):
                what = f"SystemExit (the SUT called sys.exit({exc.code!r}))"
            raise SutFailure(FailureKind.exception, what, self._stderr, restart=False) from exc
        expected = m.EXPECTED_REPLY[type(request)]
        if not isinstance(reply, (*expected, m.ErrorReply)):
            raise SutFailure(
                FailureKind.unexpected_reply,
                f"{type(request).__name__} answered with {type(reply).__name__}",
                restart=False,
            )
        if isinstance(request, m.Hello):
            reply = _through_the_wire(reply)
        return reply

    def close(self) -> None:
        self._signals.remove()

    def stderr_tail(self) -> str:
        return self._stderr
