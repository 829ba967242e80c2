"""Breadth-first exploration on several processes (``kcspec explore --workers N``), as TLC's workers do.

The states are partitioned by fingerprint (``fingerprint.py``): the state with fingerprint ``f`` belongs to worker
``f % N``, which alone keeps its fingerprint, deduplicates it and expands it. The search goes level by level, its
files in one folder (``levels.py``):

1. **expand**: every worker expands its share of the level's frontier, in ascending rank (``stepper.rank_of``),
   checking every transition (``Stepper.transitions``: refinement and step invariants), up to its first problem.
   A successor it owns is kept for its own merge; one owned by another worker is written to the file of states
   sent to that worker, unless this worker sent it before (a second fingerprint set, ``known``, remembers what it
   sent: its owner has it since).
2. **merge**: every worker reads the successors found for it, keeps per fingerprint the one of least rank that it
   has not visited, and, in ascending rank, records it (visited set, trail), checks its state invariants (up to the
   first violation) and writes it to its frontier of the next level. A level too big for the merge's memory budget
   is sorted in runs on disk and merged back (``merge.py``), with the same result.

Every transition is checked once and every new state once, as in one process, so the distinct-state and
transition counts are the same. **The counterexample is the one a single process reports, on every run**: among
the problems of the level (a transition's in step 1, a new state's in step 2) the one of least rank is the one a
one-process search meets first — each worker expanded, in rank order, every transition of smaller rank than its
own first problem, and the merge kept every state's least-rank parent, which is the parent one process records.
The trace is rebuilt, as in one process, from the parents' fingerprints (``explorer.replay``).

Workers are forked from the coordinator, so they share its loaded modules, compiled spec and any patch applied to
the reference controller (the bug zoo's mutants). States travel between workers through files, pickled once.

``--max-states`` is checked at the end of a level, so a truncated search may count part of a level more than one
process would. With one worker the one-process search (``explorer.search``) runs, not this.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.explore.collect import young_collections_only
from kcspec.conformance.selfcheck.explore.explorer import (
    IN_MEMORY,
    ExploreResult,
    Finding,
    SearchSpace,
    begin,
    fingerprint_path,
    finish,
    replay,
    save_level,
    start_state,
    stepper_of,
)
from kcspec.conformance.selfcheck.explore.fingerprint import FingerprintSet
from kcspec.conformance.selfcheck.explore.levels import (
    FrontierWriter,
    LevelFileError,
    LevelStore,
    TrailWriter,
    owner_of,
    read_records,
)
from kcspec.conformance.selfcheck.explore.merge import LevelMerge
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.stepper import Problem, rank_of
from kcspec.model.interrupts import stopper, worker_initializer
from kcspec.model.invariants_check import Violation
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState

PROGRESS_SECONDS = 10.0
"""How often the coordinator reports progress while a level is being expanded."""


def default_workers() -> int:
    """The machine's cores available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class LevelProblem:
    """A worker's first problem on a level, at ``rank``: on the transition ``event`` out of the state ``parent``
    (``event`` set), or the new state ``state`` of the next level breaking a state invariant (``event`` ``None``)."""

    rank: bytes
    parent: int
    event: ControllerEvent | None
    state: int
    kind: str
    message: str
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


@dataclass(frozen=True)
class _Merged:
    new_states: int
    frontier: int
    problem: LevelProblem | None


class _Worker:
    """One partition of the search: its visited fingerprints and what it sent to other workers."""

    def __init__(
        self, index: int, workers: int, space: SearchSpace, store: LevelStore, visited: FingerprintSet
    ) -> None:
        self.index = index
        self.workers = workers
        self.space = space
        self.store = store
        self.stats = ExploreStats()
        self.stepper = stepper_of(space, self.stats)
        self.visited = visited
        self.known = FingerprintSet()
        """Fingerprints this worker sent to their owners: known to them, so never sent again."""
        self.current: FrontierWriter | None = None
        """The frontier this worker expands next, as its merge wrote it (``None``: read it from its file)."""
        self.own: FrontierWriter | None = None
        """The successors of this level this worker owns itself, as its expansion wrote them."""
        self.expanded: Any = None
        """A shared counter of the states this worker has expanded on the current level (progress)."""

    def expand(self, level: int) -> LevelProblem | None:
        """Expand this worker's frontier of ``level``; the successors go to the send files of ``level + 1``."""
        me, workers, store = self.index, self.workers, self.store
        visited, known = self.visited, self.known
        memory = 0 if store.kept else IN_MEMORY
        outs = [
            FrontierWriter(store.send(level + 1, me, w), memory if w == me else 0) for w in range(workers)
        ]
        self.own = outs[me]
        mine: set[int] = set()
        source = (
            self.current.entries() if self.current is not None else read_records(store.frontier(level, me))
        )
        self.current = None
        try:
            for fp, _parent, rank, data in source:
                state: ClusterState = pickle.loads(data) if isinstance(data, bytes) else data
                for t in self.stepper.transitions(state, fp):
                    if isinstance(t, Problem):
                        return LevelProblem(
                            rank_of(rank, t.index), fp, t.event, 0, t.kind, t.message, t.differences
                        )
                    if t.step_violations:
                        bad = list(t.step_violations)
                        if t.key is not None and t.key not in visited:
                            bad = self.stepper.checker.check_state(t.state) + bad
                        message = "invariant violated: " + ", ".join(v.name for v in bad)
                        return LevelProblem(
                            rank_of(rank, t.index),
                            fp,
                            t.event,
                            0,
                            "invariant",
                            message,
                            violations=tuple(bad),
                        )
                    nfp = t.key
                    if nfp is None:
                        continue
                    w = owner_of(nfp, workers)
                    if w == me:
                        if nfp in visited or nfp in mine:
                            continue
                        mine.add(nfp)  # the first of this level's paths to it in rank order: the least rank
                    elif not known.add(nfp):
                        continue
                    outs[w].add(nfp, fp, rank_of(rank, t.index), t.state)
                if self.expanded is not None:
                    self.expanded.value += 1
            return None
        finally:
            for out in outs:
                out.close()

    def merge(self, level: int) -> _Merged:
        """Keep the new states of ``level`` sent to this worker, in ascending rank, checking their state
        invariants; they are its frontier of ``level``. At most ``merge.MERGE_BUDGET`` bytes of them are held in
        memory: a bigger level is sorted in runs on disk, then merged (``merge.py``), with the same result."""
        me, store = self.index, self.store
        with LevelMerge(self.visited, lambda n: store.run(level, me, n)) as states:
            for sender in range(self.workers):
                path = store.send(level, sender, me)
                own = sender == me and self.own is not None
                states.add(self.own.entries() if own and self.own is not None else read_records(path))
                path.unlink(missing_ok=True)
            self.own = None
            checker = self.stepper.checker
            # kept unpickled for the next level's expansion (a level that passed the budget is far bigger)
            small = not store.kept and not states.spilled and len(states) <= IN_MEMORY
            frontier = FrontierWriter(store.frontier(level, me), IN_MEMORY if small else 0)
            trail = TrailWriter(store.trail(level, me))
            problem = None
            try:
                for fp, parent, rank, data in states.records():
                    trail.add(fp, parent)
                    state = pickle.loads(data) if type(data) is bytes else data
                    if small:
                        frontier.add(fp, parent, rank, state)
                    else:
                        pickled = (
                            data if type(data) is bytes else pickle.dumps(state, pickle.HIGHEST_PROTOCOL)
                        )
                        frontier.add_record((fp, parent, rank, pickled))
                    bad = checker.check_state(state)
                    if bad:
                        message = "invariant violated: " + ", ".join(v.name for v in bad)
                        problem = LevelProblem(
                            rank, parent, None, fp, "invariant", message, violations=tuple(bad)
                        )
                        break
            finally:
                frontier.close()
                trail.close()
            new_states = states.new_states()
        self.current = frontier
        return _Merged(new_states, frontier.count, problem)

    def save(self, level: int) -> None:
        self.store.visited(level, self.index).write_bytes(self.visited.to_bytes())


def _serve(worker: _Worker, conn: Connection, nice: int) -> None:
    """A worker process: answer the coordinator's requests until told to stop (at ``nice`` more niceness than the
    coordinator, ``search_parallel``)."""
    worker_initializer()  # Ctrl-C is the coordinator's to handle; a worker dies with it
    if nice:
        os.nice(nice)
    with young_collections_only():
        while True:
            request, arg = conn.recv()
            try:
                if request == "expand":
                    worker.expanded.value = 0
                    conn.send(worker.expand(arg))
                elif request == "merge":
                    conn.send(worker.merge(arg))
                elif request == "save":
                    worker.save(arg)
                    conn.send(None)
                elif request == "stats":
                    worker.stats.fingerprint_bytes = worker.visited.nbytes + worker.known.nbytes
                    conn.send(worker.stats)
                else:
                    break
            except LevelFileError as exc:
                conn.send(exc)  # a damaged level file: the coordinator raises it (one line, exit 2)
    # the process ends here without freeing its sets object by object; the system takes the memory back at once
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _Pool:
    """The worker processes, their pipes and their progress counters."""

    def __init__(self, workers: list[_Worker], nice: int = 0) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        self.counters = [ctx.Value("q", 0, lock=False) for _ in workers]
        for worker, counter in zip(workers, self.counters, strict=True):
            worker.expanded = counter
            mine, theirs = ctx.Pipe()
            p = ctx.Process(
                target=_serve, args=(worker, theirs, nice), name=f"kcspec-explore-{worker.index}", daemon=True
            )
            p.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(p)

    def ask_all(
        self, request: str, arg: object = None, waiting: Callable[[int], None] | None = None
    ) -> list[Any]:
        """Send every worker ``request``, then collect the answers (``waiting`` is called every
        ``PROGRESS_SECONDS`` with the states expanded so far)."""
        for conn in self.conns:
            conn.send((request, arg))
        pending = set(range(len(self.conns)))
        answers: list[Any] = [None] * len(self.conns)
        while pending:
            ready = wait([self.conns[w] for w in pending], timeout=PROGRESS_SECONDS)
            for w in list(pending):
                if self.conns[w] in ready:
                    answers[w] = self._answer(w)
                    pending.discard(w)
            if not ready and waiting is not None:
                waiting(sum(c.value for c in self.counters))
        return answers

    def _answer(self, worker: int) -> Any:
        try:
            answer = self.conns[worker].recv()
        except EOFError:
            proc = self.procs[worker]
            proc.join(timeout=1)
            raise RuntimeError(
                f"explorer worker {worker} ended unexpectedly (exit code {proc.exitcode}); its error is above"
            ) from None
        if isinstance(answer, LevelFileError):
            raise answer
        return answer

    def terminate(self) -> None:
        """End the workers now (an interrupt)."""
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(timeout=5)

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop", None))
                conn.close()
            except OSError:
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()


def search_parallel(
    space: SearchSpace,
    workers: int,
    progress: Callable[[ExploreStats], None] | None = None,
    checkpoint: Path | None = None,
    resume: bool = False,
    nice: int = 0,
) -> ExploreResult:
    """Breadth-first search of ``space`` on ``workers`` processes (the same checks, counts and counterexample as
    ``search``), checkpointed in ``checkpoint`` at every level's end, or resumed from it. The worker processes run
    ``nice`` steps of niceness below this process (``os.nice``; 0 leaves them at its priority): a caller that runs
    a sequential job beside the search gives that job the precedence (``tla_crosscheck.EXPLORER_NICE``)."""
    if workers < 1:
        raise ValueError(f"--workers must be ≥ 1, got {workers}")
    if nice < 0:
        raise ValueError(f"nice must be ≥ 0 (a worker can only lower its priority), got {nice}")
    stats = ExploreStats(workers=workers)
    stepper = stepper_of(space)
    spec = stepper.spec
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, stepper.checker.check_state)
    stats.distinct_states = 1
    if finding0 is not None:
        return finish(space, stats, finding0, spec, prefix, [], start)
    store = LevelStore(checkpoint)
    try:
        begun = begin(space, store, resume, stats, state, stepper.fingerprint(state), workers)
        pool = _Pool([_Worker(w, workers, space, store, begun.visited[w]) for w in range(workers)], nice)
        del begun.visited[:]  # each worker has its own (forked) copy
        try:
            with stopper(pool.terminate):
                found, level = _levels(space, pool, stats, begun.level, begun.seconds, start, store, progress)
        except BaseException:
            pool.terminate()  # an interrupt or an error: the workers' current level is not waited for
            raise
        finally:
            saved = ExploreStats()
            if pool.procs and all(p.is_alive() for p in pool.procs):
                for part in pool.ask_all("stats"):
                    saved.merge_counts(part)
                    saved.fingerprint_bytes += part.fingerprint_bytes
            pool.close()
        stats.merge_counts(saved)
        stats.fingerprint_bytes = saved.fingerprint_bytes
        if found is None:
            return finish(space, stats, None, spec, prefix, [], start, None, begun.seconds)
        chain = fingerprint_path(store, level, found.parent)
        if found.event is None:
            chain.append(found.state)
        path = replay(space, stepper, state, chain)
        if found.event is not None:
            path.append(found.event)
        finding = Finding(
            found.kind, found.message, tuple(prefix + path), found.differences, found.violations
        )
        return finish(space, stats, finding, spec, prefix, path, start, None, begun.seconds)
    finally:
        store.close()


def _levels(
    space: SearchSpace,
    pool: _Pool,
    stats: ExploreStats,
    level: int,
    earlier: float,
    start: float,
    store: LevelStore,
    progress: Callable[[ExploreStats], None] | None,
) -> tuple[LevelProblem | None, int]:
    """The level-by-level search from ``level`` (its frontier on disk): the least-rank problem met and the level of
    the state it was met from (``None`` and the last level if there was none)."""
    workers = len(pool.conns)

    shown = [stats]  # the counts at the last level's end (the workers' transitions included), shown meanwhile

    def waiting(expanded: int) -> None:
        if progress is not None:
            now = shown[0]
            now.level, now.level_started = stats.level, stats.level_started
            now.level_expanded = expanded
            now.seconds = earlier + time.perf_counter() - start
            progress(now)

    while space.depth is None or level < space.depth:
        if stats.level_sizes[level] == 0:
            break
        stats.begin_level(level)
        problems: list[LevelProblem] = [p for p in pool.ask_all("expand", level, waiting) if p is not None]
        merged: list[_Merged] = pool.ask_all("merge", level + 1)
        problems += [m.problem for m in merged if m.problem is not None]
        new = sum(m.new_states for m in merged)
        stats.distinct_states += new
        if new:
            stats.depth_reached = level + 1
        if problems:
            return min(problems, key=lambda p: p.rank), level
        level += 1
        stats.level_sizes.append(new)
        stats.seconds = earlier + time.perf_counter() - start
        stats.end_level(level)
        if store.kept or progress is not None:
            counts = copy.deepcopy(stats)  # the counts a resumed search started from, and the workers' since
            counts.fingerprint_bytes = 0
            for part in pool.ask_all("stats"):
                counts.merge_counts(part)
                counts.fingerprint_bytes += part.fingerprint_bytes
            if store.kept:
                pool.ask_all("save", level)
                save_level(space, store, level, counts, workers)
            if progress is not None:
                counts.level = level
                progress(counts)
                shown[0] = counts
        if stats.distinct_states >= space.max_states and new:
            stats.truncated = True
            stats.frontier_left = new
            break
    return None, level
