"""``kcspec simulate``: synthetic Kafka-format history, and swarm simulation (locally or on Spark)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.model.files import write_atomically


@click.command(name="simulate")
@options.profile()
@click.option("--brokers", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--topics", type=click.IntRange(min=1), default=3, show_default=True)
@click.option(
    "--partitions", type=click.IntRange(min=1), default=4, show_default=True, help="Partitions per topic."
)
@click.option("--rf", type=click.IntRange(min=1), default=3, show_default=True, help="Replication factor.")
@options.seed()
@click.option(
    "--emit-logs",
    "emit_logs",
    type=click.Path(file_okay=False, path_type=Path),
    callback=options.output_dir,
    help="Write the reference controller's state-change.log/controller.log per broker into DIR (a new or empty"
    " folder, or one an earlier --emit-logs made: its old logs are removed first).",
)
@options.overwrite_option("--emit-logs")
@click.option(
    "--events",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    help="Random events after the bootstrap (with --emit-logs).",
)
@click.option("--trace-level", is_flag=True, help="Also write TRACE lines (every replica transition).")
@click.option(
    "--inject",
    "inject",
    default=None,
    metavar="BUG",
    help="Run a bug-zoo mutant instead of the reference controller (see `kcspec bugzoo --list`).",
)
@click.option("--spark", "spark", is_flag=True, help="Swarm simulation: many checked random walks.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master for --spark.")
@click.option("--local", "local", is_flag=True, help="Run the swarm in this process instead of on Spark.")
@click.option("--runs", type=click.IntRange(min=1), default=8, show_default=True, help="Walks in the swarm.")
@click.option("--steps", type=click.IntRange(min=1), default=50, show_default=True, help="Events per walk.")
@options.report_file("--json", "json_path", help="Swarm report as JSON.")
def command(
    profile: str,
    brokers: int,
    topics: int,
    partitions: int,
    rf: int,
    seed: int | None,
    emit_logs: Path | None,
    events: int,
    trace_level: bool,
    inject: str | None,
    spark: bool,
    master: str,
    local: bool,
    runs: int,
    steps: int,
    json_path: Path | None,
    overwrite: bool,
) -> None:
    """Run seeded random walks of the reference controller.

    With --emit-logs DIR: one walk, written as Kafka-format logs per broker (for the audit, benchmarks and
    demos). With --spark: a swarm of walks spread over Spark executors, each checked on every step
    against the spec (refinement and §11 invariants); coverage is aggregated and every counterexample is
    replayable from its seed. Exit code 1 when a walk found a violation.

    \b
    Examples:
      kcspec simulate --emit-logs /tmp/logs --brokers 5 --partitions 8 --events 500 --seed 7
      kcspec simulate --spark --runs 16 --steps 100 --seed 1
    """
    from kcspec.conformance.selfcheck.simulate import WalkConfig

    console = Console()
    cfg = WalkConfig(profile, brokers, topics, partitions, rf)
    try:
        cfg.validate()
    except ValueError as exc:
        options.usage_error(str(exc))
    if (emit_logs is None) == (not spark):
        options.usage_error("give exactly one of --emit-logs DIR or --spark")
    if inject is not None:  # checked before anything is printed or run
        if emit_logs is None:
            options.usage_error("--inject goes with --emit-logs")
        from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME

        if inject not in HISTORICAL_BY_NAME:
            raise click.BadParameter(
                f"unknown bug {inject!r}; known: {', '.join(sorted(HISTORICAL_BY_NAME))}",
                param_hint="--inject",
            )
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    console.print(f"kcspec simulate: seed {seed} (re-run with --seed {seed})")
    if emit_logs is not None:
        with options.claimed_dir(emit_logs, flag="--emit-logs", overwrite=overwrite):
            emit(console, cfg, emit_logs, events, seed, trace_level, inject)
        return
    swarm(console, cfg, runs, steps, seed, None if local else master, json_path)


def emit(
    console: Console, cfg: object, out: Path, events: int, seed: int, trace: bool, inject: str | None
) -> None:
    import contextlib

    from kcspec.conformance.selfcheck.simulate import WalkConfig, emit_logs, walk
    from kcspec.reference_impl import ReferenceController

    assert isinstance(cfg, WalkConfig)
    bug: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if inject is not None:
        from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME

        mutant = HISTORICAL_BY_NAME[inject]  # the command checked the name
        bug = mutant.active()
        console.print(f"injecting {inject}: {mutant.wrong}", markup=False)
    ctl = ReferenceController(cfg.profile, trace=trace)
    with bug:
        ends = [_lines(ctl) for _ in walk(ctl, cfg, events, seed)]
    n = len(ends)
    paths = emit_logs(ctl.state_change_log, ctl.controller_log, out)
    lines = len(ctl.state_change_log) + len(ctl.controller_log)
    console.print(
        f"{n} events ({events} random after the bootstrap), {lines} log lines in {len(paths)} files under {out}",
        markup=False,
    )
    if inject is not None:
        # Whether the bug fired is judged by its effect: the same walk (same seed) on the clean reference
        # controller, and the log lines that differ. A bug whose code path the walk never reached leaves the
        # logs identical: said plainly (a warning, exit 0: the logs are still written as asked).
        clean = ReferenceController(cfg.profile, trace=trace)
        for _ in walk(clean, cfg, events, seed):
            pass
        changed, at = 0, n
        for log, (clean_lines, buggy_lines) in enumerate(
            ((clean.state_change_log, ctl.state_change_log), (clean.controller_log, ctl.controller_log))
        ):
            count, first = _differences(clean_lines, buggy_lines)
            changed += count
            if (
                count
            ):  # the event that wrote the first differing line (or, for a line missing, the one before)
                at = min(at, next((i for i, end in enumerate(ends, start=1) if end[log] > first), n))
        if changed == 0:
            console.print(
                f"[yellow]warning:[/yellow] {escape(inject)} never fired: the logs are identical to a clean run "
                f"with seed {seed} (try another --seed, more --events or --brokers)",
                highlight=False,
            )
        else:
            console.print(
                f"{inject} fired: {changed} log line(s) differ from a clean run with seed {seed}, the first "
                f"written at event {at}",
                highlight=False,
                markup=False,
            )


def _lines(ctl: object) -> tuple[int, int]:
    """Lines written so far to the state-change log and to the controller log."""
    from kcspec.reference_impl import ReferenceController

    assert isinstance(ctl, ReferenceController)
    return len(ctl.state_change_log), len(ctl.controller_log)


def _differences(clean: list[str], buggy: list[str]) -> tuple[int, int]:
    """How many lines of ``buggy`` differ from ``clean`` (insertions, deletions and replacements, the larger
    side of each) and the index in ``buggy`` of the first difference."""
    import difflib

    changed, first = 0, -1
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, clean, buggy, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
            first = j1 if first < 0 else first
    return changed, first


def swarm(
    console: Console,
    cfg: object,
    runs: int,
    steps: int,
    seed: int,
    master: str | None,
    json_path: Path | None,
) -> None:
    from kcspec.conformance.selfcheck.simulate import WalkConfig
    from kcspec.conformance.selfcheck.swarm import run_swarm

    assert isinstance(cfg, WalkConfig)
    report = run_swarm(cfg, runs, steps, seed, master)
    t = Table(title=f"swarm: {runs} walks × {steps} steps ({'Spark ' + master if master else 'in process'})")
    for col in ("walks", "steps", "seconds", "steps/s", "violations"):
        t.add_column(col, justify="right")
    t.add_row(
        str(report.runs),
        str(report.steps),
        f"{report.seconds:.1f}",
        f"{report.steps_per_second:.0f}",
        str(len(report.violations)),
    )
    console.print(t)
    console.print(
        f"replica transitions seen: {len(report.replica_edges)}; partition transitions seen: "
        f"{len(report.partition_edges)}; event kinds: {len(report.events)}"
    )
    for v in report.violations[:5]:
        console.print(f"[red]seed {v.seed}, step {v.violation_step}[/]: {escape(str(v.violation))}")
        console.print(
            f"  replay: kcspec simulate --spark --local --runs 1 --steps {v.violation_step} --seed {v.seed} "
            f"--profile {cfg.profile} --brokers {cfg.brokers} --topics {cfg.topics} "
            f"--partitions {cfg.partitions} --rf {cfg.rf}",
            markup=False,
        )
    if json_path is not None:
        write_atomically(
            json_path,
            json.dumps(
                {
                    "config": vars(cfg) if hasattr(cfg, "__dict__") else str(cfg),
                    "runs": report.runs,
                    "steps": report.steps,
                    "seconds": report.seconds,
                    "replica_edges": [[a, b, c] for (a, b), c in sorted(report.replica_edges.items())],
                    "partition_edges": [[a, b, c] for (a, b), c in sorted(report.partition_edges.items())],
                    "violations": [
                        {"seed": v.seed, "step": v.violation_step, "message": v.violation}
                        for v in report.violations
                    ],
                },
                indent=2,
            )
            + "\n",
        )
    sys.exit(1 if report.violations else 0)
