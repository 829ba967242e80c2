"""TLC's ``-dumpTrace json`` format and the state text of ``-tool`` output agree on the same counterexample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kcspec.model.tlc.output import parse_output
from kcspec.model.tlc.trace import TraceFormatError, load_json_trace, parse_json_trace, parse_state_text
from kcspec.model.tlc.values import TlaRecord, TlaSeq

from tests.support.paths import SUPPORT

FIXTURES = SUPPORT / "tla_transcripts"


def fixture_path(name: str) -> Path:
    path = FIXTURES / name
    if not path.is_file():
        raise AssertionError(f"TLC transcript {path} is missing from the repository")
    return path


def test_json_trace_states_and_actions() -> None:
    states = load_json_trace(fixture_path("trace_violation.json"))
    assert [s.number for s in states] == [1, 2, 3]
    assert states[0].action is None
    act = states[2].action
    assert act is not None and act.name == "Elect" and act.params == ("p", "b") and act.args == ("t-0", 1)
    assert act.location == "line 14, col 16 to line 20, col 31 of module Toy"
    assert states[2].var("epoch") == TlaRecord((("t-0", 2),))
    assert states[2].var("log") == TlaSeq(
        (
            TlaRecord((("p", "t-0"), ("b", 1), ("op", "elect"))),
            TlaRecord((("p", "t-0"), ("b", 1), ("op", "elect"))),
        )
    )


def test_json_and_tool_text_name_the_same_steps() -> None:
    text_trace = parse_output(fixture_path("out_tool_violation_dumptrace.txt").read_text()).trace
    json_trace = load_json_trace(fixture_path("trace_violation.json"))
    assert len(text_trace) == len(json_trace)
    for t, j in zip(text_trace, json_trace, strict=True):
        assert (t.action.name if t.action else None) == (j.action.name if j.action else None)
        assert (t.action.args if t.action else ()) == (j.action.args if j.action else ())
        assert {k for k, _ in t.variables} == {k for k, _ in j.variables}
        # scalars and sequences agree exactly; sets come back from JSON as sequences
        assert t.var("log") == j.var("log")


def test_broken_json_trace_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text("{not json")
    with pytest.raises(TraceFormatError, match="not a readable JSON trace"):
        load_json_trace(bad)
    with pytest.raises(TraceFormatError, match="expected"):
        parse_json_trace({"states": []})
    data = json.loads(fixture_path("trace_violation.json").read_text())
    data["counterexample"]["action"][0] = [1, 2]
    with pytest.raises(TraceFormatError, match=r"action\[0\] is malformed"):
        parse_json_trace(data)


def test_broken_state_text_is_rejected() -> None:
    with pytest.raises(TraceFormatError, match="is not 'N: <action>'"):
        parse_state_text("hello\n/\\ x = 1")
    with pytest.raises(TraceFormatError, match="variable x"):
        parse_state_text("1: <Initial predicate>\n/\\ x = {1, 2")
    s = parse_state_text("4: <Step line 3, col 1 to line 4, col 2 of module M>\n/\\ x = 1\n/\\ y = <<>>")
    assert s.action is not None and s.action.name == "Step" and s.action.args == ()
    assert s.var("y") == TlaSeq(())
