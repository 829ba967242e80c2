"""The JSON Schema of one exported vector file, derived from the vector and message types."""

from __future__ import annotations

from typing import Any

from kcspec.conformance.protocol import messages as m
from kcspec.conformance.protocol.schema_gen import DRAFT, SchemaBuilder
from kcspec.conformance.vectors.model import Level
from kcspec.spec.state import ClusterState

VECTOR_SCHEMA_ID = "https://kcspec.dev/schema/v1/vector.json"


def _payload(b: SchemaBuilder, cls: type[Any], wire: str, name: str) -> dict[str, Any]:
    ref = b.record(cls, name=name)
    definition = b.defs[name]
    definition["properties"] = {"type": {"const": wire}, **definition["properties"]}
    definition["required"] = ["type", *definition.get("required", [])]
    return ref


def vector_schema() -> dict[str, Any]:
    b = SchemaBuilder()
    requests = [
        _payload(b, cls, wire, f"{cls.__name__}Request")
        for wire, cls in m.REQUEST_TYPES.items()
        if cls in (m.Elect, m.ReplicaStateChange, m.PartitionStateChange, m.Event)
    ]
    replies = [
        _payload(b, cls, wire, cls.__name__)
        for wire, cls in m.RESPONSE_TYPES.items()
        if cls in (m.ElectionReply, m.StepReply, m.ErrorReply)
    ]
    state = b.of(ClusterState | None)
    capability = b.of(m.Capability)
    return {
        "$schema": DRAFT,
        "$id": VECTOR_SCHEMA_ID,
        "title": "kcspec conformance vector v1",
        "description": "Load `state` (unless null), send `request`, compare the reply with `expected` "
        "(requests and failures as sets, `unspecified` paths ignored).",
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "profile": {"enum": ["kafka-2.8", "kafka-1.1"]},
            "level": {"enum": list(Level.__members__)},
            "capabilities": {"type": "array", "items": capability, "uniqueItems": True},
            "sections": {"type": "array", "items": {"type": "string", "pattern": "^§[0-9]"}, "minItems": 1},
            "description": {"type": "string"},
            "state": state,
            "request": {"oneOf": requests},
            "expected": {"oneOf": replies},
            "unspecified": {"type": "array", "items": {"type": "string", "pattern": r"^\$"}},
        },
        "required": [
            "id",
            "profile",
            "level",
            "capabilities",
            "sections",
            "description",
            "state",
            "request",
            "expected",
        ],
        "additionalProperties": False,
        "$defs": dict(sorted(b.defs.items())),
    }
