"""A conformance test vector: a state to load, one request, the expected reply, and what it checks.

A vector is checked by loading ``state`` (when present), sending ``request`` and comparing the reply
with ``expected`` (``kcspec.conformance.reply_diff``). ``sections`` trace it to the semantics document;
``capabilities`` say what a SUT must declare for the vector to run (otherwise it is "not supported").
The file form is plain JSON (``to_json`` / ``from_json``), described by ``schema/v1/vector.json``.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any

from kcspec.conformance.protocol import messages as m
from kcspec.spec import codec
from kcspec.spec.state import ClusterState


class Level(enum.Enum):
    """How much of a controller a vector exercises; ``--level`` runs every level up to the one named."""

    elections = 1
    machines = 2
    controller = 3


VectorRequest = m.Elect | m.ReplicaStateChange | m.PartitionStateChange | m.Event
VectorReply = m.ElectionReply | m.StepReply | m.ErrorReply


@dataclass(frozen=True)
class Vector:
    id: str
    profile: str
    level: Level
    capabilities: frozenset[m.Capability]
    sections: tuple[str, ...]
    description: str
    state: ClusterState | None
    request: VectorRequest
    expected: VectorReply
    unspecified: tuple[str, ...] = ()
    """JSON paths (``$.state.zk.zxid``) of reply members that are not compared."""


class VectorError(ValueError):
    """A vector file that cannot be read; the message names the file and the JSON path."""


def _message_json(msg: object) -> dict[str, Any]:
    wire = m.to_wire(0, msg)
    del wire["id"]
    return wire


def to_json(v: Vector) -> dict[str, Any]:
    return {
        "id": v.id,
        "profile": v.profile,
        "level": v.level.name,
        "capabilities": sorted(c.name for c in v.capabilities),
        "sections": list(v.sections),
        "description": v.description,
        "state": codec.encode(v.state),
        "request": _message_json(v.request),
        "expected": _message_json(v.expected),
        "unspecified": list(v.unspecified),
    }


def dumps(v: Vector) -> str:
    return json.dumps(to_json(v), indent=1, ensure_ascii=False) + "\n"


def from_json(data: object, source: str = "$") -> Vector:
    """Decode a vector object; ``VectorError`` names ``source`` and the offending JSON path."""
    if not isinstance(data, dict):
        raise VectorError(f"{source}: a vector must be a JSON object")
    try:
        level_name = data.get("level")
        if level_name not in Level.__members__:
            raise VectorError(
                f"{source}: $.level: expected one of {', '.join(Level.__members__)}, got {level_name!r}"
            )
        req = data.get("request")
        exp = data.get("expected")
        if not isinstance(req, dict) or not isinstance(exp, dict):
            raise VectorError(f"{source}: $.request and $.expected must be objects")
        _, request = m.parse_request(json.dumps({"id": 0, **req}))
        _, expected = m.parse_response(json.dumps({"id": 0, **exp}))
        if not isinstance(request, m.Elect | m.ReplicaStateChange | m.PartitionStateChange | m.Event):
            raise VectorError(f"{source}: $.request.type: a vector's request cannot be {req.get('type')!r}")
        if not isinstance(expected, m.ElectionReply | m.StepReply | m.ErrorReply):
            raise VectorError(f"{source}: $.expected.type: a vector cannot expect {exp.get('type')!r}")
        return Vector(
            id=codec.decode(data.get("id"), str, "$.id"),
            profile=codec.decode(data.get("profile"), str, "$.profile"),
            level=Level[str(level_name)],
            capabilities=codec.decode(data.get("capabilities"), frozenset[m.Capability], "$.capabilities"),
            sections=codec.decode(data.get("sections"), tuple[str, ...], "$.sections"),
            description=codec.decode(data.get("description"), str, "$.description"),
            state=codec.decode(data.get("state"), ClusterState | None, "$.state"),
            request=request,
            expected=expected,
            unspecified=codec.decode(data.get("unspecified", []), tuple[str, ...], "$.unspecified"),
        )
    except (codec.CodecError, m.ProtocolError) as exc:
        raise VectorError(f"{source}: {exc}") from None


def level_of(request: VectorRequest) -> Level:
    if isinstance(request, m.Elect):
        return Level.elections
    if isinstance(request, m.ReplicaStateChange | m.PartitionStateChange):
        return Level.machines
    return Level.controller
