"""``kcspec explore --spark``: the bounded exploration run on Spark, with the master checked before Spark starts.

A bad ``--master`` (malformed, or a cluster manager that does not answer) and a Spark that does not start are one
line on stderr and exit 2; the exploration's verdict is reported as without ``--spark``.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import click
from rich.console import Console

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.explore.config import ExploreConfig
    from kcspec.conformance.selfcheck.explore.explorer import ExploreResult
    from kcspec.conformance.selfcheck.explore.stats import ExploreStats


def run_on_spark(console: Console, cfg: ExploreConfig, master: str) -> ExploreResult:
    """Explore ``cfg`` on a Spark session of ``master``; exit 2 with one line if Spark cannot be used."""
    from kcspec.conformance.audit.master import check_master

    bad_master = check_master(master)
    if bad_master is not None:
        click.echo(f"error: {bad_master}", err=True)  # one line, never wrapped
        sys.exit(2)
    try:
        from kcspec.conformance.selfcheck.explore.spark_explore import spark_search, start_session
    except ImportError as exc:  # pragma: no cover - depends on the environment
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    from kcspec.conformance.audit.session import spark_log_path
    from kcspec.conformance.selfcheck.explore.explorer import space_of

    console.print(f"exploring {cfg.describe()}; on Spark ({master})")
    started = time.perf_counter()
    try:
        spark = start_session(master)
    except ImportError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # the JVM did not start: Java missing, a master that refuses the application, …
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        click.echo(f"error: Spark did not start ({first}); its output: {spark_log_path()}", err=True)
        sys.exit(2)
    console.print(
        f"Spark started in {time.perf_counter() - started:.1f} s: {spark.sparkContext.defaultParallelism} cores"
    )

    def progress(stats: ExploreStats) -> None:
        if console.is_terminal:
            console.print(
                f"  {stats.distinct_states} states, {stats.transitions} transitions, "
                f"depth {stats.depth_reached}, {stats.states_per_second:.0f} states/s",
                end="\r",
            )

    run = spark_search(space_of(cfg), spark, progress=progress)
    jobs = sum(level.seconds for level in run.levels)
    console.print(
        f"Spark: {len(run.levels)} levels over {run.partitions} partitions, one job each ({jobs:.1f} s in all)"
    )
    run.result.config = cfg
    return run.result
