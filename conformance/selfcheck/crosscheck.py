"""Run event sequences through the declarative spec and the reference controller side by side.

At every step: both must agree whether the event can happen; their ``StepResult``s must be equal
(post-state, requests as a set, failures); the reference controller's kept gauges must equal the spec's metric
definitions on the post-state (``diff_metrics``); the spec's §11 invariants must hold in the post-state and
over the step. The first disagreement is a ``Divergence`` with a readable report and a replayable
trace (the events up to and including the diverging one, with the spec's results).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, fields
from pathlib import Path

from kcspec.conformance.protocol.messages import StepReply
from kcspec.conformance.reply_diff import Difference, diff_replies
from kcspec.model.invariants_check import InvariantChecker, Violation
from kcspec.model.metrics import spec_metrics
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController
from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import ControllerMetrics, StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep

MAX_DIFF_LINES = 40


def diff_results(expected: StepResult, actual: StepResult) -> list[Difference]:
    """Every difference between two step results (state, requests as a set, failures and answers as sets)."""
    if _equal(expected, actual) or expected == actual:  # the common case needs no structural diff
        return []
    return diff_replies(_reply(expected), _reply(actual))


def diff_metrics(profile: str, state: ClusterState, reported: ControllerMetrics) -> list[Difference]:
    """The gauges a controller reports after a step against the spec's definitions on the step's post-state
    ``state``: one ``$.metrics.<name>`` difference per gauge that is not what the state says it must be."""
    expected = spec_metrics(profile, state)
    if expected == reported:
        return []
    return [
        Difference(f"$.metrics.{f.name}", str(getattr(expected, f.name)), str(getattr(reported, f.name)))
        for f in fields(ControllerMetrics)
        if getattr(expected, f.name) != getattr(reported, f.name)
    ]


def _equal(expected: StepResult, actual: StepResult) -> bool:
    """True only if ``expected == actual`` (False: not found so here). The failures and requests compare as sets;
    each part of the state (ZooKeeper, controller context, config), unless the very same record, by its fields'
    dictionary in one C-level comparison instead of the dataclass ``__eq__`` (which builds a tuple of every field of
    both records first): records of one class with equal field dictionaries have equal fields."""
    if (
        expected.failures != actual.failures
        or expected.requests != actual.requests
        or expected.answers != actual.answers
    ):
        return False
    ours, theirs = expected.state, actual.state
    if ours is theirs:
        return True
    for mine, other in (
        (ours.zk, theirs.zk),
        (ours.controller, theirs.controller),
        (ours.config, theirs.config),
    ):
        if mine is not other and (type(mine) is not type(other) or vars(mine) != vars(other)):
            return False
    return True


def _reply(result: StepResult) -> StepReply:
    return StepReply(
        state=result.state, requests=result.requests, failures=result.failures, answers=result.answers
    )


@dataclass(frozen=True)
class Divergence:
    step: int
    event: ControllerEvent
    kind: str  # "enabled" | "result" | "invariant" | "error"
    message: str
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


@dataclass(frozen=True)
class CrossCheckOutcome:
    name: str
    profile: str
    steps_run: int
    trace: Trace
    divergence: Divergence | None

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def report(self) -> str:
        """A person-readable account of the divergence (events so far, then what differed)."""
        if self.divergence is None:
            return f"{self.name} [{self.profile}]: {self.steps_run} steps, spec and reference agree"
        d = self.divergence
        lines = [
            f"{self.name} [{self.profile}]: step {d.step} ({d.event.kind}) — {d.message}",
            "events:",
        ]
        for i, ev in enumerate(self.trace.events, start=1):
            marker = "→" if i == d.step else " "
            lines.append(f"  {marker} {i:2d}. {codec.dumps(ev)}")
        if d.differences:
            lines.append("spec (expected) vs reference controller (actual):")
            lines.extend(f"  - {diff.render()}" for diff in d.differences[:MAX_DIFF_LINES])
            if len(d.differences) > MAX_DIFF_LINES:
                lines.append(f"  … and {len(d.differences) - MAX_DIFF_LINES} more differences")
        for v in d.violations:
            lines.append(f"  invariant violated: {v}")
        return "\n".join(lines)

    def write(self, directory: Path) -> Path:
        """Write the counterexample trace as canonical JSON and JSON Lines; returns the JSON path."""
        directory.mkdir(parents=True, exist_ok=True)
        stem = f"{self.name}-{self.profile}"
        path = directory / f"{stem}.trace.json"
        path.write_text(self.trace.to_json() + "\n", encoding="utf-8")
        (directory / f"{stem}.trace.jsonl").write_text(
            "\n".join(self.trace.to_jsonl()) + "\n", encoding="utf-8"
        )
        (directory / f"{stem}.report.txt").write_text(self.report() + "\n", encoding="utf-8")
        return path


def crosscheck(
    name: str,
    profile: str,
    events: tuple[ControllerEvent, ...],
    initial: ClusterState | None = None,
    *,
    check_invariants: bool = True,
) -> CrossCheckOutcome:
    state = initial if initial is not None else ClusterState()
    spec = SpecMachine(profile)
    ref = ReferenceController(profile, state)
    checker = InvariantChecker(profile) if check_invariants else None
    steps: list[TraceStep] = []

    def outcome(div: Divergence | None, event: ControllerEvent | None = None) -> CrossCheckOutcome:
        all_steps = [*steps, TraceStep(event)] if event is not None else steps
        trace = Trace(profile=profile, initial=initial or ClusterState(), steps=tuple(all_steps), note=name)
        return CrossCheckOutcome(name, profile, len(steps), trace, div)

    for i, event in enumerate(events, start=1):
        try:
            spec_on, ref_on = spec.enabled(state, event), ref.enabled(event)
        except Exception as exc:  # a crash in either implementation is a finding, not a runner failure
            return outcome(Divergence(i, event, "error", _crash(exc)), event)
        if spec_on != ref_on:
            who = "the spec" if spec_on else "the reference controller"
            return outcome(Divergence(i, event, "enabled", f"only {who} accepts this event here"), event)
        if not spec_on:
            return outcome(
                Divergence(i, event, "enabled", "neither accepts this event here (bad scenario)"), event
            )
        try:
            expected = spec.step(state, event)
        except Exception as exc:
            return outcome(Divergence(i, event, "error", "the spec failed: " + _crash(exc)), event)
        try:
            actual = ref.handle(event)
        except Exception as exc:
            return outcome(
                Divergence(i, event, "error", "the reference controller failed: " + _crash(exc)), event
            )
        differences = diff_results(expected, actual) or diff_metrics(profile, expected.state, ref.metrics())
        if differences:
            steps.append(TraceStep(event, expected))
            return outcome(
                Divergence(i, event, "result", f"{len(differences)} differences", tuple(differences))
            )
        if checker is not None:
            violations = checker.check_state(expected.state) + checker.check_step(
                state, expected.state, expected.requests
            )
            if violations:
                steps.append(TraceStep(event, expected))
                names = ", ".join(v.name for v in violations)
                return outcome(
                    Divergence(
                        i, event, "invariant", f"invariant violated: {names}", violations=tuple(violations)
                    )
                )
        steps.append(TraceStep(event, expected))
        state = expected.state
    return outcome(None)


def _crash(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
