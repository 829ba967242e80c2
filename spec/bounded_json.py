"""Bounded JSON reading: every JSON text kcspec reads from outside goes through ``loads`` here.

Python's ``json`` module recurses once per nesting level (about 1,000 levels of ``[`` end in a
``RecursionError``, a 2 KB input is enough) and converts integers with ``int()``, which refuses more than
4,300 digits with a ``ValueError``. Neither is a ``json.JSONDecodeError``, so a reader that only handles
that would crash on such input. ``loads`` checks both bounds first and reports a violation as
``JsonLimitError``, a subclass of ``json.JSONDecodeError``: every reader that already turns a decoding
error into "errored verdict", "quarantined line" or "bad input, exit 2" (with the file and line from
``lineno``/``colno``) handles an over-deep or over-long input the same way, with a message that says
which bound was exceeded.

The module lives in ``spec/`` (not in ``conformance/protocol/``) because readers at every layer use it —
protocol replies, vector files, traces (``spec/trace.py``, ``spec/codec.py``), diagram coverage files
(``model/diagrams``) and audit JSON Lines — and the dependency direction only allows them all to import
downward.

Bounds: ``MAX_DEPTH`` levels of arrays/objects (the deepest value of the data model, a cluster state
inside a protocol message or a trace line, is under 10 levels) and ``MAX_NUMBER_CHARS`` characters in one
number literal (an int64 has at most 20).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64
"""Most levels of nested arrays and objects a JSON text may have."""
MAX_NUMBER_CHARS = 100
"""Most characters in one number literal (digits, sign, fraction and exponent)."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
"""Strings (skipped whole, so brackets inside them do not count) and brackets."""
_LONG_RUN = re.compile(rf"[-+0-9.eE]{{{MAX_NUMBER_CHARS + 1},}}")
_NUMBER_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][-+0-9.eE]*', re.DOTALL)


class JsonLimitError(json.JSONDecodeError):
    """The text is nested too deeply or holds a number literal that is too long (``msg`` says which)."""


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with bounded nesting depth and number length; ``JsonLimitError`` (a
    ``json.JSONDecodeError``) when a bound is exceeded, ``UnicodeDecodeError`` for bytes that are not
    UTF-8."""
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    _check_depth(text, max_depth)
    _check_numbers(text)
    return json.loads(text)


def _check_depth(text: str, max_depth: int) -> None:
    if text.count("[") + text.count("{") <= max_depth:
        return  # cannot be deeper than the number of openers (the common case, no scan)
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                raise JsonLimitError(
                    f"nested deeper than {max_depth} levels of arrays/objects (the bound of kcspec's JSON reader)",
                    text,
                    match.start(),
                )
        elif token in ("]", "}"):
            depth -= 1


def _check_numbers(text: str) -> None:
    if _LONG_RUN.search(text) is None:
        return  # no run of number characters is long enough (the common case, one C-speed search)
    for match in _NUMBER_OR_STRING.finditer(text):
        token = match.group()
        if token[0] != '"' and len(token) > MAX_NUMBER_CHARS:
            raise JsonLimitError(
                f"a number literal of {len(token)} characters (kcspec's JSON reader reads at most {MAX_NUMBER_CHARS})",
                text,
                match.start(),
            )
