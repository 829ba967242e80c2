"""Runs that resume: a search checkpointed at every level, killed with SIGKILL in the middle of a level, continues
with ``--resume`` to the same counts as a run never interrupted — with another number of workers too; a checkpoint
is resumed only by the search it was written for."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from kcspec.cli import main
from tests.support.checkpoints import kill_at_level

pytestmark = pytest.mark.integration

MODEL = next(e for e in load() if e.name == "one-broker-isr-2.8")
"""A manifest model of many levels (19), small enough for a test: 1,592 states."""

RUN = """
import sys
from pathlib import Path
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load
entry = next(e for e in load() if e.name == sys.argv[1])
search(model_space(entry.profile, entry.config), workers=2, checkpoint=Path(sys.argv[2]))
"""


def test_a_run_killed_mid_level_resumes_to_the_same_count(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    # SIGKILL to the coordinator and both workers, in the middle of level 6 or 7
    killed_at = kill_at_level(RUN, [MODEL.name, str(folder)], folder, 6)
    assert 6 <= killed_at < 18, f"checkpoint of level {killed_at}: the run was not stopped in the middle"

    space = model_space(MODEL.profile, MODEL.config)
    resumed = search(space, checkpoint=folder, resume=True)  # one worker now: the checkpoint is repartitioned
    whole = search(space)
    assert resumed.finding is None and not resumed.stats.truncated
    assert resumed.stats.distinct_states == whole.stats.distinct_states == MODEL.distinct_states
    assert resumed.stats.transitions == whole.stats.transitions
    assert resumed.stats.level_sizes == whole.stats.level_sizes
    assert resumed.stats.replica_edges == whole.stats.replica_edges

    again = search(
        space, checkpoint=folder, resume=True, workers=2
    )  # a finished checkpoint resumes to its end
    assert again.stats.distinct_states == MODEL.distinct_states


def test_a_checkpoint_resumes_only_its_own_search(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "ck"
    first = runner.invoke(
        main, ["explore", "--brokers", "2", "--depth", "2", "--workers", "1", "--checkpoint", str(folder)]
    )
    assert first.exit_code == 0, first.output
    assert (folder / "checkpoint.json").exists()

    again = runner.invoke(main, ["explore", "--brokers", "2", "--depth", "2", "--checkpoint", str(folder)])
    assert again.exit_code == 2 and "--resume" in again.output, again.output

    other = runner.invoke(
        main, ["explore", "--brokers", "2", "--depth", "3", "--workers", "1", "--resume", str(folder)]
    )
    assert other.exit_code == 2, other.output
    assert "depth 2" in other.output and "depth 3" in other.output, other.output

    same = runner.invoke(
        main, ["explore", "--brokers", "2", "--depth", "2", "--workers", "2", "--resume", str(folder)]
    )
    assert same.exit_code == 0 and "no violation found" in same.output, same.output

    empty = tmp_path / "empty"
    empty.mkdir()
    none = runner.invoke(main, ["explore", "--depth", "1", "--resume", str(empty)])
    assert none.exit_code == 2 and "no checkpoint" in none.output, none.output
