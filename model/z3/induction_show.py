"""Readable counterexamples to induction: the event, the pre-state as canonical JSON (``spec/codec.py``) and the
post-state as a diff against it (one ``path: before → after`` line per changed leaf)."""

from __future__ import annotations

import json
from typing import Any

from kcspec.model.z3 import values as V
from kcspec.model.z3.induction_actions import Instance
from kcspec.model.z3.induction_family import Family
from kcspec.spec import codec
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.state import ClusterState


def concrete_event(inst: Instance, model: Any) -> ControllerEvent:
    """The event of ``inst`` with its symbolic parameters read from ``model``."""
    params = {k: V.concretize(v, model) for k, v in inst.params}
    return EVENTS_BY_KIND[inst.kind](**params)


def _leaves(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _leaves(v, f"{path}.{k}" if path else str(k), out)
    else:
        out[path] = value


def state_diff(before: ClusterState, after: ClusterState) -> list[str]:
    """``path: before → after`` for every leaf of the canonical JSON that differs."""
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _leaves(codec.encode(before), "", a)
    _leaves(codec.encode(after), "", b)
    absent = "(absent)"
    for side, other in ((a, b), (b, a)):
        for k in [k for k, v in side.items() if v in ({}, [])]:
            if any(o.startswith(k + ".") for o in other):
                del side[k]  # an empty map on one side, entries on the other: the entries say it all
    return [
        f"{k}: {json.dumps(a.get(k, absent))} → {json.dumps(b.get(k, absent))}"
        for k in sorted(set(a) | set(b))
        if a.get(k, absent) != b.get(k, absent)
    ]


def describe(before: ClusterState, event: ControllerEvent, after: ClusterState, family: str) -> str:
    diff = state_diff(before, after) or ["(no change)"]
    return "\n".join(
        [
            f"counterexample to induction ({family}): event {event.kind} {codec.dumps(event)}",
            f"  before: {codec.dumps(before)}",
            "  after (changes):",
            *(f"    {line}" for line in diff),
        ]
    )


def show_cti(fam: Family, inst: Instance, post: Any, model: Any) -> str:
    """The CTI of ``model``: both states and the event, readable."""
    before = V.concretize(fam.state, model)
    after = V.concretize(post, model)
    return describe(before, concrete_event(inst, model), after, fam.shape.label)
