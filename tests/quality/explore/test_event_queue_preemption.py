"""Exploration finds a controller that drops its queued admin elections on resignation without answering them:
Kafka's ``clearAndPut`` calls ``preempt`` on every drained event (§7.12), so each waiting client is answered
NOT_CONTROLLER; a controller that only clears the queue leaves the clients waiting until they time out. The
manifest model ``one-broker-queue-2.8`` (one broker, one request may wait) is explored to its fixed point, as
``kcspec tla crosscheck`` does."""

from __future__ import annotations

import pytest
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.tla_model import explore_model
from kcspec.model.tla.manifest import load
from kcspec.reference_impl.event_manager import ControllerEventManager

MODEL = next(e for e in load() if e.name == "one-broker-queue-2.8")


def _clear_without_preempting(self: ControllerEventManager) -> None:
    self.queue.clear()


def test_exploration_finds_queued_callbacks_left_unanswered(monkeypatch: pytest.MonkeyPatch) -> None:
    clean = explore_model(MODEL.profile, MODEL.config)
    assert clean.finding is None, f"the unbroken controller must pass {MODEL.name}: {clean.finding}"
    assert clean.stats.distinct_states == MODEL.distinct_states
    monkeypatch.setattr(ControllerEventManager, "clear_and_put", _clear_without_preempting)
    result = explore_model(MODEL.profile, MODEL.config)
    assert result.finding is not None, f"exploration missed the unanswered callbacks in {MODEL.name}"
    assert result.finding.kind == "refinement"
    text = describe_trace(result)
    assert "$.answers" in text and "NOT_CONTROLLER" in text, text
    assert result.trace is not None
    kinds = [step.event.kind for step in result.trace.steps]
    assert kinds[-2:] == ["ReplicaLeaderElectionQueued", "ControllerResignation"], text
