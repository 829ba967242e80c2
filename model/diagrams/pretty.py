"""Compact, readable text for expression trees of the spec language, used as diagram labels.

The diagrams quote the spec's own expressions rather than paraphrasing them, so a changed rule changes
the drawing. Bound variables lose their uniqueness suffix (``r_12`` → ``r``), record fields are written
``x.field``, and set/sequence operations use mathematical symbols. ``let`` values are inlined where the
variable is used when ``inline_lets`` is set (the default), which keeps labels self-contained.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

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
    if isinstance(value, tuple):
        return "[" + ", ".join(const_text(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    if hasattr(value, "__dataclass_fields__"):
        return type(value).__name__ + "(…)"
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
    env = env or {}
    ab = abbrev or {}

    def p(x: L.Expr) -> str:
        return pretty(x, env, inline_lets, depth + 1, ab)

    def binder(name: str, body: L.Expr) -> str:
        return pretty(body, {**env, name: var_name(name)}, inline_lets, depth + 1, ab)

    match e:
        case L.Const(value):
            return const_text(value)
        case L.Var(name):
            return env.get(name, var_name(name))
        case L.Field(obj, name):
            text = f"{_atom(p(obj))}.{name}"
            return ab.get(text, text)
        case L.Rec(cls, fields):
            return f"{cls.__name__}(" + ", ".join(f"{k}={p(v)}" for k, v in fields) + ")"
        case L.With(obj, updates):
            return f"{_atom(p(obj))} with " + ", ".join(f"{k}:={p(v)}" for k, v in updates)
        case L.Let(name, value, body):
            if inline_lets:
                return pretty(body, {**env, name: _atom(p(value))}, inline_lets, depth + 1, ab)
            return f"let {var_name(name)} = {p(value)} in {binder(name, body)}"
        case L.If(c, t, f):
            return f"if {p(c)} then {p(t)} else {p(f)}"
        case L.Not(arg):
            return f"¬{_atom(p(arg))}"
        case L.And(args):
            return " ∧ ".join(_atom(p(a)) for a in args)
        case L.Or(args):
            return " ∨ ".join(_atom(p(a)) for a in args)
        case L.Implies(lhs, rhs):
            return f"{_atom(p(lhs))} ⇒ {_atom(p(rhs))}"
        case L.Cmp(op, lhs, rhs):
            return f"{p(lhs)} {_CMP[op]} {p(rhs)}"
        case L.Arith(op, lhs, rhs):
            return f"{op}({p(lhs)}, {p(rhs)})" if op in ("max", "min") else f"{p(lhs)} {op} {p(rhs)}"
        case L.SetLit(elems):
            return "{" + ", ".join(p(x) for x in elems) + "}"
        case L.SeqLit(elems):
            return "[" + ", ".join(p(x) for x in elems) + "]"
        case L.Member(elem, coll):
            return f"{p(elem)} ∈ {_atom(p(coll))}"
        case L.SetOp(op, lhs, rhs):
            return f"{_atom(p(lhs))} {_SETOP[op]} {_atom(p(rhs))}"
        case L.Subset(lhs, rhs):
            return f"{_atom(p(lhs))} ⊆ {_atom(p(rhs))}"
        case L.Size(coll):
            return f"|{p(coll)}|"
        case L.ToSet(seq):
            return f"set({p(seq)})"
        case L.Filter(v, coll, pred):
            return f"[{var_name(v)} ∈ {p(coll)} : {binder(v, pred)}]"
        case L.Image(v, coll, body):
            return f"[{binder(v, body)} : {var_name(v)} ∈ {p(coll)}]"
        case L.BigUnion(v, coll, body):
            return f"⋃{{{binder(v, body)} : {var_name(v)} ∈ {p(coll)}}}"
        case L.Quant(kind, v, coll, pred):
            q = "∀" if kind == "all" else "∃"
            return f"{q}{var_name(v)} ∈ {_atom(p(coll))}: {binder(v, pred)}"
        case L.First(v, seq, pred, default):
            return f"first {var_name(v)} ∈ {_atom(p(seq))} with {binder(v, pred)}, else {p(default)}"
        case L.Sorted(coll):
            return f"sorted({p(coll)})"
        case L.Fold(acc, v, seq, init, body):
            inner = pretty(body, {**env, acc: var_name(acc), v: var_name(v)}, inline_lets, depth + 1, ab)
            return f"fold {var_name(v)} ∈ {_atom(p(seq))} from {p(init)}: {inner}"
        case L.Head(seq, default):
            return f"head({p(seq)}, else {p(default)})"
        case L.Append(seq, elem):
            return f"{_atom(p(seq))} ++ [{p(elem)}]"
        case L.Concat(lhs, rhs):
            return f"{_atom(p(lhs))} ++ {_atom(p(rhs))}"
        case L.Distinct(seq):
            return f"distinct({p(seq)})"
        case L.MapGet(m, key):
            return f"{_atom(p(m))}[{p(key)}]"
        case L.MapGetOr(m, key, default):
            return f"{_atom(p(m))}[{p(key)}] or {p(default)}"
        case L.MapHas(m, key):
            return f"{p(key)} ∈ dom {_atom(p(m))}"
        case L.MapPut(m, key, value):
            return f"{_atom(p(m))}[{p(key)} ↦ {p(value)}]"
        case L.MapDel(m, key):
            return f"{_atom(p(m))} − key {p(key)}"
        case L.MapDelAll(m, keys):
            return f"{_atom(p(m))} − keys {_atom(p(keys))}"
        case L.MapKeys(m):
            return f"dom {_atom(p(m))}"
        case L.MapBuild(v, keys, value):
            return f"[{var_name(v)} ∈ {p(keys)} ↦ {binder(v, value)}]"
        case L.MapMerge(lhs, rhs):
            return f"{_atom(p(lhs))} ⊕ {_atom(p(rhs))}"
        case L.Rule(name, _section, body):
            return p(body) if depth > 0 else f"{name}: {p(body)}"
    return type(e).__name__


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
