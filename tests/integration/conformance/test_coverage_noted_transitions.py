"""The explorer's coverage read from the transitions the reference controller's log notes equals the coverage
parsed from the log's text, step by step, on a small exploration of each profile; and a log changed other than by
appending falls back to its text, as does a log never cleared (it notes nothing)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator

import pytest
from kcspec.conformance.selfcheck.explore import stepper
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.conformance.selfcheck.explore.stats import ExploreStats, record_coverage
from kcspec.model.explore_config import ExploreConfig
from kcspec.reference_impl import ReferenceController
from kcspec.reference_impl.logs import LogLines
from kcspec.spec.events import BrokerStartup, ControllerFailover, TopicCreation
from kcspec.spec.requests import StepResult


@pytest.fixture
def checked_coverage(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    steps = [0]

    def both_ways(stats: ExploreStats, log_lines: list[str], result: StepResult) -> None:
        assert type(log_lines) is LogLines and log_lines.transitions is not None
        noted, parsed = ExploreStats(), ExploreStats()
        record_coverage(noted, log_lines, result)
        record_coverage(parsed, list(log_lines), result)  # a plain list: parsed from the text
        assert noted.replica_edges == parsed.replica_edges
        assert noted.partition_edges == parsed.partition_edges
        record_coverage(stats, log_lines, result)
        steps[0] += 1

    monkeypatch.setattr(stepper, "record_coverage", both_ways)
    yield steps


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_noted_transitions_equal_the_parsed_ones(profile: str, checked_coverage: list[int]) -> None:
    explore(ExploreConfig(profile=profile, brokers=3, topics=1, partitions=1, rf=2, depth=2))
    assert checked_coverage[0] > 100


def test_a_log_changed_otherwise_is_parsed() -> None:
    ref = ReferenceController("kafka-2.8", trace=True)
    lines = ref.state_change_log
    assert isinstance(lines, LogLines)
    lines.clear()  # noting starts here, as the explorer clears the log before every step
    lines.append("x")
    assert lines.transitions == []
    del lines[0]
    assert lines.transitions is None
    lines.clear()
    assert lines.transitions == []
    lines += ["y"]
    assert lines.transitions is None


def test_a_copy_notes_its_own_transitions() -> None:
    lines = LogLines()
    lines.clear()
    lines.append("a")
    assert lines.transitions is not None
    lines.transitions.append(("replica_transition", ("OnlineReplica", "OfflineReplica")))
    for other in (copy.copy(lines), copy.deepcopy(lines), pickle.loads(pickle.dumps(lines))):
        assert type(other) is LogLines and other == lines and other.transitions == lines.transitions
        assert other.transitions is not lines.transitions


def test_a_log_never_cleared_notes_nothing() -> None:
    """A run that only writes the log (a million-partition failover) keeps no second record of its lines; its
    coverage is read from the text."""
    ref = ReferenceController("kafka-2.8", trace=True)
    for event in (BrokerStartup(0), ControllerFailover(0), TopicCreation("t", ((0,),))):
        ref.run(event)
    lines = ref.state_change_log
    assert isinstance(lines, LogLines) and any("Changed state of replica 0" in line for line in lines)
    assert lines.transitions is None
