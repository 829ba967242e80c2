"""Breadth-first exploration of the reference controller, checking refinement and invariants on every step.

From the bootstrapped configuration, every candidate event the spec enables is applied to every
reachable state, up to the depth bound:
* **refinement**: the reference controller, loaded with the state, must accept exactly the events the
  spec accepts and answer each with the spec's ``StepResult`` (same post-state, same requests, same
  failures);
* **invariants**: every §11 state invariant in every reached state and every step invariant on every
  transition.
States are deduplicated by their fingerprints (``fingerprint.py``: a 64-bit digest of the canonical text of the
state, or of its orbit's representative under broker-id symmetry); the visited set holds only those, and the
frontier and the parents' fingerprints are on disk, level by level (``levels.py``), where ``--checkpoint`` keeps
them so that a run can be resumed. Because the search is breadth-first, the first violation found has a shortest
trace; it is rebuilt from the parents' fingerprints by re-executing the spec along them (``replay``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.explore.collect import young_collections_only
from kcspec.conformance.selfcheck.explore.fingerprint import DEFAULT_SCHEME, FingerprintScheme, FingerprintSet
from kcspec.conformance.selfcheck.explore.levels import (
    FrontierWriter,
    LevelStore,
    Meta,
    TrailWriter,
    check_resumable,
    owner_of,
    read_checkpoint,
    read_frontier,
)
from kcspec.conformance.selfcheck.explore.stats import ExploreStats, record_coverage
from kcspec.conformance.selfcheck.explore.stepper import Problem, Stepper, rank_of
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
    fingerprints: FingerprintScheme = field(default=DEFAULT_SCHEME)
    initial: ClusterState = field(default_factory=ClusterState)
    """The state the prefix starts from (the TLA+ model's ``Init``: empty, but for the model bounds its config
    holds)."""
    lockstep: bool = True
    """The spec and the reference controller stepped side by side and compared on every transition (refinement);
    off, the reference controller alone (``Stepper``), for a search whose states are compared with another
    implementation's (``kcspec tla crosscheck``)."""


def stepper_of(space: SearchSpace, stats: ExploreStats | None = None) -> Stepper:
    """The spec, the reference controller and the checks driven over ``space`` (counting into ``stats``)."""
    return Stepper(
        space.profile,
        space.candidates,
        space.brokers,
        space.symmetry,
        space.keep,
        ExploreStats() if stats is None else stats,
        space.fingerprints,
        space.lockstep,
    )


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
    cfg: ExploreConfig,
    progress: Callable[[ExploreStats], None] | None = None,
    workers: int = 1,
    checkpoint: Path | None = None,
    resume: bool = False,
) -> ExploreResult:
    """Explore the bounded configuration ``cfg`` on ``workers`` processes (raises ``ValueError`` naming a bad
    option or a checkpoint that cannot be resumed)."""
    cfg.validate()
    result = search(space_of(cfg), progress, workers=workers, checkpoint=checkpoint, resume=resume)
    result.config = cfg
    return result


def search(
    space: SearchSpace,
    progress: Callable[[ExploreStats], None] | None = None,
    keep_states: bool = False,
    workers: int = 1,
    checkpoint: Path | None = None,
    resume: bool = False,
    nice: int = 0,
) -> ExploreResult:
    """Breadth-first search of ``space``, checking refinement and invariants on every step; with ``workers`` > 1
    on that many processes (``parallel.py``; the states are then not kept), which lower their priority by
    ``nice`` (one worker searches in this process, whose priority is left alone). With ``checkpoint`` a folder,
    the end of every level is checkpointed there; with ``resume`` too, the search continues from its
    checkpoint."""
    if resume and checkpoint is None:
        raise ValueError("resuming needs the checkpoint folder")
    if workers != 1:
        if keep_states:
            raise ValueError("keeping every state needs one worker (--workers 1)")
        from kcspec.conformance.selfcheck.explore.parallel import search_parallel

        return search_parallel(space, workers, progress, checkpoint, resume, nice)
    with young_collections_only():
        return _search(space, progress, keep_states, checkpoint, resume)


def start_state(
    space: SearchSpace, spec: SpecMachine, check_state: Callable[[ClusterState], Sequence[Violation]]
) -> tuple[ClusterState, list[ControllerEvent], Finding | None]:
    """Where every search (one process, ``--workers``, ``--spark``) starts: the space's prefix applied to the
    empty state, the prefix, and the finding when that state already violates an invariant."""
    state = space.initial
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
    space: SearchSpace,
    progress: Callable[[ExploreStats], None] | None,
    keep_states: bool,
    checkpoint: Path | None,
    resume: bool,
) -> ExploreResult:
    stats = ExploreStats()
    stepper = stepper_of(space, stats)
    spec, checker = stepper.spec, stepper.checker
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, checker.check_state)
    stats.distinct_states = 1
    if finding0 is not None:
        return finish(space, stats, finding0, spec, prefix, [], start)
    store = LevelStore(checkpoint)
    try:
        begun = begin(space, store, resume, stats, state, stepper.fingerprint(state), 1)
        visited = begun.visited[0]
        level, earlier = begun.level, begun.seconds
        states: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] | None = None
        if keep_states:
            states = {stepper.key(state): (None, None)}
        current = read_frontier(store.frontier(level, 0))
        while space.depth is None or level < space.depth:
            size = stats.level_sizes[level]
            if size == 0:
                break
            stats.begin_level(level)
            frontier = FrontierWriter(store.frontier(level + 1, 0), 0 if store.kept else IN_MEMORY)
            trail = TrailWriter(store.trail(level + 1, 0))
            try:
                for fp, rank, state in current:
                    skey = stepper.key(state) if states is not None else None
                    for t in stepper.transitions(state, fp):
                        if isinstance(t, Problem):
                            return _finding(
                                space, stats, stepper, store, prefix, level, fp, t, start, earlier
                            )
                        nfp = t.key
                        new = nfp is not None and visited.add(nfp)
                        bad = (
                            checker.check_state(t.state) + list(t.step_violations)
                            if new
                            else t.step_violations
                        )
                        if bad:
                            violated = Problem(
                                t.event, "invariant", "invariant violated: " + ", ".join(v.name for v in bad)
                            )
                            return _finding(
                                space,
                                stats,
                                stepper,
                                store,
                                prefix,
                                level,
                                fp,
                                violated,
                                start,
                                earlier,
                                tuple(bad),
                            )
                        if not new:
                            continue
                        assert nfp is not None
                        trail.add(nfp, fp)
                        frontier.add(nfp, fp, rank_of(rank, t.index), t.state)
                        if states is not None:
                            states.setdefault(stepper.key(t.state), (skey, t.event))
                        stats.distinct_states += 1
                        stats.depth_reached = level + 1
                        if stats.distinct_states >= space.max_states:
                            stats.truncated = True
                            stats.frontier_left = size - stats.level_expanded - 1 + frontier.count
                            return finish(space, stats, None, spec, prefix, [], start, states, earlier)
                    stats.level_expanded += 1
                    if progress is not None and stats.level_expanded % 50 == 0:
                        stats.seconds = earlier + time.perf_counter() - start
                        progress(stats)
            finally:
                frontier.close()
                trail.close()
            level += 1
            current = frontier.states()
            stats.level_sizes.append(frontier.count)
            stats.seconds = earlier + time.perf_counter() - start
            stats.fingerprint_bytes = visited.nbytes
            stats.end_level(level)
            if store.kept:
                save_level(space, store, level, stats, 1, [visited])
            if progress is not None:
                progress(stats)
        return finish(space, stats, None, spec, prefix, [], start, states, earlier)
    finally:
        store.close()


IN_MEMORY = 2_000
"""The states of a level a search that is not checkpointed keeps unpickled in memory before it writes them to disk:
pickling a state and reading it back costs about as much as a transition, and most levels of a small search are
smaller than this."""


@dataclass(frozen=True)
class Begun:
    """Where a search starts: a level whose frontier is on disk, the visited sets of its workers, and the seconds
    that earlier runs of a resumed search took."""

    level: int
    visited: list[FingerprintSet]
    seconds: float


def begin(
    space: SearchSpace,
    store: LevelStore,
    resume: bool,
    stats: ExploreStats,
    root: ClusterState,
    root_fp: int,
    workers: int,
) -> Begun:
    """Level 0 (the initial state) written to ``store``, or, with ``resume``, the checkpoint there read back into
    ``stats`` and every worker's share of its visited fingerprints (``ValueError`` if it cannot be resumed)."""
    if resume:
        meta, saved = read_checkpoint(store.folder)
        check_resumable(store.folder, meta, space.description, space.fingerprints.name)
        store.drop_after(meta.level)
        stats.restore(saved)
        visited = [FingerprintSet() for _ in range(workers)]
        for path in store.files("visited", meta.level):
            for fp in FingerprintSet.from_bytes(path.read_bytes()):
                visited[owner_of(fp, workers)].add(fp)
        if meta.workers != workers:
            store.repartition(meta.level, workers)
        return Begun(meta.level, visited, meta.seconds)
    store.drop_after(-1)
    visited = [FingerprintSet() for _ in range(workers)]
    visited[owner_of(root_fp, workers)].add(root_fp)
    for w in range(workers):
        first = FrontierWriter(store.frontier(0, w))
        if w == owner_of(root_fp, workers):
            first.add(root_fp, 0, b"", root)
        first.close()
    stats.level_sizes = [1]
    if store.kept:
        save_level(space, store, 0, stats, workers, visited)
    return Begun(0, visited, 0.0)


def save_level(
    space: SearchSpace,
    store: LevelStore,
    level: int,
    stats: ExploreStats,
    workers: int,
    visited: list[FingerprintSet] | None = None,
) -> None:
    """Checkpoint the end of ``level``: the visited fingerprints (``visited``: each worker's, unless the workers
    wrote them), then the counts (``levels.py``)."""
    for w, fps in enumerate(visited or []):
        store.visited(level, w).write_bytes(fps.to_bytes())
    meta = Meta(
        space.description,
        space.fingerprints.name,
        workers,
        level,
        stats.distinct_states,
        stats.depth_reached,
        stats.seconds,
        list(stats.level_sizes),
    )
    store.commit(meta, stats)


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


def fingerprint_path(store: LevelStore, level: int, fp: int) -> list[int]:
    """The fingerprints of the states from the initial one to the state ``fp`` of ``level``, from the trails."""
    chain = [fp]
    for at in range(level, 0, -1):
        chain.append(store.parent_of(at, chain[-1]))
    return list(reversed(chain))


def replay(
    space: SearchSpace, stepper: Stepper, root: ClusterState, chain: list[int]
) -> list[ControllerEvent]:
    """The events leading through the states ``chain`` (fingerprints, the initial state's first), found again as TLC
    does: from each state, the first candidate enabled (by the spec, or with ``lockstep`` off by the reference
    controller) whose successor has the next fingerprint. That is the event a breadth-first search first reached
    that successor by, so the path is the one it recorded."""
    events: list[ControllerEvent] = []
    state = root
    for target in chain[1:]:
        for ev in space.candidates(state):
            if not stepper.enabled(state, ev):
                continue
            nxt = stepper.step(state, ev)
            if (space.keep is None or space.keep(nxt)) and stepper.fingerprint(nxt) == target:
                events.append(ev)
                state = nxt
                break
        else:
            raise LookupError(f"no event leads to the state {target:#x} on the recorded path")
    return events


def _finding(
    space: SearchSpace,
    stats: ExploreStats,
    stepper: Stepper,
    store: LevelStore,
    prefix: list[ControllerEvent],
    level: int,
    fp: int,
    problem: Problem,
    start: float,
    earlier: float,
    violations: tuple[Violation, ...] = (),
) -> ExploreResult:
    """The result of a search that met ``problem`` on a transition out of the state ``fp`` of ``level``."""
    state = space.initial  # the initial state, rebuilt from the prefix
    for ev in prefix:
        state = stepper.spec.step(state, ev).state
    path = [*replay(space, stepper, state, fingerprint_path(store, level, fp)), problem.event]
    finding = Finding(problem.kind, problem.message, tuple(prefix + path), problem.differences, violations)
    return finish(space, stats, finding, stepper.spec, prefix, path, start, None, earlier)


def finish(
    space: SearchSpace,
    stats: ExploreStats,
    finding: Finding | None,
    spec: SpecMachine,
    prefix: list[ControllerEvent],
    path: list[ControllerEvent],
    start: float,
    states: dict[Hashable, tuple[Hashable | None, ControllerEvent | None]] | None = None,
    earlier: float = 0.0,
) -> ExploreResult:
    """The result of a search: its statistics, and for a finding the trace of ``prefix`` + ``path`` replayed on
    the spec (``earlier``: the seconds of the runs a resumed search continues)."""
    stats.seconds = earlier + time.perf_counter() - start
    trace = None
    if finding is not None:
        steps: list[TraceStep] = []
        state = space.initial
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
            space.initial,
            tuple(steps),
            note=f"explore {space.description}: {finding.message}",
        )
    return ExploreResult(None, stats, finding, trace, space.profile, space.description, states, tuple(prefix))
