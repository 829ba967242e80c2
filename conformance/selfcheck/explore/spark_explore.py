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

**Checkpoints** (``--checkpoint DIR``, ``--resume DIR``) have the layout of the one-process and ``--workers``
searches (``levels.py``), the partitions of the visited set in the place of the workers: the visited set is
partitioned by ``fingerprint % partitions`` (``owner_key``), the owner a ``--workers`` search with as many workers
gives a state, so a checkpoint written on Spark resumes with ``--workers`` or one process, and the other way round.
The tasks of level ``L``'s job write, each for its partition ``P``, ``visited-L-P.bin`` (every fingerprint the
partition holds), ``trail-L-P.bin`` (the level's states and their parents) and ``frontier-L-P.bin`` (the level's
states in ascending rank), each to a temporary name renamed when whole (a task run twice writes the same file);
the driver then writes the counts and ``checkpoint.json``, unless the level ended the search with a problem (a
resumed run finds it again from the previous checkpoint). A resumed search rebuilds the visited set from the trails
(so that a counterexample still finds every parent) and the checkpoint's frontier; a damaged frontier file is a
``LevelFileError`` naming it, as without Spark, not the failure of the job that read it. The folder must be one the
driver and every executor see at the same path: any local master and ``local-cluster`` do; on a cluster, a shared
mount.

Embedded ``local[*]`` by default; any ``--master`` works unchanged (the executors need kcspec installed).
``--max-states`` is honoured at the end of a level, so the count may pass it by part of a level.
"""

from __future__ import annotations

import os
import pickle
import re
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.explore.explorer import (
    ExploreResult,
    Finding,
    SearchSpace,
    finish,
    replay,
    save_level,
    start_state,
    stepper_of,
)
from kcspec.conformance.selfcheck.explore.levels import (
    FrontierWriter,
    LevelFileError,
    LevelStore,
    TrailWriter,
    check_resumable,
    owner_of,
    read_checkpoint,
    read_records,
)
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.stepper import Successor, expand_batch
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


def _root_entry(within: Within | None, fp: int, text: str) -> tuple[int, Entry]:
    """The initial state (sent as canonical JSON) with its fingerprint."""
    with within() if within is not None else nullcontext():
        return fp, (0, 0, b"", codec.loads(text, ClusterState))


def _expand(
    space: SearchSpace,
    within: Within | None,
    level: int,
    expand: bool,
    save: str | None,
    part: int,
    rows: Iterable[tuple[int, Entry]],
) -> Iterator[tuple[int, Any]]:
    """One task of a level's job, on the partition ``part`` of the visited set: the states of ``level`` (the
    frontier, each one new) have their state invariants checked (but the initial state's, checked by the driver)
    and, with ``expand``, their checked successors yielded in ascending rank as ``(_SUCCESSOR, (fingerprint,
    (parent, rank, state)))``; then the least-rank state problem and transition problem (``_PROBLEM``,
    ``_Problem``) and ``(_COUNTS, (ExploreStats, frontier states, successors))``. With ``save`` a checkpoint folder,
    the partition's files of ``level`` are written there first (``save_partition``)."""
    stats = ExploreStats()
    problems: list[_Problem] = []
    successors: list[Successor] = []
    with within() if within is not None else nullcontext():
        stepper = stepper_of(space, stats)
        batch: list[tuple[ClusterState, int, bytes]] = []
        parents: list[tuple[int, int]] = []
        fps = array("Q")
        for fp, (at, parent, rank, state) in rows:
            fps.append(fp)
            if at == level and state is not None:
                batch.append((state, fp, rank))
                parents.append((fp, parent))
        batch.sort(key=lambda b: b[2])
        if save is not None:
            save_partition(Path(save), level, part, fps, parents, batch)
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


def save_partition(
    folder: Path,
    level: int,
    part: int,
    fps: array[int],
    parents: list[tuple[int, int]],
    frontier: list[tuple[ClusterState, int, bytes]],
) -> None:
    """Write the checkpoint files of partition ``part`` at the end of ``level`` (``levels.py``'s layout, the
    partition as the worker): its visited fingerprints ``fps``, the level's (fingerprint, parent) pairs (level ≥ 1)
    and its ``frontier`` states in ascending rank. Each is written to a temporary name and renamed when whole."""
    store = LevelStore(folder)
    parent_of = dict(parents)
    done: list[tuple[Path, Path]] = []
    visited = store.visited(level, part)
    tmp = visited.with_name(visited.name + ".tmp")
    tmp.write_bytes(fps.tobytes())
    done.append((tmp, visited))
    if level > 0:
        trail = store.trail(level, part)
        tmp = trail.with_name(trail.name + ".tmp")
        pairs = TrailWriter(tmp)
        for fp, parent in parents:
            pairs.add(fp, parent)
        pairs.close()
        done.append((tmp, trail))
    path = store.frontier(level, part)
    tmp = path.with_name(path.name + ".tmp")
    writer = FrontierWriter(tmp)
    for state, fp, rank in frontier:
        writer.add(fp, parent_of[fp], rank, state)
    writer.close()
    done.append((tmp, path))
    for tmp, path in done:
        os.replace(tmp, path)


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


def owner_key(fp: int) -> int:
    """The partitioning key of a fingerprint: Spark's hash partitioner takes it modulo the partitions, so the
    partition of ``fp`` is ``levels.owner_of(fp, partitions)``, the worker a ``--workers`` search gives it."""
    return fp


def spark_search(
    space: SearchSpace,
    spark: Any,
    within: Within | None = None,
    partitions: int | None = None,
    progress: Callable[[ExploreStats], None] | None = None,
    checkpoint: Path | None = None,
    resume: bool = False,
) -> SparkExploration:
    """Breadth-first search of ``space`` on the session ``spark``, with the checks, counts and counterexample of
    ``search``. With ``checkpoint`` a folder, the end of every level is checkpointed there; with ``resume`` too,
    the search continues from its checkpoint (``ValueError`` if it cannot be resumed)."""
    from pyspark import StorageLevel

    if resume and checkpoint is None:
        raise ValueError("resuming needs the checkpoint folder")
    sc = spark.sparkContext
    parts = partitions or sc.defaultParallelism
    stats = ExploreStats(workers=sc.defaultParallelism)
    stepper = stepper_of(space)
    spec = stepper.spec
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, stepper.checker.check_state)
    levels: list[LevelCost] = []
    earlier = 0.0

    def done(finding: Finding | None, path: list[ControllerEvent]) -> SparkExploration:
        result = finish(space, stats, finding, spec, prefix, path, start, None, earlier)
        return SparkExploration(result, sc.master, sc.defaultParallelism, parts, tuple(levels))

    stats.distinct_states = 1
    if finding0 is not None:
        return done(finding0, [])

    text, root_fp = codec.dumps(state), stepper.fingerprint(state)
    store = LevelStore(checkpoint) if checkpoint is not None else None
    save = str(checkpoint.absolute()) if checkpoint is not None else None
    depth, resumed = 0, -1
    if store is not None and resume:
        meta, saved = read_checkpoint(store.folder)
        check_resumable(store.folder, meta, space.description, space.fingerprints.name)
        store.drop_after(meta.level)
        stats.restore(saved)
        depth = resumed = meta.level
        earlier = meta.seconds
        visited = _resumed_visited(sc, store, meta.level, root_fp, parts, within)
    else:
        if store is not None:
            store.drop_after(-1)
        stats.level_sizes = []
        visited = sc.parallelize([text], 1).map(lambda t: _root_entry(within, root_fp, t))
    _keep(visited)
    with _level_file_errors(), _watching(sc, stats, progress):
        previous = cast(tuple[Any, ...], ())
        pending: list[
            _Problem
        ] = []  # the previous level's transition problems, compared with this level's states'
        while True:
            t0 = time.perf_counter()
            expand = not pending and (space.depth is None or depth < space.depth)
            writes = save if depth != resumed else None  # a resumed level's files are the checkpoint's own
            out = visited.mapPartitionsWithIndex(
                lambda part, rows, d=depth, e=expand, w=writes: _expand(space, within, d, e, w, part, rows)
            )
            out.persist(StorageLevel.MEMORY_AND_DISK)
            # one job: the deduplication of this level (the shuffle's reduce side, materialising the visited set) and
            # the expansion of its new states run in the same tasks
            meta_rows = out.filter(lambda r: r[0] != _SUCCESSOR).map(lambda r: r[1]).collect()
            for rdd in previous:
                rdd.unpersist()
            problems = [m for m in meta_rows if isinstance(m, _Problem)]
            counts = [m for m in meta_rows if isinstance(m, tuple)]
            new = sum(m[1] for m in counts)
            produced = sum(m[2] for m in counts)
            seconds = time.perf_counter() - t0
            if depth != resumed:
                if depth > 0:
                    stats.distinct_states += new
                    if new:
                        stats.depth_reached = depth
                stats.level_sizes.append(new)
            stats.seconds = earlier + time.perf_counter() - start
            levels.append(LevelCost(depth, new, produced, seconds))
            # a new state breaking a state invariant is met by one process when it is found, i.e. in the rank order of
            # the previous level's transitions: compared with their problems, whose ranks have the same length
            first = min((p for p in problems if p.event is None), key=lambda p: p.rank, default=None)
            first = min(
                [*pending, *([first] if first is not None else [])], key=lambda p: p.rank, default=None
            )
            if store is not None and writes is not None and first is None:
                # the end of ``depth``: its files are written; the counts are those before its expansion
                save_level(space, store, depth, stats, visited.getNumPartitions())
            for m in counts:
                stats.merge_counts(m[0])
            expands = space.depth is None or depth + 1 < space.depth
            _estimate(stats, depth, new, produced if expands else 0, seconds, levels)
            if progress is not None:
                progress(stats)
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
                .reduceByKey(_merge, parts, owner_key)
            )
            _keep(merged)  # materialised by the next level's job, which reads every partition
            previous = (out, visited)  # what ``merged`` is computed from: released once the next job has run
            visited = merged
            depth += 1
    return done(None, [])


_LEVEL_FILE_ERROR = re.compile(r"\bLevelFileError: (.+)")


@contextmanager
def _level_file_errors() -> Iterator[None]:
    """A damaged level file read by an executor (the checkpoint's frontier, when a search resumes) fails the Spark
    job: Spark's exception holds the executor's traceback, whose last line is the ``LevelFileError``. It is raised
    again here as that ``LevelFileError`` (a ``ValueError`` naming the file: ``kcspec explore`` reports it in one
    line, exit 2, as without ``--spark``) instead of the job's failure."""
    try:
        yield
    except LevelFileError:
        raise
    except Exception as exc:
        found = _LEVEL_FILE_ERROR.findall(str(exc))
        if not found:
            raise
        raise LevelFileError(found[-1].strip()) from None


ESTIMATE_FROM = 1_000
"""The fewest states a level's job must have expanded for its seconds per state to estimate the next level's."""

WATCH_SECONDS = 10.0
"""How often the driver reads how far the running job is (``_watching``)."""


@contextmanager
def _watching(
    sc: Any, stats: ExploreStats, progress: Callable[[ExploreStats], None] | None
) -> Iterator[None]:
    """While the levels run: every ``WATCH_SECONDS`` the tasks done of the running job's active stages
    (``ExploreStats.level_tasks``, from Spark's status tracker) are reported to ``progress``, so a long level shows
    how far it is."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        tracker = sc.statusTracker()
        while not stop.wait(WATCH_SECONDS):
            done = total = 0
            for stage in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage)
                if info is not None:
                    done, total = done + info.numCompletedTasks, total + info.numTasks
            if total and not stop.is_set():
                stats.level_tasks = (done, total)
                progress(stats)

    watcher = threading.Thread(target=watch, name="kcspec-explore-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def _estimate(
    stats: ExploreStats, depth: int, new: int, produced: int, seconds: float, levels: list[LevelCost]
) -> None:
    """After the job of ``depth`` (``new`` states expanded into ``produced`` successors in ``seconds``; ``produced``
    0 if the next level is not expanded): the next level is being worked on, its size unknown until its job ends.
    Its states are estimated as the successors times the share of new ones among the previous level's successors,
    and its time at this job's seconds per state — only after a level of ``ESTIMATE_FROM`` states or more: a
    smaller job's time is Spark's per-job floor (and the Python workers' start), not a cost per state."""
    stats.end_level(depth + 1)
    stats.level_started = time.perf_counter()
    stats.level_tasks = None
    before = levels[-2].successors if len(levels) >= 2 else 0
    share = new / before if before else 1.0
    expected = produced * min(1.0, share)
    stats.level_estimate = seconds / new * expected if new >= ESTIMATE_FROM and produced else None


def _resumed_visited(
    sc: Any, store: LevelStore, level: int, root_fp: int, parts: int, within: Within | None
) -> Any:
    """The visited set of a checkpoint at the end of ``level``: the initial state, the states of levels 1 to
    ``level`` - 1 with their parents (from the trails) and the frontier of ``level`` with its states, partitioned by
    ``owner_key`` as the search partitions it."""
    files = [(at, str(path)) for at in range(1, level) for path in store.files("trail", at)]
    files += [(level, str(path)) for path in store.files("frontier", level)]
    root = sc.parallelize([(root_fp, (0, 0, b"", None))], 1) if level > 0 else None
    rdd = sc.parallelize(files, max(1, len(files))).flatMap(lambda f: _read_entries(within, level, *f))
    if root is not None:
        rdd = rdd.union(root)
    return rdd.partitionBy(parts, owner_key)


def _read_entries(within: Within | None, level: int, at: int, path: str) -> Iterator[tuple[int, Entry]]:
    """The visited entries of one checkpoint file: a trail's (no rank or state: never on the frontier again) or
    the frontier's of ``level``."""
    if at < level:
        pairs = array("Q")
        pairs.frombytes(Path(path).read_bytes())
        for i in range(0, len(pairs), 2):
            yield pairs[i], (at, pairs[i + 1], b"", None)
        return
    with within() if within is not None else nullcontext():
        for fp, parent, rank, data in read_records(Path(path)):
            yield fp, (at, parent, rank, pickle.loads(data))


def _keep(rdd: Any) -> None:
    """Keep ``rdd`` once computed and cut its lineage there. ``persist`` first: PySpark fuses a Python function into
    the next one (its "pipelining") unless the RDD is marked cached, and then the RDD that ``localCheckpoint``
    marked would never be computed — every level would recompute the ones before it."""
    from pyspark import StorageLevel

    rdd.persist(StorageLevel.MEMORY_AND_DISK)
    rdd.localCheckpoint()


def _lookup(visited: Any, fp: int) -> list[Entry]:
    """The entries of ``fp`` in the visited set, read from the one partition that holds it (``owner_key``).
    (``RDD.lookup`` would compute that partition with PySpark's ``portable_hash``, which refuses to run in a
    driver without ``PYTHONHASHSEED``.)"""
    partitioner = visited.partitioner
    parts = [owner_of(fp, partitioner.numPartitions)] if partitioner is not None else None
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
    """A Spark session for exploring, started as the audit starts its own (``model/spark/session.py``: Spark's
    output kept in a private log folder, the driver on the loopback interface in local mode)."""
    from kcspec.model.spark.session import make_session

    return make_session(master, app="kcspec-explore")


__all__ = [
    "LevelCost",
    "SparkExploration",
    "Within",
    "owner_key",
    "save_partition",
    "spark_search",
    "start_session",
]
