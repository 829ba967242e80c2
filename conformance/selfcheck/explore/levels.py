"""The files of a breadth-first search, level by level: frontiers, parent trails, visited sets and the checkpoint.

A search keeps in memory only its visited fingerprints (``fingerprint.FingerprintSet``); everything else about a
level lives in one folder (a temporary one, or the ``--checkpoint`` folder), one file per level and worker:

* ``frontier-LLLL-W.bin`` — the states of level ``L`` owned by worker ``W``, to be expanded, in ascending rank
  (``stepper.rank_of``): records of the fingerprint, the parent's fingerprint, the rank and the pickled state.
* ``send-LLLL-F-W.bin`` — (``--workers``) the successors of level ``L`` worker ``F`` found for their owner ``W``,
  in the same records; removed once ``W`` has merged them.

  Both begin with ``KCLV`` and the layout's ``FORMAT``, then hold blocks of records: the records of about
  ``BLOCK_BYTES`` compressed together with zlib, after a head of the block's compressed size, its size
  uncompressed and its number of records. A state pickled on its own is about 1.6 KB, nearly all of it the names
  and values it shares with the states written just before it: a block takes about 50 bytes a state, a thirtieth,
  for a few microseconds of CPU a state (``benchmarks/results/two_broker_fixed_point.md``). A truncated or damaged
  block is a ``LevelFileError`` naming the file.
* ``run-LLLL-W-N.bin`` — (``--workers``) the ``N``-th sorted run of worker ``W``'s merge of level ``L``, when the
  level's new states pass the merge's memory budget (``merge.py``), in the same records; removed once merged, and
  by ``close`` and ``drop_after`` if a killed worker left one.
* ``trail-LLLL-W.bin`` — for every state of level ``L`` owned by ``W``: its fingerprint and its parent's (two
  64-bit integers). A counterexample is rebuilt from them: the chain of fingerprints back to the initial state, then
  the events found again by re-executing the spec along the chain (``explorer.replay``), as TLC does.
* ``visited-LLLL-W.bin`` — the fingerprints worker ``W`` had visited when level ``L`` was complete (checkpoints
  only).
* ``frontier-LLLL-W.bin.tmp`` and ``switch-LLLL.json`` — a resume with another number of workers rewriting the
  frontier of level ``L`` (``LevelStore.repartition``): the new files, and the note that they are complete; a run
  killed between the two is finished or undone when it is resumed.
* ``stats-LLLL.pickle`` — the counts at the end of level ``L`` (transitions, coverage);
* ``checkpoint.json`` — the last complete level, written last, to a temporary name and renamed, so a run killed at
  any moment leaves the previous checkpoint whole. Files of a level
  after the checkpoint's are what a killed run left half-written; a resumed run writes them again.

A checkpoint can be resumed with another number of workers: each worker takes the fingerprints and frontier
states it owns (``fingerprint % workers``) from all the files of the level. A search on Spark (``spark_explore.py``)
writes and reads the same files, its partitions (``fingerprint % partitions``) in the place of the workers, so a
checkpoint resumes with one process, ``--workers`` or ``--spark`` whichever wrote it.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import json
import os
import pickle
import shutil
import struct
import subprocess
import tempfile
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.model.orphans import start_watchdog, stop_watchdog

FORMAT = 2
"""The layout version of a checkpoint folder (1: records not compressed; 2: in compressed blocks)."""

_CHUNK = 1 << 16
_PAIR_BYTES = 16
"""A trail's (fingerprint, parent fingerprint) pair: two unsigned 64-bit integers."""

_MAGIC = b"KCLV"
_FILE_HEAD = struct.Struct("<4sI")
"""The head of a frontier or send file: ``_MAGIC`` and ``FORMAT``."""
_BLOCK = struct.Struct("<III")
"""The head of a block: its compressed size, its size uncompressed and its number of records."""
BLOCK_BYTES = 1 << 18
"""The records a block gathers before it is compressed (their size uncompressed, about 160 states)."""
_ZLIB_LEVEL = 6


class LevelFileError(ValueError):
    """A frontier or send file that cannot be read back: truncated, damaged or of another layout."""


def owner_of(fp: int, workers: int) -> int:
    """The worker that stores, deduplicates and expands the state with fingerprint ``fp``."""
    return fp % workers


Record = tuple[int, int, bytes, bytes]
"""A state on its way through the files: its fingerprint, its parent's fingerprint (0 for the initial state), its
rank and the state pickled."""

_HEAD = struct.Struct("<QQHI")


class FrontierWriter:
    """Appends records (``Record``) to a frontier file, or to the file of successors one worker sends another.

    With ``memory`` > 0 the first ``memory`` states added with ``add`` are kept as they are, unpickled, and the file
    is written only if more come (a small level of a search that is not checkpointed never touches the disk)."""

    def __init__(self, path: Path, memory: int = 0) -> None:
        self.path = path
        self.count = 0
        self._memory = memory
        self._held: list[tuple[int, int, bytes, object]] = []
        self._block = bytearray()
        self._in_block = 0
        self._file: IO[bytes] | None = None if memory else self._open()

    def add(self, fp: int, parent: int, rank: bytes, state: object) -> None:
        if self._file is None:
            if len(self._held) < self._memory:
                self._held.append((fp, parent, rank, state))
                self.count += 1
                return
            self._spill()
        self.add_record((fp, parent, rank, pickle.dumps(state, pickle.HIGHEST_PROTOCOL)))

    def _open(self) -> IO[bytes]:
        file = open(self.path, "wb")  # noqa: SIM115 - closed by ``close``
        file.write(_FILE_HEAD.pack(_MAGIC, FORMAT))
        return file

    def _spill(self) -> None:
        self._file = self._open()
        held, self._held = self._held, []
        self.count = 0
        for fp, parent, rank, state in held:
            self.add_record((fp, parent, rank, pickle.dumps(state, pickle.HIGHEST_PROTOCOL)))

    def add_record(self, record: Record) -> None:
        if self._file is None:
            self._spill()
        fp, parent, rank, data = record
        block = self._block
        block += _HEAD.pack(fp, parent, len(rank), len(data))
        block += rank
        block += data
        self._in_block += 1
        self.count += 1
        if len(block) >= BLOCK_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self._in_block:
            return
        assert self._file is not None
        packed = zlib.compress(self._block, _ZLIB_LEVEL)
        self._file.write(_BLOCK.pack(len(packed), len(self._block), self._in_block))
        self._file.write(packed)
        self._block.clear()
        self._in_block = 0

    def close(self) -> None:
        if self._file is not None:
            self._flush()
            self._file.close()

    def entries(self) -> Iterator[tuple[int, int, bytes, Any]]:
        """Every record added, in order (after ``close``): the state itself if it was held in memory, else pickled."""
        if self._file is not None:
            return read_records(self.path)
        return iter(self._held)

    def states(self) -> Iterator[tuple[int, bytes, Any]]:
        """The ``(fingerprint, rank, state)`` of every record added, in order (after ``close``)."""
        if self._file is not None:
            return read_frontier(self.path)
        return ((fp, rank, state) for fp, _parent, rank, state in self._held)


def read_records(path: Path) -> Iterator[Record]:
    """The records of a file ``FrontierWriter`` wrote, in the order they were written (``LevelFileError`` naming
    the file if it is truncated or damaged)."""
    with open(path, "rb") as f:
        head = f.read(_FILE_HEAD.size)
        magic, version = _FILE_HEAD.unpack(head) if len(head) == _FILE_HEAD.size else (b"", 0)
        if magic != _MAGIC:
            raise LevelFileError(
                f"{path}: not a level file of format {FORMAT} (it does not begin with {_MAGIC!r})"
            )
        if version != FORMAT:
            raise LevelFileError(
                f"{path}: a level file of format {version}, this kcspec reads format {FORMAT}"
            )
        at = _FILE_HEAD.size
        while True:
            head = f.read(_BLOCK.size)
            if not head:
                return
            if len(head) < _BLOCK.size:
                raise LevelFileError(f"{path}: truncated: the head of the block at byte {at} is cut short")
            packed_size, size, count = _BLOCK.unpack(head)
            packed = f.read(packed_size)
            if len(packed) < packed_size:
                raise LevelFileError(
                    f"{path}: truncated: the block at byte {at} has {len(packed)} of its {packed_size} bytes"
                )
            try:
                block = zlib.decompress(packed, bufsize=min(max(size, 1), 1 << 24))
            except zlib.error as exc:
                raise LevelFileError(f"{path}: the block at byte {at} is damaged ({exc})") from None
            records = _unpack_block(block, count)
            if records is None or len(block) != size:
                raise LevelFileError(f"{path}: the block at byte {at} is damaged (its records do not add up)")
            yield from records
            at += _BLOCK.size + packed_size


def _unpack_block(block: bytes, count: int) -> list[Record] | None:
    """The ``count`` records of an uncompressed block (``None`` if they do not fill it exactly)."""
    records: list[Record] = []
    at, end, head = 0, len(block), _HEAD.size
    unpack = _HEAD.unpack_from
    try:
        for _ in range(count):
            fp, parent, ranklen, size = unpack(block, at)
            at += head
            rank = block[at : at + ranklen]
            at += ranklen
            records.append((fp, parent, rank, block[at : at + size]))
            at += size
    except struct.error:
        return None
    return records if at == end else None


def read_frontier(path: Path) -> Iterator[tuple[int, bytes, Any]]:
    """The ``(fingerprint, rank, state)`` of every record of a frontier file, in order."""
    for fp, _parent, rank, data in read_records(path):
        yield fp, rank, pickle.loads(data)


class TrailWriter:
    """Appends (fingerprint, parent fingerprint) pairs of a level's new states to its trail file."""

    def __init__(self, path: Path) -> None:
        self._file: IO[bytes] = open(path, "wb")  # noqa: SIM115 - closed by ``close``
        self._buffer = array("Q")

    def add(self, fp: int, parent: int) -> None:
        self._buffer.append(fp)
        self._buffer.append(parent)
        if len(self._buffer) >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        self._buffer.tofile(self._file)
        self._buffer = array("Q")

    def close(self) -> None:
        self._flush()
        self._file.close()


@dataclass
class Meta:
    """What ``checkpoint.json`` says: the search it belongs to and how far it got."""

    space: str
    """The search space's description: a resumed run must explore the same one."""
    fingerprints: str
    """The fingerprint scheme's name."""
    workers: int
    level: int
    """The last complete level: its frontier (the states to expand next) and the visited sets are on disk."""
    distinct_states: int
    depth_reached: int
    seconds: float
    level_sizes: list[int] = field(default_factory=list)
    format: int = FORMAT


SCRATCH_PARENT: contextvars.ContextVar[Path | None] = contextvars.ContextVar("scratch_parent", default=None)
"""Where a search without a checkpoint folder makes its temporary folder (``None``: the system's). A caller whose
own temporary folder is removed even when the process is killed (``tla_crosscheck``: TLC's watchdog) sets it, so
that a killed search leaves nothing behind either."""


class LevelStore:
    """The folder of one search's level files (a temporary folder unless ``folder`` is given)."""

    def __init__(self, folder: Path | None) -> None:
        self.kept = folder is not None
        self.watchdog: subprocess.Popen[bytes] | None = None
        if folder is None:
            parent = SCRATCH_PARENT.get()
            self.folder = Path(tempfile.mkdtemp(prefix="kcspec-explore-", dir=parent))
            # removed by a watchdog if this process is killed outright (a big search's files are gigabytes);
            # a caller's scratch folder has its own
            if parent is None:
                self.watchdog = start_watchdog(None, (self.folder,))
        else:
            self.folder = folder
            folder.mkdir(parents=True, exist_ok=True)

    def frontier(self, level: int, worker: int) -> Path:
        return self.folder / f"frontier-{level:04d}-{worker}.bin"

    def trail(self, level: int, worker: int) -> Path:
        return self.folder / f"trail-{level:04d}-{worker}.bin"

    def visited(self, level: int, worker: int) -> Path:
        return self.folder / f"visited-{level:04d}-{worker}.bin"

    def files(self, kind: str, level: int) -> list[Path]:
        """Every worker's file of ``kind`` (frontier, trail, visited) for ``level``."""
        return sorted(self.folder.glob(f"{kind}-{level:04d}-*.bin"))

    def trails(self, level: int) -> Iterator[array[int]]:
        """Each worker's trail of ``level``: (fingerprint, parent fingerprint) pairs, flattened (``LevelFileError``
        naming the file if it does not hold whole pairs: cut short by a full disk or a copy)."""
        for path in self.files("trail", level):
            data = path.read_bytes()
            if len(data) % _PAIR_BYTES:
                raise LevelFileError(
                    f"{path}: truncated: {len(data)} bytes is not a whole number of (fingerprint, parent) pairs"
                    f" of {_PAIR_BYTES} bytes"
                )
            pairs = array("Q")
            pairs.frombytes(data)
            yield pairs

    def first_reached(self, level: int) -> list[int]:
        """The fingerprints of the states first reached at ``level`` (``level`` ≥ 1), from the trail files."""
        return [fp for pairs in self.trails(level) for fp in pairs[0::2]]

    def parent_of(self, level: int, fp: int) -> int:
        """The parent fingerprint of the state ``fp`` of ``level`` (``level`` ≥ 1), from the trail files."""
        for pairs in self.trails(level):
            fps = pairs[0::2]
            try:
                return pairs[2 * fps.index(fp) + 1]
            except ValueError:
                continue
        raise LookupError(f"state {fp:#x} of level {level} is in no trail file of {self.folder}")

    def send(self, level: int, sender: int, worker: int) -> Path:
        return self.folder / f"send-{level:04d}-{sender}-{worker}.bin"

    def run(self, level: int, worker: int, n: int) -> Path:
        """The ``n``-th sorted run of worker ``worker``'s merge of ``level`` (``merge.py``)."""
        return self.folder / f"run-{level:04d}-{worker}-{n}.bin"

    def drop_runs(self) -> None:
        """Remove the run files a merge left (a worker killed in the middle of one)."""
        for path in self.folder.glob("run-*.bin"):
            path.unlink(missing_ok=True)

    def repartition(self, level: int, workers: int) -> None:
        """Rewrite the frontier files of ``level`` as ``workers`` workers own them (each in ascending rank).

        Each file is in ascending rank already: they are merged as they are read (``heapq.merge``, stable like the
        sort of all their records it replaced), to new files beside the old ones (``….bin.tmp``): the memory does
        not grow with the level, and a failure while the records are copied (a damaged file) leaves the checkpoint
        as it was. The new files are then put in the place of the old ones as one switch that a killed run
        finishes when it is resumed (``drop_after``): once they are all written and flushed, a note of the switch
        (``switch-LLLL.json``: the old files' and the new files' names) is written atomically, then the old
        files are removed and the new ones renamed, then the note is removed. Without the note a resume drops
        the new files and keeps the old; with it, it finishes the switch. So no moment leaves a frontier with
        some of its states gone (which a resume would take for a smaller search, or for its fixed point)."""
        old = self.files("frontier", level)
        new = [self.frontier(level, w) for w in range(workers)]
        tmp = [_staged(path) for path in new]
        writers = [FrontierWriter(path) for path in tmp]
        try:
            for r in heapq.merge(*map(read_records, old), key=lambda r: r[2]):
                writers[owner_of(r[0], workers)].add_record(r)
            for writer in writers:
                writer.close()
            for path in tmp:
                _flush_to_disk(path)
        except BaseException:
            for writer, path in zip(writers, tmp, strict=True):
                with contextlib.suppress(OSError):
                    writer.close()
                path.unlink(missing_ok=True)
            raise
        note = {"level": level, "old": [p.name for p in old], "new": [p.name for p in new]}
        _write_atomically(self._switch(level), json.dumps(note).encode())
        self._finish_switch(level)

    def _switch(self, level: int) -> Path:
        return self.folder / f"switch-{level:04d}.json"

    def _finish_switch(self, level: int) -> None:
        """Carry out the switch of ``repartition`` noted for ``level`` (again from its start: each step is one
        that can be repeated), then remove its note."""
        note_path = self._switch(level)
        try:
            note = json.loads(note_path.read_text(encoding="utf-8"))
            old, new = list(note["old"]), list(note["new"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LevelFileError(
                f"{note_path}: the note of a frontier's switch cannot be read ({exc})"
            ) from None
        for name in old:
            if name not in new:
                (self.folder / name).unlink(missing_ok=True)
        for name in new:
            path = self.folder / name
            staged = _staged(path)
            if staged.exists():
                os.replace(staged, path)
            elif not path.exists():
                raise LevelFileError(f"{path}: a frontier file of the switch {note_path} is missing")
        note_path.unlink()

    def _finish_or_drop_switches(self) -> None:
        """What a run killed in ``repartition`` left: a noted switch is finished, new files without a note are
        dropped (the old ones are whole)."""
        for note in sorted(self.folder.glob("switch-*.json")):
            self._finish_switch(int(note.stem.split("-")[1]))
        for staged in self.folder.glob("frontier-*.bin.tmp"):
            staged.unlink()

    def commit(self, meta: Meta, stats: ExploreStats) -> None:
        """Record ``meta.level`` as complete (its frontier and visited files written), then drop the files of the
        levels before it that a resume no longer needs (frontiers and visited sets; trails are kept)."""
        _write_atomically(self.stats(meta.level), pickle.dumps(stats, pickle.HIGHEST_PROTOCOL))
        _write_atomically(self.folder / "checkpoint.json", json.dumps(asdict(meta), indent=1).encode())
        for pattern in ("frontier-*.bin", "visited-*.bin", "stats-*.pickle"):
            for path in self.folder.glob(pattern):
                if int(path.stem.split("-")[1]) < meta.level:
                    path.unlink()

    def stats(self, level: int) -> Path:
        return self.folder / f"stats-{level:04d}.pickle"

    def drop_after(self, level: int) -> None:
        """Remove the files of levels after ``level`` (what a killed run left half-written), after finishing or
        dropping a switch of frontier files a killed ``repartition`` left."""
        self._finish_or_drop_switches()
        for path in [*self.folder.glob("*-*-*.bin"), *self.folder.glob("stats-*.pickle")]:
            if path.name.startswith(("send-", "run-")):
                path.unlink()
                continue
            if int(path.stem.split("-")[1]) > level:
                path.unlink()

    def close(self) -> None:
        """Remove the folder if it is a temporary one; from a checkpoint folder, the run files a merge left."""
        if self.kept:
            self.drop_runs()
        else:
            shutil.rmtree(self.folder, ignore_errors=True)
            stop_watchdog(self.watchdog)
            self.watchdog = None


def read_checkpoint(folder: Path) -> tuple[Meta, ExploreStats]:
    """The checkpoint of ``folder`` (``ValueError`` naming the folder if there is none or it is unreadable)."""
    try:
        doc = json.loads((folder / "checkpoint.json").read_text(encoding="utf-8"))
        meta = Meta(**doc)
        stats = pickle.loads((folder / f"stats-{meta.level:04d}.pickle").read_bytes())
    except FileNotFoundError:
        raise ValueError(f"--resume {folder}: no checkpoint there (checkpoint.json is missing)") from None
    except (ValueError, TypeError, pickle.UnpicklingError, EOFError) as exc:
        raise ValueError(f"--resume {folder}: the checkpoint cannot be read ({exc})") from None
    if meta.format != FORMAT:
        raise ValueError(
            f"--resume {folder}: the checkpoint is of format {meta.format}, this kcspec reads format {FORMAT}"
            " (level files of compressed blocks of records): run the search again from the start"
        )
    if not isinstance(stats, ExploreStats):
        raise ValueError(f"--resume {folder}: the stats of level {meta.level} hold no exploration counts")
    return meta, stats


def check_resumable(folder: Path, meta: Meta, space: str, fingerprints: str) -> None:
    """A checkpoint resumes only the search it was written for, with the same fingerprints."""
    if meta.space != space:
        raise ValueError(f"--resume {folder}: the checkpoint is of {meta.space!r}, not of {space!r}")
    if meta.fingerprints != fingerprints:
        raise ValueError(
            f"--resume {folder}: the checkpoint's fingerprints are {meta.fingerprints}, not {fingerprints}"
        )


def _staged(path: Path) -> Path:
    """Where a new frontier file is written before it takes ``path``'s place (``LevelStore.repartition``)."""
    return path.with_name(path.name + ".tmp")


def _flush_to_disk(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


__all__ = [
    "BLOCK_BYTES",
    "FORMAT",
    "FrontierWriter",
    "LevelFileError",
    "LevelStore",
    "Meta",
    "Record",
    "TrailWriter",
    "check_resumable",
    "owner_of",
    "read_checkpoint",
    "read_frontier",
    "read_records",
]
