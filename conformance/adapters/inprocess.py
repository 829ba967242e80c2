"""The in-process adapter: a Python controller implements ``ControllerSut`` and is tested without a subprocess.

Subclass ``ControllerSut``, set ``name``/``version``/``profiles``/``capabilities`` and override the
methods of the capabilities you declare; a method you do not override answers "unsupported". Raise
``SutError`` to refuse a request with a protocol error code. Run it with
``kcspec conformance run --adapter my_module:MyController`` or expose it over the subprocess protocol
with ``kcspec.conformance.adapters.serve.serve(MyController())``.
"""

from __future__ import annotations

import traceback
from typing import ClassVar

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


class InProcessAdapter:
    """Runs a ``ControllerSut`` in the runner's own process."""

    def __init__(self, sut: ControllerSut) -> None:
        self.sut = sut
        self._stderr = ""

    @property
    def description(self) -> str:
        return f"in-process {type(self.sut).__module__}:{type(self.sut).__qualname__}"

    def start(self) -> None:
        self._stderr = ""

    def call(self, request: m.RequestMessage) -> m.ResponseMessage:
        try:
            reply = dispatch(self.sut, request)
        except Exception as exc:
            self._stderr = traceback.format_exc()
            raise SutFailure(
                FailureKind.exception, f"{type(exc).__name__}: {exc}", self._stderr, restart=False
            ) from exc
        expected = m.EXPECTED_REPLY[type(request)]
        if not isinstance(reply, (*expected, m.ErrorReply)):
            raise SutFailure(
                FailureKind.unexpected_reply,
                f"{type(request).__name__} answered with {type(reply).__name__}",
                restart=False,
            )
        return reply

    def close(self) -> None:
        return None

    def stderr_tail(self) -> str:
        return self._stderr
