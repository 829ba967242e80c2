"""TLC's state dump (``-dump``) against the explorer's fingerprints, read by several processes at once.

The crosscheck's last step (``tla_crosscheck._compare``): every state TLC wrote is converted to a ``ClusterState``
and fingerprinted as the explorer fingerprints its states. It runs after both sides have ended. Each variable's text
is parsed and decoded once (``counterexample.StateDecoder``: the 87,528 states of the default 2-broker kafka-2.8
model hold a few thousand distinct values of each variable), which brought the cost from about 0.8 to 0.16 ms of
CPU per state. The dump is cut at state headers into one byte range per process; each process (forked, so it
shares the explorer's fingerprint set without copying it) reads its range and answers with the fingerprints it
saw, how many states it read, how many the explorer never reached and the first of those as samples. The answers
are merged in the dump's order: the same counts and the same samples as one process reading the whole file.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from kcspec.conformance.selfcheck.explore.fingerprint import Fingerprinter, FingerprintScheme, FingerprintSet
from kcspec.model.interrupts import worker_initializer
from kcspec.model.tla.counterexample import CounterexampleError, StateDecoder
from kcspec.model.tlc.dump import dump_blocks
from kcspec.model.tlc.trace import TraceFormatError, variable_texts
from kcspec.spec.state import ClusterState

_HEADER = b"\nState "


class DumpError(ValueError):
    """The dump cannot be read (its text, or a state that does not fit the data model): the message says where."""


@dataclass(frozen=True)
class DumpReading:
    """What a dump holds against the explorer's set: the fingerprints of its states, their number, how many are
    not in the set, and the first ``samples`` of those (in the dump's order)."""

    seen: FingerprintSet
    dumped: int
    only_tlc: int
    samples: tuple[ClusterState, ...]


def ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``path`` cut into at most ``parts`` byte ranges, each starting at a ``State N:`` header (the first at 0)."""
    size = path.stat().st_size
    cuts = [0]
    with path.open("rb") as f:
        for k in range(1, parts):
            f.seek(max(size * k // parts, cuts[-1]))
            chunk = b""
            while _HEADER not in chunk:
                more = f.read(1 << 16)
                if not more:
                    break
                chunk += more
            at = chunk.find(_HEADER)
            if at < 0:
                break
            cut = f.tell() - len(chunk) + at + 1  # the header's own line
            if cut > cuts[-1]:
                cuts.append(cut)
    return list(zip(cuts, [*cuts[1:], size], strict=True))


def _lines(path: Path, start: int, end: int) -> tuple[Iterator[str], int]:
    """The lines of the byte range, and the number of its first line in the file."""
    first = 1
    with path.open("rb") as f:
        while f.tell() < start:  # the lines before the range, so that errors name the file's own line numbers
            first += f.read(min(1 << 20, start - f.tell())).count(b"\n")
        data = f.read(end - start)
    return iter(data.decode("utf-8").splitlines(keepends=True)), first


def read_range(
    path: Path, start: int, end: int, visited: FingerprintSet, scheme: FingerprintScheme, samples: int
) -> DumpReading:
    """The states of one byte range of the dump (``DumpError`` names the state that cannot be read)."""
    fingerprints = Fingerprinter(scheme)
    decode = StateDecoder()
    seen = FingerprintSet()
    dumped = only_tlc = 0
    kept: list[ClusterState] = []
    try:
        lines, first = _lines(path, start, end)
        for block in dump_blocks(lines, str(path), first):
            dumped += 1
            try:
                state = decode(block.number, variable_texts(block.text, block.number))
            except CounterexampleError as exc:
                raise DumpError(f"TLC's state {block.number} does not fit the data model: {exc}") from None
            except TraceFormatError as exc:
                raise TraceFormatError(f"{path}:{block.line}: {exc}") from None
            # no ``forget``: the decoder keeps every value it shares between states alive, so the memo's
            # identities stay valid, and its hits are the point
            fp = fingerprints(state)
            seen.add(fp)
            if fp not in visited:
                only_tlc += 1
                if len(kept) < samples:
                    kept.append(state)
    except TraceFormatError as exc:
        raise DumpError(f"TLC's state dump is unreadable: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DumpError(f"TLC's state dump is unreadable: not UTF-8 at byte {start + exc.start}") from None
    return DumpReading(seen, dumped, only_tlc, tuple(kept))


def _serve(
    conn: Connection, path: Path, start: int, end: int, visited: FingerprintSet, scheme: Any, n: int
) -> None:
    worker_initializer()  # Ctrl-C is the parent's to handle; this process dies with it
    try:
        r = read_range(path, start, end, visited, scheme, n)
        conn.send(("ok", (r.seen.to_bytes(), r.dumped, r.only_tlc, r.samples)))
    except DumpError as exc:
        conn.send(("error", str(exc)))
    except BaseException as exc:  # any other failure is reported to the parent, which raises it
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))
    conn.close()
    os._exit(0)


def read_dump_against(
    path: Path, visited: FingerprintSet, scheme: FingerprintScheme, samples: int, processes: int
) -> DumpReading:
    """The whole dump at ``path`` against ``visited``, read by ``processes`` processes (one: in this process)."""
    parts = ranges(path, max(1, processes))
    if len(parts) == 1:
        return read_range(path, 0, parts[0][1], visited, scheme, samples)
    ctx = multiprocessing.get_context("fork")
    procs: list[Any] = []
    conns: list[Connection] = []
    try:
        for start, end in parts:
            mine, theirs = ctx.Pipe(duplex=False)
            p = ctx.Process(
                target=_serve,
                args=(theirs, path, start, end, visited, scheme, samples),
                name="kcspec-crosscheck-dump",
                daemon=True,
            )
            p.start()
            theirs.close()
            procs.append(p)
            conns.append(mine)
        answers = []
        for conn, p in zip(conns, procs, strict=True):
            try:
                answers.append(conn.recv())
            except EOFError:
                p.join(timeout=5)
                raise RuntimeError(
                    f"a process reading TLC's state dump ended unexpectedly (exit code {p.exitcode})"
                ) from None
    except BaseException:  # an error, Ctrl-C or SIGTERM: the readers are not waited for
        for p in procs:
            if p.is_alive():
                p.terminate()
        raise
    finally:
        for p in procs:
            p.join(timeout=5)  # each has sent its answer and is ending
            if p.is_alive():
                p.terminate()
                p.join()
    seen = FingerprintSet()
    dumped = only_tlc = 0
    kept: list[ClusterState] = []
    for kind, answer in answers:
        if kind == "error":
            raise DumpError(answer)
        if kind != "ok":
            raise RuntimeError(f"reading TLC's state dump failed: {answer}")
        data, n, only, states = answer
        for fp in FingerprintSet.from_bytes(data):
            seen.add(fp)
        dumped += n
        only_tlc += only
        kept.extend(states[: samples - len(kept)])
    return DumpReading(seen, dumped, only_tlc, tuple(kept))


__all__ = ["DumpError", "DumpReading", "ranges", "read_dump_against", "read_range"]
