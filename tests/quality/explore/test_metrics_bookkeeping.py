"""Exploration finds a controller whose kept imbalance gauge drifts from its definition: Kafka 2.8.2's
``queueTopicDeletion``, which cleans the imbalance of every topic it is given, also of topics already queued
(KAFKA-13572, fixed in 3.3.0; §12.4 item 26, §12.5). Each ``TopicDeletion`` event re-reads every child of
``/admin/delete_topics``, so deleting a second topic cleans the first one again: its partition, whose leader the
deletion set to −1 (not the preferred replica), is decremented twice and the gauge goes negative."""

from __future__ import annotations

from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.model.explore_config import ExploreConfig

CFG = ExploreConfig("kafka-2.8", brokers=2, topics=2, partitions=1, rf=2, depth=3)


def test_exploration_finds_the_imbalance_double_decrement() -> None:
    clean = explore(CFG)
    assert clean.finding is None, f"the unbroken controller must pass this configuration: {clean.finding}"
    with HISTORICAL_BY_NAME["kafka-13572"].active():
        result = explore(CFG)
    assert result.finding is not None, f"exploration missed the double decrement in {CFG.describe()}"
    assert result.finding.kind == "refinement"
    text = describe_trace(result)
    assert "$.metrics.preferred_replica_imbalance_count: expected 0, got -1" in text, text
    assert result.trace is not None
    kinds = [step.event.kind for step in result.trace.steps]
    # the second deletion re-queues the first topic
    assert kinds[-2:] == ["TopicDeletion", "TopicDeletion"], text
