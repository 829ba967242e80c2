"""Lines of at most ``MAX_LINE`` characters: a long line of the generated module broken at TLA+-legal points.

The layout (``layout``) decides flat-or-broken bottom-up, before it knows the column a piece lands at, so a flat
piece can end up deeply indented and overrun the limit. This pass breaks such a line after a comma (of a tuple,
record, set, function constructor or argument list), or before a binary operator or ``THEN``/``ELSE``/``IN``,
never inside a string or a comment, and never before a ``/\\`` or ``\\/`` (which would start a bulleted list).

TLA+'s only layout rule is that of bulleted ``/\\`` and ``\\/`` lists: an item extends to the first token that
starts at or left of its bullet's column. A continuation line therefore starts right of every bullet that can
enclose the break: at least 4 columns right of the line's own first token (every enclosing bullet is left of
that token, or is that token), and 3 right of every ``/\\`` or ``\\/`` written on the line before the break (a
bullet opened on the line); and no break comes before a ``/\\`` or ``\\/`` of the line, whose list may go
on in the next lines, aligned with it. Breaking a line between two tokens changes nothing else: a line break is
white space. A comma inside brackets is aligned with the first item after its opening bracket when that is further
right. ``[]`` is TLA+'s "always" operator (``[]<>P``, ``[][Next]_vars``), one token, not a pair of brackets: no
break inside it. A comment line is wrapped into several comment lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.model.tla.layout import MAX_LINE

_OPENERS = ("<<", "(", "[", "{")
_CLOSERS = (">>", ")", "]", "}")
_BEFORE = (" THEN ", " ELSE ", " IN ", " \\cup ", " \\cap ", " \\o ", " \\in ", " = ", " # ", " \\ ", " => ")
"""Break points before an operator (the continuation starts with it)."""
_AFTER = (" |-> ", " : ", " == ")
"""Break points after an operator (the continuation starts with its right operand)."""


@dataclass(frozen=True)
class _Point:
    at: int
    """The first character of the continuation (in the line)."""
    cut: int
    """Where the first part ends (exclusive, trailing space dropped)."""
    column: int
    """The continuation's column."""
    depth: int
    comma: bool


def wrap_line(line: str, limit: int = MAX_LINE) -> list[str]:
    """``line`` as one or more lines of at most ``limit`` characters where a legal break exists (a line
    without one is returned as it is)."""
    if len(line) <= limit:
        return [line]
    if line.lstrip().startswith("(*") and line.rstrip().endswith("*)"):
        return _wrap_comment(line, limit)
    # a bullet written on this line may have its list continued on the next lines, aligned with it: no break
    # before it may move it
    last_bullet = max((i for i in _junctions(line) if _is_bullet(line, i)), default=-1)
    point = _best([p for p in _points(line) if p.cut > last_bullet], limit)
    if point is None:
        return [line]
    first = line[: point.cut].rstrip()
    rest = " " * point.column + line[point.at :].lstrip()
    if len(rest) >= len(line):  # no progress
        return [line]
    return [first, *wrap_line(rest, limit)]


def _best(points: list[_Point], limit: int) -> _Point | None:
    fitting = [p for p in points if p.cut <= limit and p.column <= p.at - 4]
    commas = [p for p in fitting if p.comma]
    if commas:  # the outermost comma, the last of those that fit
        depth = min(p.depth for p in commas)
        return max((p for p in commas if p.depth == depth), key=lambda p: p.at)
    if fitting:
        return max(fitting, key=lambda p: p.at)
    return None


def _points(line: str) -> list[_Point]:
    """Every legal break point of ``line``, with the column its continuation starts at."""
    first = len(line) - len(line.lstrip(" "))
    bound = first + 4  # right of the line's first token (which may itself be a bullet)
    stack: list[int] = []  # columns where the items of the open brackets start
    out: list[_Point] = []
    i = first
    in_string = False
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            in_string = c != '"'
            i += 1
            continue
        if c == '"':
            in_string = True
            i += 1
            continue
        if line.startswith("(*", i):  # a comment to the end of the line: no break inside it
            break
        if line.startswith("/\\", i) or line.startswith("\\/", i):
            if _is_bullet(line, i):
                bound = max(bound, i + 3)
            elif line.startswith(" ", i + 2):  # after an infix junction
                out.append(_Point(i + 3, i + 2, bound, len(stack), False))
            i += 2
            continue
        if line.startswith("[]", i):  # the temporal "always" (and the box of [][Next]_vars): no bracket
            i += 2
            continue
        opener = next((o for o in _OPENERS if line.startswith(o, i)), None)
        if opener is not None:
            stack.append(i + len(opener))
            i += len(opener)
            if i < len(line) and line[i] != " ":  # after an opening bracket
                out.append(_Point(i, i, bound, len(stack), False))
            continue
        closer = next((x for x in _CLOSERS if line.startswith(x, i)), None)
        if closer is not None and not (closer == ">>" and not stack):
            if stack:
                stack.pop()
            i += len(closer)
            continue
        if c == "," and line.startswith(", ", i):
            column = max(bound, stack[-1] if stack else 0)
            out.append(_Point(i + 2, i + 1, column, len(stack), True))
        else:
            for op in _BEFORE:
                if line.startswith(op, i) and not line.startswith(("/\\", "\\/"), i + 1):
                    out.append(_Point(i + 1, i, bound, len(stack), False))
                    break
            else:
                for op in _AFTER:
                    if line.startswith(op, i):
                        out.append(_Point(i + len(op), i + len(op) - 1, bound, len(stack), False))
                        break
        i += 1
    return out


_KEYWORDS = ("THEN", "ELSE", "IN", "LET", "IF", "CASE", "OTHER", "LAMBDA", "EXCEPT")


def _junctions(line: str) -> list[int]:
    """The columns of the ``/\\`` and ``\\/`` of ``line`` outside strings and comments."""
    out: list[int] = []
    in_string = False
    i = 0
    while i < len(line):
        c = line[i]
        if in_string:
            i += 2 if c == "\\" else 1
            in_string = in_string and c != '"'
            continue
        if c == '"':
            in_string = True
        elif line.startswith("(*", i):
            break
        elif line.startswith("/\\", i) or line.startswith("\\/", i):
            out.append(i)
            i += 2
            continue
        i += 1
    return out


def _is_bullet(line: str, i: int) -> bool:
    """Whether the junction symbol at ``i`` can start a bulleted list: it is not the infix operator between two
    operands (it is first on the line, or follows an opening bracket, a comma, ``==``, ``:``, ``|->``, a keyword…)."""
    before = line[:i].rstrip()
    if not before:
        return True
    if before.endswith((")", "]", "}", '"', ">>")):
        return False
    word = before.split()[-1] if before.split() else ""
    tail = ""
    for ch in reversed(before):
        if not (ch.isalnum() or ch == "_"):
            break
        tail = ch + tail
    return not tail or word in _KEYWORDS


def _wrap_comment(line: str, limit: int) -> list[str]:
    """A ``(* … *)`` line as several, each within ``limit``."""
    lead = line[: len(line) - len(line.lstrip(" "))]
    words = line.strip()[2:-2].split()
    room = max(20, limit - len(lead) - 6)
    rows: list[str] = []
    current = ""
    for w in words:
        if current and len(current) + 1 + len(w) > room:
            rows.append(current)
            current = w
        else:
            current = f"{current} {w}".strip()
    if current:
        rows.append(current)
    return [f"{lead}(* {r} *)" for r in rows]


__all__ = ["wrap_line"]


def wrap_module(lines: list[str], limit: int = MAX_LINE) -> list[tuple[int, str]]:
    """Every line of a module within ``limit`` where possible: each long line broken (``wrap_line``), and a
    long line that starts far right and holds no bullet moved left, to the first column right of every
    bulleted list that can still be open at it (a list ends at the first line that starts at or left of its
    bullet, so only bullets right-most among the lines since then count). Returns ``(source line index, text)``
    pairs, so that the caller can keep each line's origin."""
    out: list[tuple[int, str]] = []
    for n, line in enumerate(lines):
        pieces = wrap_line(line, limit)
        for piece in pieces:
            if len(piece) > limit and not any(_is_bullet(piece, j) for j in _junctions(piece)):
                piece = _move_left(piece, [text for _, text in out], limit)
                for again in wrap_line(piece, limit):
                    out.append((n, again))
            else:
                out.append((n, piece))
    return out


def _move_left(line: str, before: list[str], limit: int) -> str:
    """``line`` moved left as far as the bulleted lists that may enclose it allow (see ``wrap_module``)."""
    column = len(line) - len(line.lstrip(" "))
    floor = -1  # the right-most bullet of a list that can be open at this line
    lowest = column  # the smallest indentation of the lines between that bullet's line and this one
    for previous in reversed(before):
        if not previous.strip():
            continue
        indent = len(previous) - len(previous.lstrip(" "))
        for j in _junctions(previous):
            if j < lowest and _is_bullet(previous, j):
                floor = max(floor, j)
        lowest = min(lowest, indent)
        if indent == 0:  # a top-level definition starts here: no list of an earlier one is open
            break
    target = max(floor + 4, limit - len(line.strip()), 4)
    return line if target >= column else " " * target + line.lstrip(" ")
