"""The TLC output parser on real TLC transcripts (``transcripts/``) and on broken input."""

from __future__ import annotations

import pytest
from kcspec.model.tlc.output import Outcome, parse_output, parse_tool_output, split_messages
from kcspec.model.tlc.values import TlaRecord, TlaSeq, TlaSet, ValueSyntaxError, parse_value, parse_values

from tests.support.paths import SUPPORT

FIXTURES = SUPPORT / "tla_transcripts"
"""Real TLC transcripts, kept in the repository (``transcripts/README.md``)."""


def fixture(name: str) -> str:
    path = FIXTURES / name
    if not path.is_file():
        raise AssertionError(f"TLC transcript {path} is missing from the repository")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["plain", "tool"])
def test_ok(mode: str) -> None:
    r = parse_output(fixture(f"out_{mode}_ok.txt"), "Toy")
    assert r.outcome is Outcome.OK
    assert (r.stats.generated, r.stats.distinct, r.stats.left_on_queue, r.stats.depth) == (280, 280, 0, 5)
    assert r.version is not None and r.version.startswith("TLC2 Version 2026.04.29")
    assert r.trace == ()
    assert r.tool_mode is (mode == "tool")


def test_tool_duration() -> None:
    assert parse_output(fixture("out_tool_ok.txt")).stats.duration_ms == 1012


@pytest.mark.parametrize(
    "name", ["out_plain_violation.txt", "out_tool_violation.txt", "out_tool_violation_dumptrace.txt"]
)
def test_violation(name: str) -> None:
    r = parse_output(fixture(name), "Toy")
    assert r.outcome is Outcome.INVARIANT_VIOLATED
    assert r.violated == "EpochSmall"
    assert (r.stats.generated, r.stats.distinct, r.stats.depth) == (8, 8, 3)
    assert [s.number for s in r.trace] == [1, 2, 3]
    assert r.trace[0].action is None
    assert r.trace[1].action is not None and r.trace[1].action.name == "Elect"
    assert r.trace[1].action.args == ("t-0", 1)
    assert "line 14, col 16" in r.trace[1].action.location
    last = r.trace[2]
    assert last.var("epoch") == parse_value('("t-0" :> 2)')
    log = last.var("log")
    assert isinstance(log, TlaSeq) and len(log.items) == 2
    assert log.items[1] == TlaRecord((("p", "t-0"), ("b", 1), ("op", "elect")))
    assert last.var("isr") == parse_value('("t-0" :> {1, 2, 3})')
    assert r.trace[0].var("leader") == parse_value('("t-0" :> -1)')


@pytest.mark.parametrize("mode", ["plain", "tool"])
def test_deadlock(mode: str) -> None:
    r = parse_output(fixture(f"out_{mode}_deadlock.txt"), "Toy")
    assert r.outcome is Outcome.DEADLOCK
    assert (r.stats.generated, r.stats.distinct) == (11, 11)
    assert [s.action.name if s.action else None for s in r.trace] == [None, "Elect", "Shrink"]
    isr = r.trace[2].var("isr")
    assert isr == parse_value('("t-0" :> {2})')


def test_parse_error_position() -> None:
    r = parse_output(fixture("out_tool_parse_error.txt"), "Bad")
    assert r.outcome is Outcome.PARSE_ERROR
    assert r.error is not None and "Could not parse module Bad" in r.error
    assert [(e.module, e.line, e.column) for e in r.source_errors] == [("Bad", 37, 46)]
    assert "Was expecting" in r.source_errors[0].message
    # the position really points at the stray brace of Bad.tla
    bad = fixture("Bad.tla").splitlines()
    assert bad[37 - 1][46 - 1] == "}"


def test_messages_keep_codes_and_unframed_text() -> None:
    msgs = split_messages(fixture("out_tool_parse_error.txt"))
    codes = [m.code for m in msgs]
    assert codes[:2] == [2262, 2401]
    assert 3002 in codes and None in codes
    warning = next(m for m in msgs if m.code == 2401)
    assert warning.severity == 3


def test_truncated_output_is_an_error_not_a_pass() -> None:
    text = fixture("out_tool_ok.txt")
    cut = text[: text.index("@!@!@STARTMSG 2193")]
    r = parse_tool_output(cut, "Toy")
    assert r.outcome is Outcome.TLC_ERROR
    assert r.error is not None and "without a result" in r.error


def test_garbage_is_an_error() -> None:
    r = parse_output("java.lang.OutOfMemoryError: Java heap space\n")
    assert r.outcome is Outcome.TLC_ERROR


def test_unknown_error_message_is_reported() -> None:
    text = "@!@!@STARTMSG 1000:1 @!@!@\nTLC threw an unexpected exception.\n@!@!@ENDMSG 1000 @!@!@\n"
    r = parse_tool_output(text)
    assert r.outcome is Outcome.TLC_ERROR
    assert r.error == "TLC threw an unexpected exception."


def test_semantic_error_position() -> None:
    text = (
        "@!@!@STARTMSG 2262:0 @!@!@\nTLC2 Version x\n@!@!@ENDMSG 2262 @!@!@\n"
        "Semantic errors:\n\n*** Errors: 1\n\nline 12, col 5 to line 12, col 9 of module Gen\n\n"
        "Unknown operator: `Foo'.\n\n"
        "@!@!@STARTMSG 3002:1 @!@!@\nParsing or semantic analysis failed.\n@!@!@ENDMSG 3002 @!@!@\n"
    )
    r = parse_tool_output(text, "Gen")
    assert r.outcome is Outcome.PARSE_ERROR
    assert [(e.module, e.line, e.column) for e in r.source_errors] == [("Gen", 12, 5)]


def test_assertion_failure_is_a_violation() -> None:
    text = (
        "@!@!@STARTMSG 2132:1 @!@!@\nThe first argument of Assert evaluated to FALSE; the second argument was:\n"
        '"step invariant EpochMonotonic violated"\n@!@!@ENDMSG 2132 @!@!@\n'
    )
    r = parse_tool_output(text)
    assert r.outcome is Outcome.INVARIANT_VIOLATED
    assert r.violated == "step invariant EpochMonotonic violated"


def test_value_forms() -> None:
    assert parse_value("1..3") == TlaSet((1, 2, 3))
    assert parse_value("<<>>") == TlaSeq(())
    assert parse_value('"a\\"b"') == 'a"b'
    assert parse_value("{TRUE, FALSE}") == TlaSet((True, False))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "unexpected end of value"),
        ("<<1, 2", "expected ','"),
        ('"abc', "unterminated string"),
        ("\x00", "unexpected character"),
        ("<<" * 5000, "nested too deeply"),
    ],
)
def test_text_that_is_not_a_value_is_named_with_its_offset(text: str, message: str) -> None:
    for read in (parse_value, parse_values) if text else (parse_value,):  # no text is no values, not an error
        with pytest.raises(ValueSyntaxError, match=message):
            read(text)


@pytest.mark.parametrize("name", ["liveness_loop.txt", "liveness_plain_loop.txt"])
def test_a_temporal_property_violation_is_not_an_invariant_violation(name: str) -> None:
    # TLC: "Error: Temporal properties were violated." and a lasso that goes "Back to state" 5 forever
    r = parse_output(fixture(name), "KafkaController_2_8_2")
    assert r.outcome is not Outcome.INVARIANT_VIOLATED, r.outcome
    assert r.outcome is Outcome.PROPERTY_VIOLATED, r.outcome
    assert r.violated == "Temporal properties were violated."
    assert len(r.trace) == 5 and r.trace[1].action is not None and r.trace[1].action.name == "BrokerStartup"
    assert r.cycle_from == 5
    assert r.error is None or "counter-example" not in r.error


def test_a_stuttering_lasso_ends_in_its_last_state() -> None:
    r = parse_output(fixture("liveness_stuttering.txt"), "KafkaController_2_8_2")
    assert r.outcome is Outcome.PROPERTY_VIOLATED
    assert r.cycle_from == len(r.trace) == 5


def test_an_invariant_violation_is_still_one() -> None:
    r = parse_output(fixture("out_tool_violation.txt"), "Toy")
    assert r.outcome is Outcome.INVARIANT_VIOLATED and r.cycle_from is None


def test_kcspec_tla_check_exits_1_on_a_temporal_property_violation() -> None:
    from kcspec.commands.tla import EXIT_VIOLATION, _exit_code

    assert _exit_code(Outcome.PROPERTY_VIOLATED) == EXIT_VIOLATION == _exit_code(Outcome.INVARIANT_VIOLATED)
