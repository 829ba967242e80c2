"""Real TLC output on kcspec's own modules (``shared/tlc-fixtures/kcspec-modules``, recorded at commit 5a41251):
the kafka-2.8 failure the NoValue encoding fixes, and the kafka-1.1 run whose states equal the explorer's.

These tests are about that recorded corpus, which lives beside the repository: without it they skip, saying so."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.explore.tla_model import explore_model
from kcspec.model.tla.counterexample import state_of
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


def test_the_recorded_kafka_1_1_run_reaches_exactly_the_explorers_states() -> None:
    report = parse_tool_output(_corpus("kafka-1.1_b1_rf1_tool_out.txt").read_text(), "KafkaController_1_1_1")
    assert report.outcome is Outcome.OK and report.stats.distinct == RECORDED_DISTINCT
    entry = next(e for e in load() if e.name == "one-broker-isr-1.1")
    if entry.distinct_states != RECORDED_DISTINCT:
        pytest.skip(
            f"the recorded corpus has the {RECORDED_DISTINCT:,} states of the spec at its commit; the spec's state "
            f"space has changed since ({entry.distinct_states:,} in state_counts.json): record the corpus again"
        )
    with gzip.open(_corpus("kafka-1.1_b1_rf1_dump.txt.gz"), "rt") as f:
        tlc_states = {state_of(st) for st in parse_dump(f)}
    explored = explore_model("kafka-1.1", entry.config, keep_states=True)
    assert explored.states is not None
    assert tlc_states == set(explored.states)
