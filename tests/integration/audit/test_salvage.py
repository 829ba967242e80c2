"""JSONL traces for Spark's text source (no Spark): compression found by magic bytes, not by name; compressed
inputs that break off keep their readable part, the break found at the right line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path

from kcspec.audit.salvage import salvage

LINES = [f'{{"step": {i}, "note": "line {i}"}}' for i in range(20_000)]


def test_a_plain_file_is_read_as_it_is(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text("x\n")
    got = salvage((str(plain),), tmp_path / "work")
    assert got.paths == (str(plain),) and got.breaks == () and got.original == {}
    assert not (tmp_path / "work").exists(), "a plain file was copied"


def test_compression_is_found_by_magic_bytes_whatever_the_name(tmp_path: Path) -> None:
    text = b"a\nb\r\nc\n"
    made = {
        "two-members.jsonl.gz": gzip.compress(b"a\n") + gzip.compress(b"b\r\nc\n"),
        "gzip-without-suffix.jsonl": gzip.compress(text),
        "bzip2-named-gz.jsonl.gz": bz2.compress(text),
        "xz.jsonl": lzma.compress(text),
        "text-named-gz.jsonl.gz": text,
    }
    files = []
    for name, data in made.items():
        (tmp_path / name).write_bytes(data)
        files.append(str(tmp_path / name))
    got = salvage(tuple(files), tmp_path / "work")
    assert got.breaks == (), got.breaks
    for path, original in zip(got.paths, files, strict=True):
        assert got.original[path] == original and Path(path).read_bytes() == text, (original, path)
        assert not path.endswith(".gz"), "a copy keeps a codec's name: Spark would decode it again"


def test_an_lz4_trace_is_quarantined_from_line_1_not_the_run(tmp_path: Path) -> None:
    lz4 = tmp_path / "run.jsonl"  # the lz4 frame magic, then bytes no decoder here reads
    lz4.write_bytes(b"\x04\x22\x4d\x18" + bytes(range(64)))
    got = salvage((str(lz4),), tmp_path / "work")
    ((brk),) = got.breaks
    assert (brk.file, brk.line) == (str(lz4), 1) and "lz4" in brk.error, brk
    assert Path(got.paths[0]).read_bytes() == b""


def test_a_cut_file_keeps_its_complete_lines_and_the_break_is_the_next_line(tmp_path: Path) -> None:
    whole = gzip.compress(("\n".join(LINES) + "\n").encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    complete = zlib.decompressobj(wbits=31).decompress(cut.read_bytes()).count(b"\n")
    got = salvage((str(cut),), tmp_path / "work")
    (brk,) = got.breaks
    assert (brk.file, brk.line) == (str(cut), complete + 1), brk
    assert "EOFError" in brk.error
    copy = Path(got.paths[0])
    assert got.original == {str(copy): str(cut)}
    assert copy.read_text().splitlines() == LINES[:complete]
    assert oct(copy.parent.stat().st_mode & 0o777) == oct(0o700)


def test_a_corrupt_gzip_breaks_at_line_1(tmp_path: Path) -> None:
    fake = tmp_path / "fake.jsonl"
    fake.write_bytes(b"\x1f\x8b" + LINES[0].encode() + b"\n")
    got = salvage((str(fake),), tmp_path / "work")
    assert [(b.file, b.line) for b in got.breaks] == [(str(fake), 1)], got.breaks
    assert Path(got.paths[0]).read_bytes() == b""
