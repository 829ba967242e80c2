"""Write a kcspec trace in the Informal Trace Format (ITF) of the Apalache/Quint tool family.

Each state of the trace is an ITF state with the variables ``zk``, ``controller`` and ``config`` (the
parts of ``ClusterState``), ``action`` (the event that led to it, ``"init"`` for the first) and
``requests`` (the requests that step sent). Values: integers as JSON numbers (``{"#bigint": …}`` beyond
the safe range), sequences as JSON arrays, sets as ``{"#set": […]}``, maps as ``{"#map": [[k, v], …]}``,
records (and ``TopicPartition``/``PartitionReplica``) as JSON objects, enums as their Kafka names.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from kcspec.spec import codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.trace import Trace

SAFE = 2**53 - 1


def itf_value(value: object) -> Any:
    """Convert a data-model value into ITF JSON."""
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int):
        return value if -SAFE <= value <= SAFE else {"#bigint": str(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple | list) and not is_dataclass(value):  # the tuple records are records
        return [itf_value(v) for v in value]
    if isinstance(value, frozenset | set):
        items = [itf_value(v) for v in value]
        return {"#set": sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(value, Mapping):
        pairs = [[itf_value(k), itf_value(v)] for k, v in value.items()]
        return {"#map": sorted(pairs, key=lambda kv: json.dumps(kv[0], sort_keys=True))}
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        if isinstance(value, ControllerEvent):
            out["kind"] = value.kind
        for f in fields(value):
            out[f.name] = itf_value(getattr(value, f.name))
        return out
    raise TypeError(f"cannot convert {type(value).__name__} to ITF")


def to_itf(trace: Trace) -> dict[str, Any]:
    """The ITF document of a trace; steps without a recorded result end the trace (their event is shown)."""
    states: list[dict[str, Any]] = []
    state = trace.initial

    def add(action: object, requests: object) -> None:
        states.append(
            {
                "#meta": {"index": len(states)},
                "zk": itf_value(state.zk),
                "controller": itf_value(state.controller),
                "config": itf_value(state.config),
                "action": action,
                "requests": itf_value(requests),
            }
        )

    add("init", frozenset())
    for step in trace.steps:
        if step.result is None:
            break
        state = step.result.state
        add(itf_value(step.event), step.result.requests)
    pending = [codec.encode(s.event) for s in trace.steps[len(states) - 1 :]]
    return {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "kcspec",
            "profile": trace.profile,
            "description": trace.note,
            "seed": trace.seed,
            "pending-events": pending,
        },
        "vars": ["zk", "controller", "config", "action", "requests"],
        "states": states,
    }


def write_itf(trace: Trace) -> str:
    return json.dumps(to_itf(trace), indent=1, ensure_ascii=False)
