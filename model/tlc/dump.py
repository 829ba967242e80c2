"""TLC's ``-dump FILE`` output: every distinct state it reached, in its text format.

TLC writes each new state that satisfies the model's constraint (the initial states first) as a header line
``State N:`` followed by the state as TLC prints it — one ``/\\ var = value`` line per variable, values
spanning lines as needed — and a blank line. ``read_dump`` streams the file and yields each state as a
``TlcTraceState`` (``action`` is ``None``: the dump records no actions).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kcspec.model.tlc.trace import TlcTraceState, TraceFormatError, parse_state_text

_HEADER = re.compile(r"^State (\d+):\s*$")


def parse_dump(lines: Iterator[str], source: str = "dump", first_line: int = 1) -> Iterator[TlcTraceState]:
    """The states of a dump, in order; ``TraceFormatError`` names the line of anything else (``first_line``: the
    number of the first of ``lines`` in the file, when they are a part of it)."""
    for block in dump_blocks(lines, source, first_line):
        try:
            yield parse_state_text(f"{block.number}: <Initial predicate>\n{block.text}")
        except TraceFormatError as exc:
            raise TraceFormatError(f"{source}:{block.line}: {exc}") from None


@dataclass(frozen=True)
class DumpBlock:
    """One state of a dump, not parsed: its number, the line of its header and its variables' text."""

    number: int
    line: int
    text: str


def dump_blocks(lines: Iterator[str], source: str = "dump", first_line: int = 1) -> Iterator[DumpBlock]:
    """The states of a dump as text, in order (``parse_dump`` parses them; a reader that meets the same variable
    value again and again can parse each text once)."""
    number: int | None = None
    start = 0
    body: list[str] = []
    for lineno, line in enumerate(lines, start=first_line):
        m = _HEADER.match(line)
        if m is not None:
            if number is not None:
                yield _block(number, body, source, start)
            number, start, body = int(m.group(1)), lineno, []
            continue
        if number is None:
            if line.strip():
                raise TraceFormatError(f"{source}:{lineno}: expected 'State N:', got {line.strip()[:60]!r}")
            continue
        body.append(line)
    if number is not None:
        yield _block(number, body, source, start)


def _block(number: int, body: list[str], source: str, lineno: int) -> DumpBlock:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in body).strip("\n")
    if not text.strip():
        raise TraceFormatError(f"{source}:{lineno}: state {number} has no variables")
    return DumpBlock(number, lineno, text)


def read_dump(path: Path) -> Iterator[TlcTraceState]:
    """The states of the dump file at ``path`` (read lazily)."""
    with path.open(encoding="utf-8") as f:
        yield from parse_dump(iter(f), str(path))


__all__ = ["DumpBlock", "dump_blocks", "parse_dump", "read_dump"]
