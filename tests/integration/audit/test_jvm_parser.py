"""The JVM line parser's set-up: the grammar handed to it comes from ``lines``, and without javac it says why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

import pytest
from kcspec.audit import jvm_parser
from kcspec.model.kafka_log import lines as g

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture
def fresh_build() -> Iterator[None]:
    jvm_parser.build.cache_clear()
    yield
    jvm_parser.build.cache_clear()


def test_grammar_config_carries_every_template_and_field() -> None:
    records = jvm_parser.grammar_config().split("\u0003")
    head, fields, templates = records[0], records[1], records[2:]
    units = head.split("\u0002")
    assert units[13] == str(g.PREFIX_MAX)
    # the reader resolves continuation and blank lines with the grammar's own patterns
    assert units[14:17] == [g.BLANK_REGEX, g.CONTINUATION_REGEX, rf"^(?:{g.CONTINUATION_BODY})$"]
    # and tells another container's line by its prefix
    assert units[17] == g.CONTAINER_PREFIX_REGEX
    assert units[18:] == [
        part
        for layout in g.LAYOUTS
        for part in (
            layout.name,
            layout.regex,
            ",".join(str(layout.group(r)) for r in g.LAYOUT_ROLES),
            layout.head,
        )
    ]
    assert [f.split(":")[0] for f in fields.split("\u0002")] == list(g.ALL_FIELDS)
    assert [t.split("\u0002")[0] for t in templates] == [t.name for t in g.TEMPLATES]
    assert [t.split("\u0002")[2] for t in templates] == [t.regex for t in g.TEMPLATES]


def test_result_schema_has_one_column_per_field() -> None:
    schema = jvm_parser.result_schema()
    assert schema.count(":") == len(jvm_parser.HEAD_COLUMNS) + len(g.ALL_FIELDS) + 1


def test_without_javac_no_jar_is_built_and_the_reason_is_given(
    fresh_build: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jvm_parser, "_javac", lambda: None)
    jar, why = jvm_parser.build()
    assert jar is None and "javac not found" in why
    assert jvm_parser.session_settings() == {}


def test_without_javac_the_audit_of_kafka_logs_stops_saying_why(
    fresh_build: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """There is one parser of Kafka logs: without it the audit does not fall back to another that would read
    the same logs differently (no re-joined wrapped records, no salvaged .gz); it stops with the reason."""
    from kcspec.audit import spark_job

    monkeypatch.setattr(jvm_parser, "_javac", lambda: None)
    monkeypatch.setattr(jvm_parser, "available", lambda spark: False)
    with pytest.raises(spark_job.ParserUnavailable, match=r"javac not found.*needs a JDK's javac"):
        # a stand-in session: the parse stops before it is used
        spark_job.stored_parse(cast("SparkSession", object()), [("broker-1/state-change.log", 0, 0)])
