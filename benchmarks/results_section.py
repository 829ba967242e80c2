"""The generated section of a benchmark's results file: a script rewrites only its own part, between its markers.

A results file under ``benchmarks/results/`` mixes prose written by people with the figures of a script's latest
run. The script owns the text between its ``begin`` and ``end`` markers and nothing else: the section is replaced
in place, or, the first time, put right after the file's title (a new file starts with ``title``).
"""

from __future__ import annotations

from pathlib import Path


def write_section(path: Path, text: str, *, begin: str, end: str, title: str) -> None:
    """Replace the section of ``path`` between ``begin`` and ``end`` by ``text`` (which carries the markers), or
    put ``text`` after the first line of the file; a missing file starts as ``title``."""
    old = path.read_text() if path.exists() else f"{title}\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + text + rest.split(end, 1)[1]
    else:
        first, _, body = old.partition("\n")
        new = f"{first}\n\n{text}\n{body}"
    path.write_text(new)
