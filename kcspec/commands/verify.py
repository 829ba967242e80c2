"""``kcspec verify``: run every check (the CI gate) with progress, a summary table and reports."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kcspec import options
from kcspec.conformance.selfcheck.gate.cases import GATE_VERDICTS, VerifyOptions, VerifyReport
from kcspec.conformance.selfcheck.gate.checks import CHECKS
from kcspec.conformance.selfcheck.gate.reports import write_json, write_junit
from kcspec.conformance.verdicts import Verdict
from kcspec.spec.profiles import PROFILES

STYLE = {
    Verdict.passed: "green",
    Verdict.failed: "bold red",
    Verdict.skipped: "yellow",
    Verdict.errored: "bold magenta",
}


@click.command(name="verify")
@options.profile(multiple=True, help="Profile(s) to check (default: all).")
@click.option(
    "--check",
    "checks",
    multiple=True,
    type=click.Choice([c.name for c in CHECKS]),
    help="Run only these checks (default: all).",
)
@options.out_dir(help="Where counterexamples are written.")
@options.report_file("--json", "json_path", help="Write a JSON report.")
@options.report_file("--junit", "junit_path", help="Write a JUnit XML report (one test case per check case).")
@options.tla2tools(help="Path to tla2tools.jar for the TLC check (or set TLA2TOOLS_JAR).")
@click.option("-v", "--verbose", is_flag=True, help="Print the details of every failed case.")
def command(
    profiles: tuple[str, ...],
    checks: tuple[str, ...],
    out: Path,
    json_path: Path | None,
    junit_path: Path | None,
    tla2tools: str | None,
    verbose: bool,
) -> None:
    """Run every check kcspec has and fail on any violation: the gate to put in CI.

    Exit code 0 when every case passed or was skipped (with its reason), 1 when a violation or
    divergence was found (the counterexample path is printed), 2 on bad usage or a missing dependency.

    \b
    Examples:
      kcspec verify
      kcspec verify --profile kafka-1.1 --junit verify.xml --json verify.json
    """
    console = Console(stderr=False)
    opts = VerifyOptions(profiles=profiles or tuple(PROFILES), out=out, tla2tools=tla2tools)
    if tla2tools:
        # a TLC the user named (--tla2tools or TLA2TOOLS_JAR) must exist and run: a typo never skips the TLC check
        from kcspec.model.tlc.locate import ToolNotFound, find_toolchain

        try:
            find_toolchain(Path(tla2tools))
        except ToolNotFound as exc:
            options.fail(str(exc))
    selected = [c for c in CHECKS if not checks or c.name in checks]
    report = VerifyReport()
    start = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        total = progress.add_task("verify", total=sum(c.cost * len(opts.profiles) for c in selected))
        for check in selected:
            progress.update(total, description=check.name)
            for case in check.run(opts):
                if case.check != check.name:  # a check may label its cases (e.g. tla-syntax, tlc)
                    case = dataclasses.replace(case, check=check.name, name=f"{case.check}: {case.name}")
                report.cases.append(case)
                progress.advance(total)
                if case.status in (Verdict.failed, Verdict.errored):
                    console.print(
                        f"[{STYLE[case.status]}]{case.status.value.upper()}[/] {case.check}: {case.name} — {case.message}"
                    )
                    if case.counterexample:
                        console.print(f"  counterexample: {case.counterexample}")
    report.seconds = time.perf_counter() - start

    table = Table(title="kcspec verify")
    table.add_column("check")
    table.add_column("what it checks")
    for status in GATE_VERDICTS:
        table.add_column(status.value, justify="right")
    for check in selected:
        counts = report.counts(check.name)
        table.add_row(
            check.name,
            check.description,
            *(f"[{STYLE[s]}]{counts[s]}[/]" if counts[s] else "0" for s in GATE_VERDICTS),
        )
    console.print(table)
    for case in report.cases:
        if case.status is Verdict.skipped:
            console.print(f"[yellow]skipped[/] {case.check}: {case.name} — {case.message}")
    if verbose or report.failed:
        for case in report.failed:
            if case.details:
                console.print(case.details, markup=False, highlight=False)
    if json_path:
        write_json(report, json_path)
    if junit_path:
        write_junit(report, junit_path)
    counts = report.counts()
    console.print(
        f"{counts[Verdict.passed]} passed, {counts[Verdict.failed]} failed, {counts[Verdict.skipped]} skipped, "
        f"{counts[Verdict.errored]} errored in {report.seconds:.1f}s"
    )
    sys.exit(1 if report.failed else 0)
