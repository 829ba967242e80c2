"""``kcspec tla check --checkpoint`` / ``--resume`` with a real TLC: a stopped run continues where it stopped, and
a run in two sittings finds exactly the states of a run in one (the manifest's count).

A missing TLC fails these tests (``make setup`` installs it), as every real-TLC test does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kcspec.model.tla.manifest import load
from kcspec.model.tlc.locate import Toolchain

from kcspec.commands.tla import command

pytestmark = pytest.mark.integration

# the default crosscheck model of kafka-1.1 (55,784 states): TLC needs well over a minute for it
MODEL = [
    "--profile",
    "kafka-1.1",
    "--max-controller-epoch",
    "1",
    "--max-leader-epoch",
    "1",
    "--max-zxid",
    "3",
    "--max-zk-version",
    "0",
]


def _check(tmp_path: Path, *extra: str) -> tuple[Result, dict[str, object]]:
    result = CliRunner().invoke(command, ["check", *MODEL, "--out", str(tmp_path / "out"), *extra])
    record = json.loads((tmp_path / "ck" / "checkpoint.json").read_text())
    return result, record


def _said(result: Result) -> str:
    return " ".join(result.output.split())


def test_a_stopped_run_continues_from_its_checkpoint(tmp_path: Path, tools: Toolchain) -> None:
    first, record = _check(tmp_path, "--checkpoint", str(tmp_path / "ck"), "--timeout", "3")
    assert first.exit_code == 2, first.output  # stopped at --timeout: never a pass
    assert "continue with --resume" in _said(first), first.output
    assert record["status"] == "stopped" and record["runs"] == 1
    stopped_at = record["distinct"]
    assert isinstance(stopped_at, int) and stopped_at > 0 and record["left_on_queue"]
    assert list((tmp_path / "ck" / "tlc-states").glob("*/queue.chkpt")), (
        "TLC took no checkpoint as it stopped"
    )

    again, record = _check(tmp_path, "--resume", str(tmp_path / "ck"), "--timeout", "3")
    assert again.exit_code == 2, again.output
    assert "continuing from the checkpoint" in _said(again), again.output
    assert record["runs"] == 2 and record["status"] == "stopped"
    history = record["history"]
    assert isinstance(history, list) and [h["began"] for h in history] == ["initial", "recovered"]
    resumed_at = record["distinct"]
    assert isinstance(resumed_at, int) and resumed_at >= stopped_at, (stopped_at, resumed_at)

    other = CliRunner().invoke(
        command,
        ["check", *MODEL[:-1], "1", "--resume", str(tmp_path / "ck"), "--out", str(tmp_path / "out")],
    )
    assert other.exit_code == 2
    assert "made with --max-zk-version 0, this run has --max-zk-version 1" in _said(other)
    # TLC keeps a trace file per worker: another count cannot recover the checkpoint
    two = CliRunner().invoke(
        command,
        ["check", *MODEL, "--workers", "2", "--resume", str(tmp_path / "ck"), "--out", str(tmp_path / "o")],
    )
    assert two.exit_code == 2 and "made with --workers 1, this run has --workers 2" in _said(two), two.output


@pytest.mark.slow
def test_a_run_in_two_sittings_finds_the_states_of_a_run_in_one(tmp_path: Path, tools: Toolchain) -> None:
    first, record = _check(tmp_path, "--checkpoint", str(tmp_path / "ck"), "--timeout", "10")
    assert first.exit_code == 2 and record["status"] == "stopped", first.output
    last, record = _check(tmp_path, "--resume", str(tmp_path / "ck"))
    assert last.exit_code == 0, last.output
    expected = next(e for e in load() if e.name == "two-broker-default-1.1").distinct_states
    assert record["status"] == "ended" and record["outcome"] == "ok"
    assert record["distinct"] == expected, (
        f"{record['distinct']} distinct states in two sittings, {expected} in one"
    )
    again = CliRunner().invoke(
        command, ["check", *MODEL, "--resume", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    )
    assert again.exit_code == 2 and "there is nothing to continue" in _said(again)
