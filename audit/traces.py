"""Canonical JSONL traces: one step per line, decoded with the spec's codec and flattened into facts.

Trace line format (``kcspec.spec.trace.Trace.to_jsonl``; one canonical-JSON object per line, ``spec/codec.py``
encodings)::

    {"step": <int ≥ 0>, "event": <ControllerEvent, null at step 0>, "state": <ClusterState after the step>,
     "requests": [<Request>, …], "failures": [<StateChangeFailure>, …]}

Step 0 holds the initial state; ``state`` of a later step is its post-state (null when the step was recorded
without its result). A line that is not valid JSON, lacks a key, has an unknown
key, or whose values do not decode is quarantined with the ``CodecError`` message (JSON path and
what was expected there). A valid line becomes *facts*, the rows the replay reads:
* one ``step`` fact (controller id and epoch of the context, ZooKeeper controller epoch);
* one ``replica_state`` fact per entry of ``controller.replica_states`` and one ``partition_state``
  fact per entry of ``controller.partition_states``;
* one ``znode`` fact per partition-state znode (leader, leader epoch, ISR, zk version, controller epoch).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kcspec.spec import bounded_json
from kcspec.spec.codec import CodecError, decode, decode_event
from kcspec.spec.requests import Request, StateChangeFailure
from kcspec.spec.state import ClusterState

TRACE_KEYS = ("step", "event", "state", "requests", "failures")
INITIAL = "Initial"
"""The ``event`` of step 0's facts (the initial state, ``event`` null)."""

FACT_FIELDS: tuple[tuple[str, str], ...] = (
    ("fact", "string"),
    ("step", "long"),
    ("event", "string"),
    ("controller_id", "int"),
    ("controller_epoch", "int"),
    ("zk_controller_epoch", "int"),
    ("topic", "string"),
    ("partition", "int"),
    ("replica", "int"),
    ("state", "string"),
    ("leader", "int"),
    ("leader_epoch", "int"),
    ("isr", "string"),
    ("zk_version", "int"),
    ("lisr_controller_epoch", "int"),
)
"""Name and Spark SQL type of every fact column (the order of ``Fact``)."""


@dataclass(frozen=True)
class Fact:
    fact: str
    step: int
    event: str
    controller_id: int | None = None
    controller_epoch: int | None = None
    zk_controller_epoch: int | None = None
    topic: str | None = None
    partition: int | None = None
    replica: int | None = None
    state: str | None = None
    leader: int | None = None
    leader_epoch: int | None = None
    isr: str | None = None
    zk_version: int | None = None
    lisr_controller_epoch: int | None = None

    def row(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name, _ in FACT_FIELDS)


def decode_line(text: str, where: str = "$") -> tuple[list[Fact], str | None]:
    """Facts of one trace line, or ``([], reason)`` when the line is not a valid trace line."""
    try:
        data = bounded_json.loads(text)
    except json.JSONDecodeError as exc:
        return [], f"{where}: not valid JSON: {exc.msg} at column {exc.colno}"
    try:
        return _facts(data, where), None
    except CodecError as exc:
        return [], str(exc)


def _facts(data: object, where: str) -> list[Fact]:
    if not isinstance(data, dict):
        raise CodecError(where, "expected a trace object {step, event, state, requests, failures}")
    for key in TRACE_KEYS:
        if key not in data:
            raise CodecError(f"{where}.{key}", "missing required key of a trace line")
    extra = [k for k in data if k not in TRACE_KEYS]
    if extra:
        raise CodecError(
            f"{where}.{extra[0]}", f"unknown key of a trace line (keys: {', '.join(TRACE_KEYS)})"
        )
    step = data["step"]
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise CodecError(f"{where}.step", f"expected a non-negative integer, got {step!r}")
    if step == 0:
        if data["event"] is not None:
            raise CodecError(f"{where}.event", "step 0 holds the initial state: its event must be null")
        kind = INITIAL
    else:
        kind = type(decode_event(data["event"], f"{where}.event")).__name__
    decode(data["requests"], frozenset[Request], f"{where}.requests")
    decode(data["failures"], frozenset[StateChangeFailure], f"{where}.failures")
    if data["state"] is None:
        if step == 0:
            raise CodecError(f"{where}.state", "step 0 must hold the initial state")
        return [Fact("step", step, kind)]  # a step recorded without its result
    state: ClusterState = decode(data["state"], ClusterState, f"{where}.state")
    ctx = state.controller
    facts = [Fact("step", step, kind, ctx.controller_id, ctx.epoch, state.zk.controller_epoch)]
    for pr, rs in ctx.replica_states.items():
        facts.append(
            Fact(
                "replica_state",
                step,
                kind,
                ctx.controller_id,
                ctx.epoch,
                topic=pr.tp.topic,
                partition=pr.tp.partition,
                replica=pr.replica,
                state=rs.name,
            )
        )
    for tp, ps in ctx.partition_states.items():
        facts.append(
            Fact(
                "partition_state",
                step,
                kind,
                ctx.controller_id,
                ctx.epoch,
                topic=tp.topic,
                partition=tp.partition,
                state=ps.name,
            )
        )
    for tp, li in state.zk.partition_states.items():
        lai = li.leader_and_isr
        facts.append(
            Fact(
                "znode",
                step,
                kind,
                ctx.controller_id,
                ctx.epoch,
                topic=tp.topic,
                partition=tp.partition,
                leader=lai.leader,
                leader_epoch=lai.leader_epoch,
                isr=",".join(str(i) for i in lai.isr),
                zk_version=lai.zk_version,
                lisr_controller_epoch=li.controller_epoch,
            )
        )
    return facts
