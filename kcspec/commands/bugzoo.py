"""``kcspec bugzoo``: run the checking stack against every mutant of the bug zoo and report what caught each."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.conformance.selfcheck.bugzoo.checks import CHECKS, LadderConfig
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL, HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.bugzoo.zoo import ZooRow, run_zoo
from kcspec.model.files import with_path


def _row_cells(row: ZooRow) -> list[str]:
    """The row's cells as markup: text from data escaped."""
    if not row.caught:
        ran = ", ".join(f"{c} {s:.1f}s" for c, s, _n in row.stages)
        cells = [row.name, row.kind, row.profile, row.ticket]
        return [*map(escape, cells), "[bold red]ESCAPED[/bold red]", escape(ran), "—", "—"]
    return [
        escape(str(x))
        for x in [
            row.name,
            row.kind,
            row.profile,
            row.ticket,
            row.check,
            row.detail,
            f"{row.seconds:.2f}" if row.seconds is not None else "—",
            f"{row.events_after_bootstrap} / {row.events_total}",
        ]
    ]


def _catalogue(console: Console) -> None:
    table = Table(title="bug zoo catalogue", show_lines=True)
    for col in ("mutant", "kind", "profile", "ticket (fixed in)", "wrong behaviour", "injection"):
        table.add_column(col, overflow="fold")
    for m in HISTORICAL:
        table.add_row(
            *map(escape, (m.name, m.kind, m.profile, f"{m.ticket} ({m.fixed_in})", m.wrong, m.injection))
        )
    console.print(table)


@click.command(name="bugzoo")
@click.option(
    "--mutant",
    "names",
    multiple=True,
    metavar="NAME",
    help="Run only this mutant (repeatable); default: the whole catalogue.",
)
@click.option("--budget", type=float, default=60.0, show_default=True, help="Seconds per mutant, all checks.")
@click.option(
    "--checks",
    default=",".join(CHECKS),
    show_default=True,
    help="Comma-separated checks to run, in this order: " + ", ".join(CHECKS) + ".",
)
@options.seed(default=0, help="Seed of the Hypothesis stages.")
@options.report_file("--json", "json_path", help="Write the results.")
@click.option("--list", "list_only", is_flag=True, help="Print the catalogue and exit.")
def command(
    names: tuple[str, ...], budget: float, checks: str, seed: int, json_path: Path | None, list_only: bool
) -> None:
    """Run the checking stack against each mutant controller of the bug zoo.

    Each mutant re-injects one historical Kafka controller bug (or a code-derived hazard, "fixed") into the
    reference controller, from outside and only for the run. The checks run cheapest first — the built-in
    scenarios, the conformance vectors, stale-context probes (a loaded context ZooKeeper does not back must not
    survive a failover), bounded exploration, the Hypothesis stateful machine (with a hard deadline) and
    differential testing — and stop at the first that catches the mutant; a counterexample
    counts only if the unmutated controller agrees with the spec on it. The table shows that check, the time to
    detection and the length of the shrunk counterexample (events after the cluster set-up / in all). The
    Z3 proofs check the spec, not the reference controller, so they cannot catch these mutants. Exit code 1 if
    a historical mutant escapes every check.

    \b
    Examples:
      kcspec bugzoo
      kcspec bugzoo --mutant kafka-6082 --mutant kafka-9212 --budget 30
      kcspec bugzoo --checks scenarios,explore --json zoo.json
      kcspec bugzoo --list
    """
    console = Console()
    if list_only:
        _catalogue(console)
        return
    unknown = [n for n in names if n not in HISTORICAL_BY_NAME]
    if unknown:
        options.usage_error(
            f"unknown mutant(s): {', '.join(unknown)}; known: {', '.join(HISTORICAL_BY_NAME)}"
        )
    chosen_checks = tuple(c.strip() for c in checks.split(",") if c.strip())
    bad = [c for c in chosen_checks if c not in CHECKS]
    if bad or not chosen_checks:
        options.usage_error(
            f"--checks: unknown {', '.join(bad) or '(none given)'}; known: {', '.join(CHECKS)}"
        )
    if budget <= 0:
        options.usage_error("--budget must be > 0")
    mutants = [HISTORICAL_BY_NAME[n] for n in names] if names else list(HISTORICAL)
    cfg = LadderConfig(budget=budget, seed=seed, checks=chosen_checks)
    table = Table(title=f"bug zoo: {len(mutants)} mutants, budget {budget:g} s each, seed {seed}")
    for col in (
        "mutant",
        "kind",
        "profile",
        "ticket",
        "caught by",
        "where",
        "seconds",
        "events (after set-up / all)",
    ):
        table.add_column(col, overflow="fold")
    with console.status("running the baseline and the mutants…") as status:

        def progress(row: ZooRow) -> None:
            verdict = f"caught by {row.check}" if row.caught else "ESCAPED"
            status.update(escape(f"{row.name}: {verdict}"))

        report = run_zoo(mutants, cfg, progress)  # the baseline also generates the vectors, before any mutant
    if report.baseline_problems:
        console.print(
            "[bold red]the unmutated reference controller already disagrees with the spec:[/bold red]"
        )
        for problem in report.baseline_problems:
            console.print(problem, markup=False, highlight=False)
        console.print("no mutant result would mean anything; fix that first")
        sys.exit(1)
    for row in report.rows:
        table.add_row(*_row_cells(row))
    console.print(table)
    s = report.summary()
    console.print(
        f"historical mutants caught: {s['historical_caught']}/{s['historical']}; all caught: "
        f"{s['caught']}/{s['mutants']}; median time to detection {_fmt(s['median_seconds'])} s, max "
        f"{_fmt(s['max_seconds'])} s; longest counterexample {s['max_events_after_bootstrap']} events after the "
        f"set-up ({s['max_events_total']} in all); total {report.seconds:.1f} s",
        highlight=False,
    )
    if json_path is not None:
        try:
            report.write_json(json_path)
        except OSError as exc:  # a write's error names no file (a full disk)
            raise with_path(exc, json_path) from None
        console.print(f"results written to {json_path}", markup=False)
    escaped = report.escaped()
    if escaped:
        console.print(f"[bold red]escaped:[/bold red] {escape(', '.join(r.name for r in escaped))}")
        sys.exit(1)


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float | int) else "—"
