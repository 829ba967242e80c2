"""Every JSON reader bounds nesting depth and number size: a 2 KB text nested 1,000 levels deep or an
integer of 4,400 digits is a message naming the file (and line) — an errored verdict, a quarantined line
or exit 2 — never a ``RecursionError``/``ValueError`` traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.audit import traces
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.vectors import files
from kcspec.conformance.vectors.model import VectorError
from kcspec.model.diagrams.coverage import CoverageError, load_coverage
from kcspec.spec import bounded_json, codec
from kcspec.spec.trace import Trace

DEEP = "[" * 1000 + "]" * 1000
"""2 KB, 1,000 levels: ``json.loads`` raises ``RecursionError`` on it."""
BIG = "7" * 4400
"""4,400 digits: ``json.loads`` raises ``ValueError`` (Python's 4,300-digit limit) on it."""


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (DEEP, "nested deeper than 64"),
        ("[" * 1000, "nested deeper than 64"),
        ('{"a": ' * 1000, "nested deeper than 64"),
        ('{"a": ' + BIG + "}", "number literal of 4400 characters"),
        ('{"a": -' + BIG + ".5e3}", "number literal of 4405 characters"),
        (json.dumps({"k": [[[[1]]]]}) + "\n" + " " * 10 + "[" * 70 + "]" * 70, "line 2"),
    ],
)
def test_violations_are_json_decode_errors_with_a_position(text: str, fragment: str) -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        bounded_json.loads(text)
    assert isinstance(info.value, bounded_json.JsonLimitError)
    assert fragment in str(info.value)


def test_brackets_and_digits_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": DEEP, "n": BIG, "k": {BIG: [1, 2]}, "deep": [[[[[[[[[[1]]]]]]]]]]})
    assert bounded_json.loads(text)["s"] == DEEP
    assert bounded_json.loads(text.encode())["n"] == BIG
    nested_64 = "[" * 64 + "]" * 64
    assert bounded_json.loads(nested_64) is not None


def test_protocol_reply_over_the_bounds_is_a_protocol_error() -> None:
    for line in (
        '{"id": 1, "type": "election", "result": ' + DEEP + "}",
        '{"id": 1, "type": "election", "result": {"leader": ' + BIG + "}}",
    ):
        with pytest.raises(m.ProtocolError, match="response is not JSON"):
            m.parse_response(line.encode())
    assert m.request_id_of(DEEP) is None


def test_integer_keys_and_partition_names_with_huge_numbers_are_codec_errors() -> None:
    with pytest.raises(codec.CodecError, match="expected a partition"):
        codec.parse_tp("t-" + BIG, "$.x")
    with pytest.raises(codec.CodecError, match="expected a replica"):
        codec.parse_pr("t-0/" + BIG, "$.x")
    with pytest.raises(codec.CodecError, match="expected a partition"):
        codec.parse_tp("t-\u00b2", "$.x")  # a digit for str.isdigit, not for int()


def test_vector_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "kafka-2.8" / "elections" / "deep.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n"id": "x",\n"request": ' + DEEP + "\n}\n")
    with pytest.raises(VectorError, match=r"deep\.json: not valid JSON: nested deeper .* line 3"):
        files.load_dir(tmp_path)


def test_trace_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(codec.CodecError, match=r"t\.json.*nested deeper"):
        Trace.from_json('{"profile": "kafka-2.8", "initial": ' + DEEP + "}", "t.json")
    with pytest.raises(codec.CodecError, match=r"t\.jsonl:2.*number literal"):
        Trace.from_jsonl(
            ['{"step": 0, "state": {}}', '{"step": 1, "x": ' + BIG + "}"], "kafka-2.8", "t.jsonl"
        )


def test_coverage_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cov.json"
    path.write_text("[" + BIG + "]")
    with pytest.raises(CoverageError, match=r"cov\.json: not JSON: a number literal"):
        load_coverage(path)


def test_audit_jsonl_line_is_quarantined_with_a_reason() -> None:
    facts, reason = traces.decode_line(DEEP, "in.jsonl:7")
    assert facts == []
    assert reason is not None and reason.startswith("in.jsonl:7: not valid JSON: nested deeper")
    facts, reason = traces.decode_line('{"step": ' + BIG + "}", "in.jsonl:8")
    assert facts == [] and reason is not None and "number literal" in reason


def _kcspec(args: list[str]) -> tuple[int, str]:
    from kcspec.cli import main

    result = CliRunner().invoke(main, args)
    assert not isinstance(result.exception, (RecursionError, ValueError)) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.output


def test_cli_readers_exit_2_naming_the_file(tmp_path: Path) -> None:
    vectors = tmp_path / "vectors"
    (vectors / "kafka-2.8" / "elections").mkdir(parents=True)
    (vectors / "kafka-2.8" / "elections" / "v.json").write_text(DEEP)
    code, out = _kcspec(
        [
            "conformance",
            "run",
            "--adapter",
            "kcspec.conformance.reference_sut:ReferenceSut",
            "--vectors",
            str(vectors),
        ]
    )
    assert code == 2 and "v.json" in out and "nested deeper" in out, out

    trace = tmp_path / "trace.json"
    trace.write_text('{"profile": "kafka-2.8", "initial": {"x": ' + BIG + "}}")
    code, out = _kcspec(
        ["conformance", "replay", str(trace), "--adapter", "kcspec.conformance.reference_sut:ReferenceSut"]
    )
    assert code == 2 and "trace.json" in out and "number literal" in out, out

    coverage = tmp_path / "coverage.json"
    coverage.write_text(DEEP)
    code, out = _kcspec(["diagrams", "--coverage", str(coverage), "--out", str(tmp_path / "out")])
    assert code == 2 and "coverage.json" in out and "nested deeper" in out, out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab1'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=_JSON, wrap=st.integers(min_value=0, max_value=70), as_dict=st.booleans())
def test_depth_bound_is_exact(value: object, wrap: int, as_dict: bool) -> None:
    for _ in range(wrap):
        value = {"k[": value} if as_dict else [value, "]"]
    text = json.dumps(value)
    if _depth(value) <= bounded_json.MAX_DEPTH:
        assert bounded_json.loads(text) == value
    else:
        with pytest.raises(bounded_json.JsonLimitError, match="nested deeper"):
            bounded_json.loads(text)


def test_lone_surrogate_escapes_are_refused_and_pairs_read() -> None:
    assert bounded_json.loads('["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]
    for text in ('{"m": "lone \\ud800 high"}', '["\\udc00"]', '["\\ude00\\ud83d"]'):
        with pytest.raises(bounded_json.JsonLimitError, match="unpaired UTF-16 surrogate"):
            bounded_json.loads(text)
