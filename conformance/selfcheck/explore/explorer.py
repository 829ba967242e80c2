"""Breadth-first exploration of the reference controller, checking refinement and invariants on every step.

From the bootstrapped configuration, every candidate event the spec enables is applied to every
reachable state, up to the depth bound:
* **refinement**: the reference controller, loaded with the state, must accept exactly the events the
  spec accepts and answer each with the spec's ``StepResult`` (same post-state, same requests, same
  failures);
* **invariants**: every §11 state invariant in every reached state and every step invariant on every
  transition.
States are deduplicated by a compact key, up to broker-id symmetry when enabled. Because the search is
breadth-first, the first violation found has a shortest trace; it is rebuilt from parent pointers.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.explore.collect import young_collections_only
from kcspec.conformance.selfcheck.explore.stats import ExploreStats, record_coverage
from kcspec.conformance.selfcheck.explore.stepper import Problem, Stepper
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.invariants_check import Violation
from kcspec.model.step import SpecMachine
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep

__all__ = [
    "ExploreResult",
    "ExploreStats",
    "Finding",
    "SearchSpace",
    "explore",
    "record_coverage",
    "search",
    "space_of",
]


@dataclass(frozen=True)
class Finding:
    kind: str  # refinement | enabled | invariant | crash
    message: str
    events: tuple[ControllerEvent, ...]
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


@dataclass
class ExploreResult:
    config: ExploreConfig | None
    """The bounded configuration explored (``None`` for a search space built another way, e.g. a TLA+ model)."""
    stats: ExploreStats
    finding: Finding | None
    trace: Trace | None
    profile: str = ""
    description: str = ""
    states: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] | None = None
    """With ``keep_states``: every distinct state's key → (parent key, event), to rebuild a path to it. Without
    symmetry reduction the key of a state is the ``ClusterState`` itself."""
    prefix: tuple[ControllerEvent, ...] = ()

    def path_to(self, key: Hashable) -> tuple[ControllerEvent, ...]:
        """The events from the initial state to the state with ``key`` (needs ``keep_states``)."""
        if self.states is None:
            raise ValueError("the exploration did not keep its states")
        return (*self.prefix, *_path(self.states, key))


@dataclass(frozen=True)
class SearchSpace:
    """What a breadth-first search explores: from the state the ``prefix`` events reach, the ``candidates`` of
    each state (the spec's guards decide which are enabled), keeping only successors that satisfy ``keep``
    (the model's bounds), up to ``depth`` (``None``: to the fixed point), up to broker-id symmetry over
    ``brokers`` when ``symmetry`` is on."""

    profile: str
    description: str
    prefix: tuple[ControllerEvent, ...]
    candidates: Callable[[ClusterState], Sequence[ControllerEvent]]
    brokers: int
    symmetry: bool
    depth: int | None
    max_states: int
    keep: Callable[[ClusterState], bool] | None = None


def space_of(cfg: ExploreConfig) -> SearchSpace:
    """The search space of a bounded configuration (``kcspec explore``)."""
    return SearchSpace(
        profile=cfg.profile,
        description=cfg.describe(),
        prefix=bootstrap(cfg),
        candidates=lambda s: candidates(s, cfg),
        brokers=cfg.brokers,
        symmetry=cfg.symmetry,
        depth=cfg.depth,
        max_states=cfg.max_states,
    )


def explore(
    cfg: ExploreConfig, progress: Callable[[ExploreStats], None] | None = None, workers: int = 1
) -> ExploreResult:
    """Explore the bounded configuration ``cfg`` on ``workers`` processes (raises ``ValueError`` naming a bad
    option)."""
    cfg.validate()
    result = search(space_of(cfg), progress, workers=workers)
    result.config = cfg
    return result


def search(
    space: SearchSpace,
    progress: Callable[[ExploreStats], None] | None = None,
    keep_states: bool = False,
    workers: int = 1,
) -> ExploreResult:
    """Breadth-first search of ``space``, checking refinement and invariants on every step; with ``workers`` > 1
    on that many processes (``parallel.py``; the states are then not kept)."""
    if workers != 1:
        if keep_states:
            raise ValueError("keeping every state needs one worker (--workers 1)")
        from kcspec.conformance.selfcheck.explore.parallel import search_parallel

        return search_parallel(space, workers, progress)
    with young_collections_only():
        return _search(space, progress, keep_states)


def start_state(
    space: SearchSpace, spec: SpecMachine, check_state: Callable[[ClusterState], Sequence[Violation]]
) -> tuple[ClusterState, list[ControllerEvent], Finding | None]:
    """Where every search (one process, ``--workers``, ``--spark``) starts: the space's prefix applied to the
    empty state, the prefix, and the finding when that state already violates an invariant."""
    state = ClusterState()
    prefix: list[ControllerEvent] = []
    for ev in space.prefix:
        prefix.append(ev)
        state = spec.step(state, ev).state
    bad = check_state(state)
    if not bad:
        return state, prefix, None
    message = "the bootstrapped state violates an invariant"
    return state, prefix, Finding("invariant", message, tuple(prefix), violations=tuple(bad))


def _search(
    space: SearchSpace, progress: Callable[[ExploreStats], None] | None, keep_states: bool
) -> ExploreResult:
    stats = ExploreStats()
    stepper = Stepper(space.profile, space.candidates, space.brokers, space.symmetry, space.keep, stats)
    spec, checker, key = stepper.spec, stepper.checker, stepper.key

    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, checker.check_state)
    root = key(state)
    parents: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] = {root: (None, None)}
    frontier: deque[tuple[ClusterState, Hashable, int]] = deque([(state, root, 0)])
    stats.distinct_states = 1
    if finding0 is not None:
        return finish(space, stats, finding0, spec, prefix, [], start)

    def found(
        skey: Hashable,
        ev: ControllerEvent,
        kind: str,
        message: str,
        differences: tuple[Difference, ...] = (),
        violations: tuple[Violation, ...] = (),
    ) -> ExploreResult:
        return _finding(
            space, stats, spec, prefix, parents, skey, ev, start, kind, message, differences, violations
        )

    while frontier:
        state, skey, depth = frontier.popleft()
        if space.depth is not None and depth >= space.depth:
            continue
        for t in stepper.transitions(state):
            if isinstance(t, Problem):
                return found(skey, t.event, t.kind, t.message, differences=t.differences)
            ev, nkey = t.event, t.key
            # one look-up of the key decides whether the successor is new (it is recorded at once: a violation
            # ends the search, whose trace is rebuilt from the parent ``skey``, not from this entry)
            new = False
            if nkey is not None:
                known = len(parents)
                parents.setdefault(nkey, (skey, ev))
                new = len(parents) > known
            bad = checker.check_state(t.state) + list(t.step_violations) if new else list(t.step_violations)
            if bad:
                return found(
                    skey,
                    ev,
                    "invariant",
                    "invariant violated: " + ", ".join(v.name for v in bad),
                    violations=tuple(bad),
                )
            if not new:
                continue
            stats.distinct_states += 1
            stats.depth_reached = max(stats.depth_reached, depth + 1)
            frontier.append((t.state, nkey, depth + 1))
            if stats.distinct_states >= space.max_states:
                stats.truncated = True
                stats.frontier_left = len(frontier)
                return finish(space, stats, None, spec, prefix, [], start, parents if keep_states else None)
        if progress is not None and stats.transitions % 50 == 0:
            stats.seconds = time.perf_counter() - start
            progress(stats)
    return finish(space, stats, None, spec, prefix, [], start, parents if keep_states else None)


def _path(
    parents: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]], k: Hashable
) -> list[ControllerEvent]:
    events: list[ControllerEvent] = []
    cur: Hashable | None = k
    while cur is not None:
        parent, ev = parents[cur]
        if ev is not None:
            events.append(ev)
        cur = parent
    return list(reversed(events))


def _finding(
    space: SearchSpace,
    stats: ExploreStats,
    spec: SpecMachine,
    prefix: list[ControllerEvent],
    parents: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]],
    skey: Hashable,
    ev: ControllerEvent,
    start: float,
    kind: str,
    message: str,
    differences: tuple[Difference, ...] = (),
    violations: tuple[Violation, ...] = (),
) -> ExploreResult:
    path = [*_path(parents, skey), ev]
    finding = Finding(kind, message, tuple(prefix + path), differences, violations)
    return finish(space, stats, finding, spec, prefix, path, start)


def finish(
    space: SearchSpace,
    stats: ExploreStats,
    finding: Finding | None,
    spec: SpecMachine,
    prefix: list[ControllerEvent],
    path: list[ControllerEvent],
    start: float,
    states: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] | None = None,
) -> ExploreResult:
    """The result of a search: its statistics, and for a finding the trace of ``prefix`` + ``path`` replayed on
    the spec."""
    stats.seconds = time.perf_counter() - start
    trace = None
    if finding is not None:
        steps: list[TraceStep] = []
        state = ClusterState()
        for ev in [*prefix, *path]:
            try:
                result = spec.step(state, ev)
            except Exception:
                steps.append(TraceStep(ev))
                break
            steps.append(TraceStep(ev, result))
            state = result.state
        trace = Trace(
            space.profile,
            ClusterState(),
            tuple(steps),
            note=f"explore {space.description}: {finding.message}",
        )
    return ExploreResult(None, stats, finding, trace, space.profile, space.description, states, tuple(prefix))
