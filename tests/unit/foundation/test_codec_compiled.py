"""The compiled decoders accept exactly what the path-naming walk accepts, and decode it to the same value.

``codec.decode`` trusts the decoder compiled for a type whenever it accepts, and asks the walk only when it
rejects; a compiled decoder that accepted something the walk rejects would let bad input through silently. Each
example takes a valid value's JSON, damages it at one place (a wrong value, an unknown or a missing field, a
repeated set element, a bad map key) and decodes it both ways.
"""

from __future__ import annotations

import copy
import typing
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from kcspec.spec import codec
from kcspec.spec.events import EVENT_TYPES, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import LeaderAndIsrRequest, StepResult, StopReplicaRequest, UpdateMetadataRequest
from kcspec.spec.state import ClusterState

from tests.support.strategies import cluster_states, fmaps


def records(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Any value of the record ``cls`` (its maps drawn by ``fmaps``, which ``st.from_type`` cannot resolve)."""
    maps = {
        name: fmaps(*(st.from_type(a) for a in typing.get_args(hint)))
        for name, hint in typing.get_type_hints(cls).items()
        if typing.get_origin(hint) is FMap
    }
    return st.builds(cls, **maps)


step_results = st.builds(
    StepResult,
    state=cluster_states,
    requests=st.frozensets(
        st.one_of(records(LeaderAndIsrRequest), records(StopReplicaRequest), records(UpdateMetadataRequest)),
        max_size=3,
    ),
)
events = st.sampled_from(EVENT_TYPES).flatmap(records)

WRONG_VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    7,
    1.5,
    "",
    "x",
    "foo-0",
    "foo-0/1",
    "foo-01",
    "OnlineReplica",
    "OnlinePartition",
    [],
    [1, 1],
    ["foo-0", "foo-0"],
    {},
    {"leader": 1},
]


def _places(data: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """The path of every value inside ``data`` (keys of objects, indices of lists), the root included."""
    out: list[tuple[object, ...]] = [path]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _places(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _places(v, (*path, i))
    return out


def _at(data: Any, path: tuple[object, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


@st.composite
def damaged(draw: st.DrawFn, values: st.SearchStrategy[object]) -> tuple[object, str]:
    """A valid value's JSON with one place damaged, and what was done (for the failure message)."""
    data = copy.deepcopy(codec.encode(draw(values)))
    path = draw(st.sampled_from(_places(data)))
    how = draw(st.sampled_from(["replace", "add-field", "drop-field", "repeat", "bad-key"]))
    target = _at(data, path)
    if how == "add-field" and isinstance(target, dict):
        target[draw(st.sampled_from(["extra", "kind", "type", "foo-0", "1"]))] = draw(
            st.sampled_from(WRONG_VALUES)
        )
    elif how == "drop-field" and isinstance(target, dict) and target:
        del target[draw(st.sampled_from(sorted(target)))]
    elif how == "repeat" and isinstance(target, list) and target:
        target.append(copy.deepcopy(target[0]))
    elif how == "bad-key" and isinstance(target, dict):
        target[draw(st.sampled_from(["", "foo", "foo-", "-1", "01", "foo-0/x", "Online"]))] = draw(
            st.sampled_from(WRONG_VALUES)
        )
    elif path:
        parent = _at(data, path[:-1])
        parent[path[-1]] = draw(st.sampled_from(WRONG_VALUES))
    else:
        data = draw(st.sampled_from(WRONG_VALUES))
    return data, f"{how} at {list(path)}"


def _both(data: object, typ: Any) -> tuple[object, object]:
    """(compiled outcome, walk outcome): the decoded value, or the exception's type name."""
    try:
        fast: object = codec._compiled(typ)(data)
    except Exception as exc:  # any rejection counts as one
        fast = f"rejected ({type(exc).__name__})"
    try:
        slow: object = codec._walk(data, typ, "$")
    except Exception as exc:
        slow = f"rejected ({type(exc).__name__})"
    return fast, slow


def _agree(sample: tuple[object, str], typ: Any) -> None:
    data, how = sample
    fast, slow = _both(data, typ)
    fast_ok = not (isinstance(fast, str) and fast.startswith("rejected"))
    slow_ok = not (isinstance(slow, str) and slow.startswith("rejected"))
    assert fast_ok == slow_ok, (
        f"the compiled decoder and the walk disagree on {typ} after {how}:\n"
        f"  compiled: {fast!r}\n  walk: {slow!r}\n  data: {data!r}"
    )
    if fast_ok:
        assert fast == slow, f"same input, different values after {how}:\n  {fast!r}\n  {slow!r}"


@given(damaged(cluster_states))
def test_a_damaged_cluster_state_is_accepted_or_rejected_by_both(sample: tuple[object, str]) -> None:
    _agree(sample, ClusterState)


@given(damaged(step_results))
def test_a_damaged_step_result_is_accepted_or_rejected_by_both(sample: tuple[object, str]) -> None:
    _agree(sample, StepResult)


@given(damaged(events))
def test_a_damaged_event_is_accepted_or_rejected_by_both(sample: tuple[object, str]) -> None:
    _agree(sample, ControllerEvent)


def test_the_error_of_a_rejected_value_still_names_its_path() -> None:
    data = codec.encode(ClusterState())
    data["controller"]["epoch"] = "3"
    try:
        codec.decode(data, ClusterState, "state.json")
    except codec.CodecError as exc:
        assert exc.path == "state.json.controller.epoch" and "expected an integer" in str(exc)
    else:
        raise AssertionError("a string epoch was accepted")
