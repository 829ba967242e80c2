"""The finite event instances of the generated module's ``Next``: every spec action with every combination of
values of its parameters' domains (``domains.py``), in the module's action order.

The explorer's TLA+-model mode tries exactly these in every state (``conformance/selfcheck/explore/tla_model.py``),
and a TLC counterexample's steps are recovered from them (``counterexample.py``): TLC prints an action's label
without its arguments, so the one instance whose spec step leads from one printed state to the next is the step.
"""

from __future__ import annotations

import itertools
from functools import cache

from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.domains import param_domain
from kcspec.model.tla.module import action_order
from kcspec.spec.actions import build_actions
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.profiles import get_profile


@cache
def model_events(profile: str, config: ModelConfig) -> tuple[ControllerEvent, ...]:
    """Every event instance of the module's ``Next``, in the module's action order."""
    actions = sorted(build_actions(get_profile(profile)).values(), key=lambda a: action_order(a.name))
    out: list[ControllerEvent] = []
    for a in actions:
        cls = EVENTS_BY_KIND[a.name]
        names = [p.name for p in a.params]
        domains = [param_domain(a.name, p).values(config) for p in a.params]
        for combo in itertools.product(*domains):
            out.append(cls(**dict(zip(names, combo, strict=True))))
    return tuple(out)


@cache
def action_params(profile: str) -> dict[str, tuple[str, ...]]:
    """Each action's own parameter names, in the order the module's action takes them (not the event
    dataclass's fields, which also hold ``kind``, ``section`` and ``exercises``)."""
    return {name: tuple(p.name for p in a.params) for name, a in build_actions(get_profile(profile)).items()}


__all__ = ["action_params", "model_events"]
