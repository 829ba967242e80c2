"""The canonical JSON form of the data model, with lossless round-trip and path-naming validation.

One encoding is used everywhere (DESIGN.md): vectors, protocol messages, counterexamples, traces and
audit input. Rules:
* a record (frozen dataclass) is a JSON object with its fields in declaration order; events carry
  ``"kind"`` and requests ``"type"`` first so that unions can be decoded;
* enums are their Kafka names (``"OnlineReplica"``); tuples are lists; frozensets are lists sorted by
  their canonical text; ``None`` is ``null``;
* a ``TopicPartition`` is the string ``"<topic>-<partition>"`` (§10.2) and a ``PartitionReplica`` the
  string ``"<topic>-<partition>/<replica>"``, both as values and as map keys;
* a map is a JSON object whose keys are rendered as above (ints as decimal strings), sorted.

``decode`` raises ``CodecError`` naming the JSON path of the offending value (``$.controller.leadership
["foo-0"].leader_and_isr.isr[1]``) and what was expected there.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence, Set
from json.encoder import encode_basestring_ascii as _json_string
from typing import Any, NoReturn, TypeVar, Union

from kcspec.spec import bounded_json
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition

T = TypeVar("T")

REQUEST_TYPES: dict[str, type[Any]] = {
    "LeaderAndIsr": LeaderAndIsrRequest,
    "UpdateMetadata": UpdateMetadataRequest,
    "StopReplica": StopReplicaRequest,
}
_REQUEST_NAMES = {cls: name for name, cls in REQUEST_TYPES.items()}


class CodecError(ValueError):
    """Bad canonical JSON: ``path`` is the JSON path of the offending value."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


# ---------------------------------------------------------------------------------------------- encode


def tp_text(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def pr_text(pr: PartitionReplica) -> str:
    return f"{tp_text(pr.tp)}/{pr.replica}"


def _key_text(key: object) -> str:
    if isinstance(key, TopicPartition):
        return tp_text(key)
    if isinstance(key, PartitionReplica):
        return pr_text(key)
    if isinstance(key, enum.Enum):
        return key.name
    if isinstance(key, bool):
        raise TypeError("boolean map keys are not part of the data model")
    if isinstance(key, int | str):
        return str(key)
    raise TypeError(f"unsupported map key {key!r}")


def encode(value: object) -> Any:
    """Encode a data-model value into plain JSON data (dicts, lists, strings, numbers, booleans, None).

    The way to encode a value depends on its class alone, so it is chosen once per class (``_encoder_of``)."""
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        encoder = _ENCODERS[type(value)] = _encoder_of(type(value))
    return encoder(value)


_ENCODERS: dict[type[Any], Callable[[Any], Any]] = {}


def _encoder_of(cls: type[Any]) -> Callable[[Any], Any]:
    """How values of ``cls`` are encoded; the cases are tried in the order of the data model's rules (module
    docstring): a str or int subclass (a mixed-in enum) is its plain value, a record that is a tuple is a record."""
    if cls is type(None) or issubclass(cls, bool | int | str):
        return _identity
    if issubclass(cls, enum.Enum):
        return _enum_name
    if cls is TopicPartition:
        return tp_text
    if cls is PartitionReplica:
        return pr_text
    if issubclass(cls, Mapping):
        return _encode_map
    if issubclass(cls, tuple | list) and not dataclasses.is_dataclass(cls):
        return _encode_sequence
    if issubclass(cls, frozenset | set):
        return _encode_set
    if dataclasses.is_dataclass(cls) and not issubclass(cls, type):
        return _record_encoder(cls)
    return _unsupported


def _enum_name(value: enum.Enum) -> str:
    return value.name


def _encode_map(value: Mapping[Any, Any]) -> dict[str, Any]:
    items = sorted(((_key_text(k), encode(v)) for k, v in value.items()), key=lambda kv: _sort_key(kv[0]))
    return dict(items)


def _encode_sequence(value: Sequence[Any]) -> list[Any]:
    return [encode(v) for v in value]


def _encode_set(value: Set[Any]) -> list[Any]:
    return sorted([encode(v) for v in value], key=_canonical_text)


def _canonical_text(encoded: object) -> str:
    """``json.dumps(encoded, sort_keys=True)``, the order of a set's elements; strings and ints directly."""
    kind = type(encoded)
    if kind is str:
        return _json_string(encoded)  # type: ignore[arg-type]
    if kind is int:
        return int.__repr__(encoded)
    return json.dumps(encoded, sort_keys=True)


def _record_encoder(cls: type[Any]) -> Callable[[Any], dict[str, Any]]:
    names = tuple(f.name for f in dataclasses.fields(cls))
    is_event = issubclass(cls, ControllerEvent)
    request_type = _REQUEST_NAMES.get(cls)

    def record(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if is_event:
            out["kind"] = value.kind
        if request_type is not None:
            out["type"] = request_type
        for name in names:
            out[name] = encode(getattr(value, name))
        return out

    return record


def _unsupported(value: object) -> NoReturn:
    raise TypeError(f"cannot encode {type(value).__name__}: {value!r}")


def _sort_key(text: str) -> tuple[str, int, str]:
    """Sort ``foo-10`` after ``foo-9`` and ``2`` before ``10``."""
    head, sep, tail = text.rpartition("-")
    number = tail.split("/")[0]
    # ASCII digits only: str.isdigit() also takes "²" and "٣", which int() refuses.
    if sep and number.isascii() and number.isdigit():
        return (head, int(number), text)
    if text.lstrip("-").isascii() and text.lstrip("-").isdigit():
        return ("", int(text), text)
    return (text, 0, text)


def dumps(value: object, *, indent: int | None = None) -> str:
    """Canonical JSON text of a data-model value (deterministic: same value, same bytes)."""
    return json.dumps(encode(value), indent=indent, sort_keys=False, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- decode


def parse_tp(text: object, path: str) -> TopicPartition:
    if not isinstance(text, str):
        raise CodecError(path, f'expected a partition like "topic-0", got {_show(text)}')
    topic, sep, part = text.rpartition("-")
    if not sep or not topic or not _is_decimal(part):
        raise CodecError(path, f'expected a partition like "topic-0", got {_show(text)}')
    return TopicPartition(topic, int(part))


def parse_pr(text: object, path: str) -> PartitionReplica:
    if not isinstance(text, str) or "/" not in text:
        raise CodecError(path, f'expected a replica like "topic-0/1", got {_show(text)}')
    tp_part, _, replica = text.rpartition("/")
    if not _is_decimal(replica.removeprefix("-")):
        raise CodecError(path, f'expected a replica like "topic-0/1", got {_show(text)}')
    return PartitionReplica(parse_tp(tp_part, path), int(replica))


def _is_decimal(text: str) -> bool:
    """ASCII digits only, and no more than a JSON number may have (``int()`` of 4,300+ digits raises)."""
    return 0 < len(text) <= bounded_json.MAX_NUMBER_CHARS and text.isascii() and text.isdigit()


def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _walk(data: object, typ: Any, path: str) -> Any:
    """The reference decoder: a walk over ``data`` that carries the JSON path, so that its errors name it."""
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if typ is Any or typ is object:
        return data
    if origin in (Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if data is None and len(non_none) < len(args):
            return None
        if len(non_none) == 1:
            return _walk(data, non_none[0], path)
        if all(a in _REQUEST_NAMES for a in non_none):
            return _decode_request(data, path)
        raise CodecError(path, f"cannot decode union {typ}")
    if typ is bool:
        if not isinstance(data, bool):
            raise CodecError(path, f"expected true or false, got {_show(data)}")
        return data
    if typ is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise CodecError(path, f"expected an integer, got {_show(data)}")
        return data
    if typ is str:
        if not isinstance(data, str):
            raise CodecError(path, f"expected a string, got {_show(data)}")
        return data
    if typ is TopicPartition:
        return parse_tp(data, path)
    if typ is PartitionReplica:
        return parse_pr(data, path)
    if isinstance(typ, type) and issubclass(typ, enum.Enum):
        if not isinstance(data, str) or data not in typ.__members__:
            names = ", ".join(typ.__members__)
            raise CodecError(path, f"expected one of {names}; got {_show(data)}")
        return typ[data]
    if origin is tuple:
        if not isinstance(data, list):
            raise CodecError(path, f"expected a list, got {_show(data)}")
        elem = args[0] if args else Any
        return tuple(_walk(v, elem, f"{path}[{i}]") for i, v in enumerate(data))
    if origin is frozenset:
        if not isinstance(data, list):
            raise CodecError(path, f"expected a list, got {_show(data)}")
        elem = args[0] if args else Any
        items = [_walk(v, elem, f"{path}[{i}]") for i, v in enumerate(data)]
        result = frozenset(items)
        if len(result) != len(items):
            raise CodecError(path, "a set must not list the same element twice")
        return result
    if origin is FMap or typ is FMap:
        if not isinstance(data, dict):
            raise CodecError(path, f"expected an object, got {_show(data)}")
        ktyp, vtyp = args if args else (str, Any)
        out: dict[Any, Any] = {}
        for k, v in data.items():
            kpath = f"{path}[{json.dumps(k)}]"
            out[_decode_key(k, ktyp, kpath)] = _walk(v, vtyp, kpath)
        return FMap(out)
    if isinstance(typ, type) and typ is ControllerEvent:
        return _walk_event(data, path)
    if isinstance(typ, type) and dataclasses.is_dataclass(typ):
        return _decode_record(data, typ, path)
    raise CodecError(path, f"unsupported type {typ!r}")


def _decode_key(key: str, ktyp: Any, path: str) -> Any:
    if ktyp is int:
        if not _is_decimal(key.removeprefix("-")):
            raise CodecError(path, f"expected an integer key, got {_show(key)}")
        return int(key)
    if ktyp is str:
        return key
    if ktyp is TopicPartition:
        return parse_tp(key, path)
    if ktyp is PartitionReplica:
        return parse_pr(key, path)
    if isinstance(ktyp, type) and issubclass(ktyp, enum.Enum):
        return _walk(key, ktyp, path)
    raise CodecError(path, f"unsupported key type {ktyp!r}")


def _decode_record(data: object, cls: type[T], path: str, skip: tuple[str, ...] = ()) -> T:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object ({cls.__name__}), got {_show(data)}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = [k for k in data if k not in fields and k not in skip]
    if unknown:
        raise CodecError(
            f"{path}.{unknown[0]}", f"unknown field of {cls.__name__} (fields: {', '.join(fields)})"
        )
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _walk(data[name], hints[name], f"{path}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CodecError(f"{path}.{name}", f"missing required field of {cls.__name__}")
    return cls(**kwargs)


def decode_event(data: object, path: str = "$") -> ControllerEvent:
    """Decode an event object (its ``"kind"`` names its class)."""
    event: ControllerEvent = decode(data, ControllerEvent, path)
    return event


def _walk_event(data: object, path: str) -> ControllerEvent:
    if not isinstance(data, dict) or "kind" not in data:
        raise CodecError(path, f'expected an event object with a "kind", got {_show(data)}')
    kind = data["kind"]
    cls = EVENTS_BY_KIND.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CodecError(
            f"{path}.kind", f"unknown event kind {_show(kind)} (known: {', '.join(EVENTS_BY_KIND)})"
        )
    return _decode_record(data, cls, path, skip=("kind",))


def _decode_request(data: object, path: str) -> Any:
    if not isinstance(data, dict) or "type" not in data:
        raise CodecError(path, f'expected a request object with a "type", got {_show(data)}')
    cls = REQUEST_TYPES.get(data["type"]) if isinstance(data["type"], str) else None
    if cls is None:
        raise CodecError(f"{path}.type", f"unknown request type {_show(data['type'])}")
    return _decode_record(data, cls, path, skip=("type",))


# ------------------------------------------------------------------------------------- compiled decoders
#
# Decoding is on every hot path of the conformance suite (each reply of a system under test, each cached vector):
# the walk above asks ``typing`` about ``typ`` at every value and builds the JSON path of every value. ``decode``
# first runs a decoder compiled once per type, which makes the same checks without paths; when it rejects the data
# (or raises anything), the walk runs again from the top and raises its error, which names the path. So the walk
# stays the one definition of what is valid and of what an error says, and the compiled decoders only have to
# accept nothing the walk rejects (``tests/unit/foundation/test_codec_compiled.py`` compares the two).

_Decoder = Callable[[object], Any]


class _Invalid(Exception):
    """The compiled decoder rejects the data (the walk then says where and why)."""


_COMPILED: dict[Any, _Decoder] = {}


def decode(data: object, typ: Any, path: str = "$") -> Any:
    """Decode plain JSON data into a value of type ``typ``, validating every field.

    Raises ``CodecError`` naming the JSON path (``path`` is the root's name) of the first offending value."""
    try:
        return _compiled(typ)(data)
    except Exception:  # rejected: the walk decides, and names the path of its error
        pass
    return _walk(data, typ, path)


def _compiled(typ: Any) -> _Decoder:
    decoder = _COMPILED.get(typ)
    if decoder is None:
        decoder = _compile(typ)
        _COMPILED[typ] = decoder
    return decoder


def _identity(data: object) -> object:
    return data


def _reject(data: object) -> NoReturn:
    raise _Invalid


def _bool(data: object) -> bool:
    if data is True or data is False:
        return data
    raise _Invalid


def _int(data: object) -> int:
    if type(data) is int:
        return data
    raise _Invalid


def _str(data: object) -> str:
    if type(data) is str:
        return data
    raise _Invalid


def _tp(data: object) -> TopicPartition:
    return parse_tp(data, "$")


def _pr(data: object) -> PartitionReplica:
    return parse_pr(data, "$")


def _int_key(key: str) -> int:
    if not _is_decimal(key.removeprefix("-")):
        raise _Invalid
    return int(key)


def _compile(typ: Any) -> _Decoder:
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if typ is Any or typ is object:
        return _identity
    if origin in (Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        optional = len(non_none) < len(args)
        if len(non_none) == 1:
            inner = _compiled(non_none[0])
        elif all(a in _REQUEST_NAMES for a in non_none):
            inner = _tagged("type", REQUEST_TYPES)
        else:
            inner = _reject
        if not optional:
            return inner
        return lambda data: None if data is None else inner(data)
    simple = {bool: _bool, int: _int, str: _str, TopicPartition: _tp, PartitionReplica: _pr}.get(typ)
    if simple is not None:
        return simple
    if isinstance(typ, type) and issubclass(typ, enum.Enum):
        return _enum_decoder(typ)
    if origin is tuple or origin is frozenset:
        elem = _compiled(args[0]) if args else _identity
        if origin is tuple:

            def sequence(data: object) -> Any:
                if type(data) is not list:
                    raise _Invalid
                return tuple([elem(v) for v in data])

            return sequence

        def set_of(data: object) -> Any:
            if type(data) is not list:
                raise _Invalid
            items = [elem(v) for v in data]
            result = frozenset(items)
            if len(result) != len(items):
                raise _Invalid
            return result

        return set_of
    if origin is FMap or typ is FMap:
        ktyp, vtyp = args if args else (str, Any)
        key = _key_decoder(ktyp)
        value = _compiled(vtyp)

        def mapping(data: object) -> Any:
            if type(data) is not dict:
                raise _Invalid
            return FMap({key(k): value(v) for k, v in data.items()})

        return mapping
    if typ is ControllerEvent:
        return _tagged("kind", EVENTS_BY_KIND)
    if isinstance(typ, type) and dataclasses.is_dataclass(typ):
        return _record_decoder(typ, ())
    return _reject


def _enum_decoder(typ: type[enum.Enum]) -> _Decoder:
    members = dict(typ.__members__)

    def member(data: object) -> Any:
        if type(data) is str:
            found = members.get(data)
            if found is not None:
                return found
        raise _Invalid

    return member


def _key_decoder(ktyp: Any) -> Callable[[str], Any]:
    if ktyp is int:
        return _int_key
    if ktyp is str:
        return _str
    if ktyp is TopicPartition:
        return _tp
    if ktyp is PartitionReplica:
        return _pr
    if isinstance(ktyp, type) and issubclass(ktyp, enum.Enum):
        return _enum_decoder(ktyp)
    return _reject


def _record_decoder(cls: type[Any], skip: tuple[str, ...]) -> _Decoder:
    """A record's decoder; its fields' decoders are compiled at its first use (records may refer to each other).
    The table is built whole and then published in one assignment, so a thread never sees a part of it."""
    table: list[tuple[tuple[str, _Decoder, bool], ...]] = []
    allowed = frozenset(f.name for f in dataclasses.fields(cls)) | frozenset(skip)

    def record(data: object) -> Any:
        if not table:
            hints = _hints(cls)
            built = tuple(
                (
                    f.name,
                    _compiled(hints[f.name]),
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                )
                for f in dataclasses.fields(cls)
            )
            if not table:
                table.append(built)
        if type(data) is not dict or not allowed.issuperset(data):
            raise _Invalid
        kwargs: dict[str, Any] = {}
        for name, decoder, required in table[0]:
            if name in data:
                kwargs[name] = decoder(data[name])
            elif required:
                raise _Invalid
        return cls(**kwargs)

    return record


def _tagged(tag: str, classes: Mapping[str, type[Any]]) -> _Decoder:
    decoders = {name: _record_decoder(cls, (tag,)) for name, cls in classes.items()}

    def tagged(data: object) -> Any:
        if type(data) is dict:
            name = data.get(tag)
            if type(name) is str:
                decoder = decoders.get(name)
                if decoder is not None:
                    return decoder(data)
        raise _Invalid

    return tagged


def loads(text: str, typ: Any, source: str = "$") -> Any:
    """Parse canonical JSON text into a value of ``typ``; errors name ``source`` and the JSON path."""
    try:
        data = bounded_json.loads(text)
    except json.JSONDecodeError as exc:
        raise CodecError(
            source, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return decode(data, typ, source)
