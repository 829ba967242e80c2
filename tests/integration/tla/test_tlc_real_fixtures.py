"""Real TLC output on kcspec's own modules (``shared/tlc-fixtures/kcspec-modules``, recorded at commit 5a41251):
the kafka-2.8 failure the NoValue encoding fixes, and the kafka-1.1 run whose states equal the explorer's.

These tests are about that recorded corpus, which lives beside the repository: without it they skip, saying so."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from kcspec.model.tla.manifest import load
from kcspec.model.tla.module import generate
from kcspec.model.tlc.dump import parse_dump
from kcspec.model.tlc.output import Outcome, parse_tool_output
from kcspec.spec.profiles import get_profile

from tests.support.paths import SHARED

CORPUS = SHARED / "tlc-fixtures" / "kcspec-modules"
RECORDED_DISTINCT = 2320
"""TLC's distinct states in the recorded kafka-1.1 run (one-broker-isr-1.1 at the corpus's commit)."""


def _corpus(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"the recorded TLC corpus is not beside the repository ({path} is absent)")
    return path


def test_the_recorded_kafka_2_8_failure_is_what_the_no_value_encoding_removes() -> None:
    report = parse_tool_output(_corpus("kafka-2.8_b1_rf1_tool_out.txt").read_text(), "KafkaController_2_8_2")
    assert report.outcome is Outcome.TLC_ERROR
    assert report.error is not None and 'Attempted to compare the function <<0>> with the value:\n"None"' in (
        report.error
    )
    entry = next(e for e in load() if e.name == "one-broker-isr-2.8")
    module = generate(get_profile("kafka-2.8"), entry.config)
    assert '"None"' not in module.tla and "RfLists \\cup {NoValue}" in module.tla


def test_the_recorded_kafka_1_1_run_is_read_state_for_state() -> None:
    """TLC 2.18's own state dump of the spec of its day (one-broker-isr-1.1, then 2,320 states) is read into as
    many distinct TLA+ values as TLC reported. They are no longer today's ``ClusterState``s (the state has gained
    the topic znodes and topic IDs since), so whether TLC and the explorer reach the same states is checked live,
    with the project's TLC, by ``test_tlc_real.py``'s crosschecks of every manifest model, which read TLC's dump
    of the spec as it is now."""
    report = parse_tool_output(_corpus("kafka-1.1_b1_rf1_tool_out.txt").read_text(), "KafkaController_1_1_1")
    assert report.outcome is Outcome.OK and report.stats.distinct == RECORDED_DISTINCT
    with gzip.open(_corpus("kafka-1.1_b1_rf1_dump.txt.gz"), "rt") as f:
        dumped = list(parse_dump(f))
    assert len(dumped) == RECORDED_DISTINCT
