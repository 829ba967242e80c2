"""Liveness on a real TLC: the three properties on the smallest model of each profile, one TLC run each, under
fairness TLC evaluates in seconds (``<A>_Due`` instead of ``ENABLED``). What holds, and each lasso that is one of
Kafka's known gaps, with the property and the gap named; the lasso replays on the spec and on the reference
controller. These are the liveness results ``kcspec verify`` reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.tla_liveness import LivenessOutcome, LivenessResult, check_property
from kcspec.model.step import SpecMachine
from kcspec.model.tla.counterexample import state_of
from kcspec.model.tla.manifest import load
from kcspec.model.tlc.lasso import parse_lasso
from kcspec.model.tlc.locate import find_toolchain, tlc_unavailable_reason

from kcspec.cli import main
from tests.support.timing import scaled

pytestmark = pytest.mark.integration

MODELS = {e.profile: e for e in load() if e.name.startswith("one-broker-minimal")}

EXPECTED = {
    ("kafka-2.8", "LeaderEventuallyElected"): (LivenessOutcome.HOLDS, None),
    ("kafka-2.8", "ReassignmentEventuallyCompletes"): (LivenessOutcome.HOLDS, None),
    ("kafka-2.8", "DeletionEventuallyCompletes"): (LivenessOutcome.EXPECTED_GAP, "§8 failReplicaDeletion"),
    ("kafka-1.1", "LeaderEventuallyElected"): (LivenessOutcome.HOLDS, None),
    ("kafka-1.1", "ReassignmentEventuallyCompletes"): (LivenessOutcome.HOLDS, None),
    ("kafka-1.1", "DeletionEventuallyCompletes"): (LivenessOutcome.EXPECTED_GAP, "§12.2 item 8"),
}
"""The recorded liveness results (benchmarks/results/tla_cost.md has the runs and their times)."""


@pytest.fixture(scope="module")
def tools() -> object:
    reason = tlc_unavailable_reason()
    if reason is not None:
        pytest.fail(f"no TLC (make setup installs it with the dev extra): {reason}")
    return find_toolchain(None)


_RUNS: dict[tuple[str, str], LivenessResult] = {}
"""TLC's result for each (profile, property) on its smallest model, run once for the tests of this file that ask
for it (a run is repeatable: one worker, seed 0, the properties checked on the whole graph)."""


def _checked(profile: str, prop: str, tools: object) -> LivenessResult:
    if (profile, prop) not in _RUNS:
        entry = MODELS[profile]
        _RUNS[profile, prop] = check_property(profile, entry.config, prop, tools, timeout_s=scaled(600))  # type: ignore[arg-type]
    return _RUNS[profile, prop]


@pytest.mark.parametrize(("profile", "prop"), sorted(EXPECTED))
def test_each_property_holds_or_is_a_known_gap(profile: str, prop: str, tools: object) -> None:
    result = _checked(profile, prop, tools)
    outcome, section = EXPECTED[(profile, prop)]
    assert result.outcome is outcome, f"{profile} {prop}: {result.message}"
    if section is None:
        return
    assert result.finding is not None
    gaps = {v.gap.section for v in result.finding.violations if v.prop == prop and v.gap is not None}
    assert gaps == {section}, result.message
    # the lasso is a behaviour of the spec: its events lead through TLC's states
    lasso = parse_lasso(result.tlc.raw_output)
    trace = result.finding.lasso.trace
    machine = SpecMachine(profile)
    state = trace.initial
    for step, tlc_state in zip(trace.steps, lasso.states[1:], strict=True):
        state = machine.step(state, step.event).state
        assert state == state_of(tlc_state), f"step {step.event} leaves TLC's lasso"


def test_the_deletion_lasso_replays_on_the_reference_controller(tmp_path: Path, tools: object) -> None:
    result = _checked("kafka-2.8", "DeletionEventuallyCompletes", tools)
    assert result.finding is not None, result.message
    path = tmp_path / "lasso.json"
    path.write_text(result.finding.lasso.trace.to_json(), encoding="utf-8")
    sut = f"{sys.executable} -m kcspec serve-reference"
    done = subprocess.run(
        [sys.executable, "-m", "kcspec", "conformance", "replay", str(path), "--sut", sut],
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    last = state_of(parse_lasso(result.tlc.raw_output).states[-1])
    assert "t0" in last.controller.topics_ineligible_for_deletion, "the halted deletion the gap describes"


def test_tla_check_liveness_names_the_property_and_the_gap(tmp_path: Path, tools: object) -> None:
    entry = MODELS["kafka-2.8"]
    c = entry.config
    args = ["tla", "check", "--liveness", "--profile", "kafka-2.8", "--out", str(tmp_path / "out")]
    args += [f"--brokers={c.brokers}", f"--topics={c.topics}", f"--partitions={c.partitions}", f"--rf={c.rf}"]
    args += [f"--max-controller-epoch={c.max_controller_epoch}", f"--max-leader-epoch={c.max_leader_epoch}"]
    args += [f"--max-zxid={c.max_zxid}", f"--max-zk-version={c.max_zk_version}"]
    result = CliRunner().invoke(main, [*args, "--timeout", str(scaled(600))])
    assert result.exit_code == 1, result.output
    assert "DeletionEventuallyCompletes violated for t0: expected" in result.output, result.output
    assert "seed 0 (fingerprint polynomial 0): --seed 0 repeats this run" in result.output, result.output
    assert (tmp_path / "out" / "counterexample.json").is_file(), result.output


def test_a_missing_liveness_configuration_is_named(tmp_path: Path) -> None:
    tla = tmp_path / "M.tla"
    tla.write_text("---- MODULE M ----\n====\n", encoding="utf-8")
    tla.with_suffix(".cfg").write_text("", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["tla", "check", "--liveness", "--module", str(tla), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "M_liveness.cfg" in result.output


def test_verify_reports_the_liveness_results_as_passed_with_the_gap_named(
    tools: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kcspec verify``'s liveness cases, on TLC's results of the runs above (each model and property is one TLC
    run, repeatable, made once for this file)."""
    from kcspec.conformance.selfcheck import tla_liveness
    from kcspec.conformance.selfcheck.gate.tla import _liveness_cases
    from kcspec.conformance.verdicts import Verdict

    def check(profile: str, config: object, prop: str, *args: object, **kwargs: object) -> LivenessResult:
        assert config == MODELS[profile].config, "verify checks the smallest model of the profile"
        return _checked(profile, prop, tools)

    monkeypatch.setattr(tla_liveness, "check_property", check)
    cases = list(_liveness_cases("kafka-2.8", None))
    assert [c.name.split(" on ")[0] for c in cases] == [
        "TLC liveness LeaderEventuallyElected",
        "TLC liveness ReassignmentEventuallyCompletes",
        "TLC liveness DeletionEventuallyCompletes",
    ]
    assert all(c.status is Verdict.passed for c in cases), [(c.name, c.status, c.message) for c in cases]
    assert "§8 failReplicaDeletion" in cases[-1].message
