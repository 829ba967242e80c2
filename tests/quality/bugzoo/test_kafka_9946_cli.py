"""KAFKA-9946 through the kit an implementer runs: the response to a StopReplica without deletion is an input of
the model (``StopReplicaResponseWithoutDeletionReceived``), Kafka 2.8.2's filter is the expected behaviour, and a
controller that counts such a response as a deletion result fails the default ``kcspec conformance run``."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from kcspec.conformance import differential
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.runner import run
from kcspec.conformance.scenarios import SCENARIOS
from kcspec.conformance.selfcheck.bugzoo.checks import MutantSut, vectors_for
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.conformance.vectors.model import Level
from kcspec.conformance.verdicts import Verdict
from kcspec.spec.events import ControllerEvent, StopReplicaResponseWithoutDeletionReceived
from rich.console import Console

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


def test_the_default_run_catches_kafka_9946_in_process(tmp_path: Path) -> None:
    """What the default ``kcspec conformance run`` does (every vector of the controller level, then the default
    number of differential sequences with seed 0), with the mutant served in this process: the vectors and the
    differential both catch it, and every failure is the new input."""
    mutant = HISTORICAL_BY_NAME["kafka-9946"]
    report = run(
        InProcessAdapter(MutantSut(mutant)),
        vectors_for("kafka-2.8"),
        profile="kafka-2.8",
        level=Level.controller,
    )
    outcomes, notes = differential.run_differential(
        InProcessAdapter(MutantSut(mutant)),
        profile="kafka-2.8",
        examples=differential.DEFAULT_EXAMPLES,
        seed=0,
        trace_dir=tmp_path,
        console=Console(file=io.StringIO()),
    )
    vectors_failed = [o for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)]
    differential_failed = [o for o in outcomes if o.verdict in (Verdict.failed, Verdict.errored)]
    assert vectors_failed and differential_failed, (vectors_failed[:3], outcomes, notes)
    # every failure is the new input: the mutant behaves like Kafka 2.8.2 everywhere else
    for o in vectors_failed + differential_failed:
        assert KIND in o.id + o.description, o


@pytest.mark.integration
@pytest.mark.slow  # a whole default run over the subprocess protocol, 20-25 s
# Covered in make test: test_the_default_run_catches_kafka_9946_in_process (the same vectors and differential run,
# the mutant in this process) and test_request_order.py::test_the_default_cli_run_catches_the_wrong_order (the
# default CLI run catches a mutant served over the subprocess protocol).
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
