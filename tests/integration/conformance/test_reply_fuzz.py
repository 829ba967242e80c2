"""Whatever line a SUT writes, decoding it gives a protocol message or a ``ProtocolError`` (an errored
verdict) — never another exception that would crash the run — and comparing a decoded reply with the
expected one never raises. Lines are random bytes, random JSON, and valid replies with one value replaced."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reply_diff import diff_replies
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ElectionResult

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
_VALID: list[Any] = [
    json.loads(m.to_line(1, reply))
    for reply in (
        m.ElectionReply(ElectionResult(1, (1, 2), (1, 2), False)),
        m.StepReply(ClusterState(), frozenset(), frozenset()),
        m.StateReply(ClusterState()),
        m.ErrorReply(m.ErrorCode.internal, "x"),
        m.HelloReply(1, m.Implementation("n", "v"), ("kafka-2.8",), frozenset({m.Capability.elections})),
        m.Ok(),
    )
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    base = json.loads(json.dumps(draw(st.sampled_from(_VALID))))
    paths = [p for p in _paths(base) if p]
    path = draw(st.sampled_from(paths))
    target = base
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(_JSON)
    return json.dumps(base).encode()


def _check(line: bytes) -> None:
    try:
        _, reply = m.parse_response(line)
    except m.ProtocolError:
        return
    for expected in (
        m.StepReply(ClusterState(), frozenset(), frozenset()),
        m.ErrorReply(m.ErrorCode.internal, ""),
    ):
        diff_replies(expected, reply)
        diff_replies(expected, reply, ("$.message",))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes(line: bytes) -> None:
    _check(line)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_random_json(value: Any) -> None:
    _check(json.dumps(value).encode())


@settings(max_examples=1000, deadline=None)
@given(_mutated())
def test_valid_replies_with_one_value_replaced(line: bytes) -> None:
    _check(line)
