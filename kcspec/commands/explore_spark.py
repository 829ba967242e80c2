"""``kcspec explore --spark``: the bounded exploration run on Spark, with the master checked before Spark starts.

A bad ``--master`` (malformed, or a cluster manager that does not answer) and a Spark that does not start are one
line on stderr and exit 2; the exploration's verdict is reported as without ``--spark``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from kcspec import options

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.explore.explorer import ExploreResult
    from kcspec.conformance.selfcheck.explore.stats import ExploreStats
    from kcspec.model.explore_config import ExploreConfig


PROGRESS_EVERY = 30.0
"""Seconds between two progress lines when the output is not a terminal (a log)."""


def progress_text(stats: ExploreStats) -> str:
    """The exploration's figures: states, transitions, the level being expanded (how far, and when it will be done
    at its rate so far) and the sizes of the levels so far."""
    text = (
        f"{stats.distinct_states:,} states, {stats.transitions:,} transitions, depth {stats.depth_reached}, "
        f"{stats.states_per_second:.0f} states/s"
    )
    eta = stats.estimate_left()
    if stats.level < len(stats.level_sizes) and stats.level_sizes[stats.level]:
        text += f"; level {stats.level}: {stats.level_expanded:,}/{stats.level_sizes[stats.level]:,} expanded"
    elif (
        eta is not None or stats.level_tasks is not None
    ):  # a level whose size is known only at its end (Spark)
        text += f"; level {stats.level}: in progress"
        if stats.level_tasks is not None:
            text += f", {stats.level_tasks[0]}/{stats.level_tasks[1]} tasks"
    if eta is not None:
        text += f", done in ~{eta / 60:.0f} min" if eta >= 120 else f", done in ~{eta:.0f} s"
    if stats.level_sizes:
        sizes = stats.level_sizes[-8:]
        text += "; levels " + ("… " if len(stats.level_sizes) > 8 else "") + " ".join(f"{n:,}" for n in sizes)
    return text


def progress_line(console: Console) -> Callable[[ExploreStats], None]:
    """The exploration's figures on one line: rewritten in place on a terminal; otherwise a line at every level's end
    and at least every ``PROGRESS_EVERY`` seconds while a level is expanded."""
    last = [time.monotonic(), -1]

    def progress(stats: ExploreStats) -> None:
        if console.is_terminal:
            console.print("  " + progress_text(stats), end="\r", markup=False, highlight=False)
            return
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY or len(stats.level_sizes) != last[1]:
            last[0], last[1] = now, len(stats.level_sizes)
            console.print("  " + progress_text(stats), markup=False, highlight=False, soft_wrap=True)

    return progress


def run_on_spark(
    console: Console, cfg: ExploreConfig, master: str, checkpoint: Path | None = None, resume: bool = False
) -> ExploreResult:
    """Explore ``cfg`` on a Spark session of ``master``, checkpointing every level in ``checkpoint`` (continuing
    its checkpoint with ``resume``); exit 2 with one line if Spark cannot be used or the checkpoint cannot be
    resumed."""
    from kcspec.model.spark.master import check_master

    bad_master = check_master(master)
    if bad_master is not None:
        options.fail(bad_master)
    try:
        from kcspec.conformance.selfcheck.explore.spark_explore import spark_search, start_session
    except ImportError as exc:  # pragma: no cover - depends on the environment
        options.fail(str(exc))
    from kcspec.conformance.selfcheck.explore.explorer import space_of
    from kcspec.model.spark.session import java_options_note, kept_spark_log

    console.print(f"exploring {cfg.describe()}; on Spark ({master})", markup=False)
    started = time.perf_counter()
    try:
        spark = start_session(master)
    except ImportError as exc:
        options.fail(str(exc))
    except Exception as exc:  # the JVM did not start: Java missing, a master that refuses the application, …
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        options.fail(f"Spark did not start ({first}); its output: {kept_spark_log()}{java_options_note()}")
    console.print(
        f"Spark started in {time.perf_counter() - started:.1f} s: {spark.sparkContext.defaultParallelism} cores"
    )

    if resume:
        console.print(f"resuming the checkpoint in {checkpoint}", markup=False)
    elif checkpoint is not None:
        console.print(f"checkpointing every level in {checkpoint}", markup=False)
    try:
        run = spark_search(
            space_of(cfg), spark, progress=progress_line(console), checkpoint=checkpoint, resume=resume
        )
    except ValueError as exc:  # a checkpoint that cannot be resumed
        options.fail(str(exc))
    jobs = sum(level.seconds for level in run.levels)
    console.print(
        f"Spark: {len(run.levels)} levels over {run.partitions} partitions, one job each ({jobs:.1f} s in all)"
    )
    run.result.config = cfg
    return run.result
