"""TLA+ values as TLC prints them (``-tool`` state text, action arguments) and as ``-dumpTrace json`` writes them.

TLC's value syntax: integers (``-1``), strings (``"t-0"``), ``TRUE``/``FALSE``, sets ``{1, 2}``,
intervals ``1..3``, sequences ``<<1, 2>>``, records ``[p |-> "t-0", b |-> 1]``, functions
``("t-0" :> 0 @@ "t-1" :> 2)`` and model values (bare names). ``parse_value`` reads one value;
``from_json`` converts the JSON of ``-dumpTrace json`` (objects are functions with string keys,
arrays are sets or sequences: the reader that knows the type decides).
"""

from __future__ import annotations

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


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.skip_ws()
        return self.text.startswith(token, self.pos)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
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
        self.skip_ws()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of value")
        c = self.text[self.pos]
        if self.take("<<"):
            return TlaSeq(self.items(">>"))
        if self.take("{"):
            return TlaSet(self.items("}"))
        if self.take("["):
            return self.record()
        if self.take("("):
            return self.function()
        if c == '"':
            return self.string()
        if c == "-" or c.isdigit():
            return self.integer()
        if c.isalpha() or c == "_":
            start = self.pos
            while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
                self.pos += 1
            word = self.text[start : self.pos]
            if word == "TRUE":
                return True
            if word == "FALSE":
                return False
            return ModelValue(word)
        raise self.fail(f"unexpected character {c!r}")

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
            self.skip_ws()
            start = self.pos
            while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
                self.pos += 1
            if start == self.pos:
                raise self.fail("expected a record field name")
            name = self.text[start : self.pos]
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

    def string(self) -> str:
        self.pos += 1
        out: list[str] = []
        escapes = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "f": "\f"}
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == '"':
                self.pos += 1
                return "".join(out)
            if c == "\\" and self.pos + 1 < len(self.text):
                out.append(escapes.get(self.text[self.pos + 1], self.text[self.pos + 1]))
                self.pos += 2
                continue
            out.append(c)
            self.pos += 1
        raise self.fail("unterminated string")

    def integer(self) -> int:
        start = self.pos
        if self.text[self.pos] == "-":
            self.pos += 1
        digits = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if digits == self.pos:
            raise self.fail("expected digits")
        return int(self.text[start : self.pos])


def parse_value(text: str) -> Value:
    """One TLA+ value; ``ValueSyntaxError`` if the text is not exactly one value."""
    reader = _Reader(text)
    value = reader.value()
    reader.skip_ws()
    if reader.pos != len(text):
        raise reader.fail("unexpected text after the value")
    return value


def parse_values(text: str) -> tuple[Value, ...]:
    """A comma-separated list of values (the arguments of an action as TLC prints them)."""
    reader = _Reader(text)
    reader.skip_ws()
    if reader.pos == len(text):
        return ()
    out = [reader.value()]
    while reader.take(","):
        out.append(reader.value())
    reader.skip_ws()
    if reader.pos != len(text):
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
