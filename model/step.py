"""Run one controller step of the spec: bind an event to its action, check the guard, evaluate the effect.

``SpecMachine(profile).step(state, event)`` is the spec's answer to "what does a correct controller do
with this event in this state": a ``StepResult`` (post-state, requests sent, per-element failures).
Actions are compiled once per profile.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from functools import cache

from kcspec.model.codecache import compile_unit
from kcspec.model.codegen import FastCompiled
from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.events import ControllerEvent
from kcspec.spec.profiles import Profile, get_profile
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.work import Work


class EventNotEnabled(ValueError):
    """The event cannot happen in this state (the action's guard is false)."""


@dataclasses.dataclass(frozen=True)
class CompiledAction:
    action: L.Action
    guard: FastCompiled
    effect: FastCompiled
    params: Callable[[ControllerEvent], tuple[object, ...]] = lambda _: ()
    """The event's parameters the action binds, in order (``params_of``)."""


def params_of(action: L.Action) -> Callable[[ControllerEvent], tuple[object, ...]]:
    """The function reading an event's values of ``action``'s parameters, in order: one ``operator.attrgetter`` (a
    call of C code; the explorer asks a guard a million times per minute), its single value made a tuple."""
    names = tuple(p.name for p in action.params)
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda event: (one(event),)
    return operator.attrgetter(*names)


class SpecMachine:
    """The spec of one profile as an executable state machine."""

    def __init__(self, profile: Profile | str) -> None:
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.actions = _compiled_actions(self.profile.name)

    def action_for(self, event: ControllerEvent) -> CompiledAction:
        try:
            return self.actions[event.kind]
        except KeyError:
            raise EventNotEnabled(
                f"event {event.kind} has no action in profile {self.profile.name}"
            ) from None

    @staticmethod
    def _args(state: ClusterState, event: ControllerEvent, ca: CompiledAction) -> tuple[object, ...]:
        """The values of the action's free variables, in order: the state, then the event's parameters."""
        return (state, *ca.params(event))

    def enabled(self, state: ClusterState, event: ControllerEvent) -> bool:
        ca = self.actions.get(event.kind)
        return ca is not None and bool(ca.guard.call(state, *ca.params(event)))

    def step(self, state: ClusterState, event: ControllerEvent, *, guard_checked: bool = False) -> StepResult:
        """The spec's step; ``EventNotEnabled`` when the guard is false. ``guard_checked``: the caller has just
        found ``enabled(state, event)`` true, so the guard is not evaluated again (the explorer asks every
        candidate's guard first)."""
        ca = self.action_for(event)
        args = self._args(state, event, ca)
        if not guard_checked and not ca.guard.call(*args):
            raise EventNotEnabled(f"{event.kind} is not enabled in this state ({ca.action.section})")
        work = ca.effect.call(*args)
        if not isinstance(work, Work):
            raise TypeError(f"action {ca.action.name} evaluated to {type(work).__name__}, not Work")
        return StepResult(state=work.state, requests=work.sent, failures=work.failures, answers=work.answers)


@cache
def _compiled_actions(profile_name: str) -> dict[str, CompiledAction]:
    profile = get_profile(profile_name)
    actions = build_actions(profile)
    exprs: dict[str, tuple[L.Expr, tuple[str, ...]]] = {}
    for name, action in actions.items():
        free = ("s", *(p.name for p in action.params))
        exprs[f"{name}.guard"] = (action.guard, free)
        exprs[f"{name}.effect"] = (action.effect, free)
    compiled = compile_unit("actions", profile.name, exprs)
    out: dict[str, CompiledAction] = {}
    for name, action in actions.items():
        out[name] = CompiledAction(
            action, compiled[f"{name}.guard"], compiled[f"{name}.effect"], params_of(action)
        )
    return out
