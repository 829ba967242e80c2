"""TLA+ values as TLC prints them (``-tool`` state text, action arguments) and as ``-dumpTrace json`` writes them.

TLC's value syntax: integers (``-1``), strings (``"t-0"``), ``TRUE``/``FALSE``, sets ``{1, 2}``,
intervals ``1..3``, sequences ``<<1, 2>>``, records ``[p |-> "t-0", b |-> 1]``, functions
``("t-0" :> 0 @@ "t-1" :> 2)`` and model values (bare names). ``parse_value`` reads one value;
``from_json`` converts the JSON of ``-dumpTrace json`` (objects are functions with string keys,
arrays are sets or sequences: the reader that knows the type decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class TlaSet:
    items: tuple[Value, ...]


@dataclass(frozen=True)
class TlaSeq:
    """A sequence; also what TLC prints for a function whose domain is ``1..n`` (and for ``<<>>``)."""

    items: tuple[Value, ...]


@dataclass(frozen=True)
class TlaRecord:
    """A record: a function whose domain is a set of strings."""

    fields: tuple[tuple[str, Value], ...]

    def get(self, name: str) -> Value:
        for k, v in self.fields:
            if k == name:
                return v
        raise KeyError(name)


@dataclass(frozen=True)
class TlaFunction:
    pairs: tuple[tuple[Value, Value], ...]


@dataclass(frozen=True)
class ModelValue:
    name: str


Value = Union[int, bool, str, TlaSet, TlaSeq, TlaRecord, TlaFunction, ModelValue]  # noqa: UP007 - forward refs


class ValueSyntaxError(ValueError):
    """Text that is not a TLA+ value as TLC prints it; ``pos`` is the offset of the problem."""

    def __init__(self, text: str, pos: int, message: str) -> None:
        excerpt = text[max(0, pos - 20) : pos + 20].replace("\n", " ")
        super().__init__(f"{message} at offset {pos} (near {excerpt!r})")
        self.pos = pos


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<integer>-?[0-9]+)
      | (?P<word>[^\W\d][\w]*)
      | (?P<punct><<|>>|\|->|:>|@@|\.\.|[{}\[\](),])
      | (?P<other>\S)
    )""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "f": "\f"}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``text`` as (kind, text, offset) tokens, one regular-expression scan (the dump of a 2-broker model holds
    tens of megabytes of values: a character-by-character reader cost most of the comparison's time)."""
    out: list[tuple[str, str, int]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind is None:  # only white space is left
            break
        out.append((kind, m.group(kind), m.start(kind)))
    return out


class _Reader:
    """A recursive-descent reader over ``_tokens``; errors name the offset in the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0

    @property
    def pos(self) -> int:
        """The offset of the next token (the text's length at its end)."""
        return self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def take(self, token: str) -> bool:
        if self.i < len(self.tokens):
            kind, tok, _ = self.tokens[self.i]
            if tok == token and kind == "punct":
                self.i += 1
                return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise ValueSyntaxError(self.text, self.pos, f"expected {token!r}")

    def fail(self, message: str) -> ValueSyntaxError:
        return ValueSyntaxError(self.text, self.pos, message)

    def value(self) -> Value:
        first = self.atom()
        if self.take(".."):
            last = self.atom()
            if not isinstance(first, int) or not isinstance(last, int) or isinstance(first, bool):
                raise self.fail("an interval needs integer bounds")
            return TlaSet(tuple(range(first, last + 1)))
        return first

    def atom(self) -> Value:
        if self.i >= len(self.tokens):
            raise self.fail("unexpected end of value")
        kind, tok, pos = self.tokens[self.i]
        self.i += 1
        if kind == "punct":
            if tok == "<<":
                return TlaSeq(self.items(">>"))
            if tok == "{":
                return TlaSet(self.items("}"))
            if tok == "[":
                return self.record()
            if tok == "(":
                return self.function()
        elif kind == "integer":
            return int(tok)
        elif kind == "string":
            return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1], m[1]), tok[1:-1])
        elif kind == "word":
            if tok == "TRUE":
                return True
            if tok == "FALSE":
                return False
            return ModelValue(tok)
        self.i -= 1
        if tok == '"':
            raise self.fail("unterminated string")
        if tok == "-":
            raise ValueSyntaxError(self.text, pos + 1, "expected digits")
        raise self.fail(f"unexpected character {tok[0]!r}")

    def items(self, close: str) -> tuple[Value, ...]:
        out: list[Value] = []
        if self.take(close):
            return ()
        while True:
            out.append(self.value())
            if self.take(close):
                return tuple(out)
            self.expect(",")

    def record(self) -> Value:
        fields: list[tuple[str, Value]] = []
        if self.take("]"):
            return TlaRecord(())
        while True:
            if self.i >= len(self.tokens) or self.tokens[self.i][0] not in ("word", "integer"):
                raise self.fail("expected a record field name")
            name = self.tokens[self.i][1]
            self.i += 1
            self.expect("|->")
            fields.append((name, self.value()))
            if self.take("]"):
                return TlaRecord(tuple(fields))
            self.expect(",")

    def function(self) -> Value:
        pairs: list[tuple[Value, Value]] = []
        while True:
            key = self.value()
            if not pairs and self.take(")"):
                return key  # a parenthesised value
            self.expect(":>")
            pairs.append((key, self.value()))
            if self.take(")"):
                return TlaFunction(tuple(pairs))
            self.expect("@@")


def parse_value(text: str) -> Value:
    """One TLA+ value; ``ValueSyntaxError`` if the text is not exactly one value."""
    reader = _Reader(text)
    try:
        value = reader.value()
    except RecursionError:
        raise reader.fail("the value is nested too deeply to read") from None
    if not reader.at_end():
        raise reader.fail("unexpected text after the value")
    return value


def parse_values(text: str) -> tuple[Value, ...]:
    """A comma-separated list of values (the arguments of an action as TLC prints them)."""
    reader = _Reader(text)
    if reader.at_end():
        return ()
    try:
        out = [reader.value()]
        while reader.take(","):
            out.append(reader.value())
    except RecursionError:
        raise reader.fail("the values are nested too deeply to read") from None
    if not reader.at_end():
        raise reader.fail("unexpected text after the values")
    return tuple(out)


def from_json(data: Any) -> Value:
    """A ``-dumpTrace json`` value: objects become records (string-keyed functions), arrays sequences."""
    if isinstance(data, bool | int | str):
        return data
    if isinstance(data, list):
        return TlaSeq(tuple(from_json(x) for x in data))
    if isinstance(data, dict):
        return TlaRecord(tuple((str(k), from_json(v)) for k, v in data.items()))
    raise ValueError(f"not a TLA+ value in TLC's JSON trace: {data!r}")


def to_text(value: Value) -> str:
    """TLC's own rendering of a value (used in messages and for round-trip tests)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, TlaSet):
        return "{" + ", ".join(to_text(v) for v in value.items) + "}"
    if isinstance(value, TlaSeq):
        return "<<" + ", ".join(to_text(v) for v in value.items) + ">>"
    if isinstance(value, TlaRecord):
        return "[" + ", ".join(f"{k} |-> {to_text(v)}" for k, v in value.fields) + "]"
    if isinstance(value, TlaFunction):
        return "(" + " @@ ".join(f"{to_text(k)} :> {to_text(v)}" for k, v in value.pairs) + ")"
    return value.name
