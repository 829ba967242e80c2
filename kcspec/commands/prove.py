"""``kcspec prove``: the Z3 proof suite (transition tables, election lemmas, inductive invariants)."""

from __future__ import annotations

import functools
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.model import interrupts
from kcspec.model.files import write_atomically
from kcspec.model.z3 import interrupt as z3_interrupt
from kcspec.model.z3.induction import DETAILS
from kcspec.model.z3.prove import DEFAULT_BROKERS, MAX_BROKERS, run_proofs
from kcspec.model.z3.results import ProofResult
from kcspec.spec.profiles import PROFILES

STYLE = {
    "proved": "green",
    "counterexample": "bold red",
    "expected-counterexample": "cyan",
    "skipped": "yellow",
}


@click.command(name="prove")
@options.profile(multiple=True, help="Profile(s) to prove (default: all).")
@click.option(
    "--brokers",
    type=int,
    default=DEFAULT_BROKERS,
    show_default=True,
    help=f"Election lemmas cover every input over 1..N brokers (1..{MAX_BROKERS}).",
)
@click.option(
    "--induction/--no-induction",
    default=True,
    show_default=True,
    help="Check that every §11 invariant is inductive over every action (2 brokers, 1 partition; the slowest"
    " part, about 70 s of CPU for both profiles in 2 worker processes).",
)
@options.report_file("--json", "json_path", help="Write a JSON report.")
def command(profiles: tuple[str, ...], brokers: int, induction: bool, json_path: Path | None) -> None:
    """Prove the spec's lemmas with Z3 and print a summary table.

    Exit code 0 when every proof succeeded or failed as expected, 1 on an unexpected counterexample
    (printed in full), 2 on bad usage.

    \b
    Examples:
      kcspec prove
      kcspec prove --profile kafka-1.1 --brokers 5 --json prove.json
      kcspec prove --profile kafka-2.8 --no-induction
    """
    if not 1 <= brokers <= MAX_BROKERS:
        options.usage_error(f"--brokers must be between 1 and {MAX_BROKERS}, got {brokers}")
    console = Console()
    results: list[tuple[str, ProofResult]] = []
    start = time.perf_counter()
    for name in profiles or tuple(PROFILES):
        with console.status(f"proving {name} …", spinner="dots"):
            # Z3 holds the main thread in C code for seconds at a time: the proofs run in a worker thread so
            # that Ctrl-C ends the run at once (exit 130), with the worker processes and Z3 stopped.
            with interrupts.stopper(z3_interrupt):
                proved = interrupts.run_interruptibly(
                    functools.partial(run_proofs, name, brokers, induction), options.interrupt_handling()
                )
            results += [(name, r) for r in proved]
    total = time.perf_counter() - start
    table = Table(title=f"kcspec prove (brokers 1..{brokers})")
    for col in ("profile", "proof", "§ and where spec/ writes it", "status", "s"):
        table.add_column(col, justify="right" if col == "s" else "left")
    for name, r in results:
        table.add_row(
            escape(name),
            escape(r.name),
            escape(f"{r.section} {r.span}".strip()),
            f"[{STYLE[r.status]}]{r.status}[/]",
            f"{r.seconds:.2f}",
        )
    console.print(table)
    if induction:
        console.print(_induction_table(results))
    for name, r in results:
        if r.status != "proved":
            console.print(f"[{STYLE[r.status]}]{r.status}[/] {escape(f'{name} {r.name}')}:", highlight=False)
            console.print(f"  {r.detail}", markup=False, highlight=False)
    failed = [r for _, r in results if r.failed]
    counts = {s: sum(1 for _, r in results if r.status == s) for s in STYLE}
    console.print(", ".join(f"{n} {s}" for s, n in counts.items()) + f" in {total:.1f}s")
    if json_path:
        write_atomically(
            json_path,
            json.dumps(
                {
                    "brokers": brokers,
                    "seconds": total,
                    "results": [{"profile": n, **asdict(r)} for n, r in results],
                },
                indent=2,
            ),
        )
    sys.exit(1 if failed else 0)


def _induction_table(results: list[tuple[str, ProofResult]]) -> Table:
    """One row per (profile, invariant) of the inductiveness checks: status and the per-action verdicts."""
    table = Table(title="inductiveness: Inv ∧ Action ⇒ Inv′ per action (2 brokers, 1 partition)")
    for col in ("profile", "invariant", "status", "verdicts"):
        table.add_column(col)
    for name, r in results:
        if r.name.startswith("induction: "):
            summary = r.detail.split(f"\n{DETAILS}\n", 1)[0].replace("\n", "; ")
            table.add_row(
                escape(name),
                escape(r.name.removeprefix("induction: ")),
                f"[{STYLE[r.status]}]{r.status}[/]",
                escape(summary),
            )
    return table
