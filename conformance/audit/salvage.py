"""Compressed inputs that break off, for the readers that cannot go on past an error (Spark's text source).

Spark's text source fails the whole job on a truncated or corrupt ``.gz`` (or a file named ``.gz`` that is
not gzip). The JVM reader of Kafka logs handles that itself (``LineParser.readStored``); for the other inputs
read through the text source (JSONL traces), ``salvage`` reads each compressed file once here: an intact
one is left as it is; of a broken one the complete lines before the break are written to a private copy
(in the run's work folder) that Spark reads in its place, and the break is returned — its line number (the
line cut off, or the one after the last) and the error — to be quarantined as the rest of the file.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

COMPRESSED = (".gz",)
BROKEN_COMPRESSED = "corrupt-compressed-file"
"""The quarantine reason (the same as ``jvm_parser.BROKEN_REASONS``' first)."""


@dataclass(frozen=True)
class Break:
    """Where a compressed file stops being readable: ``line`` (1-based) and the error, in words."""

    file: str
    line: int
    error: str


@dataclass(frozen=True)
class Salvaged:
    """The paths to read (a broken file replaced by its readable part) and the breaks."""

    paths: tuple[str, ...]
    original: dict[str, str]
    """A replacement's path → the file it stands for."""
    breaks: tuple[Break, ...]


def salvage(files: tuple[str, ...], work: Path) -> Salvaged:
    """Check every compressed file of ``files``; broken ones are replaced by their readable part in ``work``."""
    paths: list[str] = []
    original: dict[str, str] = {}
    breaks: list[Break] = []
    for n, name in enumerate(files):
        if not name.lower().endswith(COMPRESSED):
            paths.append(name)
            continue
        work.mkdir(mode=0o700, parents=True, exist_ok=True)
        copy = work / f"salvaged-{n}.txt"
        lines, cut, error = _copy_until_break(Path(name), copy)
        if error is None:
            copy.unlink()
            paths.append(name)
            continue
        paths.append(str(copy.resolve()))
        original[str(copy.resolve())] = name
        breaks.append(
            Break(name, lines + 1, f"unreadable from this line on: {error}" + (" (cut)" if cut else ""))
        )
    return Salvaged(tuple(paths), original, tuple(breaks))


def _copy_until_break(path: Path, copy: Path) -> tuple[int, bool, str | None]:
    """Decompress ``path`` into ``copy`` up to its last complete line before the stream breaks: the number of
    complete lines, whether a line was cut off there, and the error (``None``: the file is intact). The
    compressed bytes are fed in small pieces, so what decompresses before the error is kept."""
    lines = 0
    pending = b""  # the bytes after the last line end written so far
    d = zlib.decompressobj(wbits=31)
    started = False  # a gzip member has begun (a file may hold several, one after the other)

    def keep(data: bytes) -> None:
        nonlocal lines, pending
        data = pending + data
        end = data.rfind(b"\n") + 1  # a "\r" at the end may be half of a "\r\n"
        out.write(data[:end])
        lines += len(data[:end].splitlines())
        pending = data[end:]

    with path.open("rb") as f, copy.open("wb") as out:
        try:
            while piece := f.read(1 << 16):
                while piece:
                    started = True
                    keep(d.decompress(piece))
                    if not d.eof:
                        break
                    piece, d, started = d.unused_data, zlib.decompressobj(wbits=31), False
            if started and not d.eof:
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
        except (OSError, EOFError, zlib.error) as exc:
            return lines, pending != b"", f"{type(exc).__name__}: {exc}"
        out.write(pending)
    return lines, False, None
