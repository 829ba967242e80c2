"""Kafka's controller-metric tests ported as kcspec scenarios (``conformance/scenarios.py``, ``METRIC_CHECKPOINTS``):
on both engines and in both profiles, every step agrees (the reference controller's kept gauges included) and the
gauges take the values the Kafka test asserts — the spec's by definition on its post-states, the reference
controller's as kept."""

from __future__ import annotations

import pytest
from kcspec.conformance.scenarios import METRIC_CHECKPOINTS, SCENARIOS_BY_NAME
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.model.metrics import spec_metrics
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController
from kcspec.spec.requests import ControllerMetrics
from kcspec.spec.state import ClusterState

CASES = [(name, profile) for name in METRIC_CHECKPOINTS for profile in ("kafka-2.8", "kafka-1.1")]


def _matches(got: ControllerMetrics, offline: int | None, imbalance: int | None) -> bool:
    return (offline is None or got.offline_partition_count == offline) and (
        imbalance is None or got.preferred_replica_imbalance_count == imbalance
    )


@pytest.mark.parametrize(("name", "profile"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_ported_metric_test(name: str, profile: str) -> None:
    events = SCENARIOS_BY_NAME[name].events(profile)
    outcome = crosscheck(name, profile, events)
    assert outcome.ok, outcome.report()
    spec, ref, state = SpecMachine(profile), ReferenceController(profile), ClusterState()
    observed: dict[int, tuple[ControllerMetrics, ControllerMetrics]] = {}
    for step, event in enumerate(events, start=1):
        state = spec.step(state, event).state
        ref.handle(event)
        observed[step] = (spec_metrics(profile, state), ref.metrics())
    for step, offline, imbalance in METRIC_CHECKPOINTS[name]:
        by_spec, by_ref = observed[step]
        want = f"after step {step} ({events[step - 1].kind}): offline {offline}, imbalance {imbalance}"
        assert _matches(by_spec, offline, imbalance), f"{want}; the spec's definitions give {by_spec}"
        assert _matches(by_ref, offline, imbalance), f"{want}; the reference controller keeps {by_ref}"
