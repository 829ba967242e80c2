"""The session mutants: every conformance vector passes them, differential testing with its default number of
sequences catches each, and the example script serves them over the subprocess protocol."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from kcspec.conformance import differential
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.runner import run
from kcspec.conformance.selfcheck.bugzoo.checks import vectors_for
from kcspec.conformance.session_mutants import BY_NAME, SESSION_MUTANTS, SessionMutant
from kcspec.conformance.vectors.model import Level
from kcspec.conformance.verdicts import Verdict
from rich.console import Console

from tests.support.paths import ROOT
from tests.support.processes import controller_run
from tests.support.timing import scaled

PROFILE = "kafka-2.8"
EXAMPLE = ROOT / "conformance" / "examples" / "mutant_controller.py"


def test_there_are_at_least_five_and_each_says_what_is_wrong() -> None:
    assert len(SESSION_MUTANTS) >= 5
    assert len(BY_NAME) == len(SESSION_MUTANTS)
    for cls in SESSION_MUTANTS:
        assert cls.name.startswith("mutant-") and len(cls.bug) > 40


@pytest.mark.parametrize(
    "cls",
    # two in every run, the others (10 s each: every vector, then the differential) in the slow tier
    [
        pytest.param(c, id=c.name, marks=[] if i < 2 else [pytest.mark.slow])
        for i, c in enumerate(SESSION_MUTANTS)
    ],
)
def test_the_vectors_pass_and_the_differential_catches_it(cls: type[SessionMutant], tmp_path: Path) -> None:
    report = run(InProcessAdapter(cls()), vectors_for(PROFILE), profile=PROFILE, level=Level.controller)
    counts = report.counts()
    assert counts[Verdict.failed] == counts[Verdict.errored] == 0, [
        (o.id, o.reason) for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)
    ][:5]
    assert counts[Verdict.passed] > 2000
    outcomes, notes = differential.run_differential(
        InProcessAdapter(cls()),
        profile=PROFILE,
        examples=differential.DEFAULT_EXAMPLES,
        seed=0,
        trace_dir=tmp_path,
        console=Console(file=io.StringIO()),
    )
    failed = [o for o in outcomes if o.verdict is Verdict.failed]
    assert failed, (outcomes, notes)
    # grouped by cause: at most three groups, each with its count of sequences and one shrunk trace
    assert len(failed) <= 3, [o.id for o in outcomes]
    assert len(list(tmp_path.glob("divergence-*.json"))) == len(failed)
    for o in failed:
        assert " sequence(s))" in o.description and "trace " in o.reason, o
    for trace in tmp_path.glob("divergence-*.json"):
        assert differential.replay_file(trace, InProcessAdapter(cls()), Console(file=io.StringIO())) == 1
        assert (
            differential.replay_file(trace, InProcessAdapter(ReferenceSut()), Console(file=io.StringIO()))
            == 0
        )


@pytest.mark.slow  # a whole default run (every vector, then 300 sequences) over the subprocess protocol, 20-30 s
# Covered in make test: test_request_order.py::test_the_default_cli_run_catches_the_wrong_order (this example
# script serves a session mutant, the default `kcspec conformance run` catches it) and
# test_pytest_plugin_differential.py::test_a_session_mutant_fails_one_differential_item_per_group (the script serves
# this mutant, every vector passes it and the differential catches it).
def test_the_example_script_serves_a_mutant_and_default_settings_catch_it(tmp_path: Path) -> None:
    name = "mutant-live-brokers-never-shrink"
    result, failed = controller_run(f"{sys.executable} {EXAMPLE} {name}", tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert failed and all(".differential." in str(o["id"]) for o in failed), failed[:3]
    assert json.loads((tmp_path / "report.json").read_text())["sut"]["name"] == name


def test_the_example_script_lists_the_mutants_and_refuses_an_unknown_one() -> None:
    listed = subprocess.run(
        [sys.executable, str(EXAMPLE), "--list"], capture_output=True, text=True, timeout=scaled(60)
    )
    assert listed.returncode == 0 and all(name in listed.stdout for name in BY_NAME)
    wrong = subprocess.run(
        [sys.executable, str(EXAMPLE), "nope"], capture_output=True, text=True, timeout=scaled(60)
    )
    assert wrong.returncode == 2 and "usage" in wrong.stderr
