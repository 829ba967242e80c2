"""Protocol v1 messages as typed values, and their JSON-lines wire form.

Every message is one JSON object on one line with an ``id`` (the request's integer id, echoed by the
response) and a ``type``; the other members are the message's fields in the canonical JSON form of
``kcspec.spec.codec``. ``PROTOCOL.md`` next to this module describes the exchange in prose and
``schema/v1/protocol.json`` (generated from these classes) is its JSON Schema.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

from kcspec.spec import bounded_json, codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import Request, StateChangeFailure
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

PROTOCOL_VERSION = 1


class Capability(enum.Enum):
    """What a system under test can be asked to do; the suite runs only what the SUT declares."""

    elections = "elections"
    """``elect``: the four leader-election strategies as pure functions (§6)."""
    replica_state_machine = "replica_state_machine"
    """``replica_state_change`` on a loaded state (§2.3, §4)."""
    partition_state_machine = "partition_state_machine"
    """``partition_state_change`` on a loaded state (§2.3, §5)."""
    controller_events = "controller_events"
    """``event``: whole controller events (§7, §8)."""
    fault_injection = "fault_injection"
    """Loaded states and events that arm one-shot ZooKeeper faults (§3.3)."""


class ErrorCode(enum.Enum):
    """Why a SUT refused a request."""

    unsupported = "unsupported"
    """The request type, profile or capability is not implemented."""
    invalid_input = "invalid_input"
    """The request is malformed or names something that does not exist."""
    not_enabled = "not_enabled"
    """The event cannot happen in the loaded state (its guard is false)."""
    no_state = "no_state"
    """A state-changing request arrived before any ``load``."""
    internal = "internal"
    """The SUT failed while handling a valid request."""


# ------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class Hello:
    """Open a session: the suite's protocol version and the semantics profile it will test."""

    protocol_version: int
    profile: str


@dataclass(frozen=True)
class Load:
    """Adopt ``state`` as the controller state, including the simulated ZooKeeper."""

    state: ClusterState


@dataclass(frozen=True)
class Elect:
    """Run one election strategy on one partition's input (§6); no state is read or changed."""

    strategy: ElectionStrategy
    input: ElectionInput


@dataclass(frozen=True)
class ReplicaStateChange:
    """One ``handleStateChanges(replicas, target)`` call of the replica state machine on the loaded state."""

    replicas: tuple[PartitionReplica, ...]
    target: ReplicaState


@dataclass(frozen=True)
class PartitionStateChange:
    """One ``handleStateChanges(partitions, target, strategy)`` call of the partition state machine."""

    partitions: tuple[TopicPartition, ...]
    target: PartitionState
    election: LeaderElection | None = None


@dataclass(frozen=True)
class Event:
    """Handle one controller event (environment part and controller part, ARCHITECTURE.md)."""

    event: ControllerEvent


@dataclass(frozen=True)
class Snapshot:
    """Return the current state."""


@dataclass(frozen=True)
class Shutdown:
    """Answer ``ok`` and exit."""


RequestMessage = (
    Hello | Load | Elect | ReplicaStateChange | PartitionStateChange | Event | Snapshot | Shutdown
)

REQUEST_TYPES: dict[str, type[Any]] = {
    "hello": Hello,
    "load": Load,
    "elect": Elect,
    "replica_state_change": ReplicaStateChange,
    "partition_state_change": PartitionStateChange,
    "event": Event,
    "snapshot": Snapshot,
    "shutdown": Shutdown,
}
REQUEST_NAMES: dict[type[Any], str] = {cls: name for name, cls in REQUEST_TYPES.items()}

# ------------------------------------------------------------------------------------------ responses


@dataclass(frozen=True)
class Implementation:
    name: str
    version: str


@dataclass(frozen=True)
class HelloReply:
    """The SUT's identity, the profiles it implements and its capabilities."""

    protocol_version: int
    implementation: Implementation
    profiles: tuple[str, ...]
    capabilities: frozenset[Capability]


@dataclass(frozen=True)
class Ok:
    """Acknowledges ``load`` and ``shutdown``."""


@dataclass(frozen=True)
class ElectionReply:
    """The strategy's result; ``leader`` -1 means no electable leader."""

    result: ElectionResult


@dataclass(frozen=True)
class StepReply:
    """The post-state, the requests sent (a set), the per-element failures (a set) and, for state-machine
    calls, ``results``: every requested element (canonical text) → the state it is in after the call."""

    state: ClusterState
    requests: frozenset[Request]
    failures: frozenset[StateChangeFailure]
    results: FMap[str, str] = field(default_factory=FMap)


@dataclass(frozen=True)
class StateReply:
    """Answer to ``snapshot``."""

    state: ClusterState


@dataclass(frozen=True)
class ErrorReply:
    """The request was refused; ``code`` says why."""

    code: ErrorCode
    message: str


ResponseMessage = HelloReply | Ok | ElectionReply | StepReply | StateReply | ErrorReply

RESPONSE_TYPES: dict[str, type[Any]] = {
    "hello": HelloReply,
    "ok": Ok,
    "election": ElectionReply,
    "step": StepReply,
    "state": StateReply,
    "error": ErrorReply,
}
RESPONSE_NAMES: dict[type[Any], str] = {cls: name for name, cls in RESPONSE_TYPES.items()}

EXPECTED_REPLY: dict[type[Any], tuple[type[Any], ...]] = {
    Hello: (HelloReply,),
    Load: (Ok,),
    Elect: (ElectionReply,),
    ReplicaStateChange: (StepReply,),
    PartitionStateChange: (StepReply,),
    Event: (StepReply,),
    Snapshot: (StateReply,),
    Shutdown: (Ok,),
}
"""The successful reply type of each request (``ErrorReply`` is always allowed)."""


class ProtocolError(ValueError):
    """A line that is not a valid protocol message; the message says what and where."""


# ----------------------------------------------------------------------------------------- wire form


def to_wire(msg_id: int, message: object) -> dict[str, Any]:
    """The JSON object of a request or response with its ``id``."""
    cls = type(message)
    name = REQUEST_NAMES.get(cls) or RESPONSE_NAMES.get(cls)
    if name is None:
        raise TypeError(f"{cls.__name__} is not a protocol message")
    body = codec.encode(message)
    return {"id": msg_id, "type": name, **body}


def to_line(msg_id: int, message: object) -> bytes:
    """One JSON line (UTF-8, ``\\n``-terminated)."""
    return (json.dumps(to_wire(msg_id, message), ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _parse(line: bytes | str, table: dict[str, type[Any]], what: str) -> tuple[int, object]:
    try:
        data = bounded_json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{what} is not JSON: {exc}: {_preview(line)}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"{what} is not a JSON object: {_preview(line)}")
    msg_id = data.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, int):
        raise ProtocolError(f'$.id: {what} has no integer "id": {_preview(line)}')
    kind = data.get("type")
    cls = table.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"$.type: unknown {what} type {kind!r} (known: {', '.join(table)})")
    payload = {k: v for k, v in data.items() if k not in ("id", "type")}
    try:
        return msg_id, codec.decode(payload, cls, "$")
    except codec.CodecError as exc:
        raise ProtocolError(f"{what} {kind!r} (id {msg_id}): {exc}") from None


def parse_request(line: bytes | str) -> tuple[int, RequestMessage]:
    """Decode one request line; ``ProtocolError`` names the JSON path of what is wrong."""
    msg_id, msg = _parse(line, REQUEST_TYPES, "request")
    return msg_id, msg  # type: ignore[return-value]


def parse_response(line: bytes | str) -> tuple[int, ResponseMessage]:
    """Decode one response line; ``ProtocolError`` names the JSON path of what is wrong."""
    msg_id, msg = _parse(line, RESPONSE_TYPES, "response")
    return msg_id, msg  # type: ignore[return-value]


def request_id_of(line: bytes | str) -> int | None:
    """The ``id`` of a request line when it can be read, for error replies to undecodable requests."""
    try:
        data = bounded_json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _preview(line: bytes | str, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)")
