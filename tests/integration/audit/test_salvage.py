"""Compressed inputs that break off: the readable part kept, the break found at the right line (no Spark)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from kcspec.conformance.audit.salvage import salvage

LINES = [f'{{"step": {i}, "note": "line {i}"}}' for i in range(20_000)]


def test_intact_files_are_read_as_they_are(tmp_path: Path) -> None:
    two_members = tmp_path / "two.jsonl.gz"
    two_members.write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\r\nc\n"))
    plain = tmp_path / "plain.jsonl"
    plain.write_text("x\n")
    got = salvage((str(two_members), str(plain)), tmp_path / "work")
    assert got.paths == (str(two_members), str(plain)) and got.breaks == () and got.original == {}
    assert not list((tmp_path / "work").glob("*")), "an intact file's copy was left behind"


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


def test_a_file_that_is_not_gzip_breaks_at_line_1(tmp_path: Path) -> None:
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_text(LINES[0] + "\n")
    got = salvage((str(fake),), tmp_path / "work")
    assert [(b.file, b.line) for b in got.breaks] == [(str(fake), 1)], got.breaks
    assert Path(got.paths[0]).read_bytes() == b""
