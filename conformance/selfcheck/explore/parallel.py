"""Breadth-first exploration on several processes (``kcspec explore --workers N``), as TLC's workers do.

The states are partitioned by fingerprint: the state with key ``k`` belongs to worker ``hash(k) % N``, which alone
stores it, deduplicates it and expands it. The search goes level by level:

1. **expand**: every worker computes the checked successors of its share of the level's frontier
   (``stepper.expand_batch``: refinement and step invariants on every transition) and groups them by owner;
2. **merge**: the coordinator hands every worker the successors it owns; the worker keeps the ones it has not
   seen, checks their state invariants and makes them its share of the next level's frontier;
3. **balance**: when the shares of the next level differ by more than a few states, workers with more than
   their share hand the surplus to the others to expand (the owner keeps the states' ids and parents), so that
   no worker waits long for the slowest at the end of the level.

Every transition is checked once and every new state once, as in one process, so the distinct-state and
transition counts are the same. A problem found while a level is expanded or merged has a trace of that level's
length + 1, and no problem was found on an earlier level, so the reported counterexample is a shortest one
(among several of the same length, the one of the lowest-numbered worker; the fingerprint partition follows
Python's string hashing, so which one may vary between runs). The trace is rebuilt from parent ids kept by the
owning workers.

Workers are forked from the coordinator, so they share its loaded modules, compiled spec, hash seed (the
fingerprint partition must agree between processes) and any patch applied to the reference controller (the bug
zoo's mutants). The successors travel pickled, as plain tuples, each key with the hash its finder computed and
every map with its cached hash (the hash seed is shared), so no receiver hashes them again; the coordinator
forwards the bytes without reading them.

``--max-states`` is checked at the end of a level, so a truncated search may count part of a level more than one
process would. With one worker the one-process search (``explorer.search``) runs, not this.
"""

from __future__ import annotations

import copyreg
import gc
import io
import multiprocessing
import os
import pickle
import sys
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from kcspec.conformance.selfcheck.explore.collect import young_collections_only
from kcspec.conformance.selfcheck.explore.explorer import (
    ExploreResult,
    Finding,
    SearchSpace,
    finish,
    start_state,
)
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.stepper import (
    BatchFinding,
    StateId,
    Stepper,
    expand_batch,
)
from kcspec.model.interrupts import stopper, worker_initializer
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine
from kcspec.model.symmetry import canonical_state
from kcspec.spec.events import ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState


def default_workers() -> int:
    """The machine's cores available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def owner(key: Hashable, workers: int) -> int:
    """The worker that stores, deduplicates and expands the state with ``key``."""
    return hash(key) % workers


def _fmap_with_hash(d: dict[Any, Any], h: int | None) -> FMap[Any, Any]:
    """An unpickled map with the hash its sender had computed (workers share the coordinator's hash seed)."""
    m: FMap[Any, Any] = FMap.adopt(d)
    m._h = h
    return m


def _reduce_fmap(m: FMap[Any, Any]) -> tuple[Any, tuple[dict[Any, Any], int | None]]:
    return _fmap_with_hash, (m._d, m._h)


_DISPATCH = copyreg.dispatch_table.copy()
_DISPATCH[FMap] = _reduce_fmap


def _dumps(obj: object) -> bytes:
    """``obj`` pickled for another worker: maps keep their cached hashes. ``FMap``'s own pickling leaves the hash
    out, as another process may hash strings differently; forked workers hash them alike, so a receiver need not
    hash a transferred state's maps again (its symmetry cache, the invariants and the reference controller's
    tables look states up by value)."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = _DISPATCH
    p.dump(obj)
    return buf.getvalue()


class _Key:
    """A state's key with its hash, computed once by the worker that found the state: a key is looked up several
    times on its way (the finder's known keys, the owner, the owner's states), and a ``ClusterState`` hashes
    through its nested dataclasses on every look-up. It travels with the key (workers share one hash seed)."""

    __slots__ = ("h", "k")

    def __init__(self, k: Hashable, h: int) -> None:
        self.k = k
        self.h = h

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.h == other.h and self.k == other.k

    def __reduce__(self) -> tuple[type[_Key], tuple[Hashable, int]]:
        return _Key, (self.k, self.h)


_Sent = tuple[_Key, ClusterState, StateId, ControllerEvent]
"""A successor on its way to its owner: key, state, parent id, event."""


@dataclass(frozen=True)
class _Merged:
    new_states: int
    frontier: int
    finding: BatchFinding | None


class _Worker:
    """One partition of the search: its states' keys, parent ids and frontier."""

    def __init__(self, index: int, workers: int, space: SearchSpace) -> None:
        self.index = index
        self.workers = workers
        self.stats = ExploreStats()
        self.stepper = Stepper(
            space.profile, space.candidates, space.brokers, space.symmetry, space.keep, self.stats
        )
        self.seen: set[_Key] = set()
        """The keys of this worker's states, and the keys it sent to their owners on earlier levels (the owners
        have them now): known either way, so never sent again. A worker receives only keys it owns, so for them
        this is the set of states it has."""
        self.parents: list[tuple[StateId | None, ControllerEvent | None]] = []
        self.frontier: list[tuple[ClusterState, StateId]] = []
        self.own: list[_Sent] = []

    def seed(self, key: Hashable, state: ClusterState) -> None:
        self.seen.add(_Key(key, hash(key)))
        self.parents.append((None, None))
        self.frontier.append((state, (self.index, 0)))

    def expand(self) -> tuple[list[bytes | None], BatchFinding | None]:
        """This level's successors of the worker's frontier, pickled per owning worker (its own kept here)."""
        successors, finding = expand_batch(self.stepper, self.frontier)
        self.frontier = []
        me, workers, seen = self.index, self.workers, self.seen
        own: dict[_Key, _Sent] = {}
        groups: list[list[_Sent]] = [[] for _ in range(workers)]
        for s in successors:
            key = s.key
            h = hash(key)  # once: the set look-ups, the owner and the owner's look-ups use it
            k = _Key(key, h)
            if k in seen:
                continue  # known to its owner already: nothing to send
            # the first of several same-level paths to a state is kept, as one process keeps it
            w = h % workers
            if w == me:
                if k not in own:
                    own[k] = (k, s.state, s.parent, s.event)
            else:
                seen.add(k)  # sent now: a later path to it on this level is a duplicate
                groups[w].append((k, s.state, s.parent, s.event))
        self.own = list(own.values())
        return [_dumps(g) if g else None for g in groups], finding

    def give(self, plan: list[tuple[int, int]]) -> list[tuple[int, bytes]]:
        """States of this worker's frontier for other workers to expand: ``count`` of them for each ``(worker,
        count)`` of ``plan``, from the end of the frontier, pickled. Their ids stay this worker's (it keeps their
        parents), so a trace through them is rebuilt as before."""
        out = []
        for to, count in plan:
            moved = self.frontier[len(self.frontier) - count :]
            del self.frontier[len(self.frontier) - count :]
            out.append((to, _dumps(moved)))
        return out

    def take(self, parts: list[bytes]) -> None:
        """Add states given by other workers to this worker's frontier, to expand on this level."""
        for part in parts:
            self.frontier.extend(pickle.loads(part))

    def merge(self, parts: list[bytes]) -> _Merged:
        """Keep the unseen successors sent to this worker, checking their state invariants."""
        incoming = self.own
        self.own = []
        collecting = gc.isenabled()
        gc.disable()  # unpickled states hold no cycles: no collection scans the heap while thousands arrive
        try:
            for part in parts:
                incoming.extend(pickle.loads(part))
            # The states that arrived are kept to the end of the search (or freed at once by reference counting if
            # already known): moved out of the collector's generations here, they are not traversed by every young
            # collection that follows (up to a million objects each time). That made their state invariants, checked
            # below, take twice as long: a worker's merge 0.37 -> 0.20 CPU s at depth 4 (14,211 states). Cyclic
            # garbage still young at this moment is never collected; the process ends with the search.
            gc.freeze()
        finally:
            if collecting:
                gc.enable()
        new = 0
        checker = self.stepper.checker
        seen = self.seen
        for k, state, parent, event in incoming:
            known = len(seen)
            seen.add(k)
            if len(seen) == known:
                continue
            sid = (self.index, len(self.parents))
            self.parents.append((parent, event))
            new += 1
            bad = checker.check_state(state)
            if bad:
                message = "invariant violated: " + ", ".join(v.name for v in bad)
                return _Merged(
                    new, 0, BatchFinding(parent, event, "invariant", message, violations=tuple(bad))
                )
            self.frontier.append((state, sid))
        return _Merged(new, len(self.frontier), None)


def _serve(index: int, workers: int, space: SearchSpace, conn: Connection) -> None:
    """A worker process: answer the coordinator's requests until told to stop."""
    worker_initializer()  # Ctrl-C is the coordinator's to handle; a worker dies with it
    # (no gc.freeze(): with the inherited objects frozen, the collector's count of long-lived objects starts near
    # zero and full collections come far more often — measured, the merge step took twice as long)
    with young_collections_only():
        worker = _Worker(index, workers, space)
        _answer(worker, conn)
        # Told to stop: the process ends here, with ``worker`` still held, so its states, keys and parents are not
        # freed object by object (a tenth of a second at 14,000 states, which the coordinator waited for in
        # ``_Pool.close``); the system takes the memory back at once. Nothing is left to finalize or flush but the
        # standard streams (an error still ends the process through ``multiprocessing``, which reports it).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _answer(worker: _Worker, conn: Connection) -> None:
    """Run the coordinator's requests until told to stop."""
    while True:
        request, arg = conn.recv()
        if request == "seed":
            key, state = arg
            worker.seed(key, state)
            conn.send(None)
        elif request == "expand":
            conn.send(worker.expand())
        elif request == "give":
            conn.send(worker.give(arg))
        elif request == "take":
            worker.take(arg)
            conn.send(None)
        elif request == "merge":
            conn.send(worker.merge(arg))
        elif request == "parent":
            conn.send(worker.parents[arg])
        elif request == "stats":
            conn.send(worker.stats)
        else:
            conn.close()
            return


class _Pool:
    """The worker processes and their pipes."""

    def __init__(self, workers: int, space: SearchSpace) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        for i in range(workers):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(
                target=_serve, args=(i, workers, space, theirs), name=f"kcspec-explore-{i}", daemon=True
            )
            p.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(p)

    def ask(self, worker: int, request: str, arg: object = None) -> Any:
        self.conns[worker].send((request, arg))
        return self._answer(worker)

    def ask_all(self, requests: list[tuple[str, object]]) -> list[Any]:
        """Send every worker its request, then collect the answers (the workers run meanwhile)."""
        for conn, req in zip(self.conns, requests, strict=True):
            conn.send(req)
        return [self._answer(w) for w in range(len(self.conns))]

    def _answer(self, worker: int) -> Any:
        try:
            return self.conns[worker].recv()
        except EOFError:
            proc = self.procs[worker]
            proc.join(timeout=1)
            raise RuntimeError(
                f"explorer worker {worker} ended unexpectedly (exit code {proc.exitcode}); its error is above"
            ) from None

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
) -> ExploreResult:
    """Breadth-first search of ``space`` on ``workers`` processes (the same checks and counts as ``search``)."""
    if workers < 1:
        raise ValueError(f"--workers must be ≥ 1, got {workers}")
    spec = SpecMachine(space.profile)
    checker = InvariantChecker(space.profile)  # compiled before forking, so every worker inherits it
    stats = ExploreStats(workers=workers)
    start = time.perf_counter()
    state, prefix, finding0 = start_state(space, spec, checker.check_state)
    stats.distinct_states = 1
    if finding0 is not None:
        return finish(space, stats, finding0, spec, prefix, [], start)
    pool = _Pool(workers, space)
    try:
        with stopper(pool.terminate):
            return _levels(space, workers, pool, spec, stats, prefix, state, start, progress)
    except BaseException:
        pool.terminate()  # an interrupt or an error: the workers' current level is not waited for
        raise
    finally:
        pool.close()


def _levels(
    space: SearchSpace,
    workers: int,
    pool: _Pool,
    spec: SpecMachine,
    stats: ExploreStats,
    prefix: list[ControllerEvent],
    state: ClusterState,
    start: float,
    progress: Callable[[ExploreStats], None] | None,
) -> ExploreResult:
    """The level-by-level search, from the bootstrapped ``state``."""
    root_key = canonical_state(state, space.brokers) if space.symmetry else state
    pool.ask(owner(root_key, workers), "seed", (root_key, state))
    level, frontier = 0, 1
    sizes: list[int] = []
    found: BatchFinding | None = None
    while frontier and (space.depth is None or level < space.depth):
        _balance(pool, sizes)
        expanded = pool.ask_all([("expand", None)] * workers)
        found = next((f for _, f in expanded if f is not None), None)
        if found is None:
            inboxes = [[out[w] for out, _ in expanded if out[w] is not None] for w in range(workers)]
            merged: list[_Merged] = pool.ask_all([("merge", inbox) for inbox in inboxes])
            new = sum(m.new_states for m in merged)
            sizes = [m.frontier for m in merged]
            frontier = sum(sizes)
            stats.distinct_states += new
            if new:
                stats.depth_reached = level + 1
            found = next((m.finding for m in merged if m.finding is not None), None)
        if found is not None:
            break
        level += 1
        if stats.distinct_states >= space.max_states and frontier:
            stats.truncated = True
            stats.frontier_left = frontier
            break
        if progress is not None:
            shown = ExploreStats(stats.distinct_states, depth_reached=stats.depth_reached, workers=workers)
            for part in pool.ask_all([("stats", None)] * workers):
                shown.merge_counts(part)
            shown.seconds = time.perf_counter() - start
            progress(shown)
    for part in pool.ask_all([("stats", None)] * workers):
        stats.merge_counts(part)
    if found is None:
        return finish(space, stats, None, spec, prefix, [], start)
    path = [*_path(pool, found.parent), found.event]
    finding = Finding(found.kind, found.message, tuple(prefix + path), found.differences, found.violations)
    return finish(space, stats, finding, spec, prefix, path, start)


BALANCE_SLACK = 0.01
"""Frontiers whose sizes differ by at most this fraction of the level (or by a few states) are left as they are."""


def _balance(pool: _Pool, sizes: list[int]) -> None:
    """Even out the workers' frontiers before a level is expanded: a level ends when its slowest worker is done,
    and the fingerprint partition gives the workers a few percent more or fewer states than their share. Workers
    with more than their share hand the surplus to those with fewer (``_Worker.give``/``take``); who expands a
    state changes nothing but the order in which same-level successors reach their owners."""
    workers = len(sizes)
    total = sum(sizes)
    if workers < 2 or max(sizes) - min(sizes) <= max(4, BALANCE_SLACK * total):
        return
    share = [total // workers + (1 if w < total % workers else 0) for w in range(workers)]
    takers = [[w, share[w] - sizes[w]] for w in range(workers) if sizes[w] < share[w]]
    plans: list[list[tuple[int, int]]] = [[] for _ in range(workers)]
    for w in range(workers):
        surplus = sizes[w] - share[w]
        while surplus > 0 and takers:
            taker = takers[0]
            count = min(surplus, taker[1])
            plans[w].append((taker[0], count))
            surplus -= count
            taker[1] -= count
            if taker[1] == 0:
                takers.pop(0)
    given = pool.ask_all([("give", plan) for plan in plans])
    inboxes: list[list[bytes]] = [[] for _ in range(workers)]
    for parts in given:
        for to, part in parts:
            inboxes[to].append(part)
    pool.ask_all([("take", inbox) for inbox in inboxes])


def _path(pool: _Pool, sid: StateId | None) -> list[ControllerEvent]:
    """The events from the root to the state ``sid``, from the parent ids its owners keep."""
    events: list[ControllerEvent] = []
    while sid is not None:
        parent, ev = pool.ask(sid[0], "parent", sid[1])
        if ev is not None:
            events.append(ev)
        sid = parent
    return list(reversed(events))
