"""The per-element state maps of the two state machines, as expressions over ``Work`` (§2.1, §2.2).

Both machines keep a map element → state in the controller context (``replica_states``, ``partition_states``),
read states by their Kafka names in failure records, and write a target state for a set of elements at once;
these helpers do that for either machine, given the context field and the state enum.
"""

from __future__ import annotations

import enum

from kcspec.spec import batch
from kcspec.spec.lang import Expr, build_map, enum_name


def state_name(state: Expr, states: type[enum.Enum]) -> Expr:
    """The Kafka name of a state of enum ``states``, as logged."""
    return enum_name(state, states)


def set_states(w: Expr, field: str, states: Expr) -> Expr:
    """``w`` with the controller context's ``field`` (an element → state map) replaced by ``states``."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        return wv.with_(state=s.with_(controller=s.f("controller").with_(**{field: states})))

    return batch.bind(w, body)


def put_states(w: Expr, field: str, elements: Expr, target: enum.Enum) -> Expr:
    """``w`` with every element of ``elements`` in state ``target`` in the context's ``field``."""
    return batch.bind(
        w,
        lambda wv: set_states(
            wv, field, wv.f("state", "controller", field).merge(build_map(elements, lambda _e: target))
        ),
    )
