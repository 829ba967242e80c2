"""Derive the JSON Schema (Draft 2020-12) of protocol v1 and of the vector files from the Python types.

The data model has one source of truth (the frozen dataclasses of ``kcspec.spec`` and the message
classes); the schema mirrors the canonical JSON rules of ``kcspec.spec.codec``. The committed files
under ``schema/v1/`` are this module's output, and a test fails when they are stale. Regenerate with
``python -m kcspec.conformance.protocol.schema_gen``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

from kcspec.conformance.protocol import messages as m
from kcspec.spec.codec import REQUEST_TYPES as BROKER_REQUEST_TYPES
from kcspec.spec.events import EVENT_TYPES, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition

SCHEMA_DIR = Path(__file__).parent / "schema" / "v1"
PROTOCOL_SCHEMA_ID = "https://kcspec.dev/schema/v1/protocol.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

TP_PATTERN = r"^.+-[0-9]+$"
PR_PATTERN = r"^.+-[0-9]+/-?[0-9]+$"
_BROKER_REQUEST_NAMES = {cls: name for name, cls in BROKER_REQUEST_TYPES.items()}


class SchemaBuilder:
    """Collects ``$defs`` while translating types; each record type becomes one named definition."""

    def __init__(self, ref_prefix: str = "#/$defs/") -> None:
        self.defs: dict[str, Any] = {}
        self.ref_prefix = ref_prefix

    def ref(self, name: str) -> dict[str, Any]:
        return {"$ref": f"{self.ref_prefix}{name}"}

    def of(self, typ: Any) -> dict[str, Any]:
        origin = typing.get_origin(typ)
        args = typing.get_args(typ)
        if typ is Any or typ is object:
            return {}
        if origin in (Union, types.UnionType):
            non_none = [a for a in args if a is not type(None)]
            if all(a in _BROKER_REQUEST_NAMES for a in non_none):
                return self.ref("BrokerRequest") if self._broker_requests() else {}
            alts = [self.of(a) for a in non_none]
            if len(non_none) < len(args):
                alts.append({"type": "null"})
            return alts[0] if len(alts) == 1 else {"anyOf": alts}
        if typ is bool:
            return {"type": "boolean"}
        if typ is int:
            return {"type": "integer"}
        if typ is str:
            return {"type": "string"}
        if typ is TopicPartition:
            self.defs.setdefault(
                "TopicPartition",
                {
                    "type": "string",
                    "pattern": TP_PATTERN,
                    "description": 'a partition, "<topic>-<partition>"',
                },
            )
            return self.ref("TopicPartition")
        if typ is PartitionReplica:
            self.defs.setdefault(
                "PartitionReplica",
                {
                    "type": "string",
                    "pattern": PR_PATTERN,
                    "description": 'a replica, "<topic>-<partition>/<broker>"',
                },
            )
            return self.ref("PartitionReplica")
        if isinstance(typ, type) and issubclass(typ, enum.Enum):
            self.defs.setdefault(typ.__name__, {"enum": list(typ.__members__)})
            return self.ref(typ.__name__)
        if origin is tuple:
            return {"type": "array", "items": self.of(args[0]) if args else {}}
        if origin is frozenset:
            return {"type": "array", "items": self.of(args[0]) if args else {}, "uniqueItems": True}
        if origin is FMap or typ is FMap:
            ktyp, vtyp = args if args else (str, Any)
            return {"type": "object", "propertyNames": self._key(ktyp), "additionalProperties": self.of(vtyp)}
        if typ is ControllerEvent:
            if "ControllerEvent" not in self.defs:
                self.defs["ControllerEvent"] = {}
                self.defs["ControllerEvent"] = {"oneOf": [self.record(e) for e in EVENT_TYPES]}
            return self.ref("ControllerEvent")
        if isinstance(typ, type) and dataclasses.is_dataclass(typ):
            return self.record(typ)
        raise TypeError(f"no schema for {typ!r}")

    def _key(self, ktyp: Any) -> dict[str, Any]:
        if ktyp is int:
            return {"pattern": r"^-?[0-9]+$"}
        if ktyp is TopicPartition:
            return {"pattern": TP_PATTERN}
        if ktyp is PartitionReplica:
            return {"pattern": PR_PATTERN}
        if isinstance(ktyp, type) and issubclass(ktyp, enum.Enum):
            return {"enum": list(ktyp.__members__)}
        return {}

    def _broker_requests(self) -> bool:
        if "BrokerRequest" not in self.defs:
            self.defs["BrokerRequest"] = {}
            self.defs["BrokerRequest"] = {"oneOf": [self.record(c) for c in BROKER_REQUEST_TYPES.values()]}
        return True

    def record(
        self, cls: type[Any], tag: tuple[str, str] | None = None, name: str | None = None
    ) -> dict[str, Any]:
        """A definition for a dataclass; ``tag`` adds a constant discriminator member (e.g. ``type``)."""
        name = name or cls.__name__
        if name in self.defs:
            return self.ref(name)
        self.defs[name] = {}
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {}
        required: list[str] = []
        if tag is not None:
            props[tag[0]] = {"const": tag[1]}
            required.append(tag[0])
        if isinstance(cls, type) and issubclass(cls, ControllerEvent) and cls is not ControllerEvent:
            props["kind"] = {"const": cls.kind}
            required.append("kind")
        if cls in _BROKER_REQUEST_NAMES:
            props["type"] = {"const": _BROKER_REQUEST_NAMES[cls]}
            required.append("type")
            props["position"] = {
                "type": "integer",
                "minimum": 0,
                "description": "protocol 1.1: the request's place among the requests to its broker, in send order",
            }
        for f in dataclasses.fields(cls):
            if m.WIRE_ONLY in f.metadata:
                continue  # written into other members by ``messages.to_wire`` (a request's ``position``)
            props[f.name] = self.of(hints[f.name])
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
        definition: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            definition["required"] = required
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        if doc and not doc.startswith(f"{cls.__name__}("):
            definition["description"] = " ".join(doc.split())
        self.defs[name] = definition
        return self.ref(name)


def _message_def(builder: SchemaBuilder, cls: type[Any], wire: str, suffix: str) -> dict[str, Any]:
    ref = builder.record(cls, name=f"{cls.__name__}{suffix}")
    definition = builder.defs[ref["$ref"].rsplit("/", 1)[1]]
    definition["properties"] = {
        "id": {"type": "integer"},
        "type": {"const": wire},
        **definition["properties"],
    }
    definition["required"] = ["id", "type", *definition.get("required", [])]
    return ref


def protocol_schema() -> dict[str, Any]:
    """The schema of every protocol v1 line: ``$defs/Request`` and ``$defs/Response`` are the two unions."""
    b = SchemaBuilder()
    requests = [_message_def(b, cls, name, "Request") for name, cls in m.REQUEST_TYPES.items()]
    responses = [_message_def(b, cls, name, "") for name, cls in m.RESPONSE_TYPES.items()]
    b.defs["Request"] = {"oneOf": requests}
    b.defs["Response"] = {"oneOf": responses}
    return {
        "$schema": DRAFT,
        "$id": PROTOCOL_SCHEMA_ID,
        "title": f"kcspec conformance protocol v{m.PROTOCOL_VERSION}",
        "description": "One JSON object per line: a Request from the suite or a Response from the system under "
        "test. See PROTOCOL.md.",
        "x-protocol-version": m.PROTOCOL_VERSION,
        "anyOf": [{"$ref": "#/$defs/Request"}, {"$ref": "#/$defs/Response"}],
        "$defs": dict(sorted(b.defs.items())),
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generated_files() -> dict[str, str]:
    """File name under ``schema/v1/`` → content, for every generated schema."""
    from kcspec.conformance.vectors.schema import vector_schema

    return {"protocol.json": render(protocol_schema()), "vector.json": render(vector_schema())}


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the generated schema files."""
    args = sys.argv[1:] if argv is None else argv
    stale = []
    for name, text in generated_files().items():
        path = SCHEMA_DIR / name
        current = path.read_text() if path.exists() else None
        if current != text:
            stale.append(name)
            if "--check" not in args:
                path.write_text(text)
    if "--check" in args and stale:
        print(
            f"stale schema files: {', '.join(stale)} (run python -m kcspec.conformance.protocol.schema_gen)"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
