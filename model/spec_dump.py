"""The spec's canonical dump: every action, invariant and procedure of a profile as deterministic text.

A refactoring of ``spec/`` (a new way to write a step, a combinator that replaces two copies of a shape) must
leave the spec itself unchanged; this dump is what "unchanged" is measured against. It prints every node of
every expression tree with all its fields, so two dumps are equal exactly when the trees are equal, with three
normalisations that make it independent of how and in which order the spec was built:

* the fresh variables of the binders (``Block`` steps, ``let``, ``filter``, ``map``, quantifiers, folds …) are
  named ``<name>_<n>`` with a process-wide counter; the dump renumbers them per unit (an action, an invariant,
  a procedure) in order of appearance, so they do not depend on which unit happened to be built first;
* procedures (``Def``) are printed once each, under their name and static arguments, and a ``Call`` names
  the procedure instead of repeating its body; procedures with the same name and static arguments but
  different bodies get ``#2``, ``#3`` … in order of first appearance;
* with ``expand``, an operator defined as a tree of other nodes (``EnumName``, a chain of ``IF``s) is printed as
  that tree, so that replacing the tree by the operator can be checked to change nothing else;
* spans (file and line) are left out: they say where a rule is written, not what it says, and move whenever a
  line is added above it. Sets are printed sorted, maps by sorted key.

Decision (the design documents are silent): the dump covers what the checks read — names, sections, docs,
parameters, guards, effects and invariants' expressions — so a changed docstring of an action counts as a change.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterator
from typing import Any

from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.fmap import FMap
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import PROFILES, Profile

_FRESH = re.compile(r"^(.*)_(\d+)$")


def dump(profile: Profile, *, expand: bool = False) -> str:
    """The canonical text of every action, invariant and procedure of ``profile``; with ``expand``, operators
    that stand for a tree of other nodes (``EnumName``: a chain of ``IF``s) are printed as that tree."""
    return "".join(_Dumper(profile, expand).lines())


def dump_all(names: tuple[str, ...] = tuple(PROFILES), *, expand: bool = False) -> str:
    """The dumps of the named profiles (all of them by default), one after the other."""
    return "".join(dump(PROFILES[n], expand=expand) for n in names)


def expr_text(e: L.Expr, *, expand: bool = False) -> str:
    """The canonical text of one expression, as the dump prints it (its fresh variables renumbered)."""
    return _Dumper(None, expand).expr(e, {}, 0)


class _Dumper:
    def __init__(self, profile: Profile | None, expand: bool = False) -> None:
        self.profile = profile
        self.expand = expand
        self.kept: list[L.Expr] = []
        """The expanded trees, kept alive while the dump runs (its memo is keyed by ``id``)."""
        self.def_ids: dict[int, str] = {}
        self.defs: list[L.Def] = []
        self.taken: dict[str, int] = {}

    def lines(self) -> Iterator[str]:
        assert self.profile is not None
        yield f"=== profile {self.profile.name}\n"
        units: list[str] = []
        for action in build_actions(self.profile).values():
            units.append(self.action(action))
        for inv in invariants(self.profile):
            units.append(self.invariant(inv))
        # procedures reached from the units above, and from other procedures, until none is new
        done = 0
        procedures: list[tuple[str, str]] = []
        while done < len(self.defs):
            d = self.defs[done]
            done += 1
            procedures.append((self.def_ids[id(d)], self.procedure(d)))
        yield from units
        for _, text in sorted(procedures):
            yield text

    def def_id(self, d: L.Def) -> str:
        hit = self.def_ids.get(id(d))
        if hit is not None:
            return hit
        statics = ", ".join(f"{k}={v}" for k, v in d.static)
        base = f"{d.name}[{statics}]({', '.join(d.params)})"
        n = self.taken.get(base, 0) + 1
        self.taken[base] = n
        ident = base if n == 1 else f"{base}#{n}"
        self.def_ids[id(d)] = ident
        self.defs.append(d)
        return ident

    def action(self, a: L.Action) -> str:
        names: dict[str, str] = {}
        params = ", ".join(f"{p.name}: {_type_text(p.type)}" for p in a.params)
        return (
            f"\n--- action {a.name} ({a.section})\ndoc: {a.doc!r}\nparams: {params}\nguard:\n"
            f"{self.expr(a.guard, names, 1)}effect:\n{self.expr(a.effect, names, 1)}"
        )

    def invariant(self, inv: L.Invariant) -> str:
        return (
            f"\n--- invariant {inv.name} ({inv.section}, {inv.kind})\ndoc: {inv.doc!r}\n"
            f"{self.expr(inv.expr, {}, 1)}"
        )

    def procedure(self, d: L.Def) -> str:
        return f"\n--- procedure {self.def_ids[id(d)]} ({d.section})\n{self.expr(d.body, {}, 1)}"

    def expr(self, e: L.Expr, names: dict[str, str], depth: int) -> str:
        out: list[str] = []
        self._layout(self._tree(e, names, {}), depth, out)
        return "".join(out)

    def _name(self, raw: str, names: dict[str, str], binding: bool) -> str:
        hit = names.get(raw)
        if hit is not None or not binding:
            return hit or raw
        m = _FRESH.match(raw)
        new = f"{m.group(1) if m else raw}_{len(names) + 1}"
        names[raw] = new
        return new

    def _tree(self, e: L.Expr, names: dict[str, str], memo: dict[int, _Node]) -> _Node:
        """``e`` as a node to lay out: its head (kind and scalar fields) and its labelled sub-expressions."""
        hit = memo.get(id(e))
        if hit is not None:
            return hit
        if self.expand and isinstance(e, L.EnumName):
            expanded = e.expanded()
            self.kept.append(expanded)
            node = self._tree(expanded, names, memo)
            memo[id(e)] = node
            return node
        kind = type(e).__name__
        scalars: list[str] = []
        subs: list[tuple[str, _Node]] = []
        if isinstance(e, L.Const):
            scalars.append(_value(e.value))
        elif isinstance(e, L.Var):
            scalars.append(self._name(e.name, names, False))
        elif isinstance(e, L.Call):
            scalars.append(self.def_id(e.fn))
            subs.extend(
                (f"{p}=", self._tree(a, names, memo)) for p, a in zip(e.fn.params, e.args, strict=True)
            )
        else:
            binders = L.BINDER_FIELDS.get(type(e), ())
            for f in dataclasses.fields(e):  # type: ignore[arg-type]
                value = getattr(e, f.name)
                if f.name == "span":
                    continue
                if f.name in binders:
                    scalars.append(f"{f.name}={self._name(value, names, True)}")
                elif isinstance(value, L.Expr):
                    subs.append((f"{f.name}=", self._tree(value, names, memo)))
                elif isinstance(value, tuple) and value and all(isinstance(v, L.Expr) for v in value):
                    subs.extend(("", self._tree(v, names, memo)) for v in value)
                elif isinstance(value, tuple) and value and all(isinstance(v, tuple) for v in value):
                    subs.extend((f"{k}=", self._tree(v, names, memo)) for k, v in value)
                elif isinstance(value, type):
                    scalars.append(f"{f.name}={value.__qualname__}")
                else:
                    scalars.append(f"{f.name}={value!r}")
        head = " ".join((kind, *scalars))
        flat = "(" + " ".join((head, *(f"{label}{node.flat}" for label, node in subs))) + ")"
        node = _Node(head, tuple(subs), flat)
        memo[id(e)] = node
        return node

    def _layout(self, node: _Node, depth: int, out: list[str], label: str = "") -> None:
        pad = "  " * depth
        if len(node.flat) + len(pad) + len(label) <= _WIDTH or not node.subs:
            out.append(f"{pad}{label}{node.flat}\n")
            return
        out.append(f"{pad}{label}({node.head}\n")
        for sub_label, sub in node.subs:
            self._layout(sub, depth + 1, out, sub_label)
        out[-1] = out[-1][:-1] + ")\n"


@dataclasses.dataclass(frozen=True)
class _Node:
    head: str
    subs: tuple[tuple[str, _Node], ...]
    flat: str


_WIDTH = 110
"""Sub-expressions whose text fits this many columns are printed on one line."""


def _type_text(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__qualname__", None) or repr(t)


def _value(v: object) -> str:
    """A constant's canonical text: sets sorted, maps by sorted key, records field by field."""
    if isinstance(v, enum.Enum):
        return f"{type(v).__qualname__}.{v.name}"
    if isinstance(v, bool | int | str | float) or v is None:
        return repr(v)
    if isinstance(v, frozenset | set):
        return "{" + ", ".join(sorted(_value(x) for x in v)) + "}"
    if isinstance(v, tuple) and not dataclasses.is_dataclass(v):
        if hasattr(v, "_fields"):
            return f"{type(v).__qualname__}(" + ", ".join(_value(x) for x in v) + ")"
        return "(" + ", ".join(_value(x) for x in v) + ")"
    if isinstance(v, FMap):
        items = sorted((_value(k), _value(x)) for k, x in v.items())
        return "FMap{" + ", ".join(f"{k}: {x}" for k, x in items) + "}"
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = ", ".join(f"{f.name}={_value(getattr(v, f.name))}" for f in dataclasses.fields(v))
        return f"{type(v).__qualname__}({fields})"
    if isinstance(v, type):
        return v.__qualname__
    raise TypeError(f"spec dump: no canonical text for a constant of type {type(v).__qualname__}: {v!r}")
