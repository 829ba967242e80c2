"""The spec's expression language: a small typed language of pure expressions, as plain data.

Every rule in ``kcspec.spec`` is an ``Expr`` tree built with the helpers below — never a Python
lambda that runs at check time. The tree is read by the backends in ``kcspec.model``: a Python
evaluator today, Z3 terms and TLA+ text from the very same trees. The builders that take a Python
function (``filter``, ``all``, ``first``, ``let`` …) call it exactly once, while the spec is being
built, with a fresh bound ``Var``; the function's result is an ``Expr`` and the function itself is
not kept.

Values: integers, booleans, strings, enum members, records (the frozen dataclasses of the
vocabulary), finite sets (``frozenset``), sequences (``tuple``) and finite maps (``FMap``).

Constructs: constants and variables; record field access, construction and functional update; let;
if-then-else; boolean connectives; integer comparison and arithmetic; set and sequence literals,
membership, union/intersection/difference, subset, size; filter and image over sets and sequences
(order-preserving on sequences); sorting a set into a sequence and a left fold over a sequence
(for effects whose order matters); bounded quantifiers; "first element of a sequence such that";
head, append, concat, distinct; the name of an enum member (``enum_name``); finite maps (get, has, put, delete, keys, build, merge); the
annotation ``Rule`` that names a sub-expression and cites the semantics section it comes from; and
named procedures (``procedure`` → ``Def``/``Call``, the spec's operators), built once and used many
times.

Writing helpers that build exactly the trees of their nested forms: ``Block`` (sequential ``LET`` bindings
written top to bottom, ``b.name = value`` … ``b.in_(body)``) and ``Expr.with_at`` (an update of a record
nested inside another without a pyramid of ``with_``). Field names are checked against the record types when
the spec is built (``kcspec.spec.field_paths``).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kcspec.spec import spans
from kcspec.spec.spans import Span

_F = TypeVar("_F", bound=Callable[..., Any])

# ------------------------------------------------------------------------------------------------ nodes


class Expr:
    """Base class of expression nodes, with a fluent builder surface."""

    __slots__ = ()

    # records
    def f(self, *names: str) -> Expr:
        """Field access, chained: ``s.f("controller", "leadership")``."""
        e: Expr = self
        for n in names:
            e = Field(e, n)
        return e

    def with_(self, **updates: object) -> Expr:
        """Functional record update."""
        return With(self, tuple((k, lift(v)) for k, v in updates.items()))

    def with_at(self, *path: str, **updates: object) -> Expr:
        """Functional update of fields of the record at ``path`` inside this one, without a pyramid.

        ``w.with_at("state", "controller", leadership=m)`` is exactly
        ``w.with_(state=w.f("state").with_(controller=w.f("state", "controller").with_(leadership=m)))``;
        with no path it is ``w.with_(**updates)``.
        """
        result = self.f(*path).with_(**updates)
        for depth in range(len(path) - 1, -1, -1):
            result = With(self.f(*path[:depth]), ((path[depth], result),))
        return result

    # comparison
    def eq(self, other: object) -> Expr:
        return Cmp("==", self, lift(other))

    def ne(self, other: object) -> Expr:
        return Cmp("!=", self, lift(other))

    def lt(self, other: object) -> Expr:
        return Cmp("<", self, lift(other))

    def le(self, other: object) -> Expr:
        return Cmp("<=", self, lift(other))

    def gt(self, other: object) -> Expr:
        return Cmp(">", self, lift(other))

    def ge(self, other: object) -> Expr:
        return Cmp(">=", self, lift(other))

    # arithmetic and logic
    def __add__(self, other: object) -> Expr:
        return Arith("+", self, lift(other))

    def __sub__(self, other: object) -> Expr:
        return Arith("-", self, lift(other))

    def __and__(self, other: object) -> Expr:
        return and_(self, lift(other))

    def __or__(self, other: object) -> Expr:
        return or_(self, lift(other))

    def __invert__(self) -> Expr:
        return Not(self)

    def implies(self, other: object) -> Expr:
        return Implies(self, lift(other))

    # collections
    def contains(self, x: object) -> Expr:
        """``x ∈ self`` for a set or a sequence."""
        return Member(lift(x), self)

    def union(self, other: object) -> Expr:
        return SetOp("union", self, lift(other))

    def inter(self, other: object) -> Expr:
        return SetOp("inter", self, lift(other))

    def minus(self, other: object) -> Expr:
        """Set difference; on a sequence, removes the members of a set or sequence, keeping order."""
        return SetOp("diff", self, lift(other))

    def subset_of(self, other: object) -> Expr:
        return Subset(self, lift(other))

    def size(self) -> Expr:
        return Size(self)

    def is_empty(self) -> Expr:
        return Cmp("==", Size(self), Const(0))

    def non_empty(self) -> Expr:
        return Cmp(">", Size(self), Const(0))

    def to_set(self) -> Expr:
        return ToSet(self)

    def filter(self, fn: Callable[[Var], Expr]) -> Expr:
        v = _fresh(fn)
        return Filter(v.name, self, lift(fn(v)))

    def map(self, fn: Callable[[Var], object]) -> Expr:
        v = _fresh(fn)
        return Image(v.name, self, lift(fn(v)))

    def all(self, fn: Callable[[Var], Expr]) -> Expr:
        v = _fresh(fn)
        return Quant("all", v.name, self, lift(fn(v)))

    def any(self, fn: Callable[[Var], Expr]) -> Expr:
        v = _fresh(fn)
        return Quant("any", v.name, self, lift(fn(v)))

    def first(self, fn: Callable[[Var], Expr], default: object) -> Expr:
        """The first element of the sequence satisfying ``fn``, else ``default``."""
        v = _fresh(fn)
        return First(v.name, self, lift(fn(v)), lift(default))

    def head(self, default: object) -> Expr:
        return Head(self, lift(default))

    def append(self, x: object) -> Expr:
        return Append(self, lift(x))

    def concat(self, other: object) -> Expr:
        return Concat(self, lift(other))

    def distinct(self) -> Expr:
        return Distinct(self)

    def sorted(self) -> Expr:
        """The elements of a set (or sequence) as an ascending sequence."""
        return Sorted(self)

    def fold(self, init: object, fn: Callable[[Var, Var], Expr]) -> Expr:
        """Left fold over a sequence: ``fn(acc, x)`` for each ``x`` in order, starting from ``init``.

        This is how the spec says "for each broker in turn" where the order of effects matters
        (e.g. §2.3: replica transitions are processed broker by broker).
        """
        acc, x = _fresh2(fn)
        return Fold(acc.name, x.name, self, lift(init), lift(fn(acc, x)))

    def flat_map(self, fn: Callable[[Var], Expr]) -> Expr:
        """Union over the collection of the sets ``fn(x)``."""
        v = _fresh(fn)
        return BigUnion(v.name, self, lift(fn(v)))

    # maps
    def get(self, key: object) -> Expr:
        return MapGet(self, lift(key))

    def get_or(self, key: object, default: object) -> Expr:
        return MapGetOr(self, lift(key), lift(default))

    def has(self, key: object) -> Expr:
        return MapHas(self, lift(key))

    def put(self, key: object, value: object) -> Expr:
        return MapPut(self, lift(key), lift(value))

    def delete(self, key: object) -> Expr:
        return MapDel(self, lift(key))

    def delete_all(self, keys: object) -> Expr:
        return MapDelAll(self, lift(keys))

    def keys(self) -> Expr:
        return MapKeys(self)

    def merge(self, other: object) -> Expr:
        """Map union where ``other`` wins on common keys."""
        return MapMerge(self, lift(other))


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: Any


@dataclass(frozen=True, slots=True)
class Var(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Field(Expr):
    obj: Expr
    name: str


@dataclass(frozen=True, slots=True)
class Rec(Expr):
    """Construct a record of vocabulary class ``cls``."""

    cls: type
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class With(Expr):
    obj: Expr
    updates: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class Let(Expr):
    name: str
    value: Expr
    body: Expr


@dataclass(frozen=True, slots=True)
class If(Expr):
    cond: Expr
    then: Expr
    els: Expr


@dataclass(frozen=True, slots=True)
class EnumName(Expr):
    """The name of a member of the enum ``enum_type`` (``ReplicaState.OnlineReplica`` → ``"OnlineReplica"``), as Kafka
    logs it: one operator instead of a chain of ``IF``s comparing the value with every member. ``arg`` must be a
    member of ``enum_type`` (the spec only ever applies it to a value of that type)."""

    arg: Expr
    enum_type: type[enum.Enum]

    def expanded(self) -> Expr:
        """The chain of ``IF``s the operator stands for (its definition, for checking that it means the same)."""
        return cond(*((self.arg.eq(m), m.name) for m in self.enum_type), otherwise="")


@dataclass(frozen=True, slots=True)
class Not(Expr):
    arg: Expr


@dataclass(frozen=True, slots=True)
class And(Expr):
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or(Expr):
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Implies(Expr):
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class Cmp(Expr):
    op: str  # == != < <= > >=
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class Arith(Expr):
    op: str  # + - max min
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class SetLit(Expr):
    elems: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class SeqLit(Expr):
    elems: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Member(Expr):
    elem: Expr
    coll: Expr


@dataclass(frozen=True, slots=True)
class SetOp(Expr):
    op: str  # union inter diff
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class Subset(Expr):
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class Size(Expr):
    coll: Expr


@dataclass(frozen=True, slots=True)
class ToSet(Expr):
    seq: Expr


@dataclass(frozen=True, slots=True)
class Filter(Expr):
    var: str
    coll: Expr
    pred: Expr


@dataclass(frozen=True, slots=True)
class Image(Expr):
    var: str
    coll: Expr
    body: Expr


@dataclass(frozen=True, slots=True)
class BigUnion(Expr):
    var: str
    coll: Expr
    body: Expr


@dataclass(frozen=True, slots=True)
class Quant(Expr):
    kind: str  # all any
    var: str
    coll: Expr
    pred: Expr


@dataclass(frozen=True, slots=True)
class First(Expr):
    var: str
    seq: Expr
    pred: Expr
    default: Expr


@dataclass(frozen=True, slots=True)
class Sorted(Expr):
    coll: Expr


@dataclass(frozen=True, slots=True)
class Fold(Expr):
    acc: str
    var: str
    seq: Expr
    init: Expr
    body: Expr


@dataclass(frozen=True, slots=True)
class Head(Expr):
    seq: Expr
    default: Expr


@dataclass(frozen=True, slots=True)
class Append(Expr):
    seq: Expr
    elem: Expr


@dataclass(frozen=True, slots=True)
class Concat(Expr):
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class Distinct(Expr):
    seq: Expr


@dataclass(frozen=True, slots=True)
class MapGet(Expr):
    m: Expr
    key: Expr


@dataclass(frozen=True, slots=True)
class MapGetOr(Expr):
    m: Expr
    key: Expr
    default: Expr


@dataclass(frozen=True, slots=True)
class MapHas(Expr):
    m: Expr
    key: Expr


@dataclass(frozen=True, slots=True)
class MapPut(Expr):
    m: Expr
    key: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class MapDel(Expr):
    m: Expr
    key: Expr


@dataclass(frozen=True, slots=True)
class MapDelAll(Expr):
    m: Expr
    key_set: Expr


@dataclass(frozen=True, slots=True)
class MapKeys(Expr):
    m: Expr


@dataclass(frozen=True, slots=True)
class MapBuild(Expr):
    """``[var ∈ keys ↦ value]``: a map defined on a finite set of keys."""

    var: str
    key_set: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class MapMerge(Expr):
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, eq=False)
class Def:
    """A named procedure of the spec (a TLA+ operator): a closed body over its parameters.

    Built once per combination of static arguments by ``procedure``; compared by identity.
    """

    name: str
    section: str
    params: tuple[str, ...]
    body: Expr
    static: tuple[tuple[str, str], ...] = ()
    """The static (build-time) arguments that chose this body, rendered, for names and documentation."""
    span: Span | None = None
    """Where the procedure is written (its function's ``def`` line, ``spans``)."""


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """Apply a ``Def`` to argument expressions (evaluated in the caller's scope, bound to the parameters)."""

    fn: Def
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Rule(Expr):
    """A named sub-expression that cites the semantics section it comes from. Transparent to evaluation."""

    name: str
    section: str
    body: Expr
    span: Span | None = field(default=None, compare=False)
    """Where the rule is written (``spans``); not part of its value: equal rules written twice are equal."""


# ---------------------------------------------------------------------------------------------- builders

_counter = itertools.count()


def _fresh(fn: Callable[..., object]) -> Var:
    code = getattr(fn, "__code__", None)
    base = code.co_varnames[0] if code is not None and code.co_argcount >= 1 else "x"
    return Var(f"{base}_{next(_counter)}")


def _fresh2(fn: Callable[..., object]) -> tuple[Var, Var]:
    code = getattr(fn, "__code__", None)
    names = code.co_varnames[:2] if code is not None and code.co_argcount >= 2 else ("acc", "x")
    n = next(_counter)
    return Var(f"{names[0]}_{n}"), Var(f"{names[1]}_{n}")


def lift(value: object) -> Expr:
    """Wrap a Python value as a constant unless it already is an expression."""
    return value if isinstance(value, Expr) else Const(value)


def lit(value: object) -> Expr:
    return Const(value)


def var(name: str) -> Var:
    return Var(name)


def rec(cls: type, **fields: object) -> Expr:
    return Rec(cls, tuple((k, lift(v)) for k, v in fields.items()))


def let(value: object, fn: Callable[[Var], Expr]) -> Expr:
    """``LET x == value IN fn(x)``."""
    v = _fresh(fn)
    return Let(v.name, lift(value), lift(fn(v)))


class Block:
    """Sequential ``LET`` bindings written top to bottom, the way Kafka's handler code reads; a step is named
    once, where it is bound::

        b = Block()
        b.dead = replicas.filter(lambda pr: ~is_online(s, pr))
        b.w1 = replica_state_change(p, w, b.dead, ReplicaDeletionIneligible)
        return b.in_(mark_topic_ineligible_for_deletion(b.w1, topics_of(b.dead)))

    builds the same tree as the nested ``let(value, lambda dead: let(value2, lambda w1: body))``. Assigning
    ``b.name = value`` binds a fresh variable ``<name>_<n>`` (the name a lambda parameter would have given it;
    the TLA+ module prints it as ``name``) to the value, built before the binding, so ``b.w = f(b.w)`` reads the
    previous step ``w`` and binds a new one; reading ``b.name`` is that variable; ``in_`` wraps the body in the
    ``Let`` nodes, first binding outermost. Reading a name no step has bound is an error naming it and the names
    bound so far. A block is used once: ``in_`` may be called a single time, and nothing is bound after it.

    Why attributes (and not ``name = b.let(value)``): the block has to know each step's name to print it (the
    TLA+ ``LET`` names, the spec's dump), and an attribute's name is the one thing Python hands to the object
    it is assigned on; a local variable's name is not, short of reading the caller's bytecode.
    """

    __slots__ = ("_bindings", "_closed", "_steps")
    _bindings: list[tuple[str, Expr]]
    _closed: bool
    _steps: dict[str, Var]

    def __init__(self) -> None:
        object.__setattr__(self, "_bindings", [])
        object.__setattr__(self, "_closed", False)
        object.__setattr__(self, "_steps", {})

    def __setattr__(self, name: str, value: object) -> None:
        """``b.name = value``: bind ``value`` to a fresh variable named after ``name``."""
        if name.startswith("_") or name == "in_":
            raise ValueError(
                f"Block: {name!r} cannot name a step (a step's name is a word not starting with _)"
            )
        if self._closed:
            raise ValueError(f"Block: step {name!r} bound after the block was closed by in_()")
        v = Var(f"{name}_{next(_counter)}")
        self._bindings.append((v.name, lift(value)))
        self._steps[name] = v

    def __getattr__(self, name: str) -> Var:
        """``b.name``: the variable of the latest step bound as ``name``."""
        if name.startswith("_"):
            raise AttributeError(name)
        step = self._steps.get(name)
        if step is None:
            bound = ", ".join(self._steps) or "none"
            raise AttributeError(
                f"Block: step {name!r} is read before it is bound (steps bound so far: {bound})"
            )
        return step

    def in_(self, body: object) -> Expr:
        """The body under every binding of the block."""
        if self._closed:
            raise ValueError("Block.in_(): the block was already closed")
        object.__setattr__(self, "_closed", True)
        result = lift(body)
        for name, value in reversed(self._bindings):
            result = Let(name, value, result)
        return result


def enum_name(value: object, enum_type: type[enum.Enum]) -> Expr:
    """The name of ``value``, a member of ``enum_type``, as a string (``EnumName``)."""
    return EnumName(lift(value), enum_type)


def if_(cond: object, then: object, els: object) -> Expr:
    return If(lift(cond), lift(then), lift(els))


def and_(*args: object) -> Expr:
    flat: list[Expr] = []
    for a in args:
        e = lift(a)
        flat.extend(e.args if isinstance(e, And) else (e,))
    return And(tuple(flat))


def or_(*args: object) -> Expr:
    flat: list[Expr] = []
    for a in args:
        e = lift(a)
        flat.extend(e.args if isinstance(e, Or) else (e,))
    return Or(tuple(flat))


def not_(arg: object) -> Expr:
    return Not(lift(arg))


def set_of(*elems: object) -> Expr:
    return SetLit(tuple(lift(e) for e in elems))


def seq_of(*elems: object) -> Expr:
    return SeqLit(tuple(lift(e) for e in elems))


def maximum(a: object, b: object) -> Expr:
    return Arith("max", lift(a), lift(b))


def build_map(keys: object, fn: Callable[[Var], object]) -> Expr:
    v = _fresh(fn)
    return MapBuild(v.name, lift(keys), lift(fn(v)))


def rule(name: str, section: str, body: object) -> Expr:
    """A named step of the spec citing its § (``Rule``), with the line that wrote it (``spans.caller``)."""
    return Rule(name, section, lift(body), spans.caller())


def cond(*branches: tuple[object, object], otherwise: object) -> Expr:
    """A chain of if-then-else: ``cond((c1, v1), (c2, v2), otherwise=v3)``."""
    result = lift(otherwise)
    for c, v in reversed(branches):
        result = If(lift(c), lift(v), result)
    return result


def children(e: Expr) -> Sequence[Expr]:
    """The direct sub-expressions of a node (for generic traversals by the backends).

    For a ``Call`` the procedure's body comes first, then the arguments, so that a traversal looking
    for ``Rule`` nodes sees what the call does.
    """
    out: list[Expr] = []
    if isinstance(e, Call):
        return [e.fn.body, *e.args]
    for name in e.__dataclass_fields__:  # type: ignore[attr-defined]
        value = getattr(e, name)
        if isinstance(value, Expr):
            out.append(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Expr):
                    out.append(item)
                elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Expr):
                    out.append(item[1])
    return out


def procedure(name: str, section: str) -> Callable[[_F], _F]:
    """Make a spec-builder function a named procedure: its body is built once per static arguments.

    Arguments that are ``Expr``s become the procedure's parameters; every other argument (the profile,
    a target state, a strategy, ``None``…) is static: it selects which body is built. A call returns
    ``Call(def, args)``, so a procedure used in many places is one definition — one TLA+ operator, one
    compiled closure — instead of a copy of its tree at every use.
    """

    def deco(fn: _F) -> _F:
        sig = inspect.signature(fn)
        cache: dict[tuple[object, ...], Def] = {}

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Expr:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            dyn_names: list[str] = []
            dyn_values: list[Expr] = []
            static: list[tuple[str, object]] = []
            for pname, value in bound.arguments.items():
                if isinstance(value, Expr):
                    dyn_names.append(pname)
                    dyn_values.append(value)
                else:
                    static.append((pname, value))
            if any(callable(v) and not isinstance(v, type) for _, v in static) or any(
                _contains_expr(v) for _, v in static
            ):
                # A builder callback or an expression hidden in a static argument would close over the
                # caller's variables: such a call is expanded in place instead of becoming a definition.
                return lift(fn(*args, **kwargs))
            key = (tuple(dyn_names), *(_static_key(v) for _, v in static))
            d = cache.get(key)
            if d is None:
                params = tuple(f"{name}.{n}" for n in dyn_names)
                call_args = dict(bound.arguments)
                for n, pn in zip(dyn_names, params, strict=True):
                    call_args[n] = Var(pn)
                body = lift(fn(**call_args))
                loose = free_vars(body) - set(params)
                if loose:
                    raise ValueError(
                        f"procedure {name} ({section}) is not closed: its body reads {sorted(loose)}; pass them "
                        "as expression arguments"
                    )
                statics = tuple((n, _static_text(v)) for n, v in static)
                d = Def(name, section, params, body, statics, spans.of_function(fn))
                cache[key] = d
            return Call(d, tuple(dyn_values))

        return wrapper  # type: ignore[return-value]

    return deco


def _contains_expr(value: object) -> bool:
    if isinstance(value, Expr):
        return True
    if isinstance(value, tuple | list | frozenset | set):
        return any(_contains_expr(v) for v in value)
    return False


BINDER_FIELDS: dict[type, tuple[str, ...]] = {
    Let: ("name",),
    Filter: ("var",),
    Quant: ("var",),
    First: ("var",),
    Image: ("var",),
    BigUnion: ("var",),
    MapBuild: ("var",),
    Fold: ("acc", "var"),
}
"""The node kinds that bind a variable, and the fields that name the variables they bind."""


def free_vars(e: Expr, _memo: dict[int, frozenset[str]] | None = None) -> frozenset[str]:
    """The variables an expression reads that it does not bind itself."""
    memo = _memo if _memo is not None else {}
    hit = memo.get(id(e))
    if hit is not None:
        return hit
    if isinstance(e, Var):
        out: frozenset[str] = frozenset({e.name})
    elif isinstance(e, Call):
        out = frozenset().union(*(free_vars(a, memo) for a in e.args)) if e.args else frozenset()
    elif isinstance(e, Let):
        out = free_vars(e.value, memo) | (free_vars(e.body, memo) - {e.name})
    elif isinstance(e, Fold):
        out = free_vars(e.seq, memo) | free_vars(e.init, memo) | (free_vars(e.body, memo) - {e.acc, e.var})
    elif isinstance(e, Filter | Quant):
        out = free_vars(e.coll, memo) | (free_vars(e.pred, memo) - {e.var})
    elif isinstance(e, Image | BigUnion):
        out = free_vars(e.coll, memo) | (free_vars(e.body, memo) - {e.var})
    elif isinstance(e, First):
        out = free_vars(e.seq, memo) | free_vars(e.default, memo) | (free_vars(e.pred, memo) - {e.var})
    elif isinstance(e, MapBuild):
        out = free_vars(e.key_set, memo) | (free_vars(e.value, memo) - {e.var})
    else:
        out = frozenset().union(*(free_vars(c, memo) for c in children(e))) if children(e) else frozenset()
    memo[id(e)] = out
    return out


def _static_key(value: object) -> object:
    name = getattr(value, "name", None)
    if type(value).__name__ == "Profile" and isinstance(name, str):
        return ("profile", name)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


def _static_text(value: object) -> str:
    if type(value).__name__ == "Profile":
        return str(getattr(value, "name", value))
    return getattr(value, "name", None) or repr(value)


def inline_calls(e: Expr, _memo: dict[int, Expr] | None = None) -> Expr:
    """The same expression with every ``Call`` replaced by ``LET``-bound arguments and the procedure's body.

    For backends that do not (yet) emit procedures as definitions of their own. Arguments are first
    bound to fresh names, so an argument can never be captured by a parameter of the same call.
    """
    memo = _memo if _memo is not None else {}
    hit = memo.get(id(e))
    if hit is not None:
        return hit
    if isinstance(e, Call):
        body = inline_calls(e.fn.body, memo)
        temps = [f"{p}#{next(_counter)}" for p in e.fn.params]
        result = body
        for p, t in reversed(list(zip(e.fn.params, temps, strict=True))):
            result = Let(p, Var(t), result)
        for t, a in reversed(list(zip(temps, e.args, strict=True))):
            result = Let(t, inline_calls(a, memo), result)
        memo[id(e)] = result
        return result
    changes: dict[str, object] = {}
    for fname in e.__dataclass_fields__:  # type: ignore[attr-defined]
        value = getattr(e, fname)
        if isinstance(value, Expr):
            new = inline_calls(value, memo)
            if new is not value:
                changes[fname] = new
        elif isinstance(value, tuple) and value:
            items = []
            changed = False
            for item in value:
                if isinstance(item, Expr):
                    ni: object = inline_calls(item, memo)
                elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Expr):
                    ni = (item[0], inline_calls(item[1], memo))
                else:
                    ni = item
                changed = changed or ni is not item
                items.append(ni)
            if changed:
                changes[fname] = tuple(items)
    result = dataclasses.replace(e, **changes) if changes else e  # type: ignore[type-var]
    memo[id(e)] = result
    return result


# ---------------------------------------------------------------------------------------------- the spec's units


@dataclass(frozen=True)
class Param:
    """A parameter of an action, bound from the event field of the same name; ``type`` is its Python type hint."""

    name: str
    type: Any


@dataclass(frozen=True)
class Action:
    """A controller action: a guarded update of the world.

    ``guard`` and ``effect`` may refer to ``Var("s")`` (the ``ClusterState`` before the step) and to the
    parameters. ``guard`` says whether the environment can produce the event in this state at all
    (e.g. a failing broker must be registered); ``effect`` evaluates to the final ``Work`` of the step.
    """

    name: str
    section: str
    doc: str
    params: tuple[Param, ...]
    guard: Expr
    effect: Expr
    span: Span | None = field(default=None, compare=False)
    """Where the action is built (``spans.caller`` when not given)."""

    def __post_init__(self) -> None:
        if self.span is None:
            object.__setattr__(self, "span", spans.caller())


@dataclass(frozen=True)
class Invariant:
    """A safety property of §11. ``kind`` is ``"state"`` (over ``Var("s")``) or ``"step"`` (over ``s`` and ``s2``
    and ``Var("requests")`` of the step)."""

    name: str
    section: str
    doc: str
    kind: str
    expr: Expr
    span: Span | None = field(default=None, compare=False)
    """Where the invariant is built (``spans.caller`` when not given)."""

    def __post_init__(self) -> None:
        if self.span is None:
            object.__setattr__(self, "span", spans.caller())
