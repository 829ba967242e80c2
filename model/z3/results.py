"""The outcome of one proof, and the solver call every proof goes through.

A lemma is proved by asserting its negation next to its assumptions and getting ``unsat``; the
symbolic evaluator's obligations (see ``symbolic.py``) are part of every goal, so a proof never rests
on a term that means something other than what the Python backend computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.model.z3.symbolic import Obligation

STATUSES = ("proved", "counterexample", "expected-counterexample", "skipped")


@dataclass(frozen=True)
class ProofResult:
    """One proof: ``status`` is one of ``STATUSES``; ``detail`` says what was proved over which domain, or
    carries the readable counterexample (and, for an expected one, the reason it is expected)."""

    name: str
    section: str
    status: str
    seconds: float
    detail: str
    span: str = ""
    """Where ``spec/`` writes the rule the proof is about (``spec/elections.py:102``), when there is one."""

    @property
    def failed(self) -> bool:
        """An unexpected counterexample: the proof suite fails."""
        return self.status == "counterexample"


@dataclass(frozen=True)
class Refutation:
    """Why a goal does not follow: a model of ``assumptions ∧ ¬goal`` and which obligation (if any) it breaks."""

    model: Any
    broken_obligation: str | None


def check_goal(
    solver: z3.Solver, goal: V.Bool, obligations: Sequence[Obligation], timeout_ms: int = 60_000
) -> Refutation | None:
    """``None`` when the solver's assertions imply ``goal`` and every obligation; else a refutation.

    Raises ``TimeoutError`` when Z3 answers ``unknown``: a proof that did not finish is never a pass.
    """
    solver.push()
    try:
        solver.set("timeout", timeout_ms)
        parts = [V.bool_term(goal), *(V.bool_term(o.condition) for o in obligations)]
        solver.add(z3.Not(z3.And(*parts)) if len(parts) > 1 else z3.Not(parts[0]))
        answer = solver.check()
        if answer == z3.unsat:
            return None
        if answer != z3.sat:
            raise TimeoutError(f"Z3 answered {answer} ({solver.reason_unknown()})")
        model = solver.model()
        broken = next(
            (
                o.reason
                for o in obligations
                if z3.is_false(model.eval(V.bool_term(o.condition), model_completion=True))
            ),
            None,
        )
        return Refutation(model, broken)
    finally:
        solver.pop()
