"""A liveness counterexample of TLC read as kcspec data: the lasso as a replayable trace and the properties it
violates, each with the §12 gap that explains it when Kafka is known not to make progress there.

TLC reports "Temporal properties were violated" without naming the property; ``liveness.violated`` evaluates the
properties on the lasso's states (the spec's own premise and goal expressions) to name them. Used by
``kcspec tla check --liveness`` and by the gate's liveness check (``conformance/selfcheck/gate/tla.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.counterexample import CounterexampleError, LassoTrace, lasso_trace, state_of
from kcspec.model.tla.liveness import KnownGap, known_gap, violated
from kcspec.model.tlc.lasso import Lasso, parse_lasso
from kcspec.model.tlc.trace import TraceFormatError


class LivenessError(ValueError):
    """TLC's output holds no readable lasso, or its states do not fit the model (names the cause)."""


@dataclass(frozen=True)
class Violation:
    """One property violated for one partition or topic, and the §12 gap that explains it, if any."""

    prop: str
    subject: object
    gap: KnownGap | None

    def describe(self) -> str:
        head = f"{self.prop} violated for {self.subject}"
        if self.gap is None:
            return head + ": not a known gap of Kafka (a bug of the spec, or a gap to document)"
        return f"{head}: expected, {self.gap.ticket} ({self.gap.section}): {self.gap.explanation}"


@dataclass(frozen=True)
class LivenessFinding:
    lasso: LassoTrace
    violations: tuple[Violation, ...]
    shape: str
    """How the behaviour goes on forever, in words."""

    @property
    def expected(self) -> bool:
        """Every violation is a known gap of Kafka (and there is at least one)."""
        return bool(self.violations) and all(v.gap is not None for v in self.violations)

    def summary_lines(self) -> list[str]:
        if not self.violations:
            return [
                "TLC's lasso violates none of the properties when evaluated on its states (with the model's bounds "
                "clause, which only TLC evaluates): compare the module's properties with liveness.py"
            ]
        return [v.describe() for v in self.violations]


def read_lasso(raw_output: str, profile: str, config: ModelConfig) -> LivenessFinding:
    """The lasso of TLC's ``-tool`` output, translated and named."""
    try:
        lasso: Lasso = parse_lasso(raw_output)
    except TraceFormatError as exc:
        raise LivenessError(str(exc)) from None
    try:
        states = [state_of(s) for s in lasso.states]
        cycle_start = len(states) - 1 if lasso.stuttering or lasso.loop_to is None else lasso.loop_to - 1
        named = violated(states, cycle_start, config)
        props = sorted({p for p, _ in named})
        trace = lasso_trace(lasso, profile, prop=", ".join(props), config=config)
    except (CounterexampleError, TraceFormatError) as exc:
        raise LivenessError(str(exc)) from None
    shape = (
        "then stutters forever in its last state"
        if lasso.stuttering
        else f"then loops back to state {lasso.loop_to} forever"
    )
    last = states[-1]  # a state of the cycle
    return LivenessFinding(
        trace, tuple(Violation(p, x, known_gap(p, profile, last, x)) for p, x in named), shape
    )


__all__ = ["LivenessError", "LivenessFinding", "Violation", "read_lasso"]
