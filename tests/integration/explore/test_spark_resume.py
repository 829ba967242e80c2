"""Spark runs that resume: an exploration on Spark checkpointed at every level, killed with SIGKILL in the middle
(driver, JVM and Python workers at once), continues with ``--resume`` on Spark to the counts of a run never
interrupted; its checkpoint is in the one-process layout, so one process resumes it too; a counterexample found
after a resume is the one an uninterrupted search reports."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore, search, space_of
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from kcspec.cli import main
from tests.support.checkpoints import checkpointed_level, kill_at_level
from tests.support.explore_cases import CASES

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spark,
    pytest.mark.skipif(
        find_spec("pyspark") is None, reason="pyspark not installed: pip install 'kcspec[spark]'"
    ),
]

MODEL = next(e for e in load() if e.name == "one-broker-isr-2.8")
"""A manifest model of many levels (19), small enough for a test: 1,592 states."""

RUN = """
import sys
from pathlib import Path
from kcspec.conformance.selfcheck.explore.spark_explore import spark_search, start_session
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load
entry = next(e for e in load() if e.name == sys.argv[1])
spark_search(model_space(entry.profile, entry.config), start_session("local[2]"), checkpoint=Path(sys.argv[2]))
"""


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.conformance.selfcheck.explore.spark_explore import start_session

    yield start_session("local[2]")


@pytest.mark.slow  # a minute of Spark; the one-process kill-and-resume test (test_explore_resume.py) runs in every run
def test_a_spark_run_killed_mid_run_resumes_to_the_same_count(spark: Any, tmp_path: Path) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    folder = tmp_path / "run"
    # SIGKILL to the driver, its JVM and the Python workers
    killed_at = kill_at_level(RUN, [MODEL.name, str(folder)], folder, 4)
    assert 4 <= killed_at < 18, f"checkpoint of level {killed_at}: the run was not stopped in the middle"
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)

    space = model_space(MODEL.profile, MODEL.config)
    whole = search(space)
    resumed = spark_search(space, spark, checkpoint=folder, resume=True).result
    assert resumed.finding is None and not resumed.stats.truncated
    assert resumed.stats.distinct_states == whole.stats.distinct_states == MODEL.distinct_states
    assert resumed.stats.transitions == whole.stats.transitions
    assert resumed.stats.level_sizes == whole.stats.level_sizes
    assert resumed.stats.replica_edges == whole.stats.replica_edges
    assert checkpointed_level(folder) == len(whole.stats.level_sizes) - 1  # every level checkpointed

    # the same layout as the other searches': the stopped Spark run continues on two processes
    by_workers = search(space, checkpoint=copy, resume=True, workers=2)
    assert by_workers.stats.distinct_states == MODEL.distinct_states
    assert by_workers.stats.transitions == whole.stats.transitions
    assert by_workers.stats.level_sizes == whole.stats.level_sizes


def test_a_workers_checkpoint_resumes_on_spark(spark: Any, tmp_path: Path) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    cfg = CASES[1][2]  # 3 brokers, RF 2, depth 3, symmetry on
    whole = explore(cfg)
    folder = tmp_path / "ck"
    # --workers honours --max-states at a level's end: this one stops after level 2, before the last (3)
    stopped = sum(whole.stats.level_sizes[:2]) + 1
    half = explore(replace(cfg, max_states=stopped), workers=2, checkpoint=folder)
    assert half.stats.truncated and 1 <= checkpointed_level(folder) < 3
    resumed = spark_search(space_of(cfg), spark, checkpoint=folder, resume=True).result
    assert resumed.finding is None and not resumed.stats.truncated
    assert resumed.stats.distinct_states == whole.stats.distinct_states
    assert resumed.stats.transitions == whole.stats.transitions
    assert resumed.stats.level_sizes == whole.stats.level_sizes


def test_a_counterexample_after_a_resume_is_the_uninterrupted_one(spark: Any, tmp_path: Path) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    mutant, _what, cfg = CASES[0]  # found at depth 3: levels 0 to 2 are checkpointed first
    bug = HISTORICAL_BY_NAME[mutant]
    folder = tmp_path / "ck"
    with bug.active():
        one = explore(cfg)
    first = spark_search(space_of(cfg), spark, within=bug.active, checkpoint=folder).result
    assert one.finding is not None and first.finding is not None
    level = checkpointed_level(folder)
    assert level >= 1, "no level was checkpointed before the bug was found"
    again = spark_search(space_of(cfg), spark, within=bug.active, checkpoint=folder, resume=True).result
    assert again.finding is not None, f"the resumed search missed {mutant}"
    assert again.finding.events == first.finding.events == one.finding.events, describe_trace(again)


def test_spark_checkpoint_options_on_the_command_line(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "ck"
    args = ["explore", "--brokers", "2", "--spark", "--master", "local[1]"]
    first = runner.invoke(main, [*args, "--depth", "2", "--checkpoint", str(folder)])
    assert first.exit_code == 0, first.output
    assert "checkpointing every level" in first.output and (folder / "checkpoint.json").exists()
    assert "levels 1 " in first.output, first.output  # the progress line's level sizes

    again = runner.invoke(main, [*args, "--depth", "2", "--resume", str(folder)])
    assert again.exit_code == 0 and "no violation found" in again.output, again.output

    other = runner.invoke(main, [*args, "--depth", "3", "--resume", str(folder)])
    assert other.exit_code == 2 and "depth 2" in other.output, other.output


def test_resuming_a_damaged_frontier_on_spark_fails_naming_it(tmp_path: Path) -> None:
    # the frontier is read by the executors: the job's failure becomes the LevelFileError, as without --spark
    runner = CliRunner()
    folder = tmp_path / "ck"
    model = ["explore", "--brokers", "2", "--depth", "6", "--max-states", "100"]
    first = runner.invoke(main, [*model, "--workers", "2", "--checkpoint", str(folder)])
    assert first.exit_code == 0, first.output
    level = checkpointed_level(folder)
    damaged = max(folder.glob(f"frontier-{level:04d}-*.bin"), key=lambda f: f.stat().st_size)
    damaged.write_bytes(damaged.read_bytes()[:-10])

    again = runner.invoke(main, [*model, "--spark", "--master", "local[1]", "--resume", str(folder)])
    assert again.exit_code == 2, again.output
    errors = [line for line in again.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and damaged.name in errors[0] and "truncated" in errors[0], again.output
    assert "Traceback" not in again.output and "Py4J" not in again.output, again.output
