"""The Z3 backend of the expression language: a symbolic evaluator of ``Expr`` trees.

``SymbolicEvaluator(domain).eval(expr, env)`` gives the value of ``expr`` (see ``values.py``) when the
free variables are bound to concrete or symbolic values. Each node means exactly what it means in the
Python backend (``kcspec.model.evaluate``); comprehensions, quantifiers, ``First``, ``Fold`` and
``Sorted`` are unrolled over the slots of their (bounded) collection, and operations on concrete
operands are computed in Python, so no rule of the spec is ever rewritten for Z3.

Two facts are not expressible as terms and become *obligations* instead — Z3 booleans that must hold
for the terms to mean what the Python backend computes, each already guarded by the path condition
under which it is evaluated:

* a map lookup (``MapGet``) whose key may be absent (the Python backend raises ``EvalError``);
* sorting symbolic integers, which is done over the finite integer universe of the ``Domain``: every
  present element must lie in that universe.

Provers must check ``assumptions ⇒ obligations`` alongside their lemma (``Prover`` does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import z3
from kcspec.model.dispatch import MissingHandler, NodeTable
from kcspec.model.z3 import values as V
from kcspec.spec import lang as L

Bool = Any


@dataclass(frozen=True)
class Domain:
    """The finite universe symbolic integers are sorted over (broker ids and the vocabulary's sentinels)."""

    ints: tuple[int, ...]

    @staticmethod
    def brokers(n: int) -> Domain:
        return Domain(tuple(range(-2, n)))


@dataclass(frozen=True)
class Obligation:
    condition: Bool
    reason: str


@dataclass
class SymbolicEvaluator:
    """Evaluates expressions to values; collects obligations in ``obligations``."""

    domain: Domain
    obligations: list[Obligation] = field(default_factory=list)
    _path: list[Bool] = field(default_factory=list)
    _rules: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ entry points

    def eval(self, expr: L.Expr, env: Mapping[str, Any]) -> Any:
        return self._e(expr, dict(env))

    def where(self) -> str:
        return self._rules[-1] if self._rules else "<top>"

    def _oblige(self, fact: Bool, reason: str) -> None:
        if isinstance(fact, bool) and fact:
            return
        guarded = V.b_implies(V.b_and(*self._path), fact)
        if isinstance(guarded, bool):
            if not guarded:
                raise V.SymbolicError(f"{reason} (rule {self.where()})")
            return
        self.obligations.append(Obligation(guarded, f"{reason} (rule {self.where()})"))

    def _under(self, cond: Bool, expr: L.Expr, env: dict[str, Any]) -> Any:
        if isinstance(cond, bool) and cond:
            return self._e(expr, env)
        self._path.append(cond)
        try:
            return self._e(expr, env)
        finally:
            self._path.pop()

    # ------------------------------------------------------------------ dispatch

    def _e(self, e: L.Expr, env: dict[str, Any]) -> Any:
        try:
            method = _TABLE.handler(e)
        except MissingHandler as missing:
            raise V.SymbolicError(str(missing)) from None
        return method(self, e, env)

    def _const(self, e: L.Const, env: dict[str, Any]) -> Any:
        return e.value

    def _var(self, e: L.Var, env: dict[str, Any]) -> Any:
        try:
            return env[e.name]
        except KeyError:
            raise V.SymbolicError(f"unbound variable {e.name!r} in rule {self.where()}") from None

    def _field(self, e: L.Field, env: dict[str, Any]) -> Any:
        obj = self._e(e.obj, env)
        if isinstance(obj, V.SRec):
            return obj.get(e.name)
        try:
            return getattr(obj, e.name)
        except AttributeError:
            raise V.SymbolicError(
                f"{type(obj).__name__} has no field {e.name!r} (rule {self.where()})"
            ) from None

    def _rec(self, e: L.Rec, env: dict[str, Any]) -> Any:
        fields = V.record_defaults(e.cls)
        fields.update({k: self._e(v, env) for k, v in e.fields})
        return V.make_record(e.cls, fields)

    def _with(self, e: L.With, env: dict[str, Any]) -> Any:
        cls, fields = V.record_fields(self._e(e.obj, env))
        for k, v in e.updates:
            if k not in fields:
                raise V.SymbolicError(f"{cls.__name__} has no field {k!r} (rule {self.where()})")
            fields[k] = self._e(v, env)
        return V.make_record(cls, fields)

    def _let(self, e: L.Let, env: dict[str, Any]) -> Any:
        value = self._e(e.value, env)
        return self._e(e.body, {**env, e.name: value})

    def _if(self, e: L.If, env: dict[str, Any]) -> Any:
        c = V.as_bool(self._e(e.cond, env))
        if isinstance(c, bool):
            return self._e(e.then if c else e.els, env)
        then = self._under(c, e.then, env)
        els = self._under(V.b_not(c), e.els, env)
        return V.merge(c, then, els)

    def _enum_name(self, e: L.EnumName, env: dict[str, Any]) -> Any:
        return V.enum_name(e.enum_type, self._e(e.arg, env))

    def _not(self, e: L.Not, env: dict[str, Any]) -> Any:
        return V.b_not(V.as_bool(self._e(e.arg, env)))

    def _and(self, e: L.And, env: dict[str, Any]) -> Any:
        done: list[Bool] = []
        for a in e.args:
            v = V.as_bool(self._under(V.b_and(*done), a, env))
            if isinstance(v, bool) and not v:
                return False
            done.append(v)
        return V.b_and(*done)

    def _or(self, e: L.Or, env: dict[str, Any]) -> Any:
        done: list[Bool] = []
        for a in e.args:
            v = V.as_bool(self._under(V.b_not(V.b_or(*done)), a, env))
            if isinstance(v, bool) and v:
                return True
            done.append(v)
        return V.b_or(*done)

    def _implies(self, e: L.Implies, env: dict[str, Any]) -> Any:
        lhs = V.as_bool(self._e(e.lhs, env))
        if isinstance(lhs, bool) and not lhs:
            return True
        return V.b_implies(lhs, V.as_bool(self._under(lhs, e.rhs, env)))

    def _cmp(self, e: L.Cmp, env: dict[str, Any]) -> Any:
        a, b = self._e(e.lhs, env), self._e(e.rhs, env)
        if e.op == "==":
            return V.eq(a, b)
        if e.op == "!=":
            return V.b_not(V.eq(a, b))
        return V.less(e.op, a, b)

    def _arith(self, e: L.Arith, env: dict[str, Any]) -> Any:
        a, b = self._e(e.lhs, env), self._e(e.rhs, env)
        if V.is_concrete(a) and V.is_concrete(b):
            return {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "max": lambda: max(a, b),
                "min": lambda: min(a, b),
            }[e.op]()
        ta, tb = V.scalar_term(a), V.scalar_term(b)
        if e.op == "+":
            return ta + tb
        if e.op == "-":
            return ta - tb
        if e.op == "max":
            return z3.If(ta >= tb, ta, tb)
        if e.op == "min":
            return z3.If(ta <= tb, ta, tb)
        raise V.SymbolicError(f"unknown arithmetic operator {e.op!r}")

    def _set_lit(self, e: L.SetLit, env: dict[str, Any]) -> Any:
        return V.make_coll("set", ((True, self._e(x, env)) for x in e.elems))

    def _seq_lit(self, e: L.SeqLit, env: dict[str, Any]) -> Any:
        return V.make_coll("seq", ((True, self._e(x, env)) for x in e.elems))

    def _member(self, e: L.Member, env: dict[str, Any]) -> Any:
        return V.member(self._e(e.elem, env), self._e(e.coll, env))

    def _set_op(self, e: L.SetOp, env: dict[str, Any]) -> Any:
        a, b = self._e(e.lhs, env), self._e(e.rhs, env)
        if e.op == "union":
            if V.is_concrete(a) and V.is_concrete(b):
                return frozenset(a) | frozenset(b)
            return V.make_coll("set", V.as_coll(a).items + V.as_coll(b).items)
        keep_members = e.op == "inter"
        if V.is_concrete(a) and V.is_concrete(b):
            bs = frozenset(b)
            if isinstance(a, tuple):
                return tuple(x for x in a if (x in bs) == keep_members)
            return frozenset(x for x in frozenset(a) if (x in bs) == keep_members)
        ca, cb = V.as_coll(a), V.as_coll(b)
        items = []
        for p, x in ca.items:
            m = V.member(x, cb)
            items.append((V.b_and(p, m if keep_members else V.b_not(m)), x))
        return V.make_coll(V.coll_kind(a), items)

    def _subset(self, e: L.Subset, env: dict[str, Any]) -> Any:
        a, b = self._e(e.lhs, env), self._e(e.rhs, env)
        if V.is_concrete(a) and V.is_concrete(b):
            return frozenset(a) <= frozenset(b)
        cb = V.as_coll(b)
        return V.b_and(*(V.b_implies(p, V.member(x, cb)) for p, x in V.as_coll(a).items))

    def _size(self, e: L.Size, env: dict[str, Any]) -> Any:
        c = self._e(e.coll, env)
        if V.is_concrete(c):
            return len(c)
        if isinstance(c, V.SMap):
            return V.count(V.as_coll(c), distinct=False)
        return V.count(V.as_coll(c), distinct=V.coll_kind(c) == "set")

    def _to_set(self, e: L.ToSet, env: dict[str, Any]) -> Any:
        c = self._e(e.seq, env)
        if V.is_concrete(c):
            return frozenset(c)
        return V.make_coll("set", V.as_coll(c).items)

    # ------------------------------------------------------------------ binders

    def _slots(self, coll: Any) -> tuple[str, tuple[tuple[Bool, Any], ...]]:
        c = V.as_coll(coll)
        kind = "set" if isinstance(coll, V.SMap | Mapping) else c.kind
        return kind, c.items

    def _filter(self, e: L.Filter, env: dict[str, Any]) -> Any:
        kind, slots = self._slots(self._e(e.coll, env))
        items = []
        for p, x in slots:
            keep = V.as_bool(self._under(p, e.pred, {**env, e.var: x}))
            items.append((V.b_and(p, keep), x))
        return V.make_coll(kind, items)

    def _image(self, e: L.Image, env: dict[str, Any]) -> Any:
        kind, slots = self._slots(self._e(e.coll, env))
        return V.make_coll(kind, [(p, self._under(p, e.body, {**env, e.var: x})) for p, x in slots])

    def _big_union(self, e: L.BigUnion, env: dict[str, Any]) -> Any:
        _, slots = self._slots(self._e(e.coll, env))
        items: list[tuple[Bool, Any]] = []
        for p, x in slots:
            part = V.as_coll(self._under(p, e.body, {**env, e.var: x}))
            items.extend((V.b_and(p, q), y) for q, y in part.items)
        return V.make_coll("set", items)

    def _quant(self, e: L.Quant, env: dict[str, Any]) -> Any:
        _, slots = self._slots(self._e(e.coll, env))
        parts = []
        for p, x in slots:
            holds = V.as_bool(self._under(p, e.pred, {**env, e.var: x}))
            parts.append(V.b_implies(p, holds) if e.kind == "all" else V.b_and(p, holds))
            if e.kind == "all" and isinstance(parts[-1], bool) and not parts[-1]:
                return False
            if e.kind == "any" and isinstance(parts[-1], bool) and parts[-1]:
                return True
        return V.b_and(*parts) if e.kind == "all" else V.b_or(*parts)

    def _first(self, e: L.First, env: dict[str, Any]) -> Any:
        _, slots = self._slots(self._e(e.seq, env))
        conds: list[tuple[Bool, Any]] = []
        for p, x in slots:
            hit = V.b_and(p, V.as_bool(self._under(p, e.pred, {**env, e.var: x})))
            conds.append((hit, x))
            if isinstance(hit, bool) and hit:
                break
        else:
            conds.append((True, self._under(V.b_not(V.b_or(*(h for h, _ in conds))), e.default, env)))
        result = conds[-1][1]
        for hit, x in reversed(conds[:-1]):
            result = V.ite(hit, x, result)
        return result

    def _sorted(self, e: L.Sorted, env: dict[str, Any]) -> Any:
        c = self._e(e.coll, env)
        if V.is_concrete(c):
            return tuple(sorted(c))
        kind, slots = self._slots(c)
        if all(V.is_concrete(x) for _, x in slots):
            order = sorted(dict.fromkeys(x for _, x in slots))
        elif all(isinstance(x, int) or (V.is_z3(x) and z3.is_int(x)) for _, x in slots):
            order = sorted(set(self.domain.ints) | {x for _, x in slots if isinstance(x, int)})
            for p, x in slots:
                if V.is_z3(x):
                    self._oblige(
                        V.b_implies(p, V.b_or(*(x == u for u in order))),
                        f"sorted element outside the integer domain {order[0]}..{order[-1]}",
                    )
        else:
            raise V.SymbolicError(f"cannot sort symbolic non-integer elements (rule {self.where()})")
        items: list[tuple[Bool, Any]] = []
        for u in order:
            hits = [V.b_and(p, V.eq(x, u)) for p, x in slots]
            hits = [h for h in hits if not (isinstance(h, bool) and not h)]
            if kind == "set":
                items.append((V.b_or(*hits), u))
                continue
            # a sequence keeps duplicates: the k-th copy of u is present when u occurs more than k times
            occurrences = V.count(V.SColl("seq", tuple((h, u) for h in hits)), distinct=False)
            items.extend((V.less(">", occurrences, k), u) for k in range(len(hits)))
        return V.make_coll("seq", items)

    def _fold(self, e: L.Fold, env: dict[str, Any]) -> Any:
        acc = self._e(e.init, env)
        _, slots = self._slots(self._e(e.seq, env))
        for p, x in slots:
            nxt = self._under(p, e.body, {**env, e.acc: acc, e.var: x})
            acc = V.ite(p, nxt, acc)
        return acc

    def _head(self, e: L.Head, env: dict[str, Any]) -> Any:
        s = self._e(e.seq, env)
        if V.is_concrete(s):
            return s[0] if s else self._e(e.default, env)
        _, slots = self._slots(s)
        result = self._under(V.b_not(V.b_or(*(p for p, _ in slots))), e.default, env)
        for p, x in reversed(slots):
            result = V.ite(p, x, result)
        return result

    def _append(self, e: L.Append, env: dict[str, Any]) -> Any:
        s, x = self._e(e.seq, env), self._e(e.elem, env)
        return V.make_coll("seq", (*V.as_coll(s).items, (True, x)))

    def _concat(self, e: L.Concat, env: dict[str, Any]) -> Any:
        a, b = self._e(e.lhs, env), self._e(e.rhs, env)
        if V.is_concrete(a) and V.is_concrete(b) and isinstance(a, tuple) and isinstance(b, tuple):
            return a + b
        return V.make_coll("seq", V.as_coll(a).items + V.as_coll(b).items)

    def _distinct(self, e: L.Distinct, env: dict[str, Any]) -> Any:
        s = self._e(e.seq, env)
        if V.is_concrete(s):
            return tuple(dict.fromkeys(s))
        return V.make_coll("seq", V.first_occurrences(V.as_coll(s)))

    # ------------------------------------------------------------------ maps

    def _map_get(self, e: L.MapGet, env: dict[str, Any]) -> Any:
        m, k = self._e(e.m, env), self._e(e.key, env)
        if V.is_concrete(m) and V.is_concrete(k):
            if k in m:
                return m[k]
            self._oblige(False, f"key {k!r} is not in the map")
        sm = V.as_map(m)
        if not sm.entries:
            raise V.SymbolicError(f"lookup of {k!r} in an empty map (rule {self.where()})")
        self._oblige(V.map_has(sm, k), "looked-up key may be absent from the map")
        return V.map_lookup(sm, k, sm.entries[-1][2])

    def _map_get_or(self, e: L.MapGetOr, env: dict[str, Any]) -> Any:
        m, k = self._e(e.m, env), self._e(e.key, env)
        if V.is_concrete(m) and V.is_concrete(k):
            return m[k] if k in m else self._e(e.default, env)
        has = V.map_has(m, k)
        if isinstance(has, bool) and has:
            return V.map_lookup(m, k, None)
        default = self._under(V.b_not(has), e.default, env)
        return V.map_lookup(m, k, default)

    def _map_has(self, e: L.MapHas, env: dict[str, Any]) -> Any:
        return V.map_has(self._e(e.m, env), self._e(e.key, env))

    def _map_put(self, e: L.MapPut, env: dict[str, Any]) -> Any:
        return V.map_put(self._e(e.m, env), self._e(e.key, env), self._e(e.value, env))

    def _map_del(self, e: L.MapDel, env: dict[str, Any]) -> Any:
        return V.map_delete(self._e(e.m, env), [self._e(e.key, env)])

    def _map_del_all(self, e: L.MapDelAll, env: dict[str, Any]) -> Any:
        return V.map_delete_coll(self._e(e.m, env), self._e(e.key_set, env))

    def _map_keys(self, e: L.MapKeys, env: dict[str, Any]) -> Any:
        m = self._e(e.m, env)
        if V.is_concrete(m):
            return frozenset(m)
        return V.make_coll("set", ((p, k) for p, k, _ in V.as_map(m).entries))

    def _map_merge(self, e: L.MapMerge, env: dict[str, Any]) -> Any:
        return V.map_merge(self._e(e.lhs, env), self._e(e.rhs, env))

    def _map_build(self, e: L.MapBuild, env: dict[str, Any]) -> Any:
        keys = self._e(e.key_set, env)
        slots = V.first_occurrences(V.as_coll(keys))
        return V.make_map((p, k, self._under(p, e.value, {**env, e.var: k})) for p, k in slots)

    def _call(self, e: Any, env: dict[str, Any]) -> Any:
        args = [self._e(a, env) for a in e.args]
        self._rules.append(e.fn.name)
        try:
            return self._e(e.fn.body, dict(zip(e.fn.params, args, strict=True)))
        finally:
            self._rules.pop()

    def _rule(self, e: L.Rule, env: dict[str, Any]) -> Any:
        self._rules.append(e.name)
        try:
            return self._e(e.body, env)
        finally:
            self._rules.pop()


_TABLE: NodeTable[Any] = NodeTable("the Z3 symbolic evaluator (model/z3/symbolic.py)")
for _kind, _method in (
    (L.Const, SymbolicEvaluator._const),
    (L.Var, SymbolicEvaluator._var),
    (L.Field, SymbolicEvaluator._field),
    (L.Rec, SymbolicEvaluator._rec),
    (L.With, SymbolicEvaluator._with),
    (L.Let, SymbolicEvaluator._let),
    (L.If, SymbolicEvaluator._if),
    (L.EnumName, SymbolicEvaluator._enum_name),
    (L.Not, SymbolicEvaluator._not),
    (L.And, SymbolicEvaluator._and),
    (L.Or, SymbolicEvaluator._or),
    (L.Implies, SymbolicEvaluator._implies),
    (L.Cmp, SymbolicEvaluator._cmp),
    (L.Arith, SymbolicEvaluator._arith),
    (L.SetLit, SymbolicEvaluator._set_lit),
    (L.SeqLit, SymbolicEvaluator._seq_lit),
    (L.Member, SymbolicEvaluator._member),
    (L.SetOp, SymbolicEvaluator._set_op),
    (L.Subset, SymbolicEvaluator._subset),
    (L.Size, SymbolicEvaluator._size),
    (L.ToSet, SymbolicEvaluator._to_set),
    (L.Filter, SymbolicEvaluator._filter),
    (L.Image, SymbolicEvaluator._image),
    (L.BigUnion, SymbolicEvaluator._big_union),
    (L.Quant, SymbolicEvaluator._quant),
    (L.First, SymbolicEvaluator._first),
    (L.Sorted, SymbolicEvaluator._sorted),
    (L.Fold, SymbolicEvaluator._fold),
    (L.Head, SymbolicEvaluator._head),
    (L.Append, SymbolicEvaluator._append),
    (L.Concat, SymbolicEvaluator._concat),
    (L.Distinct, SymbolicEvaluator._distinct),
    (L.MapGet, SymbolicEvaluator._map_get),
    (L.MapGetOr, SymbolicEvaluator._map_get_or),
    (L.MapHas, SymbolicEvaluator._map_has),
    (L.MapPut, SymbolicEvaluator._map_put),
    (L.MapDel, SymbolicEvaluator._map_del),
    (L.MapDelAll, SymbolicEvaluator._map_del_all),
    (L.MapKeys, SymbolicEvaluator._map_keys),
    (L.MapMerge, SymbolicEvaluator._map_merge),
    (L.MapBuild, SymbolicEvaluator._map_build),
    (L.Rule, SymbolicEvaluator._rule),
    (L.Call, SymbolicEvaluator._call),
):
    _TABLE.on(_kind)(_method)
