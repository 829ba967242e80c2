"""A pure-Python parser over the grammar of ``lines``: the oracle the Spark job is tested against.

It reads a file's physical lines in order and gives each one a ``ParsedLine``: a record (layout and
template or generic family), a continuation attached to the record above it, a blank line, or a
quarantined line with a reason code of ``lines.QUARANTINE_REASONS``. Line numbers start at 1; line
terminators are ``\\n``, ``\\r\\n`` and ``\\r`` (as Hadoop's line reader splits them).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from kcspec.model.kafka_log import lines as g

FieldValue = int | str | None


@dataclass(frozen=True)
class Classified:
    """What a record's message is: ``kind``, the template (``None`` for generic families), its fields."""

    kind: str | None
    template: str | None
    fields: dict[str, FieldValue] = field(default_factory=dict)
    reason: str | None = None


@dataclass(frozen=True)
class ParsedLine:
    file: str
    line: int
    text: str
    status: str
    """``record``, ``continuation``, ``blank`` or ``quarantined``."""
    layout: str | None = None
    ts: str | None = None
    level: str | None = None
    logger: str | None = None
    message: str | None = None
    kind: str | None = None
    template: str | None = None
    fields: dict[str, FieldValue] = field(default_factory=dict)
    reason: str | None = None
    owner: int | None = None
    """For a continuation: the line number of the record it belongs to."""

    @property
    def undated(self) -> bool:
        """A record without a timestamp (``lines.UNDATED`` layout, ``ts`` ``None``): ordered by its file position."""
        return self.status == "record" and self.ts is None


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def template_fields(template: g.Template, match: re.Match[str]) -> dict[str, FieldValue]:
    """Fields of a template match: the first non-empty group for each field, typed and normalised."""
    out: dict[str, FieldValue] = {}
    for i, name in enumerate(template.fields, start=1):
        raw = match.group(i)
        if name in out and out[name] is not None:
            continue
        out[name] = convert(name, raw)
    return out


def convert(name: str, raw: str | None) -> FieldValue:
    """The typed value of field ``name`` from the text a group captured (``None``/empty → ``None``)."""
    if name in g.LIST_FIELDS:
        return None if raw is None else g.normalise_list(raw)
    if raw is None or raw == "":
        return None
    if name in g.INT_FIELDS:
        try:
            return int(raw)
        except ValueError:
            return None
    return raw


def classify_message(message: str, logger: str) -> Classified:
    """Match a record's message against ``lines.TEMPLATES`` (first match wins), else a generic family."""
    for template in g.TEMPLATES:
        if template.marker in message:
            m = _rx(template.regex).search(message)
            if m is not None:
                if any(g.SEPARATOR in (group or "") for group in m.groups()):
                    return Classified(None, None, {}, "separator-character")
                return Classified(template.kind, template.name, template_fields(template, m))
    if logger == g.STATE_CHANGE_LOGGER and _rx(g.CONTROLLER_SIDE_STATE_CHANGE).search(message):
        reason = (
            "legacy-state-change" if _rx(g.LEGACY_CONTROLLER_SIDE).search(message) else "unknown-state-change"
        )
        return Classified(None, None, {}, reason)
    m = _rx(g.CONTROLLER_ID_PREFIX).search(message)
    if m is not None:
        return Classified("controller_message", None, {"controller_id": int(m.group(1))})
    m = _rx(g.BROKER_ID_PREFIX).search(message)
    if m is not None:
        return Classified("broker_message", None, {"broker": int(m.group(1) or m.group(2))})
    return Classified("other_message", None, {})


def split_lines(data: str) -> list[str]:
    """Physical lines of a text as Hadoop's line reader splits them (no trailing empty line)."""
    parts = re.split(r"\r\n|\r|\n", data)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def read_text(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return raw.decode("utf-8", errors="replace")


def parse_lines(file: str, texts: Iterable[str], join_wrapped: bool = True) -> Iterator[ParsedLine]:
    """Parse one file's physical lines in order.

    With ``join_wrapped`` a record cut over several physical lines (a line that starts like a record of a
    layout that ends with its logger, and does not end like one) is re-joined with up to ``lines.WRAP_MAX - 1``
    following lines that neither are nor start a record: the first line is the record (its message from the
    joined text), the others are its continuation lines. Once a record of a file was re-joined, the file is
    known to be wrapped at that record's first line's width: a line that is no record and follows a line of
    exactly that width is the rest of that line (a wrapped stack frame), attached like it. Without
    ``join_wrapped`` every line is parsed alone (as the line-by-line Spark parsers do).
    """
    physical = list(texts)
    owner: int | None = None  # the record the current run of continuation/blank lines belongs to
    wrapped_until = 0  # the last line of the wrapped record being read
    width: int | None = None  # the width the file was wrapped at (known once a record was re-joined)
    previous = -1  # the length of the line before
    begun = False  # a line other than a blank or an orphan continuation has been read (g.ORPHAN_AT_START)
    for number, text in enumerate(physical, start=1):
        tail = number <= wrapped_until or (join_wrapped and width is not None and previous == width)
        previous = len(text)
        if number <= wrapped_until:
            yield _attached(file, number, text, owner)
            continue
        head = split_layout(text)
        if head is None and join_wrapped and starts_record(text):
            for extra in range(1, g.WRAP_MAX):
                if number + extra > len(physical):
                    break
                piece = physical[number + extra - 1]
                if split_layout(piece) is not None or starts_record(piece):
                    break  # the next record: never swallowed into this one
                joined = split_layout("".join(physical[number - 1 : number + extra]))
                if joined is not None:
                    head, wrapped_until, width = joined, number + extra, len(text)
                    break
        if head is not None:
            begun = True
            layout, ts, level, message, logger = head
            c = classify_message(message, logger)
            status = "quarantined" if c.reason else "record"
            owner = number if status == "record" else None
            yield ParsedLine(
                file,
                number,
                text,
                status,
                layout,
                ts,
                level,
                logger,
                message,
                c.kind,
                c.template,
                c.fields,
                c.reason,
            )
        elif _rx(g.BLANK_REGEX).search(text):
            yield ParsedLine(file, number, text, "blank", owner=owner)
        elif tail or _rx(g.CONTINUATION_REGEX).search(text):
            yield _attached(file, number, text, owner, begun)
        else:
            owner = None
            begun = True
            outside = _rx(g.CONTAINER_PREFIX_REGEX).search(text) is not None
            yield ParsedLine(
                file, number, text, "quarantined", reason=g.OUT_OF_SCOPE if outside else "no-layout"
            )


def _attached(file: str, number: int, text: str, owner: int | None, begun: bool = True) -> ParsedLine:
    """A line that belongs to the record above: its continuation, or quarantined when that is no record
    (``lines.ORPHAN_AT_START`` before the file's first record or other line, an excerpt that starts inside
    a stack trace)."""
    if owner is None:
        reason = g.ORPHAN_REASONS[0] if begun else g.ORPHAN_AT_START
        return ParsedLine(file, number, text, "quarantined", reason=reason)
    return ParsedLine(file, number, text, "continuation", owner=owner)


def parse_file(path: Path, name: str | None = None, join_wrapped: bool = True) -> list[ParsedLine]:
    return list(parse_lines(name or str(path), split_lines(read_text(path)), join_wrapped))


def split_layout(text: str) -> tuple[str, str | None, str | None, str, str] | None:
    """``(layout, ts, level, message, logger)`` of a line: the first dated layout of ``lines.LAYOUTS`` that
    matches the whole line, else the first that matches after a line prefix (its name then ends with
    ``lines.PREFIXED``), else the first layout without a timestamp that matches the whole line (``ts`` ``None``:
    ``lines.UNDATED``). The timestamp is normalised (``lines.normalise_ts``); a layout without a level gives
    ``None``."""
    dated = _rx(g.DATE_REGEX).search(text) is not None  # no date: no dated layout matches, prefixed or not
    for pass_ in ("whole", "prefixed", "undated"):
        prefixed = pass_ == "prefixed"
        for layout in g.LAYOUTS:
            if layout.undated != (pass_ == "undated") or (not dated and not layout.undated):
                continue
            m = _rx(layout.prefixed if prefixed else layout.regex).search(text)
            if m is not None:
                shift = 1 if prefixed else 0

                def part(
                    role: str, m: re.Match[str] = m, layout: g.Layout = layout, shift: int = shift
                ) -> str | None:
                    k = layout.group(role)
                    return m.group(k + shift) if k else None

                name = layout.name + (g.PREFIXED if prefixed else "")
                ts = part("ts")
                return (
                    name,
                    None if ts is None else g.normalise_ts(ts),
                    part("level"),
                    part("message") or "",
                    part("logger") or "",
                )
    return None


def starts_record(text: str) -> bool:
    """Whether a line starts like a record of a layout that ends with its logger (after an optional prefix)."""
    return bool(_rx(g.DATE_REGEX).search(text)) and any(
        _rx(layout.head).search(text) or _rx(g.PREFIX_REGEX + layout.head[1:]).search(text)
        for layout in g.LAYOUTS
        if layout.head
    )
