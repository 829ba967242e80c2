"""A trace keeps the answers of the callbacks its steps answered, in both of its forms (``spec/trace.py``)."""

from __future__ import annotations

from kcspec.conformance.vectors import inputs
from kcspec.model.step import SpecMachine
from kcspec.spec.trace import Trace, TraceStep


def test_answers_survive_the_json_and_json_lines_forms() -> None:
    machine = SpecMachine("kafka-2.8")
    run = next(r for r in inputs.EVENT_QUEUE_CASES if r.name == "preemption-on-controller-shutdown")
    state, steps = run.initial, []
    for event in run.events:
        result = machine.step(state, event)
        steps.append(TraceStep(event, result))
        state = result.state
    trace = Trace("kafka-2.8", run.initial, tuple(steps))
    last = trace.steps[-1].result
    assert last is not None and len(last.answers) == 2  # both queued elections preempted
    assert Trace.from_json(trace.to_json()) == trace
    assert Trace.from_jsonl(list(trace.to_jsonl()), "kafka-2.8") == trace
