"""Text blocks for readable TLA+ whose layout is safe for TLA+'s column-sensitive ``/\\`` and ``\\/`` lists.

A ``Block`` is a tuple of ``Line``s. Placing a block after a prefix indents all of its later lines
by the prefix's width, so the relative columns inside the block — the alignment of bulleted
conjunction lists — never change. Every line remembers its ``origin`` (the innermost spec rule that
produced it) so that TLC's error positions can be mapped back to the spec.
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 100
"""Flat renderings longer than this are broken over several lines."""


@dataclass(frozen=True)
class Line:
    text: str
    origin: str | None = None


Block = tuple[Line, ...]


def text(s: str, origin: str | None = None) -> Block:
    return (Line(s, origin),)


def is_flat(b: Block) -> bool:
    return len(b) == 1


def flat_text(b: Block) -> str:
    return b[0].text


def width(b: Block) -> int:
    return max(len(line.text) for line in b)


MAX_LINE = 120
"""The longest line the generated module should have; a part that would overrun it starts on the next line."""

HANG_LIMIT = 12
"""A multi-line part that would hang after more than this much text starts on the next line instead (a short
limit keeps nested records and EXCEPTs from drifting right; 12 gave the fewest lines over 120 characters)."""


def concat(*parts: Block) -> Block:
    """Horizontal concatenation: each part starts where the previous one's last line ends.

    A multi-line part after a long prefix goes on the next lines, indented 4 past the prefix line's own
    indentation, so deep nesting does not drift to the right. Both forms keep every column inside the
    part relative to the part's first column, which is all that TLA+'s bulleted lists need.
    """
    out: list[Line] = list(parts[0])
    for part in parts[1:]:
        last = out[-1]
        lead = len(last.text) - len(last.text.lstrip(" "))
        long = len(last.text) + width(part) > MAX_LINE and len(last.text.strip()) > 0
        if (len(part) > 1 and len(last.text) - lead > HANG_LIMIT) or long:
            # on the next lines: right of every bullet of the line it continues (TLA+ ends a /\ or \/ list
            # at the first token left of or at its bullet's column)
            col = max(lead + 4, _last_bullet(last.text) + 3)
            if col < len(last.text):
                out[-1] = Line(last.text.rstrip(), last.origin)
                out.extend(Line(" " * col + line.text, line.origin) for line in part)
                continue
        col = len(last.text)
        out[-1] = Line(last.text + part[0].text, part[0].origin or last.origin)
        out.extend(Line(" " * col + line.text, line.origin) for line in part[1:])
    return tuple(out)


def _last_bullet(line: str) -> int:
    """The column of the last ``/\\`` or ``\\/`` on ``line`` (-1 if none): a bullet, or a conjunction written
    inline (treated as a bullet, which only moves a continuation further right)."""
    return max(line.rfind("/\\"), line.rfind("\\/"))


def indent(b: Block, n: int) -> Block:
    return tuple(Line(" " * n + line.text, line.origin) for line in b)


def vstack(*blocks: Block) -> Block:
    out: list[Line] = []
    for b in blocks:
        out.extend(b)
    return tuple(out)


def tag(b: Block, origin: str) -> Block:
    """Give ``origin`` to the lines that do not have one yet."""
    return tuple(line if line.origin else Line(line.text, origin) for line in b)


def fits(*parts: Block, extra: int = 0) -> bool:
    return all(is_flat(p) for p in parts) and sum(len(flat_text(p)) for p in parts) + extra <= WIDTH


def seq_items(open_: str, items: list[Block], close: str, sep: str = ", ") -> Block:
    """``open a, b, c close`` on one line when it fits; else one item per line — aligned after a short
    opener (``[``, ``{``, ``<<``, ``(``), or, after a long one (``MapPut(``), indented on the next lines."""
    if not items:
        return text(open_ + close)
    if fits(*items, extra=len(open_) + len(close) + len(sep) * (len(items) - 1)):
        return text(open_ + sep.join(flat_text(i) for i in items) + close)
    rows: list[Block] = []
    for i, item in enumerate(items):
        rows.append(concat(item, text(sep.rstrip() if i < len(items) - 1 else close)))
    if len(open_.strip()) <= 2:
        return concat(text(open_), vstack(*rows))
    return vstack(text(open_.rstrip()), indent(vstack(*rows), 4))


def render(b: Block) -> str:
    return "\n".join(line.text.rstrip() for line in b)
