"""TLC counterexamples back into kcspec: TLA+ values → canonical JSON → ``ClusterState`` and events → ``Trace``.

TLC prints each step's action label without its arguments (``<BrokerStartup line 3878, col 5 …>``; only a newer
TLC's ``-dumpTrace json`` has them). A step's event is then recovered from the model's finite event instances
(``instances.model_events``): of the instances of the labelled action, the first (in the module's order) whose
spec step from state *i* is enabled and leads exactly to state *i + 1* (a step labelled ``Next``, of an action whose
entry in ``Next`` checks part of its guard first, is looked for among every action's instances). When several instances lead to the same
state the first is taken: they are the same step as far as the state is concerned, and the trace replays the
same. Arguments TLC did print are used as they are, named by the action's own parameters (``action_params``).
Nothing here changes the module, so no state count changes.

The generated module keeps the data model's shape (``module``), so the translation is driven by the
vocabulary's type hints: records by field name, ``TopicPartition`` records to ``"t-0"``, functions to
maps (TLC prints a function with domain ``1..n`` as a sequence, and ``-dumpTrace json`` writes
non-string keys as text, which is parsed back), sets and sequences to lists.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kcspec.model.step import SpecMachine
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.instances import action_params, model_events
from kcspec.model.tla.module import STATE_VARS
from kcspec.model.tla.values import NONE_TEXT
from kcspec.model.tlc.lasso import Lasso
from kcspec.model.tlc.trace import NEXT_LABEL, TlcTraceState, parse_variable
from kcspec.model.tlc.values import (
    ModelValue,
    TlaFunction,
    TlaRecord,
    TlaSeq,
    TlaSet,
    Value,
    ValueSyntaxError,
    parse_value,
)
from kcspec.spec import codec
from kcspec.spec.events import EVENTS_BY_KIND, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition


class CounterexampleError(ValueError):
    """A TLC trace that does not fit the data model (the message names the state, variable and path)."""


def _pairs(v: Value, path: str) -> list[tuple[Value, Value]]:
    if isinstance(v, TlaFunction):
        return list(v.pairs)
    if isinstance(v, TlaSeq):
        return [(i + 1, x) for i, x in enumerate(v.items)]
    if isinstance(v, TlaRecord):
        return [(k, x) for k, x in v.fields]
    raise CounterexampleError(f"{path}: expected a function, got {type(v).__name__}")


def _items(v: Value, path: str) -> tuple[Value, ...]:
    if isinstance(v, TlaSet | TlaSeq):
        return v.items
    if isinstance(v, TlaFunction) and not v.pairs:
        return ()
    if isinstance(v, TlaRecord) and not v.fields:
        return ()
    raise CounterexampleError(f"{path}: expected a set or sequence, got {type(v).__name__}")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, once per class (it evaluates the annotations' text on every call: most of
    the time of reading a 2-broker model's state dump went there)."""
    return typing.get_type_hints(cls)


@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


def to_canonical(v: Value, hint: Any, path: str = "$") -> Any:
    """A TLA+ value of Python type ``hint`` as the canonical JSON data of ``kcspec.spec.codec``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        if v == ModelValue(NONE_TEXT) and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return to_canonical(v, inner[0], path)
    if hint in (int, bool, str):
        if not isinstance(v, hint) or (hint is int and isinstance(v, bool)):
            raise CounterexampleError(f"{path}: expected {hint.__name__}, got {v!r}")
        return v
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if not isinstance(v, str):
            raise CounterexampleError(f"{path}: expected a {hint.__name__} name, got {v!r}")
        return v
    if hint is TopicPartition:
        rec = _record(v, TopicPartition, path)
        return f"{rec['topic']}-{rec['partition']}"
    if hint is PartitionReplica:
        rec = _record(v, PartitionReplica, path)
        return f"{rec['tp']}/{rec['replica']}"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record(v, hint, path)
    if origin in (frozenset, set) or origin is tuple:
        inner = args[0]
        return [to_canonical(x, inner, f"{path}[{i}]") for i, x in enumerate(_items(v, path))]
    if origin is FMap or (isinstance(origin, type) and issubclass(origin, Mapping)):
        ktype, vtype = args
        result: dict[str, Any] = {}
        for k, x in _pairs(v, path):
            key = k
            if isinstance(k, str) and ktype is not str:
                try:
                    key = parse_value(k)
                except ValueSyntaxError as exc:
                    raise CounterexampleError(f"{path}: map key {k!r} is not a TLA+ value ({exc})") from None
            ck = to_canonical(key, ktype, f"{path}[{k!r}]")
            result[str(ck)] = to_canonical(x, vtype, f"{path}[{ck!r}]")
        return result
    if isinstance(v, ModelValue):
        raise CounterexampleError(f"{path}: model value {v.name} has no kcspec meaning")
    raise CounterexampleError(f"{path}: no translation for type {hint!r}")


def _record(v: Value, cls: type, path: str) -> dict[str, Any]:
    if not isinstance(v, TlaRecord):
        raise CounterexampleError(f"{path}: expected a {cls.__name__} record, got {type(v).__name__}")
    hints = _hints(cls)
    fields = dict(v.fields)
    out: dict[str, Any] = {}
    for f in _fields(cls):
        if f.name not in fields:
            raise CounterexampleError(f"{path}: record {cls.__name__} has no field {f.name!r}")
        out[f.name] = to_canonical(fields[f.name], hints[f.name], f"{path}.{f.name}")
    return out


def state_of(st: TlcTraceState) -> ClusterState:
    values: dict[str, Any] = {}
    for v in STATE_VARS:
        try:
            value = st.var(v)
        except KeyError as exc:
            raise CounterexampleError(str(exc)) from None
        values[v] = _variable(value, st.number, v)
    return ClusterState(**values)


def _variable(value: Value, number: int, name: str) -> Any:
    """State ``number``'s variable ``name`` from its TLA+ value, as a field of ``ClusterState``."""
    hint = _hints(ClusterState)[name]
    data = to_canonical(value, hint, f"state {number}: {name}")
    try:
        return codec.decode(data, hint, f"state {number}.{name}")
    except codec.CodecError as exc:
        raise CounterexampleError(str(exc)) from None


class StateDecoder:
    """``state_of`` for the many states of one TLC run, from each variable's text: a text met before is not parsed
    or decoded again, and its states share the value decoded the first time (values are frozen).

    A state dump of the default 2-broker model holds 87,528 states but only a few thousand distinct values of
    ``zk`` and of ``controller`` (and a handful of ``config``): parsing and decoding each of them once is about
    six times less work than ``state_of`` on every state, and the fingerprinter's memo (by identity) then meets
    the same objects again. At most ``limit`` texts per variable are kept (then that variable's are forgotten)."""

    def __init__(self, limit: int = 20_000) -> None:
        self._limit = limit
        self._known: dict[str, dict[str, Any]] = {v: {} for v in STATE_VARS}

    def __call__(self, number: int, variables: list[tuple[str, str]]) -> ClusterState:
        """The state numbered ``number`` from its (variable, value text) pairs; ``TraceFormatError`` for a text that
        is not a TLA+ value, ``CounterexampleError`` for a value that does not fit the data model."""
        texts = dict(variables)
        values: dict[str, Any] = {}
        for v in STATE_VARS:
            text = texts.get(v)
            if text is None:
                raise CounterexampleError(f"state {number} has no variable {v!r}")
            known = self._known[v]
            value = known.get(text)
            if value is None:
                value = _variable(parse_variable(text, number, v), number, v)
                if len(known) >= self._limit:
                    known.clear()
                known[text] = value
            values[v] = value
        return ClusterState(**values)


def event_of(st: TlcTraceState, params: Mapping[str, tuple[str, ...]]) -> ControllerEvent:
    act = st.action
    if act is None:
        raise CounterexampleError(f"state {st.number} has no action")
    cls = EVENTS_BY_KIND.get(act.name)
    if cls is None:
        raise CounterexampleError(f"state {st.number}: action {act.name} is not a kcspec event")
    names = act.params or params.get(act.name, ())
    if len(names) != len(act.args):
        raise CounterexampleError(
            f"state {st.number}: {act.name} has {len(act.args)} argument(s), expected parameters {names}"
        )
    hints = typing.get_type_hints(cls)
    data: dict[str, Any] = {"kind": act.name}
    for name, arg in zip(names, act.args, strict=True):
        data[name] = to_canonical(arg, hints[name], f"state {st.number}: {act.name}.{name}")
    try:
        return codec.decode_event(data, f"state {st.number}")
    except codec.CodecError as exc:
        raise CounterexampleError(str(exc)) from None


def match_event(
    before: ClusterState,
    after: ClusterState,
    label: str | None,
    profile: str,
    config: ModelConfig,
    where: str = "step",
) -> ControllerEvent:
    """The first event instance of action ``label`` (``None``: of any action, in the module's order) in the model
    whose spec step leads from ``before`` to ``after``."""
    machine = SpecMachine(profile)
    events = model_events(profile, config)
    candidates = list(events) if label is None else [ev for ev in events if ev.kind == label]
    if label is None:
        label = "any action"
    if not candidates:
        raise CounterexampleError(
            f"{where}: action {label} has no event instance in the model ({config.describe()})"
        )
    for ev in candidates:
        if machine.enabled(before, ev) and machine.step(before, ev, guard_checked=True).state == after:
            return ev
    raise CounterexampleError(
        f"{where}: none of the {len(candidates)} instance(s) of {label} leads from the previous state to this one "
        f"(is the model {config.describe()} the one TLC checked?)"
    )


def _step_event(
    st: TlcTraceState,
    before: ClusterState,
    after: ClusterState,
    profile: str,
    params: Mapping[str, tuple[str, ...]],
    config: ModelConfig | None,
) -> ControllerEvent:
    act = st.action
    if act is None:
        raise CounterexampleError(f"state {st.number} has no action")
    if act.name == NEXT_LABEL and not act.args and config is not None:
        return match_event(before, after, None, profile, config, f"state {st.number}")
    if act.args or not params.get(act.name, ()) or config is None:
        return event_of(st, params)
    return match_event(before, after, act.name, profile, config, f"state {st.number}")


def to_trace(
    states: tuple[TlcTraceState, ...],
    profile: str,
    params: Mapping[str, tuple[str, ...]] | None = None,
    note: str = "",
    *,
    config: ModelConfig | None = None,
) -> Trace:
    """The canonical trace of a TLC counterexample: its initial state and the events that lead to the error.

    ``params`` are the actions' parameter names (default: the spec's, ``action_params``); ``config`` is the
    model TLC checked: with it, steps printed without arguments are recovered by matching states. Step results
    are left out: they are recomputed when the trace is replayed (TLC's states hold no requests).
    """
    if not states:
        raise CounterexampleError("the counterexample has no states")
    names = action_params(profile) if params is None else params
    initial = state_of(states[0])
    before = initial
    steps: list[TraceStep] = []
    for st in states[1:]:
        known = st.action is not None and (
            st.action.name in EVENTS_BY_KIND or (st.action.name == NEXT_LABEL and config is not None)
        )
        if not known:
            event_of(st, names)  # raises, naming the state and its action
        after = state_of(st)
        steps.append(TraceStep(_step_event(st, before, after, profile, names, config)))
        before = after
    return Trace(profile=profile, initial=initial, steps=tuple(steps), note=note)


@dataclass(frozen=True)
class LassoTrace:
    """A liveness counterexample as kcspec data: ``trace`` replays the states TLC printed (its initial state and
    one event per later state); the behaviour then goes on forever — back to the state reached after
    ``loop_to_step`` events by ``back_event`` (``cycle`` replays from there), or, when ``stuttering``, staying in
    the last state."""

    trace: Trace
    loop_to_step: int | None
    back_event: ControllerEvent | None
    stuttering: bool
    prop: str

    @property
    def cycle(self) -> tuple[ControllerEvent, ...]:
        """The events that repeat forever (empty when the behaviour stutters)."""
        if self.stuttering or self.loop_to_step is None:
            return ()
        tail = tuple(step.event for step in self.trace.steps[self.loop_to_step :])
        return tail + ((self.back_event,) if self.back_event is not None else ())


def lasso_trace(
    lasso: Lasso,
    profile: str,
    params: Mapping[str, tuple[str, ...]] | None = None,
    prop: str = "",
    *,
    config: ModelConfig | None = None,
) -> LassoTrace:
    """The kcspec form of TLC's lasso: a replayable trace, where the cycle starts and the step that closes it."""
    shape = (
        "then stutters forever in its last state"
        if lasso.stuttering
        else f"then loops back to state {lasso.loop_to} forever"
    )
    note = (
        f"TLC liveness counterexample{f' to {prop}' if prop else ''}: {len(lasso.states)} state(s), {shape}"
    )
    names = action_params(profile) if params is None else params
    trace = to_trace(lasso.states, profile, names, note=note, config=config)
    back_event: ControllerEvent | None = None
    if lasso.back_action is not None and lasso.loop_to is not None:
        back = TlcTraceState(lasso.loop_to, lasso.back_action, ())
        before, after = state_of(lasso.states[-1]), state_of(lasso.states[lasso.loop_to - 1])
        back_event = _step_event(back, before, after, profile, names, config)
    loop_to_step = None if lasso.loop_to is None else lasso.loop_to - 1
    return LassoTrace(trace, loop_to_step, back_event, lasso.stuttering, prop)
