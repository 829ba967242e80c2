"""Shared sub-expressions as ``LET`` definitions: each is written, and evaluated by TLC, once.

The spec is built by Python functions that reuse expressions: an action's intermediate ``Work`` value is read
by the next step as ``w.state``, ``w.state.zk``, … and each read is the *same* expression object. Written out
as a tree, every reuse copies the whole expression (the kafka-2.8 module of the default model was 30,538 lines,
7.3 MB), and TLC evaluates every copy again. This pass finds the sub-expressions that occur more than once
(structurally equal, so copies built separately count too) and binds each to a ``LET`` name at the innermost
scope where everything it reads is bound; a TLA+ user then reads each intermediate value once, by name.

Meaning is unchanged: a ``LET`` definition without arguments is only evaluated when it is used (TLC evaluates
it lazily and keeps its value for the rest of the ``LET``'s body), so hoisting it out of an ``IF`` branch or a
quantifier never evaluates something the original did not, and the names are fresh. Cheap reads (names and
record fields of names, constants) are left in place: naming them would not make the text shorter or clearer.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable

from kcspec.spec import lang as L

_names = itertools.count(1_000_000_000)
"""Numbers of the ``LET`` names this pass introduces (far from the spec builder's own counter; the TLA+ backend
renames every bound name to its readable base anyway)."""

_BINDS: dict[type, tuple[str, Callable[[L.Expr], frozenset[str]]]] = {
    L.Let: ("body", lambda e: frozenset({e.name})),  # type: ignore[attr-defined]
    L.Filter: ("pred", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.Quant: ("pred", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.First: ("pred", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.Image: ("body", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.BigUnion: ("body", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.MapBuild: ("value", lambda e: frozenset({e.var})),  # type: ignore[attr-defined]
    L.Fold: ("body", lambda e: frozenset({e.acc, e.var})),  # type: ignore[attr-defined]
}
"""Binding constructs: the field holding the scope and the names bound in it."""


def _parts(e: L.Expr) -> tuple[tuple[object, ...], list[L.Expr], list[str]]:
    """``e``'s non-expression content (hashable), its direct sub-expressions and the field of each."""
    if isinstance(e, L.Call):
        return (id(e.fn),), list(e.args), ["args"] * len(e.args)
    statics: list[object] = []
    kids: list[L.Expr] = []
    where: list[str] = []
    for name in _field_names(type(e)):
        v = getattr(e, name)
        if isinstance(v, L.Expr):
            statics.append(name)
            kids.append(v)
            where.append(name)
        elif isinstance(v, tuple) and v and all(isinstance(x, L.Expr) for x in v):
            statics.append((name, len(v)))
            kids.extend(v)
            where.extend([name] * len(v))
        elif isinstance(v, tuple) and v and all(type(x) is tuple and len(x) == 2 for x in v):
            statics.append((name, tuple(x[0] for x in v)))
            kids.extend(x[1] for x in v)
            where.extend([name] * len(v))
        else:
            statics.append((name, _hashable(v)))
    return tuple(statics), kids, where


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """The dataclass fields of a node kind, in order (``dataclasses.fields`` rebuilds this list at every call)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(kind))
        _FIELD_NAMES[kind] = names
    return names


def _hashable(v: object) -> object:
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v), v)


def _rebuild(e: L.Expr, kids: list[L.Expr]) -> L.Expr:
    """``e`` with its direct sub-expressions replaced, in ``_parts`` order."""
    if isinstance(e, L.Call):
        return L.Call(e.fn, tuple(kids))
    it = iter(kids)
    changes: dict[str, object] = {}
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        v = getattr(e, f.name)
        if isinstance(v, L.Expr):
            changes[f.name] = next(it)
        elif isinstance(v, tuple) and v and all(isinstance(x, L.Expr) for x in v):
            changes[f.name] = tuple(next(it) for _ in v)
        elif isinstance(v, tuple) and v and all(type(x) is tuple and len(x) == 2 for x in v):
            changes[f.name] = tuple((x[0], next(it)) for x in v)
    return dataclasses.replace(e, **changes)  # type: ignore[type-var]


class _Sharer:
    def __init__(self) -> None:
        self.interned: dict[tuple[object, ...], L.Expr] = {}
        self.canon: dict[int, L.Expr] = {}
        self.fv: dict[int, frozenset[str]] = {}
        self.bound: dict[int, frozenset[str]] = {}
        self.size: dict[int, int] = {}
        self.done: dict[int, L.Expr] = {}
        self.keep: list[L.Expr] = []  # keeps every node alive, so that ids stay unique
        self.kids_of: dict[int, list[L.Expr]] = {}
        self.indeg: dict[int, int] = {}
        """How many parent edges point at each node of the shared graph (2 or more: it is written twice)."""
        self.dup: dict[int, bool] = {}

    def kids(self, e: L.Expr) -> list[L.Expr]:
        """``_parts(e)[1]``, computed once per node."""
        hit = self.kids_of.get(id(e))
        if hit is None:
            hit = _parts(e)[1]
            self.kids_of[id(e)] = hit
            self.keep.append(e)
        return hit

    # ---------------------------------------------------------------- structure
    def canonical(self, e: L.Expr) -> L.Expr:
        """The one object of ``e``'s structure (hash-consing): equal sub-expressions become the same object."""
        hit = self.canon.get(id(e))
        if hit is not None:
            return hit
        statics, kids, _ = _parts(e)
        new_kids = [self.canonical(k) for k in kids]
        node = e if all(a is b for a, b in zip(kids, new_kids, strict=True)) else _rebuild(e, new_kids)
        key = (type(e), statics, tuple(id(k) for k in new_kids))
        out = self.interned.setdefault(key, node)
        if out is node and id(node) not in self.kids_of:
            self.kids_of[id(node)] = new_kids
            for k in new_kids:
                self.indeg[id(k)] = self.indeg.get(id(k), 0) + 1
        self.keep += [e, node]
        self.canon[id(e)] = out
        self.canon[id(out)] = out
        return out

    def free(self, e: L.Expr) -> frozenset[str]:
        hit = self.fv.get(id(e))
        if hit is None:
            hit = L.free_vars(e)
            self.fv[id(e)] = hit
        return hit

    def bound_inside(self, e: L.Expr) -> frozenset[str]:
        """Every name bound by a binder inside ``e`` (``e``'s own included)."""
        hit = self.bound.get(id(e))
        if hit is not None:
            return hit
        kids = self.kids(e)
        out = frozenset().union(*(self.bound_inside(k) for k in kids)) if kids else frozenset()
        binder = _BINDS.get(type(e))
        if binder is not None:
            out |= binder[1](e)
        self.bound[id(e)] = out
        return out

    def dup_below(self, e: L.Expr) -> bool:
        """Whether a node worth naming is reached twice inside ``e`` (else ``e`` has nothing to share)."""
        hit = self.dup.get(id(e))
        if hit is None:
            hit = any(
                (self.indeg.get(id(k), 0) >= 2 and self.worth_naming(k)) or self.dup_below(k)
                for k in self.kids(e)
            )
            self.dup[id(e)] = hit
        return hit

    def tree_size(self, e: L.Expr) -> int:
        hit = self.size.get(id(e))
        if hit is None:
            hit = 1 + sum(self.tree_size(k) for k in self.kids(e))
            self.size[id(e)] = hit
        return hit

    # ---------------------------------------------------------------- one scope
    def occurrences(self, root: L.Expr) -> tuple[dict[int, int], dict[int, L.Expr], list[int]]:
        """How often each node occurs in ``root`` written out as a tree, the nodes, and a deterministic order."""
        order: list[int] = []
        nodes: dict[int, L.Expr] = {}
        stack: list[tuple[L.Expr, bool]] = [(root, False)]
        while stack:  # iterative post-order
            e, expanded = stack.pop()
            if expanded:
                order.append(id(e))
                continue
            if id(e) in nodes:
                continue
            nodes[id(e)] = e
            stack.append((e, True))
            for k in reversed(self.kids(e)):
                if id(k) not in nodes:
                    stack.append((k, False))
        counts = dict.fromkeys(nodes, 0)
        counts[id(root)] = 1
        for key in reversed(order):  # parents before children
            c = counts[key]
            for k in self.kids(nodes[key]):
                counts[id(k)] += c
        return counts, nodes, list(reversed(order))

    def worth_naming(self, e: L.Expr) -> bool:
        if isinstance(e, L.Var | L.Const):
            return False
        node = e
        while isinstance(node, L.Field):
            node = node.obj
        if isinstance(node, L.Var):  # s.zk.brokers: reads as well as a name would
            return False
        return self.tree_size(e) >= 4 or isinstance(e, L.Call)

    def share_scope(self, root: L.Expr) -> L.Expr:
        """``root`` (a scope: an action's body, a binder's body) with its repeated sub-expressions ``LET``-bound."""
        if not self.dup_below(root):  # no sub-expression worth a name occurs twice in it
            return self.process(root)
        inner = self.bound_inside(root)
        counts, nodes, order = self.occurrences(root)
        rank = {key: i for i, key in enumerate(order)}
        chosen = [
            key
            for key in order
            if counts[key] >= 2
            and key != id(root)
            and self.worth_naming(nodes[key])
            and not (self.free(nodes[key]) & inner)
        ]
        for attempt in range(
            3
        ):  # later passes drop names whose every use was inside another named expression
            if not chosen:
                return self.process(root)
            names = {key: L.Var(f"{_hint(nodes[key])}_{next(_names)}") for key in chosen}
            memo: dict[int, L.Expr] = {}
            body = self._replace(root, names, memo, top=None)
            defs = {key: self._replace(nodes[key], names, memo, top=key) for key in chosen}
            if attempt == 2:
                break
            uses = self._uses([body, *defs.values()], names)
            kept = [key for key in chosen if uses[key] >= 2]
            if kept == chosen:
                break
            chosen = kept
        # a definition reads only smaller ones: define them smallest first (ties: first seen first)
        ordered = sorted(chosen, key=lambda key: (self.tree_size(nodes[key]), rank[key]))
        out = self.process(body)
        for key in reversed(ordered):
            out = L.Let(names[key].name, self.process(defs[key]), out)
        return out

    def _replace(
        self, e: L.Expr, names: dict[int, L.Var], memo: dict[int, L.Expr], top: int | None
    ) -> L.Expr:
        if id(e) in names and id(e) != top:
            return names[id(e)]
        if top is None and id(e) in memo:
            return memo[id(e)]
        kids = self.kids(e)
        new_kids = [self._replace(k, names, memo, None) for k in kids]
        out = e if all(a is b for a, b in zip(kids, new_kids, strict=True)) else _rebuild(e, new_kids)
        self.keep.append(out)
        if out is not e:  # the rewritten graph has the same shape: a node reached twice still is
            self.indeg[id(out)] = self.indeg.get(id(e), 0)
        if top is None:
            memo[id(e)] = out
        return out

    def _uses(self, forms: list[L.Expr], names: dict[int, L.Var]) -> dict[int, int]:
        by_var = {id(v): key for key, v in names.items()}
        uses = dict.fromkeys(names, 0)
        for form in forms:
            counts, _, _ = self.occurrences(form)
            for node_id, n in counts.items():
                if node_id in by_var:
                    uses[by_var[node_id]] += n
        return uses

    # ---------------------------------------------------------------- every scope
    def process(self, e: L.Expr) -> L.Expr:
        """``e`` with the scopes *inside* it shared (``e``'s own level is its caller's business)."""
        hit = self.done.get(id(e))
        if hit is not None:
            return hit
        _, kids, where = _parts(e)
        binder = _BINDS.get(type(e))
        scope_field = binder[0] if binder is not None else None
        new_kids = [
            self.share_scope(k) if f == scope_field else self.process(k)
            for k, f in zip(kids, where, strict=True)
        ]
        out = e if all(a is b for a, b in zip(kids, new_kids, strict=True)) else _rebuild(e, new_kids)
        self.keep.append(out)
        self.done[id(e)] = out
        return out


def _hint(e: L.Expr) -> str:
    """A readable base for the ``LET`` name of ``e``."""
    return re.sub(r"\W", "_", _word(e)) or "v"


def _word(e: L.Expr) -> str:
    if isinstance(e, L.Field):
        return e.name
    if isinstance(e, L.Rule):
        return e.name[:1].lower() + e.name[1:]
    if isinstance(e, L.Call):
        return e.fn.name[:1].lower() + e.fn.name[1:]
    if isinstance(e, L.Rec):
        return e.cls.__name__[:1].lower() + e.cls.__name__[1:]
    if isinstance(e, L.With):
        return _word(e.obj)
    return "v"


def share(e: L.Expr) -> L.Expr:
    """``e`` with every sub-expression that occurs more than once bound by a ``LET`` (same meaning)."""
    sharer = _Sharer()
    return sharer.share_scope(sharer.canonical(e))


__all__ = ["share"]
