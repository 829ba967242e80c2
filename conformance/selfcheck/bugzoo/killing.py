"""The killing suite for generic mutants: strong but cheap, the same for every mutant.

For both profiles, cheapest first, stopping at the first kill:

1. **scenarios** — every built-in scenario cross-checked against the spec, then replayed with the reference
   controller's TRACE logging on (another code path, the one the stateful machine takes);
2. **guards** — near-miss variants of every scenario event, enabledness compared with the spec
   (``guard_probe``: the other checks only ever offer events the spec enables);
3. **vectors** — the conformance vectors against the mutant served in-process;
4. **context** — the ladder's stale-context probes (``stale_context``);
5. **explore** — the ladder's exploration configurations (3 brokers × 1 partition: RF 2, RF 2 with every fault
   family, RF 3; depth 2);
6. **hypothesis** — a short seeded run of the stateful machine (a failure counts once confirmed by replay).

The unmutated controller passes all of it (``baseline``), so a divergence is the mutant's. A crash of the checked
controller counts as a kill, and so does a run longer than the time limit (an endless loop): the usual
convention of mutation testing. A survivor is then re-run through the scenarios and vectors under a line
tracer (``exercise``) to tell "the mutated line never ran" from "it ran and nothing observable changed".
"""

from __future__ import annotations

import functools
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from kcspec.conformance.selfcheck.bugzoo.checks import (
    LadderConfig,
    check_context,
    check_explore,
    check_hypothesis,
    check_vectors,
)
from kcspec.conformance.selfcheck.bugzoo.mutant import Mutant
from kcspec.conformance.selfcheck.bugzoo.patching import Patch, rewrap, unwrap
from kcspec.spec.events import ControllerEvent

PROFILES = ("kafka-2.8", "kafka-1.1")
STAGES = ("scenarios", "guards", "vectors", "context", "explore", "hypothesis")
SUITE = LadderConfig(budget=60.0, seed=0, hypothesis_examples=20, hypothesis_seconds=8.0, explore_depth=2)
"""The ladder settings the suite uses: a 20-example Hypothesis run per profile (seeds 0 and 1)."""


class MutantTimeout(BaseException):
    """The mutant's killing run exceeded its time limit (an endless loop, usually). A ``BaseException``, so that
    no ``except Exception`` of the checks (crash reporting, Hypothesis) swallows it."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``MutantTimeout`` in the main thread once ``seconds`` have passed."""

    def expire(_signum: int, _frame: object) -> None:
        raise MutantTimeout(f"more than {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def as_mutant(name: str, patch: Patch, profile: str) -> Mutant:
    """A generic mutation as a ``Mutant`` of one profile, so the ladder's checks can run it."""
    return Mutant(name, "generic", profile, "—", "—", name, patch.target, (), lambda: (patch,))


def _scenarios(mutant: Mutant) -> str | None:
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    for scenario in SCENARIOS:
        with mutant.active():
            out = crosscheck(scenario.name, mutant.profile, scenario.events(mutant.profile))
        d = out.divergence
        if d is not None:
            return f"{scenario.name} [{mutant.profile}] step {d.step}: {d.kind}: {d.message}"
    for scenario in SCENARIOS:
        with mutant.active():
            found = traced_replay(mutant.profile, scenario.events(mutant.profile))
        if found is not None:
            return f"{scenario.name} [{mutant.profile}, TRACE logging] {found}"
    return None


def traced_replay(profile: str, events: tuple[ControllerEvent, ...]) -> str | None:
    """The scenario once more with the reference controller's TRACE logging on (the stateful machine's setting,
    which takes other code paths: the state-change log is written partition by partition); the first step whose
    result differs from the spec's."""
    from kcspec.conformance.selfcheck.crosscheck import diff_results
    from kcspec.model.step import SpecMachine
    from kcspec.reference_impl import ReferenceController
    from kcspec.spec.state import ClusterState

    spec = SpecMachine(profile)
    ref = ReferenceController(profile, trace=True)
    state = ClusterState()
    for i, event in enumerate(events, start=1):
        expected = spec.step(state, event)
        try:
            actual = ref.handle(event)
        except Exception as exc:  # a crash of the checked controller is a finding
            return f"step {i}: the reference controller crashed: {type(exc).__name__}: {exc}"
        if diff_results(expected, actual):
            return f"step {i}: the result differs from the spec"
        state = expected.state
    return None


def _ladder_stage(check: Callable[[Mutant, LadderConfig, float], Any]) -> Callable[[Mutant], str | None]:
    def stage(mutant: Mutant) -> str | None:
        cfg = SUITE if mutant.profile == PROFILES[0] else replace(SUITE, seed=1)
        detection, _note = check(mutant, cfg, time.perf_counter() + SUITE.budget)
        if detection is None:
            return None
        return f"{detection.detail} [{mutant.profile}]: {detection.message}"

    return stage


def _guards(mutant: Mutant) -> str | None:
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.bugzoo.guard_probe import probe

    for scenario in SCENARIOS:
        with mutant.active():
            found = probe(mutant.profile, scenario.events(mutant.profile))
        if found is not None:
            return f"{scenario.name} [{mutant.profile}] {found}"
    return None


STAGE_FUNCTIONS: dict[str, Callable[[Mutant], str | None]] = {
    "scenarios": _scenarios,
    "guards": _guards,
    "vectors": _ladder_stage(check_vectors),
    "context": _ladder_stage(check_context),
    "explore": _ladder_stage(check_explore),
    "hypothesis": _ladder_stage(check_hypothesis),
}


def killing_suite(name: str, patch: Patch, stages: tuple[str, ...] = STAGES) -> tuple[str, str] | None:
    """(stage, detail) of the first kill of the mutation ``patch``, or ``None`` if it survives every stage."""
    for stage in stages:
        for profile in PROFILES:
            found = STAGE_FUNCTIONS[stage](as_mutant(name, patch, profile))
            if found is not None:
                return stage, found
    return None


def baseline() -> list[str]:
    """What the unmutated controller fails of the suite (must be empty for any kill to mean anything)."""
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.bugzoo.checks import explore_configs
    from kcspec.conformance.selfcheck.bugzoo.guard_probe import probe
    from kcspec.conformance.selfcheck.bugzoo.zoo import vector_problems
    from kcspec.conformance.selfcheck.explore.explorer import explore

    problems: list[str] = []
    for profile in PROFILES:
        for scenario in SCENARIOS:
            found = traced_replay(profile, scenario.events(profile))
            if found is not None:
                problems.append(f"{scenario.name} [{profile}, TRACE logging] {found}")
            found = probe(profile, scenario.events(profile))
            if found is not None:
                problems.append(f"{scenario.name} [{profile}, guard probes] {found}")
        problems.extend(vector_problems(profile))
        for ecfg in explore_configs(profile, SUITE.explore_depth):
            finding = explore(ecfg).finding
            if finding is not None:
                problems.append(f"{ecfg.describe()}: {finding.kind}: {finding.message}")
    return problems


@dataclass(frozen=True)
class Exercise:
    """How often the mutated function was entered and the mutated line executed during scenarios + vectors."""

    calls: int
    line_hits: int


def exercise(patch: Patch, code: types.CodeType, line: int) -> Exercise:
    """Run the scenarios and vectors of both profiles with ``patch`` installed, counting entries into ``code``
    (or code nested in it) and executions of ``line`` there. Only calls of the patched function are traced (its
    replacement is wrapped to switch the tracer on for the call), so the run costs little more than untraced."""
    targets = {code}
    pending = [code]
    while pending:
        for const in pending.pop().co_consts:
            if isinstance(const, types.CodeType):
                targets.add(const)
                pending.append(const)
    counts = {"calls": 0, "hits": 0}

    def local(frame: types.FrameType, event: str, _arg: object) -> Any:
        if event == "line" and frame.f_lineno == line:
            counts["hits"] += 1
        return local

    def tracer(frame: types.FrameType, event: str, _arg: object) -> Any:
        if event == "call" and frame.f_code in targets:
            counts["calls"] += 1
            return local
        return None

    def traced(value: Any) -> Any:
        fn = unwrap(value)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            previous = sys.gettrace()
            sys.settrace(tracer)
            try:
                return fn(*args, **kwargs)
            finally:
                sys.settrace(previous)

        return rewrap(value, run)

    watched = Patch(patch.owner, patch.name, lambda original: traced(patch.make(original)))
    for profile in PROFILES:
        mutant = as_mutant("exercise", watched, profile)
        _scenarios(mutant)
        STAGE_FUNCTIONS["vectors"](mutant)
    return Exercise(counts["calls"], counts["hits"])
