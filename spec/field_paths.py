"""Build-time checking of the field paths of the spec: every ``.f("name")``, ``.with_(name=…)`` and
``rec(Cls, name=…)`` must name a field of the record it is applied to.

Expressions are untyped trees, so the check infers, where it can, the record type of each sub-expression: the
free variables of a rule have declared types (``s: ClusterState``, an action's parameters), a ``Rec`` has its
class, a field access has the annotated type of the field, a ``Let``/``Filter``/``Fold``… variable has the type
of what it is bound to (the element type of a ``frozenset[T]``/``tuple[T, ...]``, the value type of an
``FMap[K, V]``), and a procedure parameter has the type of the argument of the first call that reaches it.
Where the type is not known (an ``X | None`` field, a map literal without type arguments) the access is not
checked; a misspelt name is reported as soon as its receiver's type is known, with the record type, the bad
name and the valid ones.

``kcspec.spec.actions.registry.build`` (through ``check_action``) and ``kcspec.spec.invariants.invariants`` run the
check, so a misspelt field fails when the spec is built, not when a step first evaluates it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping

from kcspec.spec.fmap import FMap
from kcspec.spec.lang import (
    Action,
    BigUnion,
    Call,
    Const,
    Def,
    EnumName,
    Expr,
    Field,
    Filter,
    First,
    Fold,
    Head,
    If,
    Image,
    Let,
    MapBuild,
    MapGet,
    MapGetOr,
    MapKeys,
    Quant,
    Rec,
    Rule,
    Sorted,
    Var,
    With,
    children,
)
from kcspec.spec.state import ClusterState

Type = object
"""A Python type or type hint (``ClusterState``, ``frozenset[TopicPartition]``, ``FMap[K, V]``), or ``None``
when unknown."""


class FieldPathError(ValueError):
    """A field name that the record type it is applied to does not have."""

    def __init__(self, record: type, name: str, where: str) -> None:
        valid = ", ".join(sorted(_fields(record)))
        super().__init__(f"{where}: {record.__name__} has no field {name!r} (its fields: {valid})")
        self.record = record
        self.name = name


@functools.cache
def _fields(cls: type) -> Mapping[str, Type]:
    """The fields of a record class with their annotated types (``None`` where the hint cannot be resolved)."""
    names = [f.name for f in dataclasses.fields(cls)]
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        hints = {}
    return {n: hints.get(n) for n in names}


def _is_record(t: Type) -> bool:
    return isinstance(t, type) and dataclasses.is_dataclass(t)


def _element(t: Type) -> Type:
    """The element type of a set or sequence type (``None`` if unknown)."""
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin in (frozenset, set, tuple) and args:
        return args[0]
    return None


def _value(t: Type) -> Type:
    """The value type of a finite map type (``None`` if unknown)."""
    if typing.get_origin(t) is FMap and len(typing.get_args(t)) == 2:
        return typing.get_args(t)[1]
    return None


def _set_of(t: Type) -> Type:
    return types.GenericAlias(frozenset, (t,))


def _seq_of(t: Type) -> Type:
    return types.GenericAlias(tuple, (t, ...))


def _map_of(key: Type, value: Type) -> Type:
    return getattr(FMap, "__class_getitem__")((key, value))  # noqa: B009 - FMap[key, value] of run-time types


def _key(t: Type) -> Type:
    if typing.get_origin(t) is FMap and len(typing.get_args(t)) == 2:
        return typing.get_args(t)[0]
    return None


class _Checker:
    def __init__(self, where: str, env: Mapping[str, Type]) -> None:
        self.where = where
        self.env: dict[str, Type] = dict(env)
        self.seen: dict[int, Type] = {}
        self.defs: set[int] = set()

    def check_field(self, record: Type, name: str) -> Type:
        if not _is_record(record):
            return None
        assert isinstance(record, type)
        fields = _fields(record)
        if name not in fields:
            raise FieldPathError(record, name, self.where)
        return fields[name]

    def infer(self, e: Expr) -> Type:
        key = id(e)
        if key in self.seen:
            return self.seen[key]
        t = self._infer(e)
        self.seen[key] = t
        return t

    def _bind(self, name: str, t: Type) -> None:
        self.env[name] = t

    def _infer(self, e: Expr) -> Type:  # one case per node kind
        if isinstance(e, Var):
            return self.env.get(e.name)
        if isinstance(e, Const):
            return type(e.value) if _is_record(type(e.value)) else None
        if isinstance(e, Field):
            return self.check_field(self.infer(e.obj), e.name)
        if isinstance(e, With):
            t = self.infer(e.obj)
            for name, value in e.updates:
                self.check_field(t, name)
                self.infer(value)
            return t
        if isinstance(e, Rec):
            for name, value in e.fields:
                self.check_field(e.cls, name)
                self.infer(value)
            return e.cls
        if isinstance(e, Let):
            self._bind(e.name, self.infer(e.value))
            return self.infer(e.body)
        if isinstance(e, If):
            self.infer(e.cond)
            then = self.infer(e.then)
            els = self.infer(e.els)
            return then if then is not None else els
        if isinstance(e, Rule):
            if e.span is None:
                return self.infer(e.body)
            where = self.where
            self.where = f"{where}, rule {e.name} ({e.section}, {e.span})"
            try:
                return self.infer(e.body)
            finally:
                self.where = where
        if isinstance(e, EnumName):
            self.infer(e.arg)
            return None
        if isinstance(e, Call):
            return self._call(e.fn, e.args)
        if isinstance(e, Filter):
            coll = self.infer(e.coll)
            self._bind(e.var, _element(coll))
            self.infer(e.pred)
            return coll
        if isinstance(e, Quant):
            self._bind(e.var, _element(self.infer(e.coll)))
            self.infer(e.pred)
            return bool
        if isinstance(e, First):
            seq = self.infer(e.seq)
            self._bind(e.var, _element(seq))
            self.infer(e.pred)
            self.infer(e.default)
            return _element(seq)
        if isinstance(e, Image | BigUnion):
            coll = self.infer(e.coll)
            self._bind(e.var, _element(coll))
            body = self.infer(e.body)
            if isinstance(e, BigUnion):
                return body
            if body is None:
                return None
            return _seq_of(body) if typing.get_origin(coll) is tuple else _set_of(body)
        if isinstance(e, MapBuild):
            keys = self.infer(e.key_set)
            self._bind(e.var, _element(keys))
            value_type = self.infer(e.value)
            key = _element(keys)
            return None if key is None or value_type is None else _map_of(key, value_type)
        if isinstance(e, Fold):
            init = self.infer(e.init)
            self._bind(e.acc, init)
            self._bind(e.var, _element(self.infer(e.seq)))
            body = self.infer(e.body)
            return init if init is not None else body
        if isinstance(e, MapGet | MapGetOr):
            m = self.infer(e.m)
            for c in children(e)[1:]:
                self.infer(c)
            return _value(m)
        if isinstance(e, MapKeys):
            key = _key(self.infer(e.m))
            return None if key is None else _set_of(key)
        if isinstance(e, Head):
            seq = self.infer(e.seq)
            self.infer(e.default)
            return _element(seq)
        if isinstance(e, Sorted):
            element = _element(self.infer(e.coll))
            return None if element is None else _seq_of(element)
        inferred = [self.infer(c) for c in children(e)]
        # Set/map operations, appends and merges keep the type of their first operand.
        return inferred[0] if inferred else None

    def _call(self, fn: Def, args: tuple[Expr, ...]) -> Type:
        arg_types = [self.infer(a) for a in args]
        if id(fn) not in self.defs:
            self.defs.add(id(fn))
            for param, t in zip(fn.params, arg_types, strict=True):
                if self.env.get(param) is None:
                    self._bind(param, t)
            where = self.where
            at = "" if fn.span is None else f", {fn.span}"
            self.where = f"{where}, procedure {fn.name} ({fn.section}{at})"
            try:
                self.infer(fn.body)
            finally:
                self.where = where
        return self.seen.get(id(fn.body))


def check_fields(e: Expr, env: Mapping[str, Type], where: str) -> None:
    """Raise ``FieldPathError`` if ``e`` names a field its record does not have (where the record type is known).

    ``env`` gives the types of the free variables of ``e``; ``where`` names the rule in the message.
    """
    _Checker(where, env).infer(e)


def check_action(profile_name: str, action: Action) -> None:
    """``check_fields`` over the guard and the effect of a controller action (``s`` and its parameters typed)."""
    env: dict[str, Type] = {"s": ClusterState, **{param.name: param.type for param in action.params}}
    at = "" if action.span is None else f" ({action.span})"
    check_fields(action.guard, env, f"{profile_name} action {action.name}{at} (guard)")
    check_fields(action.effect, env, f"{profile_name} action {action.name}{at}")
