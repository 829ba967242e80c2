"""TLC's counterexample to a liveness property: a lasso — a finite prefix, then a cycle repeated forever.

In ``-tool`` mode TLC reports a liveness violation as message 2116 ("Temporal properties were violated."),
2264 ("The following behavior constitutes a counter-example:"), the states as 2217 messages, and then how the
behaviour goes on forever: either 2122, ``Back to state N`` (the last state's successor is state ``N`` again, so
states ``N`` … last repeat), or 2218, ``N: Stuttering`` (the behaviour stays in the last state forever: no action
that fairness requires is enabled, or the ones enabled do not change the state). ``parse_lasso`` reads that shape;
``kcspec.model.tla.counterexample.lasso_trace`` turns it into a replayable kcspec trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcspec.model.tlc.output import split_messages
from kcspec.model.tlc.trace import (
    TlcAction,
    TlcTraceState,
    TraceFormatError,
    _parse_action_header,
    parse_state_text,
)

TEMPORAL_PROPERTY_VIOLATED = 2116
COUNTER_EXAMPLE = 2264
STATE_PRINT = 2217
BACK_TO_STATE = 2122
STUTTERING = 2218

_BACK = re.compile(r"(?:^(?P<a>\d+): Back to state(?::)?(?: (?P<b>\d+))?|^Back to state (?P<c>\d+))", re.M)
_STUTTER = re.compile(r"^(\d+): Stuttering", re.M)


@dataclass(frozen=True)
class Lasso:
    """A lasso-shaped behaviour: ``states`` in order, then forever either back to state ``loop_to`` (its number,
    1-based) or, when ``stuttering``, the last state repeated."""

    states: tuple[TlcTraceState, ...]
    loop_to: int | None
    stuttering: bool
    message: str
    back_action: TlcAction | None = None
    """The action (with its arguments) of the step from the last state back to state ``loop_to``."""

    @property
    def cycle(self) -> tuple[TlcTraceState, ...]:
        """The states that repeat forever."""
        if self.stuttering or self.loop_to is None:
            return self.states[-1:]
        return tuple(s for s in self.states if s.number >= self.loop_to)


def parse_lasso(text: str) -> Lasso:
    """The lasso of a ``-tool`` transcript with a temporal-property violation (``TraceFormatError`` otherwise)."""
    messages = split_messages(text)
    violation = next((m for m in messages if m.code == TEMPORAL_PROPERTY_VIOLATED), None)
    if violation is None:
        raise TraceFormatError("no temporal-property violation (message 2116) in TLC's output")
    states: list[TlcTraceState] = []
    loop_to: int | None = None
    back_action: TlcAction | None = None
    stuttering = False
    for m in messages:
        if m.code == STATE_PRINT:
            states.append(parse_state_text(m.body))
        elif m.code == BACK_TO_STATE:
            back = _BACK.search(m.body.strip())
            if back is None:
                raise TraceFormatError(f"cannot read TLC's 'Back to state' message: {m.body.strip()!r}")
            # TLC writes "N: Back to state: <action>" (N the state returned to) or "Back to state N: <action>"
            loop_to = int(back.group("b") or back.group("a") or back.group("c"))
            body = m.body.strip()
            if "<" in body and body.endswith(">"):
                back_action = _parse_action_header(body[body.index("<") :], loop_to)
        elif m.code == STUTTERING:
            if _STUTTER.search(m.body.strip()) is None:
                raise TraceFormatError(f"cannot read TLC's stuttering message: {m.body.strip()!r}")
            stuttering = True
    if not states:
        raise TraceFormatError("the liveness counterexample has no states")
    if loop_to is None and not stuttering:
        raise TraceFormatError(
            "the liveness counterexample neither loops back nor stutters (output cut short?)"
        )
    numbers = [s.number for s in states]
    if numbers != list(range(1, len(states) + 1)):
        raise TraceFormatError(f"the counterexample's states are numbered {numbers}, not 1..{len(states)}")
    if loop_to is not None and not 1 <= loop_to <= len(states):
        raise TraceFormatError(f"'Back to state {loop_to}' but the counterexample has {len(states)} states")
    return Lasso(tuple(states), loop_to, stuttering, violation.body.strip(), back_action)


__all__ = ["Lasso", "parse_lasso"]
