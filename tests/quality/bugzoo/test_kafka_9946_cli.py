"""KAFKA-9946 through the kit an implementer runs: the response to a StopReplica without deletion is an input of
the model (``StopReplicaResponseWithoutDeletionReceived``), Kafka 2.8.2's filter is the expected behaviour, and a
controller that counts such a response as a deletion result fails the default ``kcspec conformance run``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kcspec.conformance.scenarios import SCENARIOS
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.spec.events import ControllerEvent, StopReplicaResponseWithoutDeletionReceived

from tests.support.processes import controller_run
from tests.support.timing import scaled

SERVE = "kcspec.conformance.selfcheck.bugzoo.serve_mutant"
KIND = StopReplicaResponseWithoutDeletionReceived.kind


def _deletion_scenario_events() -> tuple[ControllerEvent, ...]:
    [scenario] = [s for s in SCENARIOS if any(e.kind == KIND for e in s.events("kafka-2.8"))]
    return scenario.events("kafka-2.8")


def test_the_mutant_and_the_reference_differ_on_the_deletion_scenario() -> None:
    events = _deletion_scenario_events()
    assert crosscheck("unmutated", "kafka-2.8", events).ok
    with HISTORICAL_BY_NAME["kafka-9946"].active():
        assert not crosscheck("kafka-9946", "kafka-2.8", events).ok


@pytest.mark.integration
def test_the_default_cli_run_catches_kafka_9946(tmp_path: Path) -> None:
    result, failed = controller_run(f"{sys.executable} -m {SERVE} kafka-9946", tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    # every failure is the new input: the mutant behaves like Kafka 2.8.2 everywhere else
    assert failed and all(KIND in str(o["id"]) + str(o["description"]) for o in failed), failed
    assert any(".differential." in o["id"] for o in failed), [o["id"] for o in failed]
    assert any(".differential." not in o["id"] for o in failed), [o["id"] for o in failed]


def test_serve_mutant_refuses_an_unknown_name() -> None:
    wrong = subprocess.run(
        [sys.executable, "-m", SERVE, "nope"], capture_output=True, text=True, timeout=scaled(60)
    )
    assert wrong.returncode == 2 and "usage" in wrong.stderr
