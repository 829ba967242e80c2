"""Breadth-first exploration on Spark (``kcspec explore --spark``): the same search, levels spread over executors.

The visited set is an RDD of fingerprint → (level, parent fingerprint, event, state), the state kept only for the
newest level (the frontier). Each level of the breadth-first search is one Spark job of two stages:

1. **deduplicate** — the previous level's successors and the visited set are shuffled together by fingerprint
   (``reduceByKey``, Spark's own shuffle): a fingerprint already visited keeps its entry, a new one keeps one of
   its parents (the least parent fingerprint). The result is the new visited set; it is kept with
   ``localCheckpoint`` so that the lineage does not grow with the depth.
2. **expand** — in the same tasks, the new states are the frontier: their state invariants are checked (each is
   new) and they are expanded with the explorer's own ``expand_batch`` (every candidate event through both guards,
   the spec and the reference controller — refinement —, transition coverage, step invariants). Problems and
   per-task counts come back to the driver; the successors stay on the executors (persisted) for the next
   level's shuffle.

A state's fingerprint is Python's 64-bit ``hash`` of its deduplication key (the state itself, or its orbit's
canonical representative under symmetry), computed only on the executors: PySpark gives every executor's Python
workers the same ``PYTHONHASHSEED``, so the hash of a state, whose maps hash their string keys, is the same
everywhere (states also travel pickled between executors with those cached hashes). The driver sends and receives
states only as canonical JSON or rebuilds them from events. Two distinct states with equal fingerprints would be
counted once — as with TLC's 64-bit fingerprints, the chance is about n²/2⁶⁵ for n states (under 10⁻⁷ for 1 M).

A counterexample is rebuilt from the parent fingerprints kept in the visited set (one lookup per step, each in
the one partition that holds the fingerprint), so it is a shortest one, as breadth-first search gives. A state
invariant broken by a frontier state gives a trace one step shorter than a problem found while expanding the same
frontier, so it is preferred.

Embedded ``local[*]`` by default; any ``--master`` works unchanged (the executors need kcspec installed).
``--max-states`` is honoured at the end of a level, so the count may pass it by part of a level.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, cast

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.explore.explorer import (
    ExploreResult,
    Finding,
    SearchSpace,
    finish,
    start_state,
)
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.stepper import Stepper, Successor, expand_batch
from kcspec.model.invariants_check import InvariantChecker, Violation
from kcspec.model.step import SpecMachine
from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState

Within = Callable[[], AbstractContextManager[Any]]
"""A context entered on the executors around each task (e.g. a bug-zoo mutant's ``active``): in local mode too the
executors are other processes, so a patch made in the driver does not reach them."""

Entry = tuple[int, int | None, ControllerEvent | None, ClusterState | None]
"""A visited fingerprint's entry: (level, parent fingerprint, event from the parent, state — only while the state
is on the frontier)."""

_SUCCESSOR, _PROBLEM, _COUNTS = 0, 1, 2


@dataclass(frozen=True)
class LevelCost:
    """One level of the search: its depth, its new states (the frontier), the successors they produced, and the
    wall seconds of its job (the shuffle that deduplicated the level, then the frontier's expansion)."""

    depth: int
    new: int
    successors: int
    seconds: float


@dataclass(frozen=True)
class SparkExploration:
    """A search run on Spark: the result (as the one-process explorer gives it) and what each level cost."""

    result: ExploreResult
    master: str
    parallelism: int
    partitions: int
    levels: tuple[LevelCost, ...]


@dataclass(frozen=True)
class _Problem:
    """A problem found on an executor: ``rank`` 0 is a frontier state breaking a state invariant (found at the
    state itself), 1 a problem on a transition out of the frontier state ``at`` (one step longer)."""

    rank: int
    at: int
    event: ControllerEvent | None
    kind: str
    message: str
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


def _stepper(space: SearchSpace, stats: ExploreStats) -> Stepper:
    return Stepper(space.profile, space.candidates, space.brokers, space.symmetry, space.keep, stats)


def _root_entry(space: SearchSpace, within: Within | None, text: str) -> tuple[int, Entry]:
    """The initial state (sent as canonical JSON) with its fingerprint, computed on an executor."""
    with within() if within is not None else nullcontext():
        state = codec.loads(text, ClusterState)
        return hash(_stepper(space, ExploreStats()).key(state)), (0, None, None, state)


def _expand(
    space: SearchSpace,
    within: Within | None,
    level: int,
    expand: bool,
    rows: Iterable[tuple[int, Entry]],
) -> Iterator[tuple[int, Any]]:
    """One task of a level's job, on one partition of the visited set: the states of ``level`` (the frontier, each
    one new) have their state invariants checked (but the initial state's, checked by the driver) and, with
    ``expand``, their checked successors yielded as ``(_SUCCESSOR, (fingerprint, (parent, event, state)))``; then at
    most one ``(_PROBLEM, _Problem)`` and ``(_COUNTS, (ExploreStats, frontier states, successors))``."""
    stats = ExploreStats()
    problem: _Problem | None = None
    frontier = 0
    successors: list[Successor] = []
    with within() if within is not None else nullcontext():
        stepper = _stepper(space, stats)
        batch: list[tuple[ClusterState, tuple[int, int]]] = []
        for fp, (at, _parent, _event, state) in rows:
            if at != level or state is None:
                continue
            frontier += 1
            if level > 0 and problem is None:
                bad = stepper.checker.check_state(state)
                if bad:
                    message = "invariant violated: " + ", ".join(v.name for v in bad)
                    problem = _Problem(0, fp, None, "invariant", message, violations=tuple(bad))
            batch.append((state, (0, fp)))
        found = None
        if expand and problem is None:
            successors, found = expand_batch(stepper, batch)
    for s in successors:
        yield _SUCCESSOR, (hash(s.key), (s.parent[1], s.event, s.state))
    if found is not None:
        problem = _Problem(
            1, found.parent[1], found.event, found.kind, found.message, found.differences, found.violations
        )
    if problem is not None:
        yield _PROBLEM, problem
    yield _COUNTS, (stats, frontier, len(successors))


def _successor_entry(level: int) -> Callable[[tuple[int, Any]], tuple[int, Entry]]:
    def entry(record: tuple[int, Any]) -> tuple[int, Entry]:
        fp, (parent, event, state) = record[1]
        return fp, (level, parent, event, state)

    return entry


def _visited(entry: Entry) -> Entry:
    """An entry as it goes into the next level's deduplication: without its state (no longer on the frontier)."""
    return entry if entry[3] is None else (entry[0], entry[1], entry[2], None)


def _merge(a: Entry, b: Entry) -> Entry:
    """Of two entries of one fingerprint, the earlier level (a visited state stays as it is); between parents of the
    same level, the least parent fingerprint (any parent at that level gives a shortest path)."""
    if a[0] != b[0]:
        return a if a[0] < b[0] else b
    pa, pb = a[1], b[1]
    return a if pa is None or (pb is not None and pa <= pb) else b


def spark_search(
    space: SearchSpace,
    spark: Any,
    within: Within | None = None,
    partitions: int | None = None,
    progress: Callable[[ExploreStats], None] | None = None,
) -> SparkExploration:
    """Breadth-first search of ``space`` on the session ``spark``, with the checks of ``search``."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    parts = partitions or sc.defaultParallelism
    stats = ExploreStats(workers=sc.defaultParallelism)
    spec = SpecMachine(space.profile)
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, InvariantChecker(space.profile).check_state)
    levels: list[LevelCost] = []

    def done(finding: Finding | None, path: list[ControllerEvent]) -> SparkExploration:
        result = finish(space, stats, finding, spec, prefix, path, start)
        return SparkExploration(result, sc.master, sc.defaultParallelism, parts, tuple(levels))

    stats.distinct_states = 1
    if finding0 is not None:
        return done(finding0, [])

    text = codec.dumps(state)
    visited = sc.parallelize([text], 1).map(lambda t: _root_entry(space, within, t))
    _keep(visited)
    depth, previous = 0, cast(tuple[Any, ...], ())
    while True:
        t0 = time.perf_counter()
        expand = space.depth is None or depth < space.depth
        out = visited.mapPartitions(lambda rows, d=depth, e=expand: _expand(space, within, d, e, rows))
        out.persist(StorageLevel.MEMORY_AND_DISK)
        # one job: the deduplication of this level (the shuffle's reduce side, materialising the visited set) and
        # the expansion of its new states run in the same tasks
        meta = out.filter(lambda r: r[0] != _SUCCESSOR).map(lambda r: r[1]).collect()
        for rdd in previous:
            rdd.unpersist()
        problems = [m for m in meta if isinstance(m, _Problem)]
        new = produced = 0
        for m in meta:
            if isinstance(m, tuple):
                stats.merge_counts(m[0])
                new += m[1]
                produced += m[2]
        if depth > 0:
            stats.distinct_states += new
            if new:
                stats.depth_reached = depth
        levels.append(LevelCost(depth, new, produced, time.perf_counter() - t0))
        stats.seconds = time.perf_counter() - start
        if progress is not None:
            progress(stats)
        if problems:
            out.unpersist()
            p = min(problems, key=lambda q: (q.rank, q.at))
            path = _path(visited, p.at)
            if p.event is not None:
                path.append(p.event)
            finding = Finding(p.kind, p.message, tuple(prefix + path), p.differences, p.violations)
            return done(finding, path)
        if new == 0 or not expand:
            out.unpersist()
            break
        if stats.distinct_states >= space.max_states:
            stats.truncated = True
            stats.frontier_left = new
            out.unpersist()
            break
        merged = (
            out.filter(lambda r: r[0] == _SUCCESSOR)
            .map(_successor_entry(depth + 1))
            .union(visited.mapValues(_visited))
            .reduceByKey(_merge, parts)
        )
        _keep(merged)  # materialised by the next level's job, which reads every partition
        previous = (out, visited)  # what ``merged`` is computed from: released once the next job has run
        visited = merged
        depth += 1
    return done(None, [])


def _keep(rdd: Any) -> None:
    """Keep ``rdd`` once computed and cut its lineage there. ``persist`` first: PySpark fuses a Python function into
    the next one (its "pipelining") unless the RDD is marked cached, and then the RDD that ``localCheckpoint``
    marked would never be computed — every level would recompute the ones before it."""
    from pyspark import StorageLevel

    rdd.persist(StorageLevel.MEMORY_AND_DISK)
    rdd.localCheckpoint()


def _lookup(visited: Any, fp: int) -> list[Entry]:
    """The entries of ``fp`` in the visited set, read from the one partition that holds it. (``RDD.lookup`` would
    compute that partition with PySpark's ``portable_hash``, which refuses to run in a driver without
    ``PYTHONHASHSEED``; for an integer key it is ``hash``, the same in every process.)"""
    partitioner = visited.partitioner
    parts = [hash(fp) % partitioner.numPartitions] if partitioner is not None else None
    found: list[Entry] = visited.context.runJob(
        visited, lambda rows: [entry for key, entry in rows if key == fp], parts
    )
    return found


def _path(visited: Any, fp: int) -> list[ControllerEvent]:
    """The events from the initial state to the visited state ``fp``, from the parent fingerprints."""
    events: list[ControllerEvent] = []
    cur: int | None = fp
    while cur is not None:
        (_level, parent, event, _state), *_ = _lookup(visited, cur)
        if event is not None:
            events.append(event)
        cur = parent
    return list(reversed(events))


def start_session(master: str = "local[*]") -> Any:
    """A Spark session for exploring, started as the audit starts its own (``conformance.audit.session``: Spark's
    output kept in a private log folder, the driver on the loopback interface in local mode)."""
    from kcspec.conformance.audit.session import make_session

    return make_session(master, app="kcspec-explore")


__all__ = ["LevelCost", "SparkExploration", "Within", "spark_search", "start_session"]
