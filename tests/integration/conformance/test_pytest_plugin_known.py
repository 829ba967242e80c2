"""``--kcspec-known FILE`` of the pytest plugin: the SUT's acknowledged deviations xfail, a stale entry fails the run,
entries not checked are listed, and a bad file is a usage error (the same file as ``kcspec conformance run
--known``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from kcspec.conformance import known, runner
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.examples.buggy_controller import BuggyController
from kcspec.conformance.vectors import generate
from kcspec.conformance.vectors.model import Level
from kcspec.conformance.verdicts import Verdict

from tests.support.paths import ROOT
from tests.support.timing import scaled

BUGGY = f"{sys.executable} {ROOT / 'conformance' / 'examples' / 'buggy_controller.py'}"
SIG = {"event": "BrokerFailure", "paths": ["$.state.zk.partition_states[*].leader_and_isr.leader"]}


@pytest.fixture(scope="module")
def election_verdicts() -> dict[str, Verdict]:
    """The buggy example's verdict on every kafka-2.8 election vector (in process, as the plugin will see them)."""
    vectors = generate.generate(["kafka-2.8"]).vectors
    report = runner.run(
        InProcessAdapter(BuggyController()), vectors, profile="kafka-2.8", level=Level.elections
    )
    return {o.id: o.verdict for o in report.outcomes}


def _pytest(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_own.py").write_text("def test_own():\n    pass\n")
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rx"),
            *("--kcspec-level", "elections", "--kcspec-sut", BUGGY),
            *options,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )


def _known_file(tmp_path: Path, deviations: Sequence[Mapping[str, object]]) -> Path:
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"format": known.FORMAT, "deviations": deviations}))
    return path


def test_acknowledged_deviations_xfail_and_the_run_passes(
    tmp_path: Path, election_verdicts: dict[str, Verdict]
) -> None:
    failing = sorted(i for i, v in election_verdicts.items() if v in (Verdict.failed, Verdict.errored))
    assert failing, "the buggy example fails some election vectors"
    entries: list[dict[str, object]] = [
        {"vector": i, "reason": "we elect this way on purpose"} for i in failing
    ]
    entries += [
        {"vector": "kafka-2.8.no-such-vector", "reason": "not run"},
        {"signature": SIG, "reason": "seen by differential testing"},
    ]
    run = _pytest(tmp_path, "--kcspec-known", str(_known_file(tmp_path, entries)))
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert f"{len(failing)} xfailed" in out.splitlines()[-1]
    assert "we elect this way on purpose" in out
    assert "known deviation not checked (the vector did not run): vector kafka-2.8.no-such-vector" in out
    assert "known deviation not checked (a signature" in out


def test_a_listed_vector_that_passes_fails_the_run_as_stale(
    tmp_path: Path, election_verdicts: dict[str, Verdict]
) -> None:
    passing = sorted(i for i, v in election_verdicts.items() if v is Verdict.passed)[0]
    failing = [i for i, v in election_verdicts.items() if v in (Verdict.failed, Verdict.errored)]
    entries = [{"vector": i, "reason": "known"} for i in [*failing, passing]]
    run = _pytest(tmp_path, "--kcspec-known", str(_known_file(tmp_path, entries)))
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 failed" in run.stdout.splitlines()[-1]
    assert f"stale known deviation: the vector passes, remove vector {passing}" in run.stdout


def test_a_bad_known_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "known.json"
    bad.write_text(json.dumps({"format": known.FORMAT, "deviations": [{"vector": "x"}]}))
    run = _pytest(tmp_path, "--kcspec-known", str(bad))
    assert run.returncode == 4, run.stdout[-3000:] + run.stderr[-3000:]
    assert f"--kcspec-known: {bad} $.deviations[0]: every deviation needs a 'reason'" in run.stderr
