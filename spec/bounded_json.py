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

A third check is not a size bound but the same kind of trap: a ``\\ud800`` escape is valid JSON syntax
yet decodes to a lone surrogate, a ``str`` that cannot be written as UTF-8 — a SUT's error message holding
one made the terminal report, the JSON report and every later write crash. Such a text is refused here too.

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

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKENS = re.compile(_STRING + r"|[\[\]{}]", re.DOTALL)
"""Strings (skipped whole, so brackets inside them do not count) and brackets."""
_NUMBER_OR_STRING = re.compile(_STRING + r"|-?[0-9][-+0-9.eE]*", re.DOTALL)
_STRINGS_BYTES = re.compile(_STRING.encode(), re.DOTALL)
_QUOTED_BYTES = re.compile(rb'"[^"]*"')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

# Fast paths work on the UTF-8 bytes with C-speed ``bytes.translate``/``replace``/``in`` (no byte of a
# multi-byte character is a quote, a backslash, a bracket or a digit).
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")
_ALL_BUT_BRACKETS_AND_QUOTES = bytes(i for i in range(256) if i not in b'[]{}"')
_NUMBER_CHARS = bytes(ord("0") if chr(i) in "-+0123456789.eE" else ord(" ") for i in range(256))


class JsonLimitError(json.JSONDecodeError):
    """The text is nested too deeply or holds a number literal that is too long (``msg`` says which)."""


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with bounded nesting depth and number length; ``JsonLimitError`` (a
    ``json.JSONDecodeError``) when a bound is exceeded, ``UnicodeDecodeError`` for bytes that are not
    UTF-8."""
    if isinstance(text, str):
        doc, data = text, text.encode("utf-8", "surrogatepass")
    else:
        data = bytes(text)
        doc = data.decode("utf-8")
    _check_depth(doc, data, max_depth)
    _check_numbers(doc, data)
    value = json.loads(doc)
    if b"\\u" in data:
        _check_surrogates(doc, value)
    return value


def _check_depth(doc: str, data: bytes, max_depth: int) -> None:
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return  # cannot be deeper than the number of openers (small texts: no scan at all)
    # The brackets alone, as "(" and ")", strings removed. Each pass deletes every innermost pair, so a
    # text of depth d is empty after d passes; at most max_depth passes of a C-speed replace, however
    # deep the text.
    if b"\\" in data:  # escapes: strings are found by a regular expression (slower, and rare)
        kept = _STRINGS_BYTES.sub(b"", data).translate(_BRACKETS, _ALL_BUT_BRACKETS_AND_QUOTES)
    else:
        kept = data.translate(_BRACKETS, _ALL_BUT_BRACKETS_AND_QUOTES).replace(b'""', b"")
        if b'"' in kept:  # strings holding brackets
            kept = _QUOTED_BYTES.sub(b"", kept)
    for _ in range(max_depth):
        reduced = kept.replace(b"()", b"")
        if not reduced:
            return
        if len(reduced) == len(kept):
            break  # unbalanced (not JSON), yet json.loads would recurse into unclosed openers
        kept = reduced
    _locate_depth(doc, max_depth)


def _locate_depth(text: str, max_depth: int) -> None:
    """Raise ``JsonLimitError`` at the first bracket deeper than ``max_depth`` (only called for a text
    that may be too deep)."""
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


def _check_numbers(doc: str, data: bytes) -> None:
    if b"0" * (MAX_NUMBER_CHARS + 1) not in data.translate(_NUMBER_CHARS):
        return  # no run of number characters is long enough (the common case)
    for match in _NUMBER_OR_STRING.finditer(doc):
        token = match.group()
        if token[0] != '"' and len(token) > MAX_NUMBER_CHARS:
            raise JsonLimitError(
                f"a number literal of {len(token)} characters (kcspec's JSON reader reads at most {MAX_NUMBER_CHARS})",
                doc,
                match.start(),
            )


def _check_surrogates(doc: str, value: Any) -> None:
    """Refuse a text whose strings decode to a lone surrogate (only called when it has ``\\u`` escapes)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        match = _SURROGATE_ESCAPE.search(doc)
        raise JsonLimitError(
            "a string holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff): not Unicode text",
            doc,
            match.start() if match else 0,
        ) from None
