"""TLC's ``-dump FILE`` output: every distinct state it reached, in its text format.

TLC writes each new state that satisfies the model's constraint (the initial states first) as a header line
``State N:`` followed by the state as TLC prints it — one ``/\\ var = value`` line per variable, values
spanning lines as needed — and a blank line. ``read_dump`` streams the file and yields each state as a
``TlcTraceState`` (``action`` is ``None``: the dump records no actions).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kcspec.model.tlc.trace import TlcTraceState, TraceFormatError, parse_state_text

_HEADER = re.compile(r"^State (\d+):\s*$")


def parse_dump(lines: Iterator[str], source: str = "dump", first_line: int = 1) -> Iterator[TlcTraceState]:
    """The states of a dump, in order; ``TraceFormatError`` names the line of anything else (``first_line``: the
    number of the first of ``lines`` in the file, when they are a part of it)."""
    number: int | None = None
    start = 0
    body: list[str] = []
    for lineno, line in enumerate(lines, start=first_line):
        m = _HEADER.match(line)
        if m is not None:
            if number is not None:
                yield _state(number, body, source, start)
            number, start, body = int(m.group(1)), lineno, []
            continue
        if number is None:
            if line.strip():
                raise TraceFormatError(f"{source}:{lineno}: expected 'State N:', got {line.strip()[:60]!r}")
            continue
        body.append(line)
    if number is not None:
        yield _state(number, body, source, start)


def _state(number: int, body: list[str], source: str, lineno: int) -> TlcTraceState:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in body).strip("\n")
    if not text.strip():
        raise TraceFormatError(f"{source}:{lineno}: state {number} has no variables")
    try:
        return parse_state_text(f"{number}: <Initial predicate>\n{text}")
    except TraceFormatError as exc:
        raise TraceFormatError(f"{source}:{lineno}: {exc}") from None


def read_dump(path: Path) -> Iterator[TlcTraceState]:
    """The states of the dump file at ``path`` (read lazily)."""
    with path.open(encoding="utf-8") as f:
        yield from parse_dump(iter(f), str(path))


__all__ = ["parse_dump", "read_dump"]
