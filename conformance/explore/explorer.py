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
from collections import Counter, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from kcspec.conformance.audit.reference_parser import parse_lines
from kcspec.conformance.crosscheck import diff_results
from kcspec.conformance.explore.config import ExploreConfig
from kcspec.conformance.explore.events import bootstrap, candidates
from kcspec.conformance.reply_diff import Difference
from kcspec.model.invariants_check import InvariantChecker, Violation
from kcspec.model.step import SpecMachine
from kcspec.model.symmetry import canonical_key, exact_key, permutations
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import FailureReason, StepResult
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep


@dataclass(frozen=True)
class Finding:
    kind: str  # refinement | enabled | invariant | crash
    message: str
    events: tuple[ControllerEvent, ...]
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


@dataclass
class ExploreStats:
    distinct_states: int = 0
    transitions: int = 0
    depth_reached: int = 0
    seconds: float = 0.0
    frontier_left: int = 0
    truncated: bool = False
    replica_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    partition_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    invalid_attempts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ExploreResult:
    config: ExploreConfig
    stats: ExploreStats
    finding: Finding | None
    trace: Trace | None


def record_coverage(stats: ExploreStats, log_lines: list[str], result: StepResult) -> None:
    """Count the replica/partition transitions of one step from the controller's state-change log (TRACE level, so
    self-loops and intermediate states count), and the rejected (invalid) transitions from its failures."""
    for parsed in parse_lines("state-change.log", log_lines):
        if parsed.status != "record" or parsed.kind not in ("replica_transition", "partition_transition"):
            continue
        edge = (str(parsed.fields.get("from_state")), str(parsed.fields.get("to_state")))
        if parsed.kind == "replica_transition":
            stats.replica_edges[edge] += 1
        else:
            stats.partition_edges[edge] += 1
    for f in result.failures:
        if f.reason is FailureReason.InvalidTransition:
            stats.invalid_attempts[(f.machine, f.from_state, f.target)] += 1


def explore(cfg: ExploreConfig, progress: Callable[[ExploreStats], None] | None = None) -> ExploreResult:
    cfg.validate()
    spec = SpecMachine(cfg.profile)
    checker = InvariantChecker(cfg.profile)
    ref = ReferenceController(cfg.profile, trace=True)
    perms = permutations(cfg.brokers) if cfg.symmetry else []

    canonical: dict[Hashable, Hashable] = {}

    def key(state: ClusterState) -> Hashable:
        exact = exact_key(state)
        if not perms:
            return exact
        hit = canonical.get(exact)
        if hit is None:
            hit = canonical[exact] = canonical_key(state, perms)
        return hit

    stats = ExploreStats()
    start = time.perf_counter()
    state = ClusterState()
    prefix: list[ControllerEvent] = []
    for ev in bootstrap(cfg):
        prefix.append(ev)
        state = spec.step(state, ev).state

    root = key(state)
    parents: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] = {root: (None, None)}
    frontier: deque[tuple[ClusterState, Hashable, int]] = deque([(state, root, 0)])
    stats.distinct_states = 1
    violations0 = checker.check_state(state)
    if violations0:
        finding = Finding(
            "invariant",
            "the bootstrapped state violates an invariant",
            tuple(prefix),
            violations=tuple(violations0),
        )
        return _result(cfg, stats, finding, spec, prefix, [], start)

    def found(
        skey: Hashable,
        ev: ControllerEvent,
        kind: str,
        message: str,
        differences: tuple[Difference, ...] = (),
        violations: tuple[Violation, ...] = (),
    ) -> ExploreResult:
        return _finding(
            cfg, stats, spec, prefix, parents, skey, ev, start, kind, message, differences, violations
        )

    while frontier:
        state, skey, depth = frontier.popleft()
        if depth >= cfg.depth:
            continue
        for ev in candidates(state, cfg):
            try:
                enabled = spec.enabled(state, ev)
                ref.load(state)
                ref_enabled = ref.enabled(ev)
            except Exception as exc:
                return found(
                    skey,
                    ev,
                    "crash",
                    f"{type(exc).__name__}: {exc}",
                )
            if enabled != ref_enabled:
                who = "the spec" if enabled else "the reference controller"
                return found(
                    skey,
                    ev,
                    "enabled",
                    f"only {who} accepts {ev.kind} here",
                )
            if not enabled:
                continue
            try:
                expected = spec.step(state, ev)
                ref.state_change_log.clear()
                ref.controller_log.clear()
                actual = ref.handle(ev)
            except Exception as exc:
                return found(
                    skey,
                    ev,
                    "crash",
                    f"{type(exc).__name__}: {exc}",
                )
            stats.transitions += 1
            stats.events[ev.kind] += 1
            differences = diff_results(expected, actual)
            if differences:
                return found(
                    skey,
                    ev,
                    "refinement",
                    f"the reference controller's step differs from the spec ({len(differences)} differences)",
                    differences=tuple(differences),
                )
            record_coverage(stats, ref.state_change_log, expected)
            bad = checker.check_step(state, expected.state, expected.requests)
            nkey = key(expected.state)
            if nkey not in parents:
                bad = checker.check_state(expected.state) + bad
            if bad:
                return found(
                    skey,
                    ev,
                    "invariant",
                    "invariant violated: " + ", ".join(v.name for v in bad),
                    violations=tuple(bad),
                )
            if nkey in parents:
                continue
            parents[nkey] = (skey, ev)
            stats.distinct_states += 1
            stats.depth_reached = max(stats.depth_reached, depth + 1)
            frontier.append((expected.state, nkey, depth + 1))
            if stats.distinct_states >= cfg.max_states:
                stats.truncated = True
                stats.frontier_left = len(frontier)
                return _result(cfg, stats, None, spec, prefix, [], start)
        if progress is not None and stats.transitions % 50 == 0:
            stats.seconds = time.perf_counter() - start
            progress(stats)
    return _result(cfg, stats, None, spec, prefix, [], start)


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
    cfg: ExploreConfig,
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
    return _result(cfg, stats, finding, spec, prefix, path, start)


def _result(
    cfg: ExploreConfig,
    stats: ExploreStats,
    finding: Finding | None,
    spec: SpecMachine,
    prefix: list[ControllerEvent],
    path: list[ControllerEvent],
    start: float,
) -> ExploreResult:
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
            cfg.profile, ClusterState(), tuple(steps), note=f"explore {cfg.describe()}: {finding.message}"
        )
    return ExploreResult(cfg, stats, finding, trace)
