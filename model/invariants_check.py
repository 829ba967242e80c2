"""Evaluate the spec's §11 invariants on states and steps, compiled once per profile."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from kcspec.model.codecache import compile_unit
from kcspec.model.codegen import FastCompiled
from kcspec.spec.lang import Expr, Invariant, SeqLit
from kcspec.spec.profiles import get_profile
from kcspec.spec.requests import Request
from kcspec.spec.state import ClusterState


@dataclass(frozen=True)
class Violation:
    name: str
    section: str
    doc: str
    span: str = ""
    """Where ``spec/`` writes the invariant (``spec/invariants.py:162``)."""

    def __str__(self) -> str:
        where = f" [{self.span}]" if self.span else ""
        return f"{self.name} ({self.section}): {self.doc}{where}"


class InvariantChecker:
    """All state and step invariants of one profile."""

    def __init__(self, profile: str) -> None:
        self.profile = get_profile(profile).name
        self.state_invariants, self.step_invariants = _compiled(self.profile)
        self._all_state, self._all_step = _fused(self.profile)

    @property
    def names(self) -> list[str]:
        return [inv.name for inv, _ in self.state_invariants + self.step_invariants]

    def check_state(self, s: ClusterState) -> list[Violation]:
        verdicts = self._all_state.call(s)
        return [
            _violation(inv) for (inv, _), ok in zip(self.state_invariants, verdicts, strict=True) if not ok
        ]

    def check_step(self, s: ClusterState, s2: ClusterState, requests: frozenset[Request]) -> list[Violation]:
        verdicts = self._all_step.call(s, s2, requests)
        return [
            _violation(inv) for (inv, _), ok in zip(self.step_invariants, verdicts, strict=True) if not ok
        ]


def _violation(inv: Invariant) -> Violation:
    return Violation(inv.name, inv.section, inv.doc, "" if inv.span is None else str(inv.span))


_STATE_FREE = ("s",)
_STEP_FREE = ("s", "s2", "requests")


@cache
def _unit(profile: str) -> tuple[list[Invariant], list[Invariant], dict[str, FastCompiled]]:
    """The profile's state and step invariants, and one compiled unit (``model/codecache.py``) holding each of
    them (``state:NAME``, ``step:NAME``) and the two fused checks (``all-state``, ``all-step``)."""
    from kcspec.spec.invariants import invariants

    state: list[Invariant] = []
    step: list[Invariant] = []
    for inv in invariants(get_profile(profile)):
        if inv.kind == "state":
            state.append(inv)
        elif inv.kind == "step":
            step.append(inv)
        else:
            raise ValueError(f"invariant {inv.name} has unknown kind {inv.kind!r}")
    exprs: dict[str, tuple[Expr, tuple[str, ...]]] = {}
    for inv in state:
        exprs[f"state:{inv.name}"] = (inv.expr, _STATE_FREE)
    for inv in step:
        exprs[f"step:{inv.name}"] = (inv.expr, _STEP_FREE)
    # All state invariants, and all step invariants, each as one function returning the sequence of their
    # verdicts (in order): one call per state or step instead of one per invariant, and a sub-expression several
    # invariants share is computed once. An invariant that cannot be evaluated raises the interpreter's error,
    # as its own function would (the verdicts are evaluated in order).
    exprs["all-state"] = (SeqLit(tuple(inv.expr for inv in state)), _STATE_FREE)
    exprs["all-step"] = (SeqLit(tuple(inv.expr for inv in step)), _STEP_FREE)
    return state, step, compile_unit("invariants", profile, exprs)


def _compiled(
    profile: str,
) -> tuple[list[tuple[Invariant, FastCompiled]], list[tuple[Invariant, FastCompiled]]]:
    state, step, unit = _unit(profile)
    return (
        [(inv, unit[f"state:{inv.name}"]) for inv in state],
        [(inv, unit[f"step:{inv.name}"]) for inv in step],
    )


def _fused(profile: str) -> tuple[FastCompiled, FastCompiled]:
    """All state invariants, and all step invariants, each compiled as one function (``_unit``)."""
    unit = _unit(profile)[2]
    return unit["all-state"], unit["all-step"]
