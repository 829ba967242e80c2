"""The Python backend of the expression language: compile an ``Expr`` once into closures, then evaluate.

Variables are resolved to slots at compile time; evaluation pushes bound values on one list, so a
compiled rule allocates nothing per variable lookup. Errors during evaluation (a missing map key, a
field that does not exist) raise ``EvalError`` naming the rule being evaluated — they are spec bugs,
not user errors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from kcspec.model.dispatch import NodeTable
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap

Env = list[Any]
Fn = Callable[[Env], Any]
Handler = Callable[["Compiler", Any], Fn]
_TABLE: NodeTable[Handler] = NodeTable("the Python evaluator (model/evaluate.py)")


class EvalError(RuntimeError):
    """An expression could not be evaluated (a bug in the spec, reported with the innermost rule name)."""


_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: bool(a == b),
    "!=": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b),
    ">=": lambda a, b: bool(a >= b),
}
_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "max": max,
    "min": min,
}


def _coll_like(coll: Any, items: Any) -> Any:
    if isinstance(coll, tuple | list):
        return tuple(items)
    return frozenset(items)


def _diff(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        bs = b if isinstance(b, frozenset | set) else frozenset(b)
        return tuple(x for x in a if x not in bs)
    return frozenset(a) - frozenset(b)


def _distinct(seq: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(seq))


class Compiler:
    """Compiles expressions against a scope of named slots."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.rule_stack: list[str] = []

    def slot(self, name: str) -> int:
        for i in range(len(self.scope) - 1, -1, -1):
            if self.scope[i] == name:
                return i
        raise EvalError(f"unbound variable {name!r} in rule {self.where()}")

    def where(self) -> str:
        return self.rule_stack[-1] if self.rule_stack else "<top>"

    def bind(self, name: str, body: L.Expr) -> tuple[int, Fn]:
        self.scope.append(name)
        try:
            return len(self.scope) - 1, self.c(body)
        finally:
            self.scope.pop()

    def c(self, e: L.Expr) -> Fn:
        handler: Handler = _TABLE.handler(e)
        return handler(self, e)


# One handler per node kind: each compiles its node into a closure over the compiled children.


@_TABLE.on(L.Const)
def _c_const(self: Compiler, e: L.Const) -> Fn:
    value = e.value
    return lambda env: value


@_TABLE.on(L.Var)
def _c_var(self: Compiler, e: L.Var) -> Fn:
    i = self.slot(e.name)
    return lambda env: env[i]


@_TABLE.on(L.Field)
def _c_field(self: Compiler, e: L.Field) -> Fn:
    obj, name, where = self.c(e.obj), e.name, self.where()

    def field(env: Env) -> Any:
        o = obj(env)
        try:
            return getattr(o, name)
        except AttributeError:
            raise EvalError(f"{type(o).__name__} has no field {name!r} (rule {where})") from None

    return field


@_TABLE.on(L.Rec)
def _c_rec(self: Compiler, e: L.Rec) -> Fn:
    cls = e.cls
    names = [k for k, _ in e.fields]
    fns = [self.c(v) for _, v in e.fields]
    return lambda env: cls(**{n: f(env) for n, f in zip(names, fns, strict=True)})


@_TABLE.on(L.With)
def _c_with(self: Compiler, e: L.With) -> Fn:
    obj = self.c(e.obj)
    names = [k for k, _ in e.updates]
    fns = [self.c(v) for _, v in e.updates]
    return lambda env: dataclasses.replace(obj(env), **{n: f(env) for n, f in zip(names, fns, strict=True)})


@_TABLE.on(L.Let)
def _c_let(self: Compiler, e: L.Let) -> Fn:
    value = self.c(e.value)
    _, body = self.bind(e.name, e.body)

    def let(env: Env) -> Any:
        env.append(value(env))
        try:
            return body(env)
        finally:
            env.pop()

    return let


@_TABLE.on(L.If)
def _c_if(self: Compiler, e: L.If) -> Fn:
    cnd, then, els = self.c(e.cond), self.c(e.then), self.c(e.els)
    return lambda env: then(env) if cnd(env) else els(env)


@_TABLE.on(L.EnumName)
def _c_enum_name(self: Compiler, e: L.EnumName) -> Fn:
    arg, cls, where = self.c(e.arg), e.enum_type, self.where()

    def name(env: Env) -> Any:
        v = arg(env)
        if not isinstance(v, cls):
            raise EvalError(f"the name of a {cls.__name__} applied to {v!r} (rule {where})")
        return v.name

    return name


@_TABLE.on(L.Not)
def _c_not(self: Compiler, e: L.Not) -> Fn:
    arg = self.c(e.arg)
    return lambda env: not arg(env)


@_TABLE.on(L.And)
def _c_and(self: Compiler, e: L.And) -> Fn:
    fns = [self.c(a) for a in e.args]
    return lambda env: all(f(env) for f in fns)


@_TABLE.on(L.Or)
def _c_or(self: Compiler, e: L.Or) -> Fn:
    fns = [self.c(a) for a in e.args]
    return lambda env: any(f(env) for f in fns)


@_TABLE.on(L.Implies)
def _c_implies(self: Compiler, e: L.Implies) -> Fn:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    return lambda env: (not lhs(env)) or bool(rhs(env))


@_TABLE.on(L.Cmp)
def _c_cmp(self: Compiler, e: L.Cmp) -> Fn:
    op, lhs, rhs = _CMP[e.op], self.c(e.lhs), self.c(e.rhs)
    return lambda env: op(lhs(env), rhs(env))


@_TABLE.on(L.Arith)
def _c_arith(self: Compiler, e: L.Arith) -> Fn:
    aop, lhs, rhs = _ARITH[e.op], self.c(e.lhs), self.c(e.rhs)
    return lambda env: aop(lhs(env), rhs(env))


@_TABLE.on(L.SetLit)
def _c_set_lit(self: Compiler, e: L.SetLit) -> Fn:
    fns = [self.c(x) for x in e.elems]
    return lambda env: frozenset(f(env) for f in fns)


@_TABLE.on(L.SeqLit)
def _c_seq_lit(self: Compiler, e: L.SeqLit) -> Fn:
    fns = [self.c(x) for x in e.elems]
    return lambda env: tuple(f(env) for f in fns)


@_TABLE.on(L.Member)
def _c_member(self: Compiler, e: L.Member) -> Fn:
    elem, coll = self.c(e.elem), self.c(e.coll)
    return lambda env: elem(env) in coll(env)


@_TABLE.on(L.SetOp)
def _c_set_op(self: Compiler, e: L.SetOp) -> Fn:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    if e.op == "union":
        return lambda env: frozenset(lhs(env)) | frozenset(rhs(env))
    if e.op == "inter":
        return lambda env: _inter(lhs(env), rhs(env))
    return lambda env: _diff(lhs(env), rhs(env))


@_TABLE.on(L.Subset)
def _c_subset(self: Compiler, e: L.Subset) -> Fn:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    return lambda env: frozenset(lhs(env)) <= frozenset(rhs(env))


@_TABLE.on(L.Size)
def _c_size(self: Compiler, e: L.Size) -> Fn:
    coll = self.c(e.coll)
    return lambda env: len(coll(env))


@_TABLE.on(L.ToSet)
def _c_to_set(self: Compiler, e: L.ToSet) -> Fn:
    seq = self.c(e.seq)
    return lambda env: frozenset(seq(env))


@_TABLE.on(L.Filter)
def _c_filter(self: Compiler, e: L.Filter) -> Fn:
    coll = self.c(e.coll)
    _, pred = self.bind(e.var, e.pred)

    def filt(env: Env) -> Any:
        src = coll(env)
        out = []
        env.append(None)
        try:
            for x in src:
                env[-1] = x
                if pred(env):
                    out.append(x)
        finally:
            env.pop()
        return _coll_like(src, out)

    return filt


@_TABLE.on(L.Image)
def _c_image(self: Compiler, e: L.Image) -> Fn:
    coll = self.c(e.coll)
    _, body = self.bind(e.var, e.body)

    def image(env: Env) -> Any:
        src = coll(env)
        out = []
        env.append(None)
        try:
            for x in src:
                env[-1] = x
                out.append(body(env))
        finally:
            env.pop()
        return _coll_like(src, out)

    return image


@_TABLE.on(L.BigUnion)
def _c_big_union(self: Compiler, e: L.BigUnion) -> Fn:
    coll = self.c(e.coll)
    _, body = self.bind(e.var, e.body)

    def big_union(env: Env) -> Any:
        out: set[Any] = set()
        src = coll(env)
        env.append(None)
        try:
            for x in src:
                env[-1] = x
                out.update(body(env))
        finally:
            env.pop()
        return frozenset(out)

    return big_union


@_TABLE.on(L.Quant)
def _c_quant(self: Compiler, e: L.Quant) -> Fn:
    coll = self.c(e.coll)
    _, pred = self.bind(e.var, e.pred)
    want_all = e.kind == "all"

    def quant(env: Env) -> bool:
        src = coll(env)
        env.append(None)
        try:
            for x in src:
                env[-1] = x
                if bool(pred(env)) != want_all:
                    return not want_all
            return want_all
        finally:
            env.pop()

    return quant


@_TABLE.on(L.First)
def _c_first(self: Compiler, e: L.First) -> Fn:
    seq, default = self.c(e.seq), self.c(e.default)
    _, pred = self.bind(e.var, e.pred)

    def first(env: Env) -> Any:
        src = seq(env)
        env.append(None)
        try:
            for x in src:
                env[-1] = x
                if pred(env):
                    return x
        finally:
            env.pop()
        return default(env)

    return first


@_TABLE.on(L.Sorted)
def _c_sorted(self: Compiler, e: L.Sorted) -> Fn:
    coll = self.c(e.coll)
    return lambda env: tuple(sorted(coll(env)))


@_TABLE.on(L.Fold)
def _c_fold(self: Compiler, e: L.Fold) -> Fn:
    seq, init = self.c(e.seq), self.c(e.init)
    self.scope.append(e.acc)
    try:
        _, body = self.bind(e.var, e.body)
    finally:
        self.scope.pop()

    def fold(env: Env) -> Any:
        acc = init(env)
        src = seq(env)
        env.append(acc)
        env.append(None)
        try:
            for x in src:
                env[-2] = acc
                env[-1] = x
                acc = body(env)
        finally:
            env.pop()
            env.pop()
        return acc

    return fold


@_TABLE.on(L.Head)
def _c_head(self: Compiler, e: L.Head) -> Fn:
    seq, default = self.c(e.seq), self.c(e.default)

    def head(env: Env) -> Any:
        s = seq(env)
        return s[0] if s else default(env)

    return head


@_TABLE.on(L.Append)
def _c_append(self: Compiler, e: L.Append) -> Fn:
    seq, elem = self.c(e.seq), self.c(e.elem)
    return lambda env: (*seq(env), elem(env))


@_TABLE.on(L.Concat)
def _c_concat(self: Compiler, e: L.Concat) -> Fn:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    return lambda env: tuple(lhs(env)) + tuple(rhs(env))


@_TABLE.on(L.Distinct)
def _c_distinct(self: Compiler, e: L.Distinct) -> Fn:
    seq = self.c(e.seq)
    return lambda env: _distinct(seq(env))


@_TABLE.on(L.MapGet)
def _c_map_get(self: Compiler, e: L.MapGet) -> Fn:
    m, k, where = self.c(e.m), self.c(e.key), self.where()

    def get(env: Env) -> Any:
        mv, kv = m(env), k(env)
        try:
            return mv[kv]
        except KeyError:
            raise EvalError(f"key {kv!r} is not in the map (rule {where})") from None

    return get


@_TABLE.on(L.MapGetOr)
def _c_map_get_or(self: Compiler, e: L.MapGetOr) -> Fn:
    m, k, d = self.c(e.m), self.c(e.key), self.c(e.default)

    def get_or(env: Env) -> Any:
        mv, kv = m(env), k(env)
        return mv[kv] if kv in mv else d(env)

    return get_or


@_TABLE.on(L.MapHas)
def _c_map_has(self: Compiler, e: L.MapHas) -> Fn:
    m, k = self.c(e.m), self.c(e.key)
    return lambda env: k(env) in m(env)


@_TABLE.on(L.MapPut)
def _c_map_put(self: Compiler, e: L.MapPut) -> Fn:
    m, k, v = self.c(e.m), self.c(e.key), self.c(e.value)
    return lambda env: _as_fmap(m(env)).set(k(env), v(env))


@_TABLE.on(L.MapDel)
def _c_map_del(self: Compiler, e: L.MapDel) -> Fn:
    m, k = self.c(e.m), self.c(e.key)
    return lambda env: _as_fmap(m(env)).remove(k(env))


@_TABLE.on(L.MapDelAll)
def _c_map_del_all(self: Compiler, e: L.MapDelAll) -> Fn:
    m, ks = self.c(e.m), self.c(e.key_set)
    return lambda env: _as_fmap(m(env)).remove_all(ks(env))


@_TABLE.on(L.MapKeys)
def _c_map_keys(self: Compiler, e: L.MapKeys) -> Fn:
    m = self.c(e.m)
    return lambda env: frozenset(m(env))


@_TABLE.on(L.MapMerge)
def _c_map_merge(self: Compiler, e: L.MapMerge) -> Fn:
    lhs, rhs = self.c(e.lhs), self.c(e.rhs)
    return lambda env: _as_fmap(lhs(env)).merge(rhs(env))


@_TABLE.on(L.MapBuild)
def _c_map_build(self: Compiler, e: L.MapBuild) -> Fn:
    keys = self.c(e.key_set)
    _, value = self.bind(e.var, e.value)

    def build(env: Env) -> Any:
        out: dict[Any, Any] = {}
        src = keys(env)
        env.append(None)
        try:
            for k in src:
                env[-1] = k
                out[k] = value(env)
        finally:
            env.pop()
        return FMap(out)

    return build


@_TABLE.on(L.Call)
def _c_call(self: Compiler, e: L.Call) -> Fn:
    target = compiled_def(e.fn)
    fns = [self.c(a) for a in e.args]
    return lambda env: target([f(env) for f in fns])


@_TABLE.on(L.Rule)
def _c_rule(self: Compiler, e: L.Rule) -> Fn:
    self.rule_stack.append(e.name)
    try:
        return self.c(e.body)
    finally:
        self.rule_stack.pop()


_DEFS: dict[L.Def, Fn] = {}


def compiled_def(d: L.Def) -> Fn:
    """The compiled body of a procedure (compiled once per process); called with the argument values."""
    fn = _DEFS.get(d)
    if fn is None:
        comp = Compiler()
        comp.scope.extend(d.params)
        comp.rule_stack.append(d.name)
        body = comp.c(d.body)
        fn = body
        _DEFS[d] = fn
    return fn


def _inter(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        bs = frozenset(b)
        return tuple(x for x in a if x in bs)
    return frozenset(a) & frozenset(b)


def _as_fmap(m: Any) -> FMap[Any, Any]:
    return m if isinstance(m, FMap) else FMap(m)


class Compiled:
    """A compiled expression with named free variables, evaluated with a mapping of their values."""

    def __init__(self, expr: L.Expr, free: tuple[str, ...]) -> None:
        comp = Compiler()
        comp.scope.extend(free)
        self.free = free
        self.fn = comp.c(expr)

    def __call__(self, values: Mapping[str, Any]) -> Any:
        env = [values[name] for name in self.free]
        return self.fn(env)


def compile_expr(expr: L.Expr, free: tuple[str, ...]) -> Compiled:
    return Compiled(expr, free)


def evaluate(expr: L.Expr, **values: Any) -> Any:
    """Evaluate an expression once (compiles it every call: use ``compile_expr`` in loops)."""
    names = tuple(values)
    return Compiled(expr, names)(values)
