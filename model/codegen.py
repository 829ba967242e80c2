"""A faster Python backend of the expression language: each expression and each ``Def`` becomes Python source.

The closure evaluator of ``model/evaluate.py`` is the definition of the language's meaning; this module emits
straight-line Python (locals instead of an environment list, loops and comprehensions instead of closures,
one module-level function per ``Def``), ``compile()``s it once per process and keeps it. Every construct
evaluates exactly what the closure evaluator evaluates, lazily where it is lazy (``if``, ``and``/``or``,
``implies``, defaults of ``get_or``/``head``/``first``). A value is computed once where it is shared (``_shared``,
memo by path), and a function's locals share names where their values are not needed at the same time
(``_compact``: a frame of thousands of locals costs on every call). Membership in a constant set of members
of plain enums (or of tuples of them) is identity with one of them (``_identity_members``), as it is for
well-formed values: a plain enum member is equal only to itself.

Errors: generated code does not name rules. When it raises, the closure evaluator is run on the same
arguments, so the caller sees exactly the interpreter's ``EvalError`` (or, if the interpreter succeeds — a
bug here — a ``RuntimeError`` saying so). ``tests/unit/foundation/test_codegen.py`` compares both backends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import heapq
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kcspec.model import evaluate as closure
from kcspec.model import fastrec
from kcspec.model.dispatch import MissingHandler, NodeTable
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap


class _CollLike(dict[type, Callable[[Any], Any]]):
    """Class of a collection → the constructor ``evaluate._coll_like`` uses for it (it decides by class alone:
    ``tuple`` for tuples and lists, else ``frozenset``). Generated code: ``_CL[src.__class__](items)``."""

    def __missing__(self, cls: type) -> Callable[[Any], Any]:
        made: Callable[[Any], Any] = tuple if issubclass(cls, tuple | list) else frozenset
        self[cls] = made
        return made


def _diff(a: Any, b: Any) -> Any:
    """``evaluate._diff``; two frozensets directly."""
    if a.__class__ is frozenset and b.__class__ is frozenset:
        return a - b
    return closure._diff(a, b)


def _inter(a: Any, b: Any) -> Any:
    """``evaluate._inter``; two frozensets directly."""
    if a.__class__ is frozenset and b.__class__ is frozenset:
        return a & b
    return closure._inter(a, b)


_NS: dict[str, Any] = {
    "FMap": FMap,
    "_adopt": FMap.adopt,
    "_CL": _CollLike(),
    "_diff": _diff,
    "_inter": _inter,
    "_as_fmap": closure._as_fmap,
}
"""The one global namespace of all generated code: helpers, constants, and the ``Def`` functions."""

_BASE_NS = dict(_NS)
"""The helpers alone: where an isolated unit's namespace starts (``isolated_unit``)."""

_ids = itertools.count()
_DEFS: dict[L.Def, str] = {}
_CONST_NAMES: dict[Any, str] = {}

Recipe = tuple[Any, ...]
"""One step of rebuilding a unit's namespace in another process (``model/codecache.py``): ``("const", name,
value)``, ``("ids", name, rows)`` (a set of the identities of enum members, or of tuples of them, which are only
valid in the process that computes them), ``("with", name, field names)``, ``("rec", name, class, field names)``
or ``("code", code object)``."""

_recording: list[Recipe] | None = None
"""While ``isolated_unit`` runs: every change made to the namespace, in order."""


def _record(recipe: Recipe) -> None:
    if _recording is not None:
        _recording.append(recipe)


@contextlib.contextmanager
def isolated_unit() -> Iterator[tuple[dict[str, Any], list[Recipe]]]:
    """Compile into a namespace of its own (the helpers, and whatever is compiled inside the block: no ``Def``
    or constant compiled earlier is shared), recording each change to it, so that the namespace can be saved
    and rebuilt by ``replay`` in another process. Yields the namespace and the recipes."""
    global _NS, _DEFS, _CONST_NAMES, _recording
    saved = (_NS, _DEFS, _CONST_NAMES, _recording)
    _NS, _DEFS, _CONST_NAMES, _recording = dict(_BASE_NS), {}, {}, []
    try:
        yield _NS, _recording
    finally:
        _NS, _DEFS, _CONST_NAMES, _recording = saved


def replay(recipes: list[Recipe]) -> dict[str, Any]:
    """The namespace that ``recipes`` (recorded by ``isolated_unit``) describe, rebuilt in this process."""
    ns = dict(_BASE_NS)
    for recipe in recipes:
        kind = recipe[0]
        if kind == "const":
            ns[recipe[1]] = recipe[2]
        elif kind == "ids":
            ns[recipe[1]] = _identities(recipe[2])
        elif kind == "with":
            ns[recipe[1]] = _first_with_call(ns, recipe[1], recipe[2])
        elif kind == "rec":
            made = fastrec.maker(recipe[2], recipe[3])
            if made is None:
                raise ValueError(f"no record maker for {recipe[2]!r} in this process")
            ns[recipe[1]] = made
        elif kind == "code":
            exec(recipe[1], ns)
        else:
            raise ValueError(f"unknown recipe {kind!r}")
    return ns


def _identities(rows: tuple[Any, ...]) -> frozenset[Any]:
    return frozenset(tuple(id(m) for m in row) if type(row) is tuple else id(row) for row in rows)


_MAX_INDENT = 80
"""Nesting (indentation levels) beyond which a lazily evaluated part is hoisted into its own function."""
_MAX_LOOPS = 18
"""Nested loops beyond which a loop is hoisted (CPython allows 20 statically nested blocks)."""
_MAX_INLINE = 160
"""Longer inline expressions are stored in a local first (bounds parenthesis nesting)."""

_CMP = {"==", "!=", "<", "<=", ">", ">="}
Handler = Callable[["_Gen", Any], str]
_HANDLERS: NodeTable[Handler] = NodeTable("the Python code generator (model/codegen.py)")


def _fresh(prefix: str) -> str:
    return f"{prefix}{next(_ids)}"


def _const(value: object) -> str:
    if value is None or type(value) is bool:
        return repr(value)
    if type(value) is int:
        return repr(value) if value >= 0 else f"({value})"
    if type(value) is str and len(value) < 64:
        return repr(value)
    key = _value_key(value)
    name = _CONST_NAMES.get(key)
    if name is None:
        name = _CONST_NAMES[key] = _fresh("K")
        _NS[name] = value  # keeps the value alive, so an identity key stays unique
        _record(("const", name, value))
    return name


def _identity_set(rows: tuple[Any, ...]) -> str:
    """A global holding the identities of ``rows`` (enum members, or tuples of them): ``id``s are valid only in
    this process, so a saved unit recomputes them (``replay``)."""
    name = _fresh("I")
    _NS[name] = _identities(rows)
    _record(("ids", name, rows))
    return name


_ATOMS = (type(None), bool, int, str)


def _value_key(v: object) -> Any:
    """A key equal only for interchangeable constants: atoms by class and value, tuples element-wise, classes and
    anything else by identity (``(1,)`` and ``(True,)`` are equal values but not interchangeable)."""
    if type(v) in _ATOMS or isinstance(v, enum.Enum):
        return ("value", type(v), v)
    if type(v) is tuple:
        return ("tuple", *(_value_key(x) for x in v))
    return ("id", id(v))


@functools.cache
def _replace_any(names: tuple[str, ...]) -> Callable[..., Any]:
    """``dataclasses.replace`` with the updated field names fixed."""

    def replace(o: Any, *vals: Any) -> Any:
        return dataclasses.replace(o, **dict(zip(names, vals, strict=True)))

    return replace


def _with_site(names: tuple[str, ...]) -> str:
    """A global for one ``with_`` site: on its first call it replaces itself by an update specialised to the
    class it met (``model/fastrec.py``), which still handles any other class through ``dataclasses.replace``."""
    name = _fresh("W")
    _NS[name] = _first_with_call(_NS, name, names)
    _record(("with", name, names))
    return name


def _first_with_call(ns: dict[str, Any], name: str, names: tuple[str, ...]) -> Callable[..., Any]:
    generic = _replace_any(names)

    def first_call(o: Any, *vals: Any) -> Any:
        fast = fastrec.updater(o.__class__, names, generic)
        ns[name] = fast if fast is not None else generic
        return ns[name](o, *vals)

    return first_call


def _rec_site(cls: type, names: tuple[str, ...]) -> str:
    """The callable that builds a ``cls`` record from the values of ``names`` (in that order)."""
    made = fastrec.maker(cls, names)
    if made is None:
        return _const(cls)
    name = _fresh("M")
    _NS[name] = made
    _record(("rec", name, cls, names))
    return name


class _Block:
    """Lines of one block of statements (indented relative to the block)."""

    def __init__(self) -> None:
        self.lines: list[str] = []


class _Gen:
    """Emits the body of one Python function for one expression."""

    def __init__(self, scope: dict[str, str], shared: frozenset[int]) -> None:
        self.scope = dict(scope)
        self.block = _Block()
        self.indent = 0
        self.loops = 0
        self.hoisted: list[str] = []
        self.shared = shared
        """Expressions (by ``_canon`` number) that occur more than once: worth keeping in a local once computed."""
        self.memo: dict[tuple[int, tuple[str, ...]], str] = {}
        """Values of shared nodes computed so far on every path to the current position: (node, the locals its
        free variables are bound to) → the local holding it. A lazily evaluated block sees its enclosing
        blocks' entries; its own entries end with it (the first operand of ``and``/``or``, evaluated whenever
        the junction is, keeps its entries; each further operand sees those of the operands before it)."""
        self.bools: dict[str, str] = {}
        """``(True if X else False)`` expressions made here → ``X``: where only the truth of the value is used
        (a condition), ``X`` itself."""

    # ---------------------------------------------------------------------------------- plumbing

    def emit(self, line: str) -> None:
        self.block.lines.append(line)

    def temp(self, expr: str, prefix: str = "t") -> str:
        if expr.isidentifier() or _is_literal(expr):
            return expr
        name = _fresh(prefix)
        self.emit(f"{name} = {expr}")
        return name

    def sub(
        self,
        e: L.Expr,
        scope: dict[str, str] | None = None,
        loop: bool = False,
        memo: dict[tuple[int, tuple[str, ...]], str] | None = None,
    ) -> tuple[list[str], str]:
        """Compile ``e`` into a fresh block (evaluated only when that block runs); with ``memo``, the memo the
        block starts from and adds to (else a copy of the current one)."""
        saved = (self.block, self.scope, self.indent, self.loops, self.memo)
        self.block = _Block()
        self.memo = dict(self.memo) if memo is None else memo
        if scope is not None:
            self.scope = scope
        self.indent += 1
        self.loops += int(loop)
        try:
            deep = self.indent > _MAX_INDENT or self.loops > _MAX_LOOPS
            expr = self.hoist(e) if deep else self.c(e)
            return self.block.lines, expr
        finally:
            self.block, self.scope, self.indent, self.loops, self.memo = saved

    def hoist(self, e: L.Expr) -> str:
        """Compile ``e`` as a module-level function of the variables in scope; the call expression."""
        params = sorted(set(self.scope.values()))
        name = _fresh("h")
        gen = _Gen(self.scope, self.shared)
        body = gen.c(e)
        self.hoisted.extend(gen.hoisted)
        self.hoisted.append(_function(name, params, gen.block.lines, body))
        return f"{name}({', '.join(params)})"

    def splice(self, lines: list[str]) -> None:
        for ln in lines:
            self.emit("    " + ln)

    def value_or_default(self, present: str, value: str, default: L.Expr) -> str:
        """``value`` where the condition ``present`` holds, else ``default`` — compiled into a block evaluated
        only when it is needed (a conditional expression when the default needs no statements)."""
        default_lines, default_expr = self.sub(default)
        if not default_lines:
            return f"({value} if {present} else {default_expr})"
        r = _fresh("t")
        self.emit(f"if {present}:")
        self.emit(f"    {r} = {value}")
        self.emit("else:")
        self.splice([*default_lines, f"{r} = {default_expr}"])
        return r

    def truth(self, expr: str) -> str:
        """``expr`` where only its truth is used."""
        return self.bools.get(expr, expr)

    def as_bool(self, expr: str) -> str:
        """``bool(expr)``, inline."""
        out = f"(True if {expr} else False)"
        self.bools[out] = f"({expr})"
        return out

    def bind(self, name: str, prefix: str = "v") -> tuple[dict[str, str], str]:
        ident = _fresh(prefix)
        scope = dict(self.scope)
        scope[name] = ident
        return scope, ident

    # ---------------------------------------------------------------------------------- expressions

    def c(self, e: L.Expr) -> str:
        number = -1 if isinstance(e, L.Var | L.Const) else _canon(e)
        if number in self.shared:
            key = (number, tuple(self.scope.get(v, "") for v in _free(e)))
            hit = self.memo.get(key)
            if hit is not None:
                return hit
            out = self.memo[key] = self.temp(self._c(e))
            return out
        out = self._c(e)
        if len(out) > _MAX_INLINE:
            out = self.temp(out)
        return out

    def _c(self, e: L.Expr) -> str:
        try:
            handler: Handler = _HANDLERS.handler(e)
        except MissingHandler as missing:
            raise closure.EvalError(str(missing)) from None
        return handler(self, e)

    def _junction(self, args: tuple[L.Expr, ...], conj: bool) -> str:
        parts: list[tuple[list[str], str]] = []
        memo = self.memo  # the first operand is evaluated whenever the junction is
        for a in args:
            parts.append(self.sub(a, loop=True, memo=memo))
            memo = dict(memo)  # a further operand runs only after the ones before it
        if all(not lines for lines, _ in parts):
            if not parts:
                return "True" if conj else "False"
            op = " and " if conj else " or "
            return self.as_bool(op.join(self.truth(x) for _, x in parts))
        # one pass of a loop: each further operand is evaluated only while the result is still undecided
        r = _fresh("t")
        self.emit("while True:")
        for lines, x in parts:
            test = f"not {self.truth(x)}" if conj else self.truth(x)
            self.splice([*lines, f"if {test}:", f"    {r} = {not conj}", "    break"])
        self.splice([f"{r} = {conj}", "break"])
        return r


_FREE: dict[int, tuple[L.Expr, tuple[str, ...]]] = {}


# One handler per node kind: each returns the Python expression of its node, emitting statements as needed.


@_HANDLERS.on(L.Const)
def _g_const(self: _Gen, e: L.Const) -> str:
    return _const(e.value)


@_HANDLERS.on(L.Var)
def _g_var(self: _Gen, e: L.Var) -> str:
    try:
        return self.scope[e.name]
    except KeyError:
        raise closure.EvalError(f"unbound variable {e.name!r}") from None


@_HANDLERS.on(L.Field)
def _g_field(self: _Gen, e: L.Field) -> str:
    return f"{self.c(e.obj)}.{e.name}"


@_HANDLERS.on(L.Rec)
def _g_rec(self: _Gen, e: L.Rec) -> str:
    names = tuple(k for k, _ in e.fields)
    site = _rec_site(e.cls, names)
    if site.startswith("M"):
        return f"{site}({', '.join(self.c(v) for _, v in e.fields)})"
    return f"{site}({', '.join(f'{k}={self.c(v)}' for k, v in e.fields)})"


@_HANDLERS.on(L.With)
def _g_with(self: _Gen, e: L.With) -> str:
    obj = self.c(e.obj)
    vals = [self.c(v) for _, v in e.updates]
    return f"{_with_site(tuple(k for k, _ in e.updates))}({', '.join([obj, *vals])})"


@_HANDLERS.on(L.Let)
def _g_let(self: _Gen, e: L.Let) -> str:
    value = self.c(e.value)
    if value.isidentifier() and value not in ("True", "False", "None"):
        scope = {**self.scope, e.name: value}  # a local already holds the value: another name for it
    else:
        scope, ident = self.bind(e.name)
        self.emit(f"{ident} = {value}")
    saved = self.scope
    self.scope = scope
    try:
        return self.c(e.body)
    finally:
        self.scope = saved


@_HANDLERS.on(L.If)
def _g_if(self: _Gen, e: L.If) -> str:
    cnd = self.truth(self.c(e.cond))
    then_lines, then = self.sub(e.then)
    else_lines, els = self.sub(e.els)
    if not then_lines and not else_lines:
        return f"({then} if {cnd} else {els})"
    r = _fresh("t")
    self.emit(f"if {cnd}:")
    self.splice([*then_lines, f"{r} = {then}"])
    self.emit("else:")
    self.splice([*else_lines, f"{r} = {els}"])
    return r


@_HANDLERS.on(L.EnumName)
def _g_enum_name(self: _Gen, e: L.EnumName) -> str:
    return f"{self.c(e.arg)}.name"


@_HANDLERS.on(L.Not)
def _g_not(self: _Gen, e: L.Not) -> str:
    return f"(not {self.truth(self.c(e.arg))})"


@_HANDLERS.on(L.And, L.Or)
def _g_and_or(self: _Gen, e: L.And | L.Or) -> str:
    return self._junction(e.args, isinstance(e, L.And))


@_HANDLERS.on(L.Implies)
def _g_implies(self: _Gen, e: L.Implies) -> str:
    lhs = self.truth(self.c(e.lhs))
    rhs_lines, rhs = self.sub(e.rhs)
    if not rhs_lines:
        return self.as_bool(f"not {lhs} or {self.truth(rhs)}")
    r = _fresh("t")
    self.emit(f"{r} = True")
    self.emit(f"if {lhs}:")
    self.splice([*rhs_lines, f"{r} = True if {self.truth(rhs)} else False"])
    return r


@_HANDLERS.on(L.Cmp)
def _g_cmp(self: _Gen, e: L.Cmp) -> str:
    if e.op not in _CMP:
        raise closure.EvalError(f"unknown comparison {e.op!r}")
    lhs = self.c(e.lhs)
    return f"({lhs} {e.op} {self.c(e.rhs)})"  # as the interpreter: the operator's own result


@_HANDLERS.on(L.Arith)
def _g_arith(self: _Gen, e: L.Arith) -> str:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    if e.op in ("+", "-"):
        return f"({lhs} {e.op} {rhs})"
    if e.op in ("max", "min"):
        return f"{e.op}({lhs}, {rhs})"
    raise closure.EvalError(f"unknown arithmetic {e.op!r}")


@_HANDLERS.on(L.SetLit)
def _g_set_lit(self: _Gen, e: L.SetLit) -> str:
    elems = [self.c(x) for x in e.elems]
    return f"frozenset(({''.join(x + ', ' for x in elems)}))"


@_HANDLERS.on(L.SeqLit)
def _g_seq_lit(self: _Gen, e: L.SeqLit) -> str:
    elems = [self.c(x) for x in e.elems]
    return f"({''.join(x + ', ' for x in elems)})"


@_HANDLERS.on(L.Member)
def _g_member(self: _Gen, e: L.Member) -> str:
    members = _identity_members(e.coll, 1)
    if members is not None:
        elem = self.temp(self.c(e.elem))
        if len(members) <= _MAX_IDENTITY:
            return f"({' or '.join(f'{elem} is {_const(m)}' for m in members)})"
        return f"(id({elem}) in {_identity_set(members)})"
    if isinstance(e.elem, L.SeqLit) and len(e.elem.elems) > 1:
        rows = _identity_members(e.coll, len(e.elem.elems))
        if rows is not None:  # a tuple of members: the tuple of their identities
            parts = "".join(f"id({self.c(x)}), " for x in e.elem.elems)
            return f"(({parts}) in {_identity_set(rows)})"
    elem = self.c(e.elem)
    return f"({elem} in {self.c(e.coll)})"


_MAX_IDENTITY = 6
"""Largest constant set of enum members tested by identity (``x is A or x is B``) rather than by their ``id``s."""


def _plain_member(m: object) -> bool:
    """A member of a plain enum (no mixin, no ``__eq__`` of its own): equal only to itself."""
    return isinstance(m, enum.Enum) and type(m).__eq__ is object.__eq__


def _identity_members(coll: L.Expr, width: int) -> tuple[Any, ...] | None:
    """The elements of a constant set of members of plain enums (``width`` 1), or of ``width``-tuples of them, in
    a fixed order; else ``None``. Membership in such a set is identity with one of its elements (element-wise),
    tested without ``Enum.__hash__`` (Python code): ``x is A or x is B``, or ``id``s in a set of ``id``s. An
    element that is no such member is equal to none of them either way."""
    if not isinstance(coll, L.Const) or type(coll.value) is not frozenset or not coll.value:
        return None
    rows = tuple(coll.value)
    if width == 1:
        if not all(_plain_member(m) for m in rows):
            return None
        return tuple(sorted(rows, key=lambda m: (type(m).__qualname__, m.name)))
    for row in rows:
        if type(row) is not tuple or len(row) != width or not all(_plain_member(m) for m in row):
            return None
    return rows


@_HANDLERS.on(L.SetOp)
def _g_set_op(self: _Gen, e: L.SetOp) -> str:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    if e.op == "union":
        return f"(frozenset({lhs}) | frozenset({rhs}))"
    if e.op == "inter":
        return f"_inter({lhs}, {rhs})"
    return f"_diff({lhs}, {rhs})"


@_HANDLERS.on(L.Subset)
def _g_subset(self: _Gen, e: L.Subset) -> str:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    return f"(frozenset({lhs}) <= frozenset({rhs}))"


@_HANDLERS.on(L.Size)
def _g_size(self: _Gen, e: L.Size) -> str:
    return f"len({self.c(e.coll)})"


@_HANDLERS.on(L.ToSet)
def _g_to_set(self: _Gen, e: L.ToSet) -> str:
    return f"frozenset({self.c(e.seq)})"


@_HANDLERS.on(L.Filter)
def _g_filter(self: _Gen, e: L.Filter) -> str:
    src = self.temp(self.c(e.coll), "s")
    scope, x = self.bind(e.var, "x")
    lines, pred = self.sub(e.pred, scope, loop=True)
    if not lines:
        return f"_CL[{src}.__class__]([{x} for {x} in {src} if {self.truth(pred)}])"
    out = _fresh("o")
    self.emit(f"{out} = []")
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"if {self.truth(pred)}:", f"    {out}.append({x})"])
    return f"_CL[{src}.__class__]({out})"


@_HANDLERS.on(L.Image)
def _g_image(self: _Gen, e: L.Image) -> str:
    src = self.temp(self.c(e.coll), "s")
    scope, x = self.bind(e.var, "x")
    lines, body = self.sub(e.body, scope, loop=True)
    if not lines:
        return f"_CL[{src}.__class__]([{body} for {x} in {src}])"
    out = _fresh("o")
    self.emit(f"{out} = []")
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"{out}.append({body})"])
    return f"_CL[{src}.__class__]({out})"


@_HANDLERS.on(L.BigUnion)
def _g_big_union(self: _Gen, e: L.BigUnion) -> str:
    src = self.c(e.coll)
    scope, x = self.bind(e.var, "x")
    lines, body = self.sub(e.body, scope, loop=True)
    out = _fresh("o")
    self.emit(f"{out} = set()")
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"{out}.update({body})"])
    return f"frozenset({out})"


@_HANDLERS.on(L.Quant)
def _g_quant(self: _Gen, e: L.Quant) -> str:
    src = self.c(e.coll)
    scope, x = self.bind(e.var, "x")
    lines, pred = self.sub(e.pred, scope, loop=True)
    want_all = e.kind == "all"
    r = _fresh("t")
    self.emit(f"{r} = {want_all}")
    self.emit(f"for {x} in {src}:")
    test = f"not {self.truth(pred)}" if want_all else self.truth(pred)
    self.splice([*lines, f"if {test}:", f"    {r} = {not want_all}", "    break"])
    return r


@_HANDLERS.on(L.First)
def _g_first(self: _Gen, e: L.First) -> str:
    src = self.c(e.seq)
    scope, x = self.bind(e.var, "x")
    lines, pred = self.sub(e.pred, scope, loop=True)
    default_lines, default = self.sub(e.default)
    r = _fresh("t")
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"if {self.truth(pred)}:", f"    {r} = {x}", "    break"])
    self.emit("else:")
    self.splice([*default_lines, f"{r} = {default}"])
    return r


@_HANDLERS.on(L.Sorted)
def _g_sorted(self: _Gen, e: L.Sorted) -> str:
    return f"tuple(sorted({self.c(e.coll)}))"


@_HANDLERS.on(L.Fold)
def _g_fold(self: _Gen, e: L.Fold) -> str:
    acc = _fresh("a")
    self.emit(f"{acc} = {self.c(e.init)}")
    src = self.c(e.seq)
    scope = dict(self.scope)
    scope[e.acc] = acc
    x = _fresh("x")
    scope[e.var] = x
    lines, body = self.sub(e.body, scope, loop=True)
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"{acc} = {body}"])
    return acc


@_HANDLERS.on(L.Head)
def _g_head(self: _Gen, e: L.Head) -> str:
    seq = self.temp(self.c(e.seq), "s")
    return self.value_or_default(seq, f"{seq}[0]", e.default)


@_HANDLERS.on(L.Append)
def _g_append(self: _Gen, e: L.Append) -> str:
    seq = self.c(e.seq)
    return f"(*{seq}, {self.c(e.elem)})"


@_HANDLERS.on(L.Concat)
def _g_concat(self: _Gen, e: L.Concat) -> str:
    lhs = self.c(e.lhs)
    return f"(tuple({lhs}) + tuple({self.c(e.rhs)}))"


@_HANDLERS.on(L.Distinct)
def _g_distinct(self: _Gen, e: L.Distinct) -> str:
    return f"tuple(dict.fromkeys({self.c(e.seq)}))"


def _entries(self: _Gen, m: str) -> str:
    """The entries of the map ``m``: an ``FMap``'s dict (the same look-ups without a Python-level method call per
    look-up), any other mapping itself. Outside loops, a local (one per map on each path); inside one, an inline
    expression, so that a loop body without statements stays a comprehension."""
    m = self.temp(m, "m")
    key = (-2, (m,))
    hit = self.memo.get(key)
    if hit is not None:
        return hit
    entries = f"({m}._d if {m}.__class__ is FMap else {m})"
    if self.loops:
        return entries
    name = self.memo[key] = _fresh("m")
    self.emit(f"{name} = {entries}")
    return name


@_HANDLERS.on(L.MapGet)
def _g_map_get(self: _Gen, e: L.MapGet) -> str:
    m = _entries(self, self.c(e.m))
    return f"{m}[{self.c(e.key)}]"


@_HANDLERS.on(L.MapGetOr)
def _g_map_get_or(self: _Gen, e: L.MapGetOr) -> str:
    m = self.temp(self.c(e.m), "m")
    k = self.temp(self.c(e.key), "k")
    m = _entries(self, m)
    return self.value_or_default(f"{k} in {m}", f"{m}[{k}]", e.default)


@_HANDLERS.on(L.MapHas)
def _g_map_has(self: _Gen, e: L.MapHas) -> str:
    m = _entries(self, self.c(e.m))
    return f"({self.c(e.key)} in {m})"


@_HANDLERS.on(L.MapPut)
def _g_map_put(self: _Gen, e: L.MapPut) -> str:
    m, k = self.c(e.m), self.c(e.key)
    return f"_as_fmap({m}).set({k}, {self.c(e.value)})"


@_HANDLERS.on(L.MapDel)
def _g_map_del(self: _Gen, e: L.MapDel) -> str:
    m = self.c(e.m)
    return f"_as_fmap({m}).remove({self.c(e.key)})"


@_HANDLERS.on(L.MapDelAll)
def _g_map_del_all(self: _Gen, e: L.MapDelAll) -> str:
    m = self.c(e.m)
    return f"_as_fmap({m}).remove_all({self.c(e.key_set)})"


@_HANDLERS.on(L.MapKeys)
def _g_map_keys(self: _Gen, e: L.MapKeys) -> str:
    return f"frozenset({_entries(self, self.c(e.m))})"


@_HANDLERS.on(L.MapMerge)
def _g_map_merge(self: _Gen, e: L.MapMerge) -> str:
    lhs = self.c(e.lhs)
    return f"_as_fmap({lhs}).merge({self.c(e.rhs)})"


@_HANDLERS.on(L.MapBuild)
def _g_map_build(self: _Gen, e: L.MapBuild) -> str:
    src = self.c(e.key_set)
    scope, x = self.bind(e.var, "x")
    lines, value = self.sub(e.value, scope, loop=True)
    if not lines:
        return f"_adopt({{{x}: {value} for {x} in {src}}})"
    out = _fresh("o")
    self.emit(f"{out} = {{}}")
    self.emit(f"for {x} in {src}:")
    self.splice([*lines, f"{out}[{x}] = {value}"])
    return f"_adopt({out})"


@_HANDLERS.on(L.Call)
def _g_call(self: _Gen, e: L.Call) -> str:
    target = _def_name(e.fn)
    return f"{target}({', '.join(self.c(a) for a in e.args)})"


@_HANDLERS.on(L.Rule)
def _g_rule(self: _Gen, e: L.Rule) -> str:
    return self.c(e.body)


def _free(e: L.Expr) -> tuple[str, ...]:
    """The free variables of ``e``, sorted (a ``Def``'s body is closed: only a call's arguments count)."""
    hit = _FREE.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    names: set[str] = set()
    if isinstance(e, L.Var):
        names.add(e.name)
    elif isinstance(e, L.Let):
        names.update(_free(e.value), set(_free(e.body)) - {e.name})
    elif isinstance(e, L.Filter | L.Quant):
        names.update(_free(e.coll), set(_free(e.pred)) - {e.var})
    elif isinstance(e, L.Image | L.BigUnion):
        names.update(_free(e.coll), set(_free(e.body)) - {e.var})
    elif isinstance(e, L.First):
        names.update(_free(e.seq), _free(e.default), set(_free(e.pred)) - {e.var})
    elif isinstance(e, L.MapBuild):
        names.update(_free(e.key_set), set(_free(e.value)) - {e.var})
    elif isinstance(e, L.Fold):
        names.update(_free(e.seq), _free(e.init), set(_free(e.body)) - {e.var, e.acc})
    elif isinstance(e, L.Call):
        for a in e.args:
            names.update(_free(a))
    else:
        for child in _children(e):
            names.update(_free(child))
    out = tuple(sorted(names))
    _FREE[id(e)] = (e, out)
    return out


def _children(e: L.Expr) -> list[L.Expr]:
    """The direct sub-expressions of ``e`` (a call's arguments, not its ``Def``'s body)."""
    out: list[L.Expr] = []
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        v = getattr(e, f.name)
        if isinstance(v, L.Expr):
            out.append(v)
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, L.Expr):
                    out.append(x)
                elif isinstance(x, tuple):
                    out.extend(y for y in x if isinstance(y, L.Expr))
    return out


_CANON: dict[int, tuple[L.Expr, int]] = {}
_TABLE: dict[tuple[Any, ...], int] = {}


def _canon(e: L.Expr) -> int:
    """The same number for structurally equal expressions (constants equal with the same class; a ``Def`` by
    identity): hash-consing, so that equal sub-expressions written apart are computed once too."""
    hit = _CANON.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    parts: list[Any] = [type(e)]
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        parts.append(_part(getattr(e, f.name)))
    number = _TABLE.setdefault(tuple(parts), len(_TABLE))
    _CANON[id(e)] = (e, number)
    return number


def _part(v: Any) -> Any:
    if isinstance(v, L.Expr):
        return ("expr", _canon(v))
    if type(v) is tuple:  # not a tuple record (``TopicPartition``), keyed by identity as any other value
        return ("tuple", *(_part(x) for x in v))
    if isinstance(v, L.Def):
        return ("def", id(v))
    return _value_key(v)  # the node holds the value, so an identity key stays unique


def _shared(root: L.Expr) -> frozenset[int]:
    """Expressions (by ``_canon`` number) that occur more than once in ``root``'s tree (not entering ``Def``
    bodies): worth keeping in a local once computed."""
    count: dict[int, int] = {}
    seen = {id(root)}
    stack = [root]
    while stack:
        for child in _children(stack.pop()):
            number = _canon(child)
            count[number] = count.get(number, 0) + 1
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return frozenset(number for number, n in count.items() if n > 1)


def _is_literal(expr: str) -> bool:
    return expr in ("True", "False", "None") or expr.strip("()-").isdigit()


def _def_name(d: L.Def) -> str:
    """The generated function of ``d`` (generated on first use; recursion-safe)."""
    name = _DEFS.get(d)
    if name is not None:
        return name
    name = _DEFS[d] = _fresh("d_")
    params = [_fresh("p") for _ in d.params]
    gen = _Gen(dict(zip(d.params, params, strict=True)), _shared(d.body))
    try:
        body = gen.c(d.body)
    except BaseException:
        del _DEFS[d]
        raise
    _exec([*gen.hoisted, _function(name, params, gen.block.lines, body)], f"<kcspec def {d.name}>")
    return name


def _function(name: str, params: list[str], lines: list[str], result: str) -> str:
    body = "".join(f"    {ln}\n" for ln in _compact([*lines, f"return {result}"]))
    return f"def {name}({', '.join(params)}):\n{body}"


_TOKEN = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|\b[A-Za-z_]\w*\b")
_DEFINES = re.compile(r" *(?:for )?([a-z]\d+) (?:=|in) ")


def _compact(lines: list[str]) -> list[str]:
    """``lines`` with their locals renamed so that locals whose values are never needed at the same time share a
    name: a generated function otherwise has a local per intermediate value (up to thousands), and CPython
    allocates and clears all of a frame's locals on each call (a frame of over a few KB can also start a new
    stack chunk, allocated and freed on every call). A local (a name assigned at the start of a statement,
    ``name = …`` or ``for name in …``) lives from its first to its last occurrence, extended to the end of any
    loop it is used in but was assigned before (its later passes read it)."""
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    tokens: list[list[tuple[int, int, str]]] = []
    for i, ln in enumerate(lines):
        m = _DEFINES.match(ln)
        if m is not None and m.group(1) not in first:
            first[m.group(1)] = i
        found = [(t.start(), t.end(), t.group()) for t in _TOKEN.finditer(ln) if t.group()[0] not in "'\""]
        tokens.append(found)
    for i, found in enumerate(tokens):
        for _, _, word in found:
            if word in first:
                first[word] = min(first[word], i)
                last[word] = i
    # loops: (header line, last line of the body)
    loops: list[tuple[int, int]] = []
    depth = [len(ln) - len(ln.lstrip(" ")) for ln in lines]
    for i, ln in enumerate(lines):
        if ln.lstrip(" ").startswith(("for ", "while ")):
            end = i
            while end + 1 < len(lines) and depth[end + 1] > depth[i]:
                end += 1
            loops.append((i, end))
    spans: list[tuple[int, int, str]] = []
    for name, start in first.items():
        end = last.get(name, start)
        changed = True
        while changed:
            changed = False
            for head, stop in loops:
                if start < head <= end < stop:
                    end, changed = stop, True
        spans.append((start, end, name))
    spans.sort()
    rename: dict[str, str] = {}
    free: list[str] = []
    busy: list[tuple[int, str]] = []  # (last line, slot), a heap
    slots = 0
    for start, end, name in spans:
        while busy and busy[0][0] < start:
            free.append(heapq.heappop(busy)[1])
        if free:
            slot = free.pop()
        else:
            slot = f"L{slots}"
            slots += 1
        rename[name] = slot
        heapq.heappush(busy, (end, slot))
    out: list[str] = []
    for ln, found in zip(lines, tokens, strict=True):
        parts: list[str] = []
        pos = 0
        for a, b, word in found:
            new = rename.get(word)
            if new is not None:
                parts.append(ln[pos:a])
                parts.append(new)
                pos = b
        parts.append(ln[pos:])
        out.append("".join(parts))
    return out


def _exec(functions: list[str], filename: str) -> None:
    code = compile("\n\n".join(functions) + "\n", filename, "exec")
    _record(("code", code))
    exec(code, _NS)


class FastCompiled:
    """An expression with named free variables compiled to a Python function; falls back to the interpreter on
    errors so that they read exactly as the interpreter's."""

    def __init__(self, expr: L.Expr, free: tuple[str, ...]) -> None:
        self.free = free
        self.expr = expr
        params = [_fresh("f") for _ in free]
        gen = _Gen(dict(zip(free, params, strict=True)), _shared(expr))
        try:
            body = gen.c(expr)
        except closure.EvalError:
            closure.compile_expr(expr, free)  # raises the interpreter's own message, naming the rule
            raise
        name = _fresh("e_")
        _exec([*gen.hoisted, _function(name, params, gen.block.lines, body)], "<kcspec expr>")
        self.fn: Callable[..., Any] = _NS[name]

    @classmethod
    def restored(cls, expr: L.Expr, free: tuple[str, ...], fn: Callable[..., Any]) -> FastCompiled:
        """The compiled form of ``expr`` whose function was rebuilt from a saved unit (``model/codecache.py``)."""
        made = cls.__new__(cls)
        made.free, made.expr, made.fn = free, expr, fn
        return made

    def call(self, *args: Any) -> Any:
        """Evaluate with the free variables' values in the order of ``free``."""
        try:
            return self.fn(*args)
        except Exception as exc:
            return self._explain(exc, args)

    def __call__(self, values: Mapping[str, Any]) -> Any:
        return self.call(*(values[name] for name in self.free))

    def _explain(self, exc: Exception, args: tuple[Any, ...]) -> Any:
        closure.compile_expr(self.expr, self.free)(dict(zip(self.free, args, strict=True)))
        raise RuntimeError(
            f"generated code raised {type(exc).__name__}: {exc} where the interpreter did not"
        ) from exc


def compile_fast(expr: L.Expr, free: tuple[str, ...]) -> FastCompiled:
    return FastCompiled(expr, free)
