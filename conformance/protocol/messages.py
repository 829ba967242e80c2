"""Protocol v1 messages as typed values, and their JSON-lines wire form.

Every message is one JSON object on one line with an ``id`` (the request's integer id, echoed by the
response) and a ``type``; the other members are the message's fields in the canonical JSON form of
``kcspec.spec.codec``. ``PROTOCOL.md`` next to this module describes the exchange in prose and
``schema/v1/protocol.json`` (generated from these classes) is its JSON Schema.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kcspec.spec import bounded_json, codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import ControllerMetrics, ElectionAnswer, Request, StateChangeFailure
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
PROTOCOL_MINOR = 3
"""The minor version of protocol v1 this suite speaks. A SUT declares its own in ``hello`` (``protocol_minor``,
0 when absent); the session uses the lower of the two, so a SUT written against an older minor keeps working.
PROTOCOL.md's changelog says what each minor added."""
WIRE_ONLY = "wire"
"""``field(metadata={WIRE_ONLY: ...})``: a field that is not a member of the message's JSON object but is written
into other members by ``to_wire`` (and read back by ``parse_response``); the schema and PROTOCOL.md say how."""


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
    metrics = "metrics"
    """(1.2) ``step`` replies to ``event`` carry ``metrics``: the controller's gauges after the event (§3.1)."""
    callbacks = "callbacks"
    """(1.3) The controller's event queue: the SUT handles ``ReplicaLeaderElectionQueued``,
    ``ControlledShutdownQueued``, ``ApiPartitionReassignmentQueued``, ``ListPartitionReassignmentsQueued`` and
    ``QueuedEventProcessed``, loads states with
    queued requests, and its ``step`` replies carry ``answers``: what the callbacks of queued requests were answered
    (§7.7.1, §7.9, §7.10, §7.12)."""


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
    beyond_scope = "beyond_scope"
    """(1.1) The SUT handles this kind of request but not this instance of it (a state or event it does not
    model: too many brokers, a combination it leaves out). A vector is not supported; in differential testing the
    sequence is dropped and counted, and the search goes on."""


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
    """Handle one controller event (environment part and controller part, docs/contracts.md)."""

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


KIND_SINCE: dict[str, int] = {
    "StopReplicaResponseWithoutDeletionReceived": 1,
    "ReplicaLeaderElectionQueued": 3,
    "ControlledShutdownQueued": 3,
    "ApiPartitionReassignmentQueued": 3,
    "ListPartitionReassignmentsQueued": 3,
    "QueuedEventProcessed": 3,
}
"""The protocol minor version that added an event kind (every kind not listed is in 1.0): a SUT of an older minor
that does not list its event kinds is not sent the newer ones."""

KIND_CAPABILITY: dict[str, Capability] = {
    "ReplicaLeaderElectionQueued": Capability.callbacks,
    "ControlledShutdownQueued": Capability.callbacks,
    "ApiPartitionReassignmentQueued": Capability.callbacks,
    "ListPartitionReassignmentsQueued": Capability.callbacks,
    "QueuedEventProcessed": Capability.callbacks,
}
"""Event kinds sent only to a SUT that declares a capability besides ``controller_events``."""


@dataclass(frozen=True)
class HelloReply:
    """The SUT's identity, the profiles it implements and its capabilities."""

    protocol_version: int
    implementation: Implementation
    profiles: tuple[str, ...]
    capabilities: frozenset[Capability]
    protocol_minor: int = 0
    """The minor version of protocol v1 the SUT implements (PROTOCOL.md's changelog); 0 when absent."""
    event_kinds: frozenset[str] | None = None
    """(1.1) The event kinds the SUT handles (with ``controller_events``); absent: every kind of its minor."""
    unknown_capabilities: tuple[str, ...] = field(default=(), metadata={WIRE_ONLY: "capabilities"})
    """Capabilities this suite does not know (a SUT written for a later minor): ignored, with a warning. On the
    wire they are members of ``capabilities``."""

    def handles(self, kind: str) -> bool:
        """The SUT is sent events of ``kind``: it declares ``controller_events`` and the kind (``event_kinds``, or
        by default every kind of its protocol minor, ``KIND_SINCE``)."""
        if Capability.controller_events not in self.capabilities:
            return False
        needed = KIND_CAPABILITY.get(kind)
        if needed is not None and needed not in self.capabilities:
            return False
        if self.event_kinds is not None:
            return kind in self.event_kinds
        return KIND_SINCE.get(kind, 0) <= self.protocol_minor

    def warnings(self, known_kinds: Iterable[str]) -> list[str]:
        """What this suite ignores of the ``hello``: unknown capabilities and event kinds."""
        out = [
            f"the SUT declares capability {c!r}, unknown to this suite: ignored"
            for c in self.unknown_capabilities
        ]
        unknown = sorted(set(self.event_kinds or ()) - set(known_kinds))
        out += [f"the SUT declares event kind {k!r}, unknown to this suite: ignored" for k in unknown]
        return out


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
    send_order: tuple[Request, ...] = field(default=(), metadata={WIRE_ONLY: "position"})
    """The requests in the order the controller sent them to each broker (protocol 1.1): ``send_order(...)``'s
    canonical form, or empty when the order is not known (an oracle that has none, a SUT of protocol 1.0). On the
    wire each request of ``requests`` carries its ``position`` instead: its index among the requests to the same
    broker."""
    metrics: ControllerMetrics | None = None
    """(1.2) The controller's gauges after an ``event`` step (§3.1), from a SUT that declares ``metrics``; absent
    otherwise. Compared with the spec's definitions of them on the post-state (``spec/metrics.py``)."""
    answers: frozenset[ElectionAnswer] = frozenset()
    """(1.3) The answers of the callbacks of queued requests the step called (a set; §7.9, §7.12), from a SUT that
    declares ``callbacks``; absent means none."""

    @property
    def ordered(self) -> bool:
        """The reply says in which order its requests were sent (always true of a reply without requests)."""
        return not self.requests or (bool(self.send_order) and frozenset(self.send_order) == self.requests)


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


def send_order(sent: Iterable[Request]) -> tuple[Request, ...]:
    """The canonical send order of requests given in the order they were sent: a request sent again (same type,
    recipient and content) keeps its first place, and the requests are grouped by recipient broker (ascending),
    each broker's in its send order. Only each broker's own order is observable (§3.4: one queue and one send
    thread per broker), so two controllers that interleave brokers differently have the same send order."""
    first = list(dict.fromkeys(sent))
    by_broker: dict[int, list[Request]] = {}
    for r in first:
        by_broker.setdefault(r.broker, []).append(r)
    return tuple(r for b in sorted(by_broker) for r in by_broker[b])


def positions(order: Iterable[Request]) -> dict[Request, int]:
    """Each request's index among the requests to its broker, in ``order``."""
    out: dict[Request, int] = {}
    count: dict[int, int] = {}
    for r in order:
        n = count.get(r.broker, 0)
        out[r] = n
        count[r.broker] = n + 1
    return out


def _split_capabilities(payload: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``payload`` with only the capabilities this suite knows, and the others (strings) in their order."""
    caps = payload.get("capabilities")
    if not isinstance(caps, list):
        return payload, []
    known = {c.name for c in Capability}
    unknown = [c for c in caps if isinstance(c, str) and c not in known]
    if not unknown:
        return payload, []
    return {**payload, "capabilities": [c for c in caps if c not in unknown]}, list(dict.fromkeys(unknown))


def _encode_step(msg: StepReply, body: dict[str, Any]) -> None:
    """Write each request's ``position`` into the requests of ``body`` (none when the order is not known); leave out
    ``metrics`` and ``answers`` when there are none."""
    if body.get("metrics") is None:
        body.pop("metrics", None)  # absent, not null: the reply of a SUT without the metrics capability
    if not body.get("answers"):
        body.pop("answers", None)  # absent: no callback answered (always so for a SUT without callbacks)
    order = body.pop("send_order")
    if not msg.send_order or not msg.ordered:
        return  # no order, or one that does not list exactly the requests (then none is claimed)
    by_text = {
        json.dumps(e, sort_keys=True): n
        for e, n in zip(order, positions(msg.send_order).values(), strict=True)
    }
    for item in body["requests"]:
        n = by_text.get(json.dumps(item, sort_keys=True))
        if n is not None:
            item["position"] = n


def _decode_step(payload: dict[str, Any], kind: str, msg_id: int) -> tuple[dict[str, Any], list[int | None]]:
    """``payload`` without the requests' ``position`` members, and those positions (``None``: absent)."""
    items = payload.get("requests")
    if not isinstance(items, list):
        return payload, []
    found: list[int | None] = []
    stripped: list[Any] = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and "position" in item:
            n = item["position"]
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ProtocolError(
                    f"response {kind!r} (id {msg_id}): $.requests[{i}].position: expected an integer >= 0, "
                    f"got {json.dumps(n)}"
                )
            found.append(n)
            stripped.append({k: v for k, v in item.items() if k != "position"})
        else:
            found.append(None)
            stripped.append(item)
    given = [n for n in found if n is not None]
    if given and len(given) != len(found):
        raise ProtocolError(
            f"response {kind!r} (id {msg_id}): $.requests: every request carries a position or none does "
            f"({len(given)} of {len(found)} do)"
        )
    return {**payload, "requests": stripped}, found


def _with_order(
    msg: StepReply, items: list[Any], found: list[int | None], kind: str, msg_id: int
) -> StepReply:
    """``msg`` with the send order its requests' positions give; positions are ranks within a broker (a SUT may
    number them per broker or across all brokers), two requests to one broker at one position are an error."""
    if not found or found[0] is None:
        return msg
    decoded = [codec.decode(item, Request, f"$.requests[{i}]") for i, item in enumerate(items)]
    seen: dict[tuple[int, int], int] = {}
    for i, (r, n) in enumerate(zip(decoded, found, strict=True)):
        key = (r.broker, n or 0)
        if key in seen:
            raise ProtocolError(
                f"response {kind!r} (id {msg_id}): $.requests[{i}].position: requests {seen[key]} and {i} to "
                f"broker {r.broker} are both at position {n}"
            )
        seen[key] = i
    ranked = sorted(zip(decoded, found, strict=True), key=lambda rn: (rn[0].broker, rn[1] or 0))
    return replace(msg, send_order=tuple(r for r, _n in ranked))


# ----------------------------------------------------------------------------------------- wire form


def to_wire(msg_id: int, message: object) -> dict[str, Any]:
    """The JSON object of a request or response with its ``id``."""
    cls = type(message)
    name = REQUEST_NAMES.get(cls) or RESPONSE_NAMES.get(cls)
    if name is None:
        raise TypeError(f"{cls.__name__} is not a protocol message")
    body = codec.encode(message)
    if cls is StepReply:
        _encode_step(message, body)  # type: ignore[arg-type]
    elif cls is HelloReply:
        body["capabilities"] += body.pop("unknown_capabilities")
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
    if "send_order" in payload and cls is StepReply:
        raise ProtocolError(f"{what} {kind!r} (id {msg_id}): $.send_order: unknown field")
    found: list[int | None] = []
    unknown: list[str] = []
    if cls is StepReply:
        payload, found = _decode_step(payload, str(kind), msg_id)
    elif cls is HelloReply:
        if "unknown_capabilities" in payload:
            raise ProtocolError(f"{what} {kind!r} (id {msg_id}): $.unknown_capabilities: unknown field")
        payload, unknown = _split_capabilities(payload)
    try:
        msg = codec.decode(payload, cls, "$")
        if found:
            msg = _with_order(msg, payload["requests"], found, str(kind), msg_id)
        if unknown:
            msg = replace(msg, unknown_capabilities=tuple(unknown))
        return msg_id, msg
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
