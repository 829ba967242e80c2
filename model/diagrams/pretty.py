"""Compact, readable text for expression trees of the spec language, used as diagram labels.

The diagrams quote the spec's own expressions rather than paraphrasing them, so a changed rule changes
the drawing. Bound variables lose their uniqueness suffix (``r_12`` → ``r``), record fields are written
``x.field``, and set/sequence operations use mathematical symbols. ``let`` values are inlined where the
variable is used when ``inline_lets`` is set (the default), which keeps labels self-contained.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kcspec.model.dispatch import NodeTable
from kcspec.spec import lang as L

_SUFFIX = re.compile(r"(_\d+|#\d+)+$")
_CMP = {"==": "=", "!=": "≠", "<": "<", "<=": "≤", ">": ">", ">=": "≥"}
_SETOP = {"union": "∪", "inter": "∩", "diff": "−"}


def var_name(name: str) -> str:
    """A bound variable's readable name: without its uniqueness suffix (``r_12``, ``x#3``) and without the
    ``procedure.`` prefix of a procedure parameter (``elect.inp`` → ``inp``)."""
    return _SUFFIX.sub("", _SUFFIX.sub("", name).rsplit(".", 1)[-1])


def const_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value < 0:
        return f"−{-value}"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(const_text(v) for v in value)) + "}"
    if hasattr(value, "__dataclass_fields__"):  # before tuples: ``TopicPartition`` is both
        return type(value).__name__ + "(…)"
    if isinstance(value, tuple):
        return "[" + ", ".join(const_text(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def pretty(
    e: L.Expr,
    env: Mapping[str, str] | None = None,
    inline_lets: bool = True,
    depth: int = 0,
    abbrev: Mapping[str, str] | None = None,
) -> str:
    """A one-line rendering of ``e``; ``env`` maps bound variable names to text to substitute, ``abbrev``
    maps the text of a field path (e.g. ``inp.assignment``) to a shorter name (e.g. ``AR``)."""
    return _Printer(env or {}, inline_lets, depth, abbrev or {}).text(e)


@dataclass(frozen=True)
class _Printer:
    """Where a node is printed: the names bound around it, whether lets are inlined, its depth, abbreviations."""

    env: Mapping[str, str]
    inline_lets: bool
    depth: int
    ab: Mapping[str, str]

    def text(self, e: L.Expr) -> str:
        handler: Handler = _TABLE.handler(e)
        return handler(self, e)

    def p(self, x: L.Expr) -> str:
        """A child node."""
        return pretty(x, self.env, self.inline_lets, self.depth + 1, self.ab)

    def under(self, names: Mapping[str, str], body: L.Expr) -> str:
        """A child node in the scope of more names."""
        return pretty(body, {**self.env, **names}, self.inline_lets, self.depth + 1, self.ab)

    def binder(self, name: str, body: L.Expr) -> str:
        return self.under({name: var_name(name)}, body)


Handler = Callable[[_Printer, Any], str]
_TABLE: NodeTable[Handler] = NodeTable("the diagrams' pretty-printer (model/diagrams/pretty.py)")
_on = _TABLE.on


@_on(L.Const)
def _const(w: _Printer, e: L.Const) -> str:
    return const_text(e.value)


@_on(L.Var)
def _var(w: _Printer, e: L.Var) -> str:
    return w.env.get(e.name, var_name(e.name))


@_on(L.Field)
def _field(w: _Printer, e: L.Field) -> str:
    text = f"{_atom(w.p(e.obj))}.{e.name}"
    return w.ab.get(text, text)


@_on(L.Rec)
def _rec(w: _Printer, e: L.Rec) -> str:
    return f"{e.cls.__name__}(" + ", ".join(f"{k}={w.p(v)}" for k, v in e.fields) + ")"


@_on(L.With)
def _with(w: _Printer, e: L.With) -> str:
    return f"{_atom(w.p(e.obj))} with " + ", ".join(f"{k}:={w.p(v)}" for k, v in e.updates)


@_on(L.Let)
def _let(w: _Printer, e: L.Let) -> str:
    if w.inline_lets:
        return w.under({e.name: _atom(w.p(e.value))}, e.body)
    return f"let {var_name(e.name)} = {w.p(e.value)} in {w.binder(e.name, e.body)}"


@_on(L.If)
def _if(w: _Printer, e: L.If) -> str:
    return f"if {w.p(e.cond)} then {w.p(e.then)} else {w.p(e.els)}"


@_on(L.EnumName)
def _enum_name(w: _Printer, e: L.EnumName) -> str:
    return f"name({w.p(e.arg)})"


@_on(L.Not)
def _not(w: _Printer, e: L.Not) -> str:
    return f"¬{_atom(w.p(e.arg))}"


@_on(L.And)
def _and(w: _Printer, e: L.And) -> str:
    return " ∧ ".join(_atom(w.p(a)) for a in e.args)


@_on(L.Or)
def _or(w: _Printer, e: L.Or) -> str:
    return " ∨ ".join(_atom(w.p(a)) for a in e.args)


@_on(L.Implies)
def _implies(w: _Printer, e: L.Implies) -> str:
    return f"{_atom(w.p(e.lhs))} ⇒ {_atom(w.p(e.rhs))}"


@_on(L.Cmp)
def _cmp(w: _Printer, e: L.Cmp) -> str:
    return f"{w.p(e.lhs)} {_CMP[e.op]} {w.p(e.rhs)}"


@_on(L.Arith)
def _arith(w: _Printer, e: L.Arith) -> str:
    if e.op in ("max", "min"):
        return f"{e.op}({w.p(e.lhs)}, {w.p(e.rhs)})"
    return f"{w.p(e.lhs)} {e.op} {w.p(e.rhs)}"


@_on(L.SetLit)
def _set_lit(w: _Printer, e: L.SetLit) -> str:
    return "{" + ", ".join(w.p(x) for x in e.elems) + "}"


@_on(L.SeqLit)
def _seq_lit(w: _Printer, e: L.SeqLit) -> str:
    return "[" + ", ".join(w.p(x) for x in e.elems) + "]"


@_on(L.Member)
def _member(w: _Printer, e: L.Member) -> str:
    return f"{w.p(e.elem)} ∈ {_atom(w.p(e.coll))}"


@_on(L.SetOp)
def _set_op(w: _Printer, e: L.SetOp) -> str:
    return f"{_atom(w.p(e.lhs))} {_SETOP[e.op]} {_atom(w.p(e.rhs))}"


@_on(L.Subset)
def _subset(w: _Printer, e: L.Subset) -> str:
    return f"{_atom(w.p(e.lhs))} ⊆ {_atom(w.p(e.rhs))}"


@_on(L.Size)
def _size(w: _Printer, e: L.Size) -> str:
    return f"|{w.p(e.coll)}|"


@_on(L.ToSet)
def _to_set(w: _Printer, e: L.ToSet) -> str:
    return f"set({w.p(e.seq)})"


@_on(L.Filter)
def _filter(w: _Printer, e: L.Filter) -> str:
    return f"[{var_name(e.var)} ∈ {w.p(e.coll)} : {w.binder(e.var, e.pred)}]"


@_on(L.Image)
def _image(w: _Printer, e: L.Image) -> str:
    return f"[{w.binder(e.var, e.body)} : {var_name(e.var)} ∈ {w.p(e.coll)}]"


@_on(L.BigUnion)
def _big_union(w: _Printer, e: L.BigUnion) -> str:
    return f"⋃{{{w.binder(e.var, e.body)} : {var_name(e.var)} ∈ {w.p(e.coll)}}}"


@_on(L.Quant)
def _quant(w: _Printer, e: L.Quant) -> str:
    q = "∀" if e.kind == "all" else "∃"
    return f"{q}{var_name(e.var)} ∈ {_atom(w.p(e.coll))}: {w.binder(e.var, e.pred)}"


@_on(L.First)
def _first(w: _Printer, e: L.First) -> str:
    return (
        f"first {var_name(e.var)} ∈ {_atom(w.p(e.seq))} with {w.binder(e.var, e.pred)}, else {w.p(e.default)}"
    )


@_on(L.Sorted)
def _sorted(w: _Printer, e: L.Sorted) -> str:
    return f"sorted({w.p(e.coll)})"


@_on(L.Fold)
def _fold(w: _Printer, e: L.Fold) -> str:
    inner = w.under({e.acc: var_name(e.acc), e.var: var_name(e.var)}, e.body)
    return f"fold {var_name(e.var)} ∈ {_atom(w.p(e.seq))} from {w.p(e.init)}: {inner}"


@_on(L.Head)
def _head(w: _Printer, e: L.Head) -> str:
    return f"head({w.p(e.seq)}, else {w.p(e.default)})"


@_on(L.Append)
def _append(w: _Printer, e: L.Append) -> str:
    return f"{_atom(w.p(e.seq))} ++ [{w.p(e.elem)}]"


@_on(L.Concat)
def _concat(w: _Printer, e: L.Concat) -> str:
    return f"{_atom(w.p(e.lhs))} ++ {_atom(w.p(e.rhs))}"


@_on(L.Distinct)
def _distinct(w: _Printer, e: L.Distinct) -> str:
    return f"distinct({w.p(e.seq)})"


@_on(L.MapGet)
def _map_get(w: _Printer, e: L.MapGet) -> str:
    return f"{_atom(w.p(e.m))}[{w.p(e.key)}]"


@_on(L.MapGetOr)
def _map_get_or(w: _Printer, e: L.MapGetOr) -> str:
    return f"{_atom(w.p(e.m))}[{w.p(e.key)}] or {w.p(e.default)}"


@_on(L.MapHas)
def _map_has(w: _Printer, e: L.MapHas) -> str:
    return f"{w.p(e.key)} ∈ dom {_atom(w.p(e.m))}"


@_on(L.MapPut)
def _map_put(w: _Printer, e: L.MapPut) -> str:
    return f"{_atom(w.p(e.m))}[{w.p(e.key)} ↦ {w.p(e.value)}]"


@_on(L.MapDel)
def _map_del(w: _Printer, e: L.MapDel) -> str:
    return f"{_atom(w.p(e.m))} − key {w.p(e.key)}"


@_on(L.MapDelAll)
def _map_del_all(w: _Printer, e: L.MapDelAll) -> str:
    return f"{_atom(w.p(e.m))} − keys {_atom(w.p(e.key_set))}"


@_on(L.MapKeys)
def _map_keys(w: _Printer, e: L.MapKeys) -> str:
    return f"dom {_atom(w.p(e.m))}"


@_on(L.MapBuild)
def _map_build(w: _Printer, e: L.MapBuild) -> str:
    return f"[{var_name(e.var)} ∈ {w.p(e.key_set)} ↦ {w.binder(e.var, e.value)}]"


@_on(L.MapMerge)
def _map_merge(w: _Printer, e: L.MapMerge) -> str:
    return f"{_atom(w.p(e.lhs))} ⊕ {_atom(w.p(e.rhs))}"


@_on(L.Call)
def _call(w: _Printer, e: L.Call) -> str:
    return f"{var_name(e.fn.name)}(" + ", ".join(w.p(a) for a in e.args) + ")"


@_on(L.Rule)
def _rule(w: _Printer, e: L.Rule) -> str:
    return w.p(e.body) if w.depth > 0 else f"{e.name}: {w.p(e.body)}"


def _atom(text: str) -> str:
    """Parenthesise text that contains a space, unless one bracket pair already encloses all of it."""
    if " " not in text or _enclosed(text):
        return text
    return f"({text})"


def _enclosed(text: str) -> bool:
    if text[0] not in "([{" or text[-1] != {"(": ")", "[": "]", "{": "}"}[text[0]]:
        return False
    level = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            level += 1
        elif ch in ")]}":
            level -= 1
            if level == 0 and i < len(text) - 1:
                return False
    return True


def wrap(text: str, width: int = 48) -> str:
    """Break a long label into lines at spaces, at most ``width`` characters each."""
    words = text.split(" ")
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return "\n".join(lines)
