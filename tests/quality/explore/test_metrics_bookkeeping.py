"""Exploration finds a controller whose kept imbalance gauge drifts from its definition: Kafka 2.8.2's
``queueTopicDeletion``, which cleans the imbalance of every topic it is given, also of topics already queued
(KAFKA-13572, fixed in 3.3.0; §12.4 item 26, §12.5). Each ``TopicDeletion`` event re-reads every child of
``/admin/delete_topics``, so deleting a second topic cleans the first one again: its partition, whose leader the
deletion set to −1 (not the preferred replica), is decremented twice and the gauge goes negative."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kcspec.conformance.selfcheck.bugzoo.patching import Patch, injected
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.model.explore_config import ExploreConfig
from kcspec.reference_impl.context import ControllerContext

CFG = ExploreConfig("kafka-2.8", brokers=2, topics=2, partitions=1, rf=2, depth=3)


def _queue_topic_deletion_2_8_2(_original: Any) -> Callable[[ControllerContext, Iterable[str]], None]:
    """``ControllerContext.queueTopicDeletion`` as Kafka 2.8.2 has it: no difference with the topics already
    queued, so an already queued topic's imbalance is cleaned again."""

    def queue_topic_deletion(self: ControllerContext, topics: Iterable[str]) -> None:
        given = set(topics)
        self.topics_to_be_deleted.update(given)
        for topic in sorted(given):
            self._clean_preferred_replica_imbalance(topic)

    return queue_topic_deletion


DOUBLE_DECREMENT = (Patch(ControllerContext, "queue_topic_deletion", _queue_topic_deletion_2_8_2),)


def test_exploration_finds_the_imbalance_double_decrement() -> None:
    clean = explore(CFG)
    assert clean.finding is None, f"the unbroken controller must pass this configuration: {clean.finding}"
    with injected(DOUBLE_DECREMENT):
        result = explore(CFG)
    assert result.finding is not None, f"exploration missed the double decrement in {CFG.describe()}"
    assert result.finding.kind == "refinement"
    text = describe_trace(result)
    assert "$.metrics.preferred_replica_imbalance_count: expected 0, got -1" in text, text
    assert result.trace is not None
    kinds = [step.event.kind for step in result.trace.steps]
    assert kinds[-2:] == ["TopicDeletion", "TopicDeletion"], (
        text
    )  # the second deletion re-queues the first topic
