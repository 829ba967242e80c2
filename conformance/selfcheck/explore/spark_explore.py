"""Breadth-first exploration on Spark (``kcspec explore --spark``): the same search, levels spread over executors.

The visited set is an RDD of fingerprint → (level, parent fingerprint, rank, state), the state kept only for the
newest level (the frontier); fingerprints are the explorer's own (``fingerprint.py``), the same in every process. Each level of the breadth-first search is one Spark job of two stages:

1. **deduplicate** — the previous level's successors and the visited set are shuffled together by fingerprint
   (``reduceByKey``, Spark's own shuffle): a fingerprint already visited keeps its entry, a new one keeps its
   parent of least rank (``stepper.rank_of``), the one a one-process search records. The result is the new visited set; it is kept with
   ``localCheckpoint`` so that the lineage does not grow with the depth.
2. **expand** — in the same tasks, the new states are the frontier: their state invariants are checked (each is
   new) and they are expanded with the explorer's own ``expand_batch`` (every candidate event through both guards,
   the spec and the reference controller — refinement —, transition coverage, step invariants). Problems and
   per-task counts come back to the driver; the successors stay on the executors (persisted) for the next
   level's shuffle.

A counterexample is rebuilt from the parent fingerprints kept in the visited set (one lookup per step, each in
the one partition that holds the fingerprint), then the events found again by re-executing the spec along them
(``explorer.replay``). Among the problems of a level the least-rank one is reported — a new state's broken state
invariant is compared with the previous level's transition problems, since one process meets it when the state is
found — so the counterexample is the one a one-process search reports, on every run.

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
    replay,
    start_state,
)
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.stepper import Stepper, Successor, expand_batch
from kcspec.model.invariants_check import Violation
from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState

Within = Callable[[], AbstractContextManager[Any]]
"""A context entered on the executors around each task (e.g. a bug-zoo mutant's ``active``): in local mode too the
executors are other processes, so a patch made in the driver does not reach them."""

Entry = tuple[int, int, bytes, ClusterState | None]
"""A visited fingerprint's entry: (level, parent fingerprint (0 for the initial state), rank — ``stepper.rank_of`` —,
state — only while the state is on the frontier)."""

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
    """A problem found on an executor, at ``rank``: a frontier state ``at`` breaking a state invariant (``event``
    ``None``), or a problem on the transition ``event`` out of the frontier state ``at``."""

    rank: bytes
    at: int
    event: ControllerEvent | None
    kind: str
    message: str
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


def _stepper(space: SearchSpace, stats: ExploreStats) -> Stepper:
    return Stepper(
        space.profile, space.candidates, space.brokers, space.symmetry, space.keep, stats, space.fingerprints
    )


def _root_entry(within: Within | None, fp: int, text: str) -> tuple[int, Entry]:
    """The initial state (sent as canonical JSON) with its fingerprint."""
    with within() if within is not None else nullcontext():
        return fp, (0, 0, b"", codec.loads(text, ClusterState))


def _expand(
    space: SearchSpace,
    within: Within | None,
    level: int,
    expand: bool,
    rows: Iterable[tuple[int, Entry]],
) -> Iterator[tuple[int, Any]]:
    """One task of a level's job, on one partition of the visited set: the states of ``level`` (the frontier, each
    one new) have their state invariants checked (but the initial state's, checked by the driver) and, with
    ``expand``, their checked successors yielded in ascending rank as ``(_SUCCESSOR, (fingerprint, (parent, rank,
    state)))``; then the least-rank state problem and transition problem (``_PROBLEM``, ``_Problem``) and
    ``(_COUNTS, (ExploreStats, frontier states, successors))``."""
    stats = ExploreStats()
    problems: list[_Problem] = []
    successors: list[Successor] = []
    with within() if within is not None else nullcontext():
        stepper = _stepper(space, stats)
        batch: list[tuple[ClusterState, int, bytes]] = []
        for fp, (at, _parent, rank, state) in rows:
            if at == level and state is not None:
                batch.append((state, fp, rank))
        batch.sort(key=lambda b: b[2])
        if level > 0:
            for state, fp, rank in batch:
                bad = stepper.checker.check_state(state)
                if bad:
                    message = "invariant violated: " + ", ".join(v.name for v in bad)
                    problems.append(_Problem(rank, fp, None, "invariant", message, violations=tuple(bad)))
                    break
        found = None
        if expand and not problems:
            successors, found = expand_batch(stepper, batch)
    for s in successors:
        yield _SUCCESSOR, (s.key, (s.parent, s.rank, s.state))
    if found is not None:
        problems.append(
            _Problem(
                found.rank,
                found.parent,
                found.event,
                found.kind,
                found.message,
                found.differences,
                found.violations,
            )
        )
    for problem in problems:
        yield _PROBLEM, problem
    yield _COUNTS, (stats, len(batch), len(successors))


def _successor_entry(level: int) -> Callable[[tuple[int, Any]], tuple[int, Entry]]:
    def entry(record: tuple[int, Any]) -> tuple[int, Entry]:
        fp, (parent, rank, state) = record[1]
        return fp, (level, parent, rank, state)

    return entry


def _visited(entry: Entry) -> Entry:
    """An entry as it goes into the next level's deduplication: without its state (no longer on the frontier)."""
    return entry if entry[3] is None else (entry[0], entry[1], entry[2], None)


def _merge(a: Entry, b: Entry) -> Entry:
    """Of two entries of one fingerprint, the earlier level (a visited state stays as it is); between entries of the
    same level, the least rank: the parent a one-process search records."""
    return a if (a[0], a[2]) <= (b[0], b[2]) else b


def spark_search(
    space: SearchSpace,
    spark: Any,
    within: Within | None = None,
    partitions: int | None = None,
    progress: Callable[[ExploreStats], None] | None = None,
) -> SparkExploration:
    """Breadth-first search of ``space`` on the session ``spark``, with the checks, counts and counterexample of
    ``search``."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    parts = partitions or sc.defaultParallelism
    stats = ExploreStats(workers=sc.defaultParallelism)
    stepper = _stepper(space, ExploreStats())
    spec = stepper.spec
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, stepper.checker.check_state)
    levels: list[LevelCost] = []

    def done(finding: Finding | None, path: list[ControllerEvent]) -> SparkExploration:
        result = finish(space, stats, finding, spec, prefix, path, start)
        return SparkExploration(result, sc.master, sc.defaultParallelism, parts, tuple(levels))

    stats.distinct_states = 1
    if finding0 is not None:
        return done(finding0, [])

    text, root_fp = codec.dumps(state), stepper.fingerprint(state)
    visited = sc.parallelize([text], 1).map(lambda t: _root_entry(within, root_fp, t))
    _keep(visited)
    depth, previous = 0, cast(tuple[Any, ...], ())
    pending: list[
        _Problem
    ] = []  # the previous level's transition problems, compared with this level's states'
    while True:
        t0 = time.perf_counter()
        expand = not pending and (space.depth is None or depth < space.depth)
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
        stats.level_sizes.append(new)
        levels.append(LevelCost(depth, new, produced, time.perf_counter() - t0))
        stats.seconds = time.perf_counter() - start
        if progress is not None:
            progress(stats)
        # a new state breaking a state invariant is met by one process when it is found, i.e. in the rank order of
        # the previous level's transitions: compared with their problems, whose ranks have the same length
        first = min((p for p in problems if p.event is None), key=lambda p: p.rank, default=None)
        first = min([*pending, *([first] if first is not None else [])], key=lambda p: p.rank, default=None)
        if first is not None:
            out.unpersist()
            chain = _path(visited, first.at)
            path = replay(space, stepper, state, chain)
            if first.event is not None:
                path.append(first.event)
            finding = Finding(
                first.kind, first.message, tuple(prefix + path), first.differences, first.violations
            )
            return done(finding, path)
        pending = [p for p in problems if p.event is not None]
        if not pending and (new == 0 or not expand):
            out.unpersist()
            break
        if stats.distinct_states >= space.max_states and not pending:
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


def _path(visited: Any, fp: int) -> list[int]:
    """The fingerprints of the states from the initial one to the visited state ``fp``, from the parents'."""
    chain = [fp]
    while True:
        (level, parent, _rank, _state), *_ = _lookup(visited, chain[-1])
        if level == 0:
            return list(reversed(chain))
        chain.append(parent)


def start_session(master: str = "local[*]") -> Any:
    """A Spark session for exploring, started as the audit starts its own (``conformance.audit.session``: Spark's
    output kept in a private log folder, the driver on the loopback interface in local mode)."""
    from kcspec.conformance.audit.session import make_session

    return make_session(master, app="kcspec-explore")


__all__ = ["LevelCost", "SparkExploration", "Within", "spark_search", "start_session"]
