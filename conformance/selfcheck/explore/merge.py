"""The merge of a level's successors (``--workers``) in bounded memory, sorted in runs on disk when they are many.

A worker's merge (``parallel._Worker.merge``) reads the successors the workers found for it (the send files,
``levels.py``) in the order they arrived, and must give, for every fingerprint not visited yet, the first record of
least rank (``stepper.rank_of``), all of them in ascending rank. Holding them all in a dict, as the merge first did, takes about 1.6 KB of memory a
state (the pickled state and the objects around it): 150 GB for a level of 10^8 states. ``LevelMerge`` holds at most
``MERGE_BUDGET`` bytes of records:

* the records are gathered in a dict by fingerprint (a later one replaces an earlier only with a smaller rank); when
  everything fits in the budget, the result is the dict's records sorted by rank, as before — no file, no extra cost;
* when the gathered records pass the budget, they are sorted by rank and written as a sorted **run**
  (``run-LLLL-W-N.bin`` in the level store's folder, in the compressed blocks of the frontier files:
  ``FrontierWriter``, ``read_records``), and the dict starts again empty;
* at the end the runs, and the records still gathered, are merged (``heapq.merge``, by rank) and the first record of
  each fingerprint is kept — added to the visited set when kept, so its later records are skipped. With more than
  ``MERGE_FANIN`` runs, groups of ``MERGE_FANIN`` consecutive runs are first merged into one, so that the merge
  reads at most that many files at once (each holds a block of records in memory, about 0.5 MB).

**The same result either way, ties included.** ``sorted`` and ``heapq.merge`` are stable (``heapq.merge`` gives
equal keys in the order of its inputs, and the runs are in the order their records arrived), so the records come out
in the order (rank, arrival of the record kept); within the dict a record that replaces another is moved to the
end (deleted, then inserted) so that the in-memory result is in the same order. (Replacing in place would order two
fingerprints of equal rank by the arrival of each one's first record, kept or not, which no bounded merge can know.)
In a search two states never have the same rank — a rank is the path of candidate indices from the initial state,
and every path is expanded once — so the tie-break decides nothing there; it is defined so that the two ways agree
on any input (``tests/unit/explore/test_level_merge.py``).

Run files are removed as soon as they are merged and when the merge ends, by an error too (``close``); a worker
killed outright leaves them behind, and ``LevelStore`` removes them (``close``, and ``drop_after`` when a checkpoint
is resumed), so a checkpoint folder never keeps one.
"""

from __future__ import annotations

import heapq
import pickle
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

from kcspec.conformance.selfcheck.explore.fingerprint import FingerprintSet
from kcspec.conformance.selfcheck.explore.levels import FrontierWriter, read_records

MERGE_BUDGET = 256 << 20
"""The most bytes of records a merge holds in memory before it writes them to a sorted run (read at each merge, so a
test may set it small)."""

MERGE_FANIN = 64
"""The most run files the merge reads at once; more are first merged in groups of this many."""

RECORD_OVERHEAD = 280
"""The bytes a record takes in memory besides its rank's and state's bytes: the tuple, the two integers, the two
bytes objects' heads, the dict's slot and the sort's list (measured with ``tracemalloc`` on the records of a level
of the 2-broker model: 237 bytes a record with the dict, 245 with the sorted list; the rest is margin for the dict's
growth)."""

HELD_BYTES = 16_384
"""The bytes counted for a record whose state is held unpickled (the ones a worker kept in memory for itself,
``FrontierWriter``'s ``memory``, at most ``explorer.IN_MEMORY`` of them): an upper bound for a state's objects."""

_RANK = itemgetter(2)

MergeRecord = tuple[int, int, bytes, Any]
"""A record as the merge takes and gives it: ``levels.Record``, its state pickled, or the state itself if its sender
held it in memory."""


def _size(record: MergeRecord) -> int:
    data = record[3]
    return len(record[2]) + (len(data) if type(data) is bytes else HELD_BYTES) + RECORD_OVERHEAD


class LevelMerge:
    """One merge of a level's successors: ``add`` them in the order they arrived, then iterate ``records`` for the
    new states, in ascending rank; ``new_states()`` is their number. ``close`` removes the run files (a ``with``
    block closes it). ``run_path(n)`` names the ``n``-th run file."""

    def __init__(
        self,
        visited: FingerprintSet,
        run_path: Callable[[int], Path],
        budget: int | None = None,
        fanin: int | None = None,
    ) -> None:
        self.visited = visited
        self._run_path = run_path
        self._budget = MERGE_BUDGET if budget is None else budget
        self._fanin = max(2, MERGE_FANIN if fanin is None else fanin)
        self._best: dict[int, MergeRecord] = {}
        self._bytes = 0
        self._runs: list[Path] = []
        """The sorted runs not merged yet, in the order of their records' arrival."""
        self._made: list[Path] = []
        """Every run file written (removed by ``close``)."""
        self._rest: Iterator[MergeRecord] | None = None
        self._kept = 0
        self._counted: int | None = None

    @property
    def spilled(self) -> bool:
        """Whether the records passed the budget (and runs were written)."""
        return bool(self._runs)

    def __len__(self) -> int:
        """The new states gathered in memory (all of them unless ``spilled``)."""
        return len(self._best)

    def add(self, records: Iterable[MergeRecord]) -> None:
        """Take ``records`` (after those added before), skipping the fingerprints visited."""
        visited, best, budget = self.visited, self._best, self._budget
        held = self._bytes
        for record in records:
            fp = record[0]
            if fp in visited:
                continue
            old = best.get(fp)
            if old is None:
                best[fp] = record
                held += _size(record)
            elif record[2] < old[2]:
                del best[fp]  # moved to the end: the order of the record kept (the module's docstring)
                best[fp] = record
                held += _size(record) - _size(old)
            else:
                continue
            if held > budget:
                self._spill()
                held = 0
        self._bytes = held

    def _spill(self) -> None:
        """Write the gathered records, sorted by rank, as the next run; start gathering again."""
        self._runs.append(self._write(sorted(self._best.values(), key=_RANK)))
        self._best.clear()  # in place: ``add`` holds it
        self._bytes = 0

    def _write(self, records: Iterable[MergeRecord]) -> Path:
        path = self._run_path(len(self._made))
        self._made.append(path)
        writer = FrontierWriter(path)
        try:
            for fp, parent, rank, data in records:
                if type(data) is not bytes:
                    data = pickle.dumps(data, pickle.HIGHEST_PROTOCOL)
                writer.add_record((fp, parent, rank, data))
        finally:
            writer.close()
        return path

    def records(self) -> Iterator[MergeRecord]:
        """The new states, each fingerprint once (its first record of least rank), in ascending rank; each is added
        to the visited set as it is given. May be left before its end (``new_states`` counts the rest)."""
        if not self._runs:
            for record in sorted(self._best.values(), key=_RANK):
                self.visited.add(record[0])
                self._kept += 1
                yield record
            return
        self._rest = self._merged()
        visited = self.visited
        for record in self._rest:
            if visited.add(record[0]):
                self._kept += 1
                yield record

    def _merged(self) -> Iterator[MergeRecord]:
        """Every record of the runs and of the dict, by rank (equal ranks in the order they arrived)."""
        while len(self._runs) > self._fanin:
            runs, self._runs = self._runs, []
            for at in range(0, len(runs), self._fanin):
                group = runs[at : at + self._fanin]
                if len(group) == 1:
                    self._runs.append(group[0])
                    continue
                self._runs.append(self._write(heapq.merge(*map(read_records, group), key=_RANK)))
                for path in group:
                    path.unlink()
        last = sorted(self._best.values(), key=_RANK)
        self._best = {}
        return heapq.merge(*map(read_records, self._runs), iter(last), key=_RANK)

    def new_states(self) -> int:
        """The number of new states (fingerprints not visited before), before ``close``: if ``records`` was left
        early (or not begun), the ones it gave plus the distinct ones it did not reach, which are not added to the
        visited set."""
        if not self._runs:
            return len(self._best)
        if self._counted is None:
            if self._rest is None:
                self._rest = self._merged()
            rest = 0
            seen = FingerprintSet()
            for record in self._rest:
                fp = record[0]
                if fp not in self.visited and seen.add(fp):
                    rest += 1
            self._counted = self._kept + rest
        return self._counted

    def close(self) -> None:
        """Remove the run files."""
        self._best = {}
        self._rest = None
        for path in self._made:
            path.unlink(missing_ok=True)
        self._runs = []

    def __enter__(self) -> LevelMerge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["HELD_BYTES", "MERGE_BUDGET", "MERGE_FANIN", "RECORD_OVERHEAD", "LevelMerge", "MergeRecord"]
