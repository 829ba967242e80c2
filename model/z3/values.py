"""Symbolic values of the expression language for the Z3 backend, and the operations on them.

A value is *concrete* (an ordinary Python value of the data model: int, bool, str, enum member,
vocabulary record, ``frozenset``, ``tuple``, ``FMap``) or *symbolic*:

* a Z3 term — ``Int`` for integers, ``Bool`` for booleans, ``String`` for strings and one Z3
  ``EnumSort`` per vocabulary enum;
* ``SRec`` — a record of a vocabulary class whose fields are values;
* ``SColl`` — a *guarded list*: a bounded number of slots ``(present, value)``. As a sequence it
  denotes the values of the present slots in slot order; as a set, the set of those values (duplicates
  allowed, so union is concatenation). A set of broker ids over a finite domain is the special case of
  one slot per broker with a concrete value each — a bit-vector of width B;
* ``SMap`` — a guarded association list ``(present, key, value)`` whose present keys are distinct.

Concrete sub-values stay concrete (partial evaluation): operations on concrete operands compute the
Python result, so only the parts a lemma quantifies over become Z3 terms. ``merge(c, a, b)`` is
"if c then a else b" for any two values of the same type; it is how symbolic ``If``, ``First`` and
``Fold`` join their branches.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import z3
from kcspec.spec.fmap import FMap

Bool = Any
"""A Python ``bool`` or a Z3 ``BoolRef``."""


class SymbolicError(RuntimeError):
    """An expression cannot be translated to Z3 terms (an unsupported combination of symbolic operands)."""


@dataclass(frozen=True)
class SRec:
    """A record of vocabulary class ``cls`` with at least one symbolic field."""

    cls: type
    fields: tuple[tuple[str, Any], ...]

    def get(self, name: str) -> Any:
        for k, v in self.fields:
            if k == name:
                return v
        raise SymbolicError(f"{self.cls.__name__} has no field {name!r}")


@dataclass(frozen=True)
class SColl:
    """A guarded list of slots; ``kind`` is ``"set"`` or ``"seq"``."""

    kind: str
    items: tuple[tuple[Bool, Any], ...]


@dataclass(frozen=True)
class SMap:
    """A guarded association list; present keys are pairwise distinct."""

    entries: tuple[tuple[Bool, Any, Any], ...]


# ------------------------------------------------------------------------------------------ booleans


def is_z3(v: object) -> bool:
    return isinstance(v, z3.ExprRef)


def is_concrete(v: object) -> bool:
    return not isinstance(v, z3.ExprRef | SRec | SColl | SMap)


_TRUE_ID = z3.BoolVal(True).get_id()
_FALSE_ID = z3.BoolVal(False).get_id()


def _is_true_term(a: Any) -> bool:
    """``a`` (a Z3 boolean) is the literal ``True`` (an id comparison: much cheaper than ``z3.is_true``)."""
    return bool(a.get_id() == _TRUE_ID)


def _is_false_term(a: Any) -> bool:
    return bool(a.get_id() == _FALSE_ID)


def b_not(a: Bool) -> Bool:
    if isinstance(a, bool):
        return not a
    if _is_true_term(a):
        return False
    if _is_false_term(a):
        return True
    return z3.Not(a)


def b_and(*args: Bool) -> Bool:
    terms = []
    for a in args:
        if isinstance(a, bool):
            if not a:
                return False
            continue
        if _is_true_term(a):
            continue
        if _is_false_term(a):
            return False
        terms.append(a)
    if not terms:
        return True
    return terms[0] if len(terms) == 1 else z3.And(*terms)


def b_or(*args: Bool) -> Bool:
    terms = []
    for a in args:
        if isinstance(a, bool):
            if a:
                return True
            continue
        if _is_false_term(a):
            continue
        if _is_true_term(a):
            return True
        terms.append(a)
    if not terms:
        return False
    return terms[0] if len(terms) == 1 else z3.Or(*terms)


def b_implies(a: Bool, b: Bool) -> Bool:
    return b_or(b_not(a), b)


def bool_term(b: Bool) -> Any:
    """A Z3 ``BoolRef`` for a Python or Z3 boolean."""
    return z3.BoolVal(b) if isinstance(b, bool) else b


def as_bool(v: Any) -> Bool:
    if isinstance(v, bool):
        return v
    if is_z3(v) and z3.is_bool(v):
        return v
    raise SymbolicError(f"expected a boolean, got {type(v).__name__}")


def ite(c: Bool, a: Any, b: Any) -> Any:
    """``merge`` for the condition, shortcutting concrete conditions."""
    if isinstance(c, bool):
        return a if c else b
    return merge(c, a, b)


# ------------------------------------------------------------------------------------------ scalars

_ENUM_SORTS: dict[type, tuple[Any, dict[Any, Any]]] = {}


def enum_sort(cls: type[enum.Enum]) -> tuple[Any, dict[Any, Any]]:
    """The Z3 ``EnumSort`` of a vocabulary enum and its member → constant table (created once)."""
    found = _ENUM_SORTS.get(cls)
    if found is None:
        members = list(cls)
        sort, consts = z3.EnumSort(f"{cls.__module__}.{cls.__qualname__}", [m.name for m in members])
        found = (sort, dict(zip(members, consts, strict=True)))
        _ENUM_SORTS[cls] = found
    return found


def enum_name(cls: type[enum.Enum], v: Any) -> Any:
    """The name of ``v``, a member of ``cls`` (concrete) or a term of its ``EnumSort``, as a string (term)."""
    if isinstance(v, cls):
        return v.name
    if not is_z3(v):
        raise SymbolicError(f"the name of a {cls.__name__} applied to {type(v).__name__} value {v!r}")
    consts = enum_sort(cls)[1]
    *firsts, last = list(cls)
    term = z3.StringVal(last.name)
    for m in reversed(firsts):
        term = z3.If(v == consts[m], z3.StringVal(m.name), term)
    return term


def scalar_term(v: Any) -> Any:
    """The Z3 term of a concrete scalar, or the term itself."""
    if is_z3(v):
        return v
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if isinstance(v, int):
        return z3.IntVal(v)
    if isinstance(v, str):
        return z3.StringVal(v)
    if isinstance(v, enum.Enum):
        return enum_sort(type(v))[1][v]
    raise SymbolicError(f"no scalar Z3 term for {type(v).__name__} value {v!r}")


def _is_scalar(v: Any) -> bool:
    return is_z3(v) or isinstance(v, bool | int | str | enum.Enum)


# ------------------------------------------------------------------------------------------ collections


def as_coll(v: Any) -> SColl:
    """A collection value as a guarded list (maps iterate over their keys, as in the Python backend)."""
    if isinstance(v, SColl):
        return v
    if isinstance(v, SMap):
        return SColl("set", tuple((p, k) for p, k, _ in v.entries))
    if isinstance(v, tuple | list):
        return SColl("seq", tuple((True, x) for x in v))
    if isinstance(v, frozenset | set):
        return SColl("set", tuple((True, x) for x in _stable(v)))
    if isinstance(v, Mapping):
        return SColl("set", tuple((True, k) for k in _stable(v.keys())))
    raise SymbolicError(f"expected a collection, got {type(v).__name__}")


def _stable(values: Iterable[Any]) -> list[Any]:
    items = list(values)
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def coll_kind(v: Any) -> str:
    if isinstance(v, SColl):
        return v.kind
    return "seq" if isinstance(v, tuple | list) else "set"


def make_coll(kind: str, items: Iterable[tuple[Bool, Any]]) -> Any:
    """A guarded list with absent slots dropped; concrete when every slot is present and concrete."""
    kept = tuple((p, v) for p, v in items if not (isinstance(p, bool) and not p) and not _is_false(p))
    if all(isinstance(p, bool) for p, _ in kept) and all(is_concrete(v) for _, v in kept):
        values = [v for _, v in kept]
        return tuple(values) if kind == "seq" else frozenset(values)
    return SColl(kind, kept)


def _is_false(p: Bool) -> bool:
    return not isinstance(p, bool) and _is_false_term(p)


def member(x: Any, coll: Any) -> Bool:
    if is_concrete(x) and is_concrete(coll):
        return x in coll
    if (
        is_concrete(coll)
        and isinstance(x, SColl)
        and x.kind == "seq"
        and all(p is True for p, _ in x.items)
        and all(isinstance(t, tuple) and len(t) == len(x.items) for t in coll)
    ):
        return _member_tuples([v for _, v in x.items], list(coll))
    return b_or(*(b_and(p, eq(x, v)) for p, v in as_coll(coll).items))


def _member_tuples(xs: list[Any], tuples: list[tuple[Any, ...]]) -> Bool:
    """``xs`` (a sequence whose slots are all present) is one of ``tuples`` (concrete, each of length
    ``len(xs)``), as a trie: one comparison per distinct prefix instead of a sequence equality per tuple."""
    if not xs:
        return bool(tuples)
    tails: dict[Any, list[tuple[Any, ...]]] = {}
    for t in tuples:
        tails.setdefault(t[0], []).append(t[1:])
    return b_or(*(b_and(eq(xs[0], head), _member_tuples(xs[1:], rest)) for head, rest in tails.items()))


def first_occurrences(c: SColl) -> list[tuple[Bool, Any]]:
    """The slots with presence strengthened to "present and no earlier present slot has the same value"."""
    out: list[tuple[Bool, Any]] = []
    for i, (p, v) in enumerate(c.items):
        earlier = b_or(*(b_and(q, eq(w, v)) for q, w in c.items[:i]))
        out.append((b_and(p, b_not(earlier)), v))
    return out


def count(c: SColl, distinct: bool) -> Any:
    slots = first_occurrences(c) if distinct else list(c.items)
    concrete = sum(1 for p, _ in slots if isinstance(p, bool) and p)
    symbolic = [z3.If(p, 1, 0) for p, _ in slots if not isinstance(p, bool)]
    if not symbolic:
        return concrete
    return z3.Sum(*symbolic) + concrete if concrete else z3.Sum(*symbolic)


def positions(c: SColl) -> list[Any]:
    """The index each slot has in the compacted sequence (meaningful where the slot is present)."""
    out: list[Any] = []
    for i in range(len(c.items)):
        out.append(count(SColl("seq", c.items[:i]), distinct=False))
    return out


# ------------------------------------------------------------------------------------------ records


def record_fields(v: Any) -> tuple[type, dict[str, Any]]:
    if isinstance(v, SRec):
        return v.cls, dict(v.fields)
    if _is_plain_record(v):
        return type(v), {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
    raise SymbolicError(f"expected a record, got {type(v).__name__}")


def make_record(cls: type, fields: Mapping[str, Any]) -> Any:
    """A record; concrete (an instance of ``cls``) when every field is concrete."""
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in fields]
    if missing:
        raise SymbolicError(f"record {cls.__name__} is missing fields {missing}")
    if all(is_concrete(fields[n]) for n in names):
        return cls(**{n: fields[n] for n in names})
    return SRec(cls, tuple((n, fields[n]) for n in names))


def record_defaults(cls: type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def _is_plain_record(v: Any) -> bool:
    return dataclasses.is_dataclass(v) and not isinstance(v, type | SRec | SColl | SMap)


def _is_record(v: Any) -> bool:
    return isinstance(v, SRec) or _is_plain_record(v)


# ------------------------------------------------------------------------------------------ maps


def as_map(v: Any) -> SMap:
    if isinstance(v, SMap):
        return v
    if isinstance(v, Mapping):
        return SMap(tuple((True, k, v[k]) for k in _stable(v.keys())))
    raise SymbolicError(f"expected a map, got {type(v).__name__}")


def make_map(entries: Iterable[tuple[Bool, Any, Any]]) -> Any:
    kept = tuple(e for e in entries if not (isinstance(e[0], bool) and not e[0]) and not _is_false(e[0]))
    if all(isinstance(p, bool) and is_concrete(k) and is_concrete(v) for p, k, v in kept):
        return FMap({k: v for _, k, v in kept})
    return SMap(kept)


def map_has(m: Any, key: Any) -> Bool:
    if is_concrete(m) and is_concrete(key):
        return key in m
    return b_or(*(b_and(p, eq(k, key)) for p, k, _ in as_map(m).entries))


def map_lookup(m: Any, key: Any, default: Any) -> Any:
    """The value at ``key``, or ``default`` where the key is absent."""
    if is_concrete(m) and is_concrete(key):
        return m.get(key, default)
    result = default
    for p, k, v in reversed(as_map(m).entries):
        result = ite(b_and(p, eq(k, key)), v, result)
    return result


def map_put(m: Any, key: Any, value: Any) -> Any:
    if is_concrete(m) and is_concrete(key) and is_concrete(value):
        return (m if isinstance(m, FMap) else FMap(m)).set(key, value)
    entries = [(b_and(p, b_not(eq(k, key))), k, v) for p, k, v in as_map(m).entries]
    return make_map([*entries, (True, key, value)])


def map_delete(m: Any, keys: list[Any]) -> Any:
    if is_concrete(m) and all(is_concrete(k) for k in keys):
        return (m if isinstance(m, FMap) else FMap(m)).remove_all(keys)
    return make_map((b_and(p, *(b_not(eq(k, d)) for d in keys)), k, v) for p, k, v in as_map(m).entries)


def map_delete_coll(m: Any, keys: Any) -> Any:
    if is_concrete(m) and is_concrete(keys):
        return (m if isinstance(m, FMap) else FMap(m)).remove_all(keys)
    kc = as_coll(keys)
    return make_map((b_and(p, b_not(member(k, kc))), k, v) for p, k, v in as_map(m).entries)


def map_merge(a: Any, b: Any) -> Any:
    if is_concrete(a) and is_concrete(b):
        return (a if isinstance(a, FMap) else FMap(a)).merge(b)
    mb = as_map(b)
    kept = [(b_and(p, b_not(map_has(mb, k))), k, v) for p, k, v in as_map(a).entries]
    return make_map([*kept, *mb.entries])


# ------------------------------------------------------------------------------------------ equality


def eq(a: Any, b: Any) -> Bool:
    """Structural equality of two values of the same type. A value is equal to itself: the same object (or the
    same Z3 term) gives ``True`` without building a term (this keeps comparisons of a record with a copy of its
    own fields, as in the request-class tests of the invariants, from growing with the record's size)."""
    if a is b:
        return True
    if is_concrete(a) and is_concrete(b):
        return bool(a == b)
    if _is_scalar(a) and _is_scalar(b):
        ta, tb = scalar_term(a), scalar_term(b)
        if ta.sort() != tb.sort():
            return False
        if ta.eq(tb):
            return True
        return ta == tb
    if _is_record(a) and _is_record(b):
        ca, fa = record_fields(a)
        cb, fb = record_fields(b)
        if ca is not cb:
            return False
        return b_and(*(eq(fa[n], fb[n]) for n in fa))
    if isinstance(a, SMap | Mapping) and isinstance(b, SMap | Mapping):
        ma, mb = as_map(a), as_map(b)
        same_keys = b_and(
            *(b_implies(p, map_has(mb, k)) for p, k, _ in ma.entries),
            *(b_implies(p, map_has(ma, k)) for p, k, _ in mb.entries),
        )
        same_values = b_and(*(b_implies(p, eq(v, map_lookup(mb, k, v))) for p, k, v in ma.entries))
        return b_and(same_keys, same_values)
    ka, kb = coll_kind(a), coll_kind(b)
    ca_, cb_ = as_coll(a), as_coll(b)
    if ka == "set" or kb == "set":
        return b_and(
            *(b_implies(p, member(v, cb_)) for p, v in ca_.items),
            *(b_implies(p, member(v, ca_)) for p, v in cb_.items),
        )
    return _seq_eq(ca_, cb_)


def _seq_eq(a: SColl, b: SColl) -> Bool:
    pa, pb = positions(a), positions(b)
    same_len = eq(count(a, distinct=False), count(b, distinct=False))
    pointwise = []
    for (p, v), i in zip(a.items, pa, strict=True):
        for (q, w), j in zip(b.items, pb, strict=True):
            aligned = eq(i, j)
            if isinstance(aligned, bool) and not aligned:
                continue
            pointwise.append(b_implies(b_and(p, q, aligned), eq(v, w)))
    return b_and(same_len, *pointwise)


def less(op: str, a: Any, b: Any) -> Bool:
    if is_concrete(a) and is_concrete(b):
        return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    ta, tb = scalar_term(a), scalar_term(b)
    if ta.eq(tb):  # the same term: decided without Z3 (e.g. a broker epoch compared with itself)
        return op in ("<=", ">=")
    return {"<": ta < tb, "<=": ta <= tb, ">": ta > tb, ">=": ta >= tb}[op]


# ------------------------------------------------------------------------------------------ merge


def merge(c: Any, a: Any, b: Any) -> Any:
    """The value "if c then a else b" (``c`` a Z3 boolean)."""
    if isinstance(c, bool):
        return a if c else b
    if _is_true_term(c):
        return a
    if _is_false_term(c):
        return b
    if a is b or (is_concrete(a) and is_concrete(b) and type(a) is type(b) and a == b):
        return a
    if _is_scalar(a) and _is_scalar(b):
        ta, tb = scalar_term(a), scalar_term(b)
        if ta.eq(tb):
            return a
        return z3.If(c, ta, tb)
    if _is_record(a) and _is_record(b):
        ca, fa = record_fields(a)
        cb, fb = record_fields(b)
        if ca is not cb:
            raise SymbolicError(f"cannot merge a {ca.__name__} with a {cb.__name__}")
        return make_record(ca, {n: merge(c, fa[n], fb[n]) for n in fa})
    if isinstance(a, SMap | Mapping) and isinstance(b, SMap | Mapping):
        return _merge_maps(c, as_map(a), as_map(b))
    if isinstance(a, SColl | tuple | list | frozenset | set) and isinstance(
        b, SColl | tuple | list | frozenset | set
    ):
        return _merge_colls(c, a, b)
    raise SymbolicError(f"cannot merge {type(a).__name__} with {type(b).__name__}")


def _merge_colls(c: Any, a: Any, b: Any) -> Any:
    kind = "seq" if coll_kind(a) == "seq" and coll_kind(b) == "seq" else "set"
    ca, cb = as_coll(a), as_coll(b)
    if kind == "set" and all(is_concrete(v) for _, v in ca.items + cb.items):
        keys: dict[Any, None] = dict.fromkeys(v for _, v in ca.items + cb.items)
        return make_coll(
            "set",
            (
                (
                    z3_bool_if(
                        c,
                        b_or(*(p for p, v in ca.items if v == k)),
                        b_or(*(p for p, v in cb.items if v == k)),
                    ),
                    k,
                )
                for k in keys
            ),
        )
    n = max(len(ca.items), len(cb.items))
    items = []
    for i in range(n):
        pa, va = ca.items[i] if i < len(ca.items) else (False, None)
        pb, vb = cb.items[i] if i < len(cb.items) else (False, None)
        if va is None:
            items.append((b_and(b_not(c), pb), vb))
        elif vb is None:
            items.append((b_and(c, pa), va))
        elif kind == "set" and not _mergeable(va, vb):
            # a set may hold values of different record classes (requests): keep both slots, each guarded
            items += [(b_and(c, pa), va), (b_and(b_not(c), pb), vb)]
        else:
            items.append((z3_bool_if(c, pa, pb), merge(c, va, vb)))
    return make_coll(kind, items)


def _mergeable(a: Any, b: Any) -> bool:
    """``a`` and ``b`` can share a slot: not records of two different classes."""
    if _is_record(a) and _is_record(b):
        return record_fields(a)[0] is record_fields(b)[0]
    return True


def _merge_maps(c: Any, a: SMap, b: SMap) -> Any:
    if all(is_concrete(k) for _, k, _ in a.entries + b.entries):
        da, db = _by_key(a), _by_key(b)
        entries = []
        for k in dict.fromkeys([*da, *db]):
            if k in da and k in db:
                entries.append((z3_bool_if(c, da[k][0], db[k][0]), k, merge(c, da[k][1], db[k][1])))
            elif k in da:
                entries.append((b_and(c, da[k][0]), k, da[k][1]))
            else:
                entries.append((b_and(b_not(c), db[k][0]), k, db[k][1]))
        return make_map(entries)
    return make_map(
        [
            *((b_and(c, p), k, v) for p, k, v in a.entries),
            *((b_and(b_not(c), p), k, v) for p, k, v in b.entries),
        ]
    )


def _by_key(m: SMap) -> dict[Any, tuple[Bool, Any]]:
    """Concrete key → (presence, value). A key may occupy several entries (at most one present, e.g. after a
    merge kept an old entry "unless overwritten" next to the new one): their presences are joined and their
    values chosen by presence."""
    out: dict[Any, tuple[Bool, Any]] = {}
    for p, k, v in m.entries:
        if k in out:
            q, w = out[k]
            out[k] = (b_or(q, p), ite(p, v, w))
        else:
            out[k] = (p, v)
    return out


def z3_bool_if(c: Any, a: Bool, b: Bool) -> Bool:
    if isinstance(a, bool) and isinstance(b, bool):
        if a == b:
            return a
        return c if a else b_not(c)
    ta, tb = scalar_term(a), scalar_term(b)
    if ta.eq(tb):
        return a
    return z3.If(c, ta, tb)


# ------------------------------------------------------------------------------------------ models


def concretize(v: Any, model: Any) -> Any:
    """The concrete value a symbolic value takes in a Z3 model."""
    if is_z3(v):
        return _scalar_value(model.eval(v, model_completion=True))
    if isinstance(v, SRec):
        return v.cls(**{n: concretize(x, model) for n, x in v.fields})
    if isinstance(v, SColl):
        values = [concretize(x, model) for p, x in v.items if concretize(p, model) is True]
        return tuple(values) if v.kind == "seq" else frozenset(values)
    if isinstance(v, SMap):
        return FMap(
            {
                concretize(k, model): concretize(x, model)
                for p, k, x in v.entries
                if concretize(p, model) is True
            }
        )
    return v


def _scalar_value(t: Any) -> Any:
    if z3.is_true(t):
        return True
    if z3.is_false(t):
        return False
    if z3.is_int_value(t):
        return t.as_long()
    if z3.is_string_value(t):
        return t.as_string()
    for cls, (sort, consts) in _ENUM_SORTS.items():
        if t.sort() == sort:
            for m, const in consts.items():
                if z3.eq(const, t):
                    return m
            raise SymbolicError(f"value {t} of enum {cls.__name__} is not a member")
    raise SymbolicError(f"cannot read back Z3 value {t} of sort {t.sort()}")
