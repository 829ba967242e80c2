"""``kcspec explore``: exhaustive bounded exploration of the reference controller with refinement against the spec."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from kcspec import options
from kcspec.commands.explore_spark import progress_line
from kcspec.conformance.reports.json_report import write_document
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace, write_counterexample
from kcspec.model.explore_config import FAULT_KINDS, ExploreConfig

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.explore.explorer import ExploreResult


def faults_option(value: str) -> frozenset[str]:
    items = frozenset(x.strip() for x in value.split(",") if x.strip())
    if "all" in items:
        return frozenset(FAULT_KINDS)
    return items


@click.command(name="explore")
@options.profile()
@click.option("--brokers", type=int, default=3, show_default=True)
@click.option("--topics", type=int, default=1, show_default=True)
@click.option("--partitions", type=int, default=1, show_default=True)
@click.option("--rf", type=int, default=2, show_default=True, help="Replication factor.")
@click.option("--depth", type=int, default=4, show_default=True, help="Events explored after the bootstrap.")
@click.option(
    "--faults", default="", help=f"Comma-separated fault families: {', '.join(FAULT_KINDS)}, or all."
)
@click.option(
    "--no-symmetry", is_flag=True, help="Do not reduce states that differ by a renaming of brokers."
)
@click.option("--max-states", type=int, default=200_000, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes exploring in parallel, the states partitioned by fingerprint [default: the machine's cores].",
)
@click.option(
    "--spark",
    is_flag=True,
    help="Explore on Spark: each level's frontier a dataset, expanded and checked on the executors.",
)
@click.option("--master", default=None, help="Spark master URL, with --spark [default: local[*]].")
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False, path_type=Path),
    callback=options.output_dir,
    help="Checkpoint the search in this folder at the end of every level (a folder without a checkpoint).",
)
@click.option(
    "--resume",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Continue the search checkpointed in this folder (same options), checkpointing there.",
)
@options.out_dir()
@click.option(
    "--coverage-json",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=options.output_file,
    help="Write transition coverage (the diagrams' coverage-overlay format).",
)
def command(
    profile: str,
    brokers: int,
    topics: int,
    partitions: int,
    rf: int,
    depth: int,
    faults: str,
    no_symmetry: bool,
    max_states: int,
    workers: int | None,
    spark: bool,
    master: str | None,
    checkpoint: Path | None,
    resume: Path | None,
    out: Path,
    coverage_json: Path | None,
) -> None:
    """Explore every reachable state of a small cluster, checking the reference controller against the spec.

    On every step the reference controller must do exactly what the spec allows (same post-state, same
    requests, same failures) and every §11 invariant must hold. The first violation is printed as the
    shortest event sequence with the state changes of each step, written as canonical JSON, JSON Lines
    and ITF, and the command exits 1.

    The visited states are kept as 64-bit fingerprints, the frontier on disk. With --checkpoint DIR the search
    is checkpointed at the end of every level; a run stopped for any reason continues with --resume DIR, with
    --workers or --spark alike (on Spark, DIR must be a folder every executor sees).

    \b
    Examples:
      kcspec explore --profile kafka-1.1 --brokers 3 --partitions 1 --rf 2 --depth 4
      kcspec explore --brokers 3 --depth 3 --faults zk,controller
      kcspec explore --brokers 3 --depth 5 --workers 2
      kcspec explore --brokers 3 --depth 7 --checkpoint run1   (later: --resume run1)
      kcspec explore --brokers 3 --depth 5 --spark --master spark://host:7077
      kcspec explore --brokers 3 --depth 7 --spark --checkpoint run2   (later: --spark --resume run2)
    """
    console = Console()
    cfg = ExploreConfig(
        profile, brokers, topics, partitions, rf, depth, faults_option(faults), not no_symmetry, max_states
    )
    try:
        cfg.validate()
    except ValueError as exc:
        options.usage_error(str(exc))
    folder = checkpoint_folder(checkpoint, resume)
    if spark or master is not None:
        from kcspec.commands.explore_spark import run_on_spark

        if not spark:
            options.usage_error("--master needs --spark")
        if workers is not None:
            options.usage_error("--workers and --spark exclude each other (Spark's executors do the work)")
        result = run_on_spark(console, cfg, master or "local[*]", folder, resume is not None)
        report(console, cfg, result, out, coverage_json)
    from kcspec.conformance.selfcheck.explore.explorer import explore
    from kcspec.conformance.selfcheck.explore.parallel import default_workers

    if workers is None:
        workers = default_workers()
    console.print(f"exploring {cfg.describe()}; {workers} worker{'s' if workers > 1 else ''}")
    if resume is not None:
        console.print(f"resuming the checkpoint in {resume}", markup=False)
    elif folder is not None:
        console.print(f"checkpointing every level in {folder}", markup=False)

    progress = progress_line(console)
    try:
        result = explore(cfg, progress, workers, folder, resume is not None)
    except ValueError as exc:  # a checkpoint that cannot be resumed
        options.fail(str(exc))
    report(console, cfg, result, out, coverage_json)


def checkpoint_folder(checkpoint: Path | None, resume: Path | None) -> Path | None:
    """The folder of ``--checkpoint`` or ``--resume`` (a usage error if both name different folders, or if a new
    checkpoint would overwrite an existing one)."""
    if resume is not None:
        if checkpoint is not None and checkpoint.absolute() != resume.absolute():
            options.usage_error(
                "--resume DIR checkpoints in DIR: give --checkpoint the same folder or leave it out"
            )
        return resume
    if checkpoint is not None and (checkpoint / "checkpoint.json").exists():
        options.usage_error(
            f"--checkpoint {checkpoint} holds a checkpoint already: continue it with --resume {checkpoint}, "
            "or choose another folder"
        )
    return checkpoint


def report(
    console: Console, cfg: ExploreConfig, result: ExploreResult, out: Path, coverage_json: Path | None
) -> NoReturn:
    """Print the exploration's figures and its verdict (with the counterexample), then exit 0 or 1."""
    print_stats(console, result)
    if coverage_json is not None:
        write_document(coverage_json, coverage_document(result))
    if result.finding is None:
        if result.stats.truncated:
            console.print(
                f"[yellow]stopped at --max-states {cfg.max_states}: {result.stats.frontier_left} states "
                "left unexplored[/]"
            )
        console.print("[green]no violation found[/]")
        sys.exit(0)
    assert result.trace is not None
    console.print(describe_trace(result), markup=False, highlight=False)
    paths = write_counterexample(result.trace, out, f"explore-{cfg.profile}")
    console.print(f"counterexample written: {', '.join(str(p) for p in paths)}")
    sys.exit(1)


def print_stats(console: Console, result: ExploreResult) -> None:
    s = result.stats
    t = Table(title="exploration")
    t.add_column("distinct states", justify="right")
    t.add_column("transitions", justify="right")
    t.add_column("depth", justify="right")
    t.add_column("seconds", justify="right")
    t.add_column("states/s", justify="right")
    t.add_column("workers", justify="right")
    t.add_row(
        str(s.distinct_states),
        str(s.transitions),
        str(s.depth_reached),
        f"{s.seconds:.2f}",
        f"{s.states_per_second:.0f}",
        str(s.workers),
    )
    console.print(t)
    doc = coverage_document(result)
    for machine in doc:
        edges = machine["edges"]
        valid = [e for e in edges if e["valid"]]
        hit = [e for e in valid if e["count"] > 0]
        console.print(
            f"{machine['machine']} transitions covered: {len(hit)}/{len(valid)} valid edges; "
            f"{sum(e['count'] for e in edges if not e['valid'])} invalid attempts"
        )


def coverage_document(result: ExploreResult) -> list[dict[str, Any]]:
    """Coverage in the diagrams' overlay format: every table edge with its count, plus invalid attempts."""
    from kcspec.spec.profiles import get_profile

    prof = get_profile(result.profile)
    docs: list[dict[str, Any]] = []
    for machine, table, counts in (
        ("replica", prof.replica_valid_previous, result.stats.replica_edges),
        ("partition", prof.partition_valid_previous, result.stats.partition_edges),
    ):
        edges = []
        for target, prevs in table.items():
            for prev in prevs:
                edges.append(
                    {
                        "from": prev.name,
                        "to": target.name,
                        "count": counts.get((prev.name, target.name), 0),
                        "valid": True,
                    }
                )
        for (m, frm, to), n in sorted(result.stats.invalid_attempts.items()):
            if m == machine:
                edges.append({"from": frm, "to": to, "count": n, "valid": False})
        docs.append({"profile": prof.name, "machine": machine, "source": "explore", "edges": edges})
    return docs
