"""The static kind check of the generated module: no set and no comparison may mix TLA+ kinds.

TLC compares values structurally and only within one kind: an integer with an integer, a string with a string
(the spec's enum members are strings), a boolean with a boolean, a set with a set, a function with a function
(a sequence is a function on ``1..n``, a map a function on its keys), a record with a record. Anything else stops
the model checker with "Attempted to compare …" — including building a set whose elements mix kinds, because TLC
sorts a set's elements, and testing ``x \\in S`` or ``x = y`` across kinds. Records compare field by field (first
their field names, then the values of equal names), so two records are comparable when every field they share is.
The one value comparable with anything is a model value (``NoValue``, the absent optional value).

The emitter infers a type for every sub-expression (``types``); at every place where TLC would compare two values
— set literals and set operations, ``\\in``, ``=``/``#``, the branches of ``IF``, a map's range (``MapPut``,
``GetOr``'s default), sequence elements, record fields and ``EXCEPT`` updates, a fold's accumulator — it asks
``check`` whether the two types can meet. A mismatch is a ``KindError`` naming the operator, the rule and the two
kinds, raised while the module is generated, so such a module is never written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kcspec.model.tla import types as ty
from kcspec.model.tla.types import T

KIND_NAMES = {
    "int": "integer",
    "bool": "boolean",
    "str": "string",
    "enum": "string",
    "rec": "record",
    "union": "record",
    "set": "set",
    "seq": "function",
    "map": "function",
}
"""The TLC kind of each type of the expression language; ``any`` (not known) and ``none`` (the model value
``NoValue``) have none and compare with every kind."""


class KindError(ValueError):
    """A generated expression would make TLC compare values of two different kinds."""


def describe(t: T) -> str:
    """``t`` for a message: its TLC kind and its type, e.g. ``function (seq[int])``."""
    return f"{KIND_NAMES.get(t.kind, 'any value')} ({t})"


def mismatch(a: T, b: T, _depth: int = 0) -> tuple[T, T] | None:
    """The innermost pair of types at which values of ``a`` and ``b`` cannot be compared by TLC, or ``None``."""
    ka, kb = KIND_NAMES.get(a.kind), KIND_NAMES.get(b.kind)
    if ka is None or kb is None or _depth > 8:
        return None
    if ka != kb:
        return (a, b)
    if ka == "record":
        return _record_mismatch(a, b, _depth)
    if ka == "set":
        return mismatch(ty.elem(a), ty.elem(b), _depth + 1)
    if ka == "function":
        ka_key, ka_val = _fn_parts(a)
        kb_key, kb_val = _fn_parts(b)
        return mismatch(ka_key, kb_key, _depth + 1) or mismatch(ka_val, kb_val, _depth + 1)
    return None


def _fn_parts(t: T) -> tuple[T, T]:
    if t.kind == "seq":
        return ty.INT, ty.elem(t)
    return t.args[0], t.args[1]


def _members(t: T) -> tuple[T, ...]:
    return t.args if t.kind == "union" else (t,)


def _record_mismatch(a: T, b: T, depth: int) -> tuple[T, T] | None:
    if a == b:
        return None
    for ra in _members(a):
        for rb in _members(b):
            if ra.cls is None or rb.cls is None or ra.cls is rb.cls:
                continue
            fa, fb = ty.field_types(ra.cls), ty.field_types(rb.cls)
            for name in sorted(set(fa) & set(fb)):
                found = mismatch(fa[name], fb[name], depth + 1)
                if found is not None:
                    return found
    return None


@dataclass
class KindChecker:
    """The checks of one module: raises on the first mismatch, and counts the checks per kind of site."""

    counts: Counter[str] = field(default_factory=Counter)

    def check(self, site: str, a: T, b: T, where: str, a_text: str, b_text: str) -> None:
        """Values of types ``a`` (text ``a_text``) and ``b`` meet at ``site`` in ``where`` (operator and rule)."""
        self.counts[site] += 1
        found = mismatch(a, b)
        if found is None:
            return
        ia, ib = found
        inner = "" if (ia, ib) == (a, b) else f" (inside: {describe(ia)} against {describe(ib)})"
        raise KindError(
            f"{where}: {site} would make TLC compare a {describe(a)} with a {describe(b)}{inner}: "
            f'{a_text} against {b_text}. TLC compares values only within one kind ("Attempted to compare"); '
            "encode an absent value as the model value NoValue or keep both sides of one kind"
        )


__all__ = ["KIND_NAMES", "KindChecker", "KindError", "describe", "mismatch"]
