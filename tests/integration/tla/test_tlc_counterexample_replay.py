"""A real TLC counterexample becomes a kcspec trace that replays: TLC (2.15) checks a generated module with a
deliberately weakened invariant, prints action labels without arguments, and ``kcspec tla check`` recovers each
step's event by matching states against the model's event instances; ``kcspec conformance replay`` then replays
the trace on the reference controller, and the spec's own steps reach TLC's states."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.model.step import SpecMachine
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.counterexample import state_of
from kcspec.model.tla.instances import action_params
from kcspec.model.tla.module import generate
from kcspec.model.tlc.output import parse_output
from kcspec.model.tlc.trace import NEXT_LABEL
from kcspec.spec.profiles import get_profile
from kcspec.spec.trace import Trace

from kcspec.cli import main
from tests.support.timing import scaled

pytestmark = pytest.mark.integration

ONE_BROKER = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)
MODEL_OPTIONS = [
    f"--{name.replace('_', '-')}={value}" for name, value in dataclasses.asdict(ONE_BROKER).items()
]
WEAK = "WeakNoPartitionState"
"""False as soon as the controller writes a partition's state: a few steps, some with arguments."""


@pytest.fixture(scope="session")
def weakened_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``kcspec tla check`` on the kafka-2.8 one-broker module with the weakened invariant added: its output
    folder (TLC's transcript and counterexample.json)."""
    from kcspec.model.tlc.locate import tlc_unavailable_reason

    reason = tlc_unavailable_reason()
    if reason is not None:
        pytest.fail(f"no TLC (make setup installs it with the dev extra): {reason}")
    module = generate(get_profile("kafka-2.8"), ONE_BROKER)
    folder = tmp_path_factory.mktemp("weakened")
    lines = module.tla.rstrip("\n").split("\n")
    assert lines[-1].startswith("====")
    weak = [f"{WEAK} == DOMAIN zk.partition_states = {{}}", lines[-1]]
    tla = folder / f"{module.name}.tla"
    tla.write_text("\n".join([*lines[:-1], *weak]) + "\n", encoding="utf-8")
    tla.with_suffix(".cfg").write_text(module.cfg + f"INVARIANT {WEAK}\n", encoding="utf-8")
    out = folder / "out"
    args = ["tla", "check", "--module", str(tla), "--profile", "kafka-2.8", *MODEL_OPTIONS, "--out", str(out)]
    args += ["--timeout", "900"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert parse_output((out / "tlc-output.txt").read_text()).violated == WEAK, result.output
    return result.output, out


def test_the_counterexample_is_written_from_labels_without_arguments(weakened_run: tuple[str, Path]) -> None:
    _, out = weakened_run
    report = parse_output((out / "tlc-output.txt").read_text())
    assert report.trace and all(s.action is None or not s.action.args for s in report.trace), (
        "TLC 2.15 prints no arguments: the events must have been recovered by matching states"
    )
    trace = Trace.from_json((out / "counterexample.json").read_text())
    assert len(trace.steps) == len(report.trace) - 1
    # TLC labels a step "Next" where the action's entry in Next checks part of its guard before calling it (it
    # does not split a conjunction); the entry's lines name the action (the module's line map)
    origins = generate(get_profile("kafka-2.8"), ONE_BROKER).origins
    labelled = []
    for s in report.trace[1:]:
        assert s.action is not None
        at = re.match(r"line (\d+)", s.action.location)
        rule = origins[int(at.group(1)) - 1].rule if s.action.name == NEXT_LABEL and at else None
        labelled.append(rule.split(" (")[0] if rule else s.action.name)
    assert [s.event.kind for s in trace.steps] == labelled
    # the spec's own steps lead through TLC's states, and the last one breaks the weakened invariant
    machine = SpecMachine("kafka-2.8")
    state = trace.initial
    for step, tlc_state in zip(trace.steps, report.trace[1:], strict=True):
        state = machine.step(state, step.event).state
        assert state == state_of(tlc_state)
    assert state.zk.partition_states, "the last state has a partition state"
    assert any(action_params("kafka-2.8")[s.event.kind] for s in trace.steps), (
        "no step had arguments to recover"
    )


def test_the_counterexample_replays_on_the_reference_controller(weakened_run: tuple[str, Path]) -> None:
    _, out = weakened_run
    sut = f"{sys.executable} -m kcspec serve-reference"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kcspec",
            "conformance",
            "replay",
            str(out / "counterexample.json"),
            "--sut",
            sut,
        ],
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_depth_first_run_finds_the_counterexample_too(weakened_run: tuple[str, Path]) -> None:
    """``--depth`` (TLC's ``-dfid``) prints the trace's states without any action ("2:"); each step is then found
    again among every action's instances, and the trace is the one the spec's steps lead through."""
    _, first = weakened_run
    module = next(first.parent.glob("*.tla"))
    out = first.parent / "out-depth"
    args = [
        "tla",
        "check",
        "--module",
        str(module),
        "--profile",
        "kafka-2.8",
        *MODEL_OPTIONS,
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(main, [*args, "--depth", "12", "--timeout", "900"])
    assert result.exit_code == 1, result.output
    report = parse_output((out / "tlc-output.txt").read_text())
    assert report.depth_bounded and report.violated == WEAK
    assert all(s.action is None or s.action.name == NEXT_LABEL for s in report.trace)
    trace = Trace.from_json((out / "counterexample.json").read_text())
    machine = SpecMachine("kafka-2.8")
    state = trace.initial
    for step, tlc_state in zip(trace.steps, report.trace[1:], strict=True):
        state = machine.step(state, step.event).state
        assert state == state_of(tlc_state)
    assert state.zk.partition_states
