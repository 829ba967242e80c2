"""The metric bookkeeping lemmas (``model/z3/metric_lemmas.py``): every Kafka 2.8 gauge update keeps the gauge equal
to the spec's definition, except 2.8.2's ``queueTopicDeletion`` (KAFKA-13572), refuted with a counterexample; a
broken update is refuted too, so a proof is not vacuous."""

from __future__ import annotations

import pytest
from kcspec.model.z3 import metric_lemmas as ml
from kcspec.model.z3.metric_lemmas import Mutation, prove_metric_bookkeeping
from kcspec.spec.profiles import get_profile


def test_every_update_keeps_its_gauge_in_2_8() -> None:
    results = prove_metric_bookkeeping(get_profile("kafka-2.8"))
    assert len(results) == len(ml.LEMMAS)
    by_status = {r.name: r.status for r in results}
    expected = {f"metrics: {name}" for name in ml.EXPECTED}
    assert {n for n, s in by_status.items() if s == "expected-counterexample"} == expected, by_status
    assert all(s == "proved" for n, s in by_status.items() if n not in expected), by_status
    double = next(r for r in results if r.status == "expected-counterexample")
    assert "queued ['t']" in double.detail and "KAFKA-13572" in double.detail


def test_1_1_keeps_no_gauge() -> None:
    (result,) = prove_metric_bookkeeping(get_profile("kafka-1.1"))
    assert result.status == "skipped" and "recomputes" in result.detail


def test_an_update_that_ignores_deletion_started_is_refuted(monkeypatch: pytest.MonkeyPatch) -> None:
    def ignores_started(cx: ml.Context) -> Mutation:
        right = ml.put_partition_state(cx)
        # the update without its "unless the topic's deletion has started" condition (the If's else branch)
        return Mutation(right.state, right.metric, right.delta.arg(2))

    monkeypatch.setattr(ml, "LEMMAS", (("putPartitionState keeps OfflinePartitionsCount", ignores_started),))
    (result,) = prove_metric_bookkeeping(get_profile("kafka-2.8"))
    assert result.status == "counterexample", result
    assert "deletion started ['t'" in result.detail, result.detail
