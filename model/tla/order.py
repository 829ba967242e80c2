"""Orders on values for ``Sorted`` and ``<`` on non-integers: TLA+ (and TLC) compare only integers.

Python sorts strings lexicographically, enum-free records field by field (``order=True`` dataclasses
such as ``TopicPartition``). The module defines, on demand, one ``Less…`` operator per type and one
``Sort…`` operator that turns a set into an ascending sequence. Strings are ordered through a rank
table over the strings the configuration can produce (its topic names), computed here in Python order.
"""

from __future__ import annotations

import dataclasses

from kcspec.model.tla.types import T, field_types
from kcspec.model.tla.values import tla_string


class OrderError(ValueError):
    """A type that has no order in the generated module."""


class Orders:
    """The ``Less…``/``Sort…`` operators a module needs, collected while its expressions are emitted."""

    def __init__(self, strings: tuple[str, ...]) -> None:
        self.strings = tuple(sorted(set(strings)))
        self._defs: dict[str, str] = {}
        self._order: list[str] = []

    def suffix(self, t: T) -> str:
        if t.kind == "int":
            return "Int"
        if t.kind == "str":
            return "Str"
        if t.kind == "rec" and t.cls is not None:
            return t.cls.__name__
        raise OrderError(f"values of type {t} cannot be ordered in TLA+ (only integers, strings and records)")

    def less(self, t: T) -> str:
        """The name of the strict order on ``t``, defining it (and what it uses) if needed."""
        name = f"Less{self.suffix(t)}"
        if name in self._defs:
            return name
        if t.kind == "int":
            self._add(name, f"{name}(a, b) == a < b")
        elif t.kind == "str":
            table = " @@ ".join(f"{tla_string(s)} :> {i}" for i, s in enumerate(self.strings)) or "<<>>"
            self._add("StrRank", f"StrRank == ({table})" if self.strings else "StrRank == <<>>")
            self._add(name, f"{name}(a, b) == StrRank[a] < StrRank[b]")
        else:
            assert t.cls is not None
            if not getattr(t.cls, "__dataclass_params__").order:  # noqa: B009 - dataclass internals
                raise OrderError(f"{t.cls.__name__} has no order (not an order=True dataclass)")
            self._defs[name] = ""  # reserve: records may nest
            fields = [f.name for f in dataclasses.fields(t.cls)]
            types = field_types(t.cls)
            expr = ""
            for f in reversed(fields):
                cmp = f"{self.less(types[f])}(a.{f}, b.{f})"
                expr = cmp if not expr else f"({cmp} \\/ (a.{f} = b.{f} /\\ {expr}))"
            self._add(name, f"{name}(a, b) == {expr}")
        return name

    def sort(self, t: T) -> str:
        """The name of ``Sort…(S)``: the elements of set ``S`` as an ascending sequence."""
        less = self.less(t)
        name = f"Sort{self.suffix(t)}"
        if name not in self._defs:
            self._add(
                name,
                f"RECURSIVE {name}(_)\n"
                f"{name}(S) ==\n"
                f"    IF S = {{}} THEN <<>>\n"
                f"    ELSE LET m == CHOOSE x \\in S : \\A y \\in S : x = y \\/ {less}(x, y)\n"
                f"         IN  <<m>> \\o {name}(S \\ {{m}})",
            )
        return name

    def _add(self, name: str, definition: str) -> None:
        self._defs[name] = definition
        self._order.append(name)

    def definitions(self) -> list[str]:
        """The definitions, each after the ones it uses (the order in which they were completed)."""
        return [self._defs[k] for k in self._order]
