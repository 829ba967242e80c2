"""Protocol 1.2's controller metrics: a step reply carries them only when it has them, they are compared only for a
SUT that declares the ``metrics`` capability, and the report says when they are not compared."""

from __future__ import annotations

import json

from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.runner import hello_notes
from kcspec.spec.requests import ControllerMetrics
from kcspec.spec.state import ClusterState

EMPTY = m.StepReply(ClusterState(), frozenset(), frozenset())


def _hello(*caps: m.Capability) -> m.HelloReply:
    return m.HelloReply(1, m.Implementation("sut", "1"), ("kafka-2.8",), frozenset(caps), protocol_minor=2)


def test_metrics_go_on_the_wire_only_when_there_are_some() -> None:
    assert "metrics" not in json.loads(m.to_line(1, EMPTY))
    with_metrics = m.StepReply(ClusterState(), frozenset(), frozenset(), metrics=ControllerMetrics(2, 1))
    line = m.to_line(1, with_metrics)
    assert json.loads(line)["metrics"] == {
        "offline_partition_count": 2,
        "preferred_replica_imbalance_count": 1,
    }
    assert m.parse_response(line)[1] == with_metrics


def test_metrics_are_compared_only_when_declared() -> None:
    expected = m.StepReply(ClusterState(), frozenset(), frozenset(), metrics=ControllerMetrics(0, 0))
    wrong = m.StepReply(ClusterState(), frozenset(), frozenset(), metrics=ControllerMetrics(0, -1))
    (diff,) = diff_replies(expected, wrong)
    assert diff.render() == "$.metrics.preferred_replica_imbalance_count: expected 0, got -1"
    (missing,) = diff_replies(expected, EMPTY)
    assert missing.path == "$.metrics" and missing.actual == "(absent)"
    assert diff_replies(expected, EMPTY, metrics=False) == []
    assert diff_replies(expected, wrong, metrics=False) == []


def test_the_report_says_when_metrics_are_not_compared() -> None:
    without = hello_notes(_hello(m.Capability.controller_events))
    assert any("controller metrics not compared" in note for note in without), without
    declared = hello_notes(_hello(m.Capability.controller_events, m.Capability.metrics))
    assert not any("metrics" in note for note in declared), declared
