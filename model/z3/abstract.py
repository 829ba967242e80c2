"""Abstracting concrete values into symbolic ones: fresh Z3 variables plus the constraints that pin them.

``Abstractor().abstract(value)`` returns a symbolic value of the same shape as ``value`` whose every
scalar is a fresh Z3 variable, and records in ``constraints`` the equalities that make it denote
``value``. Collections get *extra absent slots* (presence pinned to false, values free) and sets a
duplicated slot, so the guarded-list machinery is exercised exactly as in a proof. It is how the
backend is tested against the Python evaluator, and how a proof keeps part of a concrete state fixed
while the rest is free.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import z3
from kcspec.model.z3 import values as V


@dataclass
class Abstractor:
    prefix: str = "v"
    extra_slots: bool = True
    constraints: list[Any] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def fresh_name(self, hint: str) -> str:
        return f"{self.prefix}_{hint}_{next(self._ids)}"

    def abstract(self, value: Any, hint: str = "x") -> Any:
        return self._abs(value, hint, pin=True)

    def _abs(self, value: Any, hint: str, pin: bool) -> Any:
        if isinstance(value, bool):
            return self._scalar(z3.Bool(self.fresh_name(hint)), value, pin)
        if isinstance(value, int):
            return self._scalar(z3.Int(self.fresh_name(hint)), value, pin)
        if isinstance(value, str):
            return self._scalar(z3.String(self.fresh_name(hint)), value, pin)
        if isinstance(value, enum.Enum):
            sort, _ = V.enum_sort(type(value))
            return self._scalar(z3.Const(self.fresh_name(hint), sort), value, pin)
        if isinstance(value, tuple | list) and not dataclasses.is_dataclass(value):  # tuple records: below
            return V.SColl("seq", self._slots(list(value), hint, pin, duplicate=False))
        if isinstance(value, frozenset | set):
            return V.SColl("set", self._slots(sorted(value, key=repr), hint, pin, duplicate=True))
        if isinstance(value, Mapping):
            return self._map(value, hint, pin)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return V.SRec(
                type(value),
                tuple(
                    (f.name, self._abs(getattr(value, f.name), f.name, pin))
                    for f in dataclasses.fields(value)
                ),
            )
        raise V.SymbolicError(f"cannot abstract a {type(value).__name__}")

    def _scalar(self, var: Any, value: Any, pin: bool) -> Any:
        if pin:
            self.constraints.append(var == V.scalar_term(value))
        return var

    def _presence(self, hint: str, present: bool) -> Any:
        p = z3.Bool(self.fresh_name(f"{hint}_present"))
        self.constraints.append(p == present)
        return p

    def _slots(self, elems: list[Any], hint: str, pin: bool, duplicate: bool) -> tuple[tuple[Any, Any], ...]:
        out: list[tuple[Any, Any]] = []
        for x in elems:
            out.append((self._presence(hint, True), self._abs(x, hint, pin)))
            if self.extra_slots:
                out.append((self._presence(hint, False), self._abs(x, hint, pin=False)))
        if duplicate and self.extra_slots and elems:
            out.append((self._presence(hint, True), self._abs(elems[0], hint, pin)))
        return tuple(out)

    def _map(self, m: Mapping[Any, Any], hint: str, pin: bool) -> V.SMap:
        entries: list[tuple[Any, Any, Any]] = []
        for k in sorted(m, key=repr):
            entries.append(
                (self._presence(hint, True), self._abs(k, f"{hint}_key", pin), self._abs(m[k], hint, pin))
            )
            if self.extra_slots:
                entries.append(
                    (
                        self._presence(hint, False),
                        self._abs(k, f"{hint}_key", False),
                        self._abs(m[k], hint, False),
                    )
                )
        return V.SMap(tuple(entries))
