"""Traces: a starting ``ClusterState`` and a sequence of events, optionally with each step's result.

A trace is what every check writes as its counterexample and what ``replay`` reads back. Two
forms, both in the canonical JSON of ``kcspec.spec.codec``:
* one JSON document (``Trace``), and
* JSON Lines, one object per step: ``{"step": n, "event": <event or null>, "state": <ClusterState>,
  "requests": [...], "failures": [...]}`` (and ``"answers"`` when callbacks were answered) where step 0 is the
  initial state (``event`` null) and step n ≥ 1 holds the state *after* event n. This is also the audit's input format for traces recorded
  by any implementation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kcspec.spec import bounded_json, codec
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import ElectionAnswer, Request, StateChangeFailure, StepResult
from kcspec.spec.state import ClusterState


@dataclass(frozen=True)
class TraceStep:
    event: ControllerEvent
    result: StepResult | None = None


@dataclass(frozen=True)
class Trace:
    profile: str
    initial: ClusterState
    steps: tuple[TraceStep, ...]
    seed: int | None = None
    note: str = ""

    @property
    def events(self) -> tuple[ControllerEvent, ...]:
        return tuple(s.event for s in self.steps)

    def to_json(self) -> str:
        return codec.dumps(self, indent=2)

    @staticmethod
    def from_json(text: str, source: str = "$") -> Trace:
        trace: Trace = codec.loads(text, Trace, source)
        return trace

    def to_jsonl(self) -> Iterator[str]:
        yield json.dumps(
            {"step": 0, "event": None, "state": codec.encode(self.initial), "requests": [], "failures": []}
        )
        for i, step in enumerate(self.steps, start=1):
            result = step.result
            yield json.dumps(
                {
                    "step": i,
                    "event": codec.encode(step.event),
                    "state": codec.encode(result.state) if result else None,
                    "requests": codec.encode(result.requests) if result else [],
                    "failures": codec.encode(result.failures) if result else [],
                    **({"answers": codec.encode(result.answers)} if result and result.answers else {}),
                }
            )

    @staticmethod
    def from_jsonl(lines: Iterable[str], profile: str, source: str = "trace") -> Trace:
        """Read the JSON Lines form; errors name ``source``, the line number and the JSON path."""
        initial: ClusterState | None = None
        steps: list[TraceStep] = []
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{source}:{lineno}"
            try:
                data = bounded_json.loads(line)
            except json.JSONDecodeError as exc:
                raise codec.CodecError(where, f"not valid JSON: {exc.msg}") from None
            if not isinstance(data, dict):
                raise codec.CodecError(where, "expected a JSON object per line")
            expected_step = len(steps) + (0 if initial is None else 1)
            if data.get("step") != expected_step:
                raise codec.CodecError(
                    f"{where} $.step", f"expected step {expected_step}, got {data.get('step')!r}"
                )
            if initial is None:
                initial = codec.decode(data.get("state"), ClusterState, f"{where} $.state")
                continue
            event = codec.decode_event(data.get("event"), f"{where} $.event")
            result = None
            if data.get("state") is not None:
                result = StepResult(
                    state=codec.decode(data["state"], ClusterState, f"{where} $.state"),
                    requests=codec.decode(
                        data.get("requests", []), frozenset[Request], f"{where} $.requests"
                    ),
                    failures=codec.decode(
                        data.get("failures", []), frozenset[StateChangeFailure], f"{where} $.failures"
                    ),
                    answers=codec.decode(
                        data.get("answers", []), frozenset[ElectionAnswer], f"{where} $.answers"
                    ),
                )
            steps.append(TraceStep(event, result))
        if initial is None:
            raise codec.CodecError(source, "empty trace: expected a step-0 line with the initial state")
        return Trace(profile=profile, initial=initial, steps=tuple(steps))
