"""JSONL traces for Spark's text source: compression found by magic bytes, and compressed files that break off.

Spark's text source (Hadoop's codecs) decompresses by the file's *name* and fails the whole job on a truncated or
corrupt ``.gz`` (or a file named ``.gz`` that is not gzip). The JVM reader of Kafka logs handles all that
itself (``LineParser.readStored``); for the other inputs read through the text source (JSONL traces),
``salvage`` looks at each file's first bytes here, as the Kafka-log readers do (``layouts.compression``,
never the name):

* a plain file whose name no Hadoop codec claims is read as it is;
* a gzip, bzip2 or xz file (whatever its name), and a plain file with a codec's name (``x.jsonl.gz`` holding
  text), is decompressed once into a private plain copy (in the run's work folder) that Spark reads in its
  place; of a broken one the complete lines before the break are kept, and the break is returned — its line
  number (the line cut off, or the one after the last) and the error — to be quarantined as the rest of the file;
* a compression the standard library cannot decode (lz4, zstd) quarantines that file from line 1 with the
  reason, never the run.

Decision: a gzip file named ``.gz`` that is intact is decompressed here as well (one pass over it, instead of
Spark's codec choosing by a name that may lie); traces are small beside Kafka logs, so the copy costs little.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kcspec.audit import layouts

HADOOP_SUFFIXES = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".xz")
"""Names Hadoop's codec factory decodes by: a file so named is never handed to Spark as it is."""
BROKEN_COMPRESSED = "corrupt-compressed-file"
"""The quarantine reason (the same as ``jvm_parser.BROKEN_REASONS``' first)."""


class _Decoder(Protocol):
    """What ``zlib``'s, ``bz2``'s and ``lzma``'s incremental decompressors share."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes) -> bytes: ...


class _Plain:
    """The identity ``_Decoder``: a plain file copied as it is (it has no end-of-stream marker)."""

    eof = False
    unused_data = b""

    def decompress(self, data: bytes) -> bytes:
        return data


DECODERS: dict[str | None, Callable[[], _Decoder]] = {
    None: _Plain,
    "gzip": lambda: zlib.decompressobj(wbits=31),
    "bzip2": bz2.BZ2Decompressor,
    "xz": lzma.LZMADecompressor,
}
"""A fresh incremental decoder per compression of ``layouts.MAGIC`` that the standard library reads."""


@dataclass(frozen=True)
class Break:
    """Where a compressed file stops being readable: ``line`` (1-based) and the error, in words."""

    file: str
    line: int
    error: str


@dataclass(frozen=True)
class Salvaged:
    """The paths to read (a compressed or broken file replaced by its readable, plain part) and the breaks."""

    paths: tuple[str, ...]
    original: dict[str, str]
    """A replacement's path → the file it stands for."""
    breaks: tuple[Break, ...]


def salvage(files: tuple[str, ...], work: Path) -> Salvaged:
    """Every file of ``files`` as Spark's text source can read it: compressed ones (by their first bytes) and
    ones a codec's name would mislead are replaced by their plain, readable part in ``work``."""
    paths: list[str] = []
    original: dict[str, str] = {}
    breaks: list[Break] = []
    for n, name in enumerate(files):
        codec = layouts.compression(Path(name))
        if codec is None and not name.lower().endswith(HADOOP_SUFFIXES):
            paths.append(name)
            continue
        work.mkdir(mode=0o700, parents=True, exist_ok=True)
        copy = work / f"salvaged-{n}.txt"
        decoder = DECODERS.get(codec)
        error: str | None
        if decoder is None:
            copy.write_bytes(b"")
            lines, cut = 0, False
            error = f"{codec} compression (found by its magic bytes) is not read for traces"
        else:
            lines, cut, error = _copy_until_break(Path(name), copy, decoder)
        paths.append(str(copy.resolve()))
        original[str(copy.resolve())] = name
        if error is not None:
            breaks.append(
                Break(name, lines + 1, f"unreadable from this line on: {error}" + (" (cut)" if cut else ""))
            )
    return Salvaged(tuple(paths), original, tuple(breaks))


def _copy_until_break(
    path: Path, copy: Path, decoder: Callable[[], _Decoder]
) -> tuple[int, bool, str | None]:
    """Decompress ``path`` with ``decoder`` into ``copy`` up to its last complete line before the stream breaks:
    the number of complete lines, whether a line was cut off there, and the error (``None``: the file is
    intact). The compressed bytes are fed in small pieces, so what decompresses before the error is kept."""
    lines = 0
    pending = b""  # the bytes after the last line end written so far
    d = decoder()
    started = False  # a stream has begun (a file may hold several, one after the other)

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
                    piece, d, started = d.unused_data, decoder(), False
            if started and not d.eof and not isinstance(d, _Plain):
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
        except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
            return lines, pending != b"", f"{type(exc).__name__}: {exc}"
        out.write(pending)
    return lines, False, None
