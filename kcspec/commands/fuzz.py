"""``kcspec fuzz``: a longer Hypothesis campaign of the reference controller against the spec."""

from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.spec.profiles import PROFILES

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h)?$")


def parse_budget(text: str) -> float:
    """``90`` / ``90s`` / ``10m`` / ``1h`` → seconds; ``click.BadParameter`` otherwise."""
    match = _DURATION.match(text.strip())
    if not match:
        raise click.BadParameter(
            f"expected a duration like 90s, 10m or 1h, got {text!r}", param_hint="--budget"
        )
    value, unit = float(match.group(1)), match.group(2) or "s"
    return value * {"s": 1, "m": 60, "h": 3600}[unit]


@click.command(name="fuzz")
@options.profile(multiple=True, help="Profile(s) to fuzz (default: all).")
@click.option(
    "--budget",
    default="2m",
    show_default=True,
    help="Time budget of the whole run, shared by the profiles (e.g. 90s, 10m, 1h); a failure found in it may be"
    " shrunk for up to 30 s more.",
)
@options.seed(help="Seed to reproduce a campaign (printed at the start).")
@click.option(
    "--database",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".kcspec/fuzz-db"),
    callback=options.output_dir,
    show_default=True,
    help="Where failing examples are kept and replayed first next time.",
)
@options.out_dir()
def command(profiles: tuple[str, ...], budget: str, seed: int | None, database: Path, out: Path) -> None:
    """Run random controller histories on the reference controller and the spec side by side.

    Every step must agree and keep every §11 invariant. A failure shrinks to a minimal event sequence,
    is printed, written as a replayable trace, and kept in the database so that it is re-run first next
    time. Exit code 1 when a failure was found.

    \b
    Examples:
      kcspec fuzz --budget 10m
      kcspec fuzz --profile kafka-1.1 --budget 30s --seed 1234
    """
    seconds = parse_budget(budget)
    if seconds <= 0:
        raise click.BadParameter("the budget must be more than 0 seconds", param_hint="--budget")
    from kcspec.conformance.selfcheck.fuzz.campaign import run_campaign, warm_up

    console = Console()
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    chosen = profiles or tuple(PROFILES)
    console.print(
        f"kcspec fuzz: seed {seed} (re-run with --seed {seed}), budget {seconds:g}s for {len(chosen)} profile(s)"
    )
    setup = sum(warm_up(profile) for profile in chosen)  # outside the budget: compiling the spec's code
    console.print(f"set-up (the spec's code compiled): {setup:.1f}s; fuzzing for {seconds:g}s")
    failed = False
    deadline = time.perf_counter() + seconds
    for index, profile in enumerate(chosen):
        share = max(0.0, deadline - time.perf_counter()) / (len(chosen) - index)
        result = run_campaign(profile, share, seed, database, out)
        t = Table(title=f"fuzz {profile}")
        for col in ("runs", "steps", "seconds", "replica edges", "partition edges", "invalid attempts"):
            t.add_column(col, justify="right")
        cov = result.coverage
        t.add_row(
            str(cov.runs),
            str(cov.steps),
            f"{result.seconds:.1f}",
            str(len(cov.stats.replica_edges)),
            str(len(cov.stats.partition_edges)),
            str(sum(cov.stats.invalid_attempts.values())),
        )
        console.print(t)
        gaps = result.gaps
        for area, missing in gaps.items():
            if missing:
                console.print(f"  [yellow]never exercised ({escape(area)}):[/] {escape(', '.join(missing))}")
        if result.failure:
            failed = True
            console.print(f"FAILURE ({profile}):\n{result.failure}", markup=False, highlight=False)
    sys.exit(1 if failed else 0)
