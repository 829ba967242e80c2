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

import re
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from kcspec.conformance.audit.reference_parser import parse_lines
from kcspec.conformance.crosscheck import diff_results
from kcspec.conformance.explore.config import ExploreConfig
from kcspec.conformance.explore.events import bootstrap, candidates
from kcspec.conformance.reply_diff import Difference
from kcspec.model.invariants_check import InvariantChecker, Violation
from kcspec.model.step import SpecMachine
from kcspec.model.symmetry import canonical_state
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


_TIMESTAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ")
_EDGES: dict[str, tuple[str, tuple[str, str]] | None] = {}
"""A log line without its timestamp → the transition it records (machine, (from, to)), or ``None``. A line with
a layout head parses on its own, and its timestamp only fills the timestamp field: lines that differ only there
record the same transition, so each distinct message is parsed once."""


def _edge(line: str) -> tuple[str, tuple[str, str]] | None:
    m = _TIMESTAMP.match(line)
    key = line[m.end() :] if m is not None else line
    try:
        return _EDGES[key]
    except KeyError:
        pass
    edge = None
    for parsed in parse_lines("state-change.log", [line]):
        if parsed.status == "record" and parsed.kind in ("replica_transition", "partition_transition"):
            pair = (str(parsed.fields.get("from_state")), str(parsed.fields.get("to_state")))
            edge = (parsed.kind, pair)
    _EDGES[key] = edge
    return edge


def record_coverage(stats: ExploreStats, log_lines: list[str], result: StepResult) -> None:
    """Count the replica/partition transitions of one step from the controller's state-change log (TRACE level, so
    self-loops and intermediate states count), and the rejected (invalid) transitions from its failures."""
    for line in log_lines:
        found = _edge(line)
        if found is None:
            continue
        kind, edge = found
        if kind == "replica_transition":
            stats.replica_edges[edge] += 1
        else:
            stats.partition_edges[edge] += 1
    for f in result.failures:
        if f.reason is FailureReason.InvalidTransition:
            stats.invalid_attempts[(f.machine, f.from_state, f.target)] += 1


def explore(cfg: ExploreConfig, progress: Callable[[ExploreStats], None] | None = None) -> ExploreResult:
    """Explore the bounded configuration ``cfg`` (raises ``ValueError`` naming a bad option)."""
    cfg.validate()
    result = search(space_of(cfg), progress)
    result.config = cfg
    return result


def search(
    space: SearchSpace,
    progress: Callable[[ExploreStats], None] | None = None,
    keep_states: bool = False,
) -> ExploreResult:
    """Breadth-first search of ``space``, checking refinement and invariants on every step."""
    spec = SpecMachine(space.profile)
    checker = InvariantChecker(space.profile)
    ref = ReferenceController(space.profile, trace=True)
    loaded: ClusterState | None = None

    canonical: dict[ClusterState, Hashable] = {}

    def key(state: ClusterState) -> Hashable:
        if not space.symmetry:
            return state  # a frozen value with value equality and a cached hash in its maps: the exact key
        # the key is the orbit's canonical representative, itself a state; cached by the state
        hit = canonical.get(state)
        if hit is None:
            hit = canonical[state] = canonical_state(state, space.brokers)
        return hit

    stats = ExploreStats()
    start = time.perf_counter()
    state = ClusterState()
    prefix: list[ControllerEvent] = []
    for ev in space.prefix:
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
        return _result(space, stats, finding, spec, prefix, [], start)

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
        events = space.candidates(state)
        # both guards of every candidate first, on one load of the state (a guard does not change the controller);
        # they are reported below in candidate order, as if asked one candidate at a time
        guards: list[tuple[bool, bool]] = []
        guard_crash: Exception | None = None
        try:
            if events and loaded is not state:
                ref.load(state)
                loaded = state
            for ev in events:
                guards.append((spec.enabled(state, ev), ref.enabled(ev)))
        except Exception as exc:
            guard_crash = exc
        for i, ev in enumerate(events):
            if i == len(guards):
                return found(
                    skey,
                    ev,
                    "crash",
                    f"{type(guard_crash).__name__}: {guard_crash}",
                )
            enabled, ref_enabled = guards[i]
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
                if loaded is not state:
                    ref.load(state)
                ref.state_change_log.clear()
                ref.controller_log.clear()
                loaded = None
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
            # a successor outside the bounds is checked as a step, then cut (it is never a state of the search)
            cut = space.keep is not None and not space.keep(expected.state)
            nkey = None if cut else key(expected.state)
            if nkey is not None and nkey not in parents:
                bad = checker.check_state(expected.state) + bad
            if bad:
                return found(
                    skey,
                    ev,
                    "invariant",
                    "invariant violated: " + ", ".join(v.name for v in bad),
                    violations=tuple(bad),
                )
            if nkey is None or nkey in parents:
                continue
            parents[nkey] = (skey, ev)
            stats.distinct_states += 1
            stats.depth_reached = max(stats.depth_reached, depth + 1)
            frontier.append((expected.state, nkey, depth + 1))
            if stats.distinct_states >= space.max_states:
                stats.truncated = True
                stats.frontier_left = len(frontier)
                return _result(space, stats, None, spec, prefix, [], start, parents if keep_states else None)
        if progress is not None and stats.transitions % 50 == 0:
            stats.seconds = time.perf_counter() - start
            progress(stats)
    return _result(space, stats, None, spec, prefix, [], start, parents if keep_states else None)


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
    return _result(space, stats, finding, spec, prefix, path, start)


def _result(
    space: SearchSpace,
    stats: ExploreStats,
    finding: Finding | None,
    spec: SpecMachine,
    prefix: list[ControllerEvent],
    path: list[ControllerEvent],
    start: float,
    states: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] | None = None,
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
            space.profile,
            ClusterState(),
            tuple(steps),
            note=f"explore {space.description}: {finding.message}",
        )
    return ExploreResult(None, stats, finding, trace, space.profile, space.description, states, tuple(prefix))
