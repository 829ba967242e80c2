"""TLC error traces: the states of a counterexample, from ``-tool`` state messages or ``-dumpTrace json``.

A ``TlcTraceState`` has its number (1 = initial), the action that led to it (``None`` for the initial
state) with its arguments, and the value of every variable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcspec.model.tlc.values import Value, ValueSyntaxError, from_json, parse_value, parse_values


class TraceFormatError(ValueError):
    """A trace that does not have TLC's format; the message names where."""


NEXT_LABEL = "Next"
"""The label TLC gives a step of an action whose ``Next`` entry checks part of its guard before calling it
(``kcspec.model.tla.module.hoisted_guard``): TLC names an action after the operator it splits ``Next`` down to, and
it does not split a conjunction. Such a step's event is looked for among the instances of every action
(``kcspec.model.tla.counterexample``)."""


@dataclass(frozen=True)
class TlcAction:
    """The action of a step: its name, its arguments (positional, as TLC prints them) and where it is defined."""

    name: str
    args: tuple[Value, ...] = ()
    params: tuple[str, ...] = ()
    location: str = ""


@dataclass(frozen=True)
class TlcTraceState:
    number: int
    action: TlcAction | None
    variables: tuple[tuple[str, Value], ...]

    def var(self, name: str) -> Value:
        for k, v in self.variables:
            if k == name:
                return v
        raise KeyError(f"state {self.number} has no variable {name!r}")


_HEADER = re.compile(r"^(?:State )?(\d+):(?: (.*))?$")
_ACTION = re.compile(
    r"^<(?P<name>[A-Za-z_][A-Za-z0-9_!]*)(?:\((?P<args>.*)\))?(?: (?P<loc>line \d+, col .*))?>$", re.S
)
_VAR_LINE = re.compile(r"^(?:/\\ )?([A-Za-z_][A-Za-z0-9_]*) = ", re.M)


def parse_state_text(text: str) -> TlcTraceState:
    """One state as TLC prints it: ``N: <Action(args) line …>`` then ``/\\ var = value`` lines."""
    lines = text.strip("\n").split("\n")
    if not lines or not lines[0].strip():
        raise TraceFormatError("empty state text")
    header = _HEADER.match(lines[0].strip())
    if header is None:
        raise TraceFormatError(f"state header {lines[0]!r} is not 'N: <action>'")
    number = int(header.group(1))
    label = (header.group(2) or "").strip()
    # a depth-first run (-dfid) prints its states without their action ("2:"): a step of Next, found again by
    # matching the states
    action = (
        _parse_action_header(label, number) if label else (None if number == 1 else TlcAction(NEXT_LABEL))
    )

    variables: list[tuple[str, Value]] = []
    for name, value_text in variable_texts("\n".join(lines[1:]), number):
        variables.append((name, parse_variable(value_text, number, name)))
    return TlcTraceState(number, action, tuple(variables))


def variable_texts(body: str, number: int) -> list[tuple[str, str]]:
    """The ``/\\ var = value`` lines of state ``number``'s ``body`` as (name, the value's text), in order."""
    starts = list(_VAR_LINE.finditer(body))
    if not starts and body.strip():
        raise TraceFormatError(f"state {number}: no '/\\ var = value' lines in {body.strip()[:60]!r}")
    ends = [m.start() for m in starts[1:]] + [len(body)]
    return [(m.group(1), body[m.end() : end]) for m, end in zip(starts, ends, strict=True)]


def parse_variable(value_text: str, number: int, name: str) -> Value:
    """The value of variable ``name`` of state ``number`` from its text (``TraceFormatError`` names both)."""
    try:
        return parse_value(value_text)
    except ValueSyntaxError as exc:
        raise TraceFormatError(f"state {number}, variable {name}: {exc}") from None


def _parse_action_header(text: str, number: int) -> TlcAction | None:
    if text in ("<Initial predicate>", "Initial predicate"):
        return None
    m = _ACTION.match(text)
    if m is None:
        return TlcAction(name=text.strip("<>"))
    args_text = m.group("args")
    try:
        args = parse_values(args_text) if args_text else ()
    except ValueSyntaxError as exc:
        raise TraceFormatError(f"state {number}: arguments of {m.group('name')}: {exc}") from None
    return TlcAction(name=m.group("name"), args=args, location=(m.group("loc") or "").strip())


def load_json_trace(path: Path) -> tuple[TlcTraceState, ...]:
    """Read a ``-dumpTrace json FILE`` counterexample."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceFormatError(f"{path}: not a readable JSON trace ({exc})") from None
    return parse_json_trace(data, str(path))


def parse_json_trace(data: Any, source: str = "trace") -> tuple[TlcTraceState, ...]:
    """The states of a ``-dumpTrace json`` document, with the actions taken between them."""
    try:
        cex = data["counterexample"]
        raw_states = cex["state"]
        raw_actions = cex.get("action", [])
    except (KeyError, TypeError):
        raise TraceFormatError(f"{source}: expected {{'counterexample': {{'state': [...]}}}}") from None
    actions: dict[int, TlcAction] = {}
    for i, step in enumerate(raw_actions):
        try:
            _, meta, (target, _) = step
            loc = meta.get("location", {})
            params = tuple(meta.get("parameters", ()))
            context = meta.get("context", {})
            actions[int(target)] = TlcAction(
                name=str(meta["name"]),
                args=tuple(from_json(context[p]) for p in params),
                params=params,
                location=(
                    f"line {loc['beginLine']}, col {loc['beginColumn']} to line {loc['endLine']}, "
                    f"col {loc['endColumn']} of module {loc['module']}"
                    if loc
                    else ""
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TraceFormatError(f"{source}: counterexample.action[{i}] is malformed ({exc})") from None
    states: list[TlcTraceState] = []
    for i, entry in enumerate(raw_states):
        try:
            number, values = entry
            variables = tuple((str(k), from_json(v)) for k, v in values.items())
        except (TypeError, ValueError, AttributeError) as exc:
            raise TraceFormatError(f"{source}: counterexample.state[{i}] is malformed ({exc})") from None
        states.append(TlcTraceState(int(number), actions.get(int(number)), variables))
    return tuple(states)
