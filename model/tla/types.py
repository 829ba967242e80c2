"""Types of the expression language, for the TLA+ backend's inference over ``Expr`` trees.

TLA+ writes ``x ∈ S`` differently for a set and a sequence (``x \\in Range(q)``), sizes with
``Cardinality`` or ``Len``, filters with ``{x \\in S : P}`` or ``SelectSeq``; the expression language
leaves that to run time. The TLA+ backend therefore infers, for every node, whether it denotes a set,
a sequence, a map, a record of a vocabulary class, an enum, an integer, a boolean or a string.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class T:
    """A type: ``kind`` is one of int bool str enum rec union set seq map any none; ``cls`` for enum/rec; ``args`` the
    element types (set, seq), key and value types (map) or member record types (union)."""

    kind: str
    cls: type | None = None
    args: tuple[T, ...] = ()

    def __str__(self) -> str:
        if self.cls is not None:
            return f"{self.kind}<{self.cls.__name__}>"
        if self.args:
            return f"{self.kind}[{', '.join(map(str, self.args))}]"
        return self.kind


INT, BOOL, STR, ANY = T("int"), T("bool"), T("str"), T("any")
NONE = T("none")
"""The type of ``None``: the model value ``NoValue``, which TLC compares with values of every kind."""


def set_of(elem: T) -> T:
    return T("set", args=(elem,))


def seq_of(elem: T) -> T:
    return T("seq", args=(elem,))


def map_of(key: T, value: T) -> T:
    return T("map", args=(key, value))


def elem(t: T) -> T:
    """The type of what iterating over ``t`` yields (the keys, for a map)."""
    if t.kind in ("set", "seq", "map"):
        return t.args[0]
    return ANY


def unify(a: T, b: T) -> T:
    """The more precise of two types of the same expression (``any`` is the unknown)."""
    if a.kind in ("any", "none"):
        return b
    if b.kind in ("any", "none") or a == b:
        return a
    if a.kind == b.kind and a.cls == b.cls and len(a.args) == len(b.args):
        return T(a.kind, a.cls, tuple(unify(x, y) for x, y in zip(a.args, b.args, strict=True)))
    return a


@cache
def field_types(cls: type) -> dict[str, T]:
    hints = typing.get_type_hints(cls)
    return {f.name: from_hint(hints[f.name]) for f in dataclasses.fields(cls)}


def from_hint(hint: Any) -> T:
    """A Python type hint of the vocabulary → ``T``; ``X | None`` is ``X`` (``None`` has no TLA+ type)."""
    from kcspec.spec.fmap import FMap

    if hint is bool:
        return BOOL
    if hint is int:
        return INT
    if hint is str:
        return STR
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return T("enum", hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return T("rec", hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return from_hint(inner[0])
        if all(isinstance(a, type) and dataclasses.is_dataclass(a) for a in inner):
            return T("union", args=tuple(T("rec", a) for a in inner))
        return ANY
    if origin in (frozenset, set):
        return set_of(from_hint(args[0]))
    if origin is tuple:
        return seq_of(from_hint(args[0]) if args else ANY)
    if origin in (FMap, dict, Mapping) or (isinstance(origin, type) and issubclass(origin, Mapping)):
        return map_of(from_hint(args[0]), from_hint(args[1]))
    return ANY


def of_value(v: object) -> T:
    if v is None:
        return NONE
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, str):
        return STR
    if isinstance(v, enum.Enum):
        return T("enum", type(v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return T("rec", type(v))
    if isinstance(v, frozenset | set):
        return set_of(of_value(next(iter(v))) if v else ANY)
    if isinstance(v, tuple | list):
        return seq_of(of_value(v[0]) if v else ANY)
    if isinstance(v, Mapping):
        if not v:
            return map_of(ANY, ANY)
        k = next(iter(v))
        return map_of(of_value(k), of_value(v[k]))
    return ANY


def field_type(t: T, name: str) -> T | None:
    """The type of field ``name`` of a record or of a union of records (``None``: no such field)."""
    if t.kind == "rec" and t.cls is not None:
        return field_types(t.cls).get(name)
    if t.kind == "union":
        found = [ft for m in t.args if (ft := field_type(m, name)) is not None]
        if not found:
            return None
        result = found[0]
        for ft in found[1:]:
            result = unify(result, ft) if result.kind == ft.kind else ANY
        return result
    return ANY


TAGGED: dict[type, str] = {}
"""The request classes (``LeaderAndIsr`` and ``StopReplica`` requests have the same field names): their TLA+
records carry ``type |-> "<name>"`` (the canonical JSON's tag) because TLA+ records, unlike dataclasses, do
not know their class. Filled on first use from ``kcspec.spec.codec.REQUEST_TYPES``."""


def tag_of(cls: type) -> str | None:
    if not TAGGED:
        from kcspec.spec.codec import REQUEST_TYPES

        TAGGED.update({c: n for n, c in REQUEST_TYPES.items()})
    return TAGGED.get(cls)
