"""Exploration on Spark (``kcspec explore --spark``) counts what the one-process explorer counts and finds the same
planted bugs with a shortest counterexample; a bad ``--master`` is one line and exit 2 before Spark starts."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore, search, space_of
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from kcspec.cli import main
from tests.support.explore_cases import CASES


def test_bad_master_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(
        main, ["explore", "--depth", "1", "--spark", "--master", "spark://127.0.0.1:1"]
    )
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "--master 'spark://127.0.0.1:1'" in errors[0], result.stderr
    assert "Traceback" not in result.output


def test_master_without_spark_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["explore", "--depth", "1", "--master", "local[1]"])
    assert result.exit_code == 2 and "--master needs --spark" in result.output


pytestmark = pytest.mark.integration

needs_spark = pytest.mark.skipif(
    find_spec("pyspark") is None, reason="pyspark not installed: pip install 'kcspec[spark]'"
)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.conformance.selfcheck.explore.spark_explore import start_session

    yield start_session("local[2]")


SMALL_MODELS = [e for e in load() if e.in_verify]
"""The manifest models ``kcspec verify`` checks (seconds each on one core); the 2-broker ones (minutes) are
recorded in ``benchmarks/results/two_broker_fixed_point.md``."""


@pytest.mark.parametrize(
    "entry",
    # all in the slow tier (20-45 s of Spark each, to the fixed point): every run keeps Spark against one process
    # on a depth-bounded search with symmetry (the next test), the planted bug and the resumed searches
    [pytest.param(e, id=e.name, marks=[pytest.mark.slow]) for e in SMALL_MODELS],
)
@pytest.mark.spark
@needs_spark
def test_same_distinct_states_as_one_process_on_the_manifest_models(spark: Any, entry: Any) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    one = search(model_space(entry.profile, entry.config))
    run = spark_search(model_space(entry.profile, entry.config), spark)
    assert run.result.finding is None, describe_trace(run.result)
    assert not run.result.stats.truncated
    assert run.result.stats.distinct_states == one.stats.distinct_states == entry.distinct_states
    assert run.result.stats.transitions == one.stats.transitions
    assert run.result.stats.depth_reached == one.stats.depth_reached
    assert sum(level.new for level in run.levels) == entry.distinct_states  # level 0: the initial state


@pytest.mark.spark
@needs_spark
def test_same_distinct_states_with_symmetry_and_a_depth_bound(spark: Any) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    cfg = CASES[1][2]  # 3 brokers, RF 2, depth 3, symmetry on
    one = explore(cfg)
    run = spark_search(space_of(cfg), spark)
    assert run.result.finding is None
    assert run.result.stats.distinct_states == one.stats.distinct_states
    assert run.result.stats.depth_reached == one.stats.depth_reached == cfg.depth


@pytest.mark.parametrize(
    ("mutant", "what", "cfg"),
    # the first planted bug in every run, the others (20 s of Spark each) in the slow tier: the one-process
    # explorer's tests catch each of them in every run
    [pytest.param(*c, id=c[0], marks=[] if i == 0 else [pytest.mark.slow]) for i, c in enumerate(CASES)],
)
@pytest.mark.spark
@needs_spark
def test_spark_finds_the_planted_bug_with_a_shortest_trace(
    spark: Any, mutant: str, what: str, cfg: Any
) -> None:
    from kcspec.conformance.selfcheck.explore.spark_explore import spark_search

    bug = HISTORICAL_BY_NAME[mutant]
    with bug.active():
        one = explore(cfg)
    run = spark_search(space_of(cfg), spark, within=bug.active)
    assert one.finding is not None and one.trace is not None
    found = run.result.finding
    assert found is not None, f"Spark exploration missed {mutant} ({what}) in {cfg.describe()}"
    assert found.kind == one.finding.kind, describe_trace(run.result)
    assert run.result.trace is not None
    # the least-rank problem and parents: the counterexample one process reports
    assert found.events == one.finding.events, describe_trace(run.result)
    text = describe_trace(run.result)
    assert "shortest trace:" in text and found.message in text
