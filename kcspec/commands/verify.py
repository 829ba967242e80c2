"""``kcspec verify``: run every check (the CI gate) with progress, a summary and reports.

Two ways of talking, chosen by whether stdout is a terminal:

* at a terminal, a progress bar, a line for each failed case, and a summary table;
* in a log (CI), one plain line per finished case, and a heartbeat line naming what runs whenever nothing was
  printed for ``--heartbeat`` seconds (25 by default: CI systems kill a job after some minutes of silence);
  the summary is plain lines that do not depend on a width.

Text that comes from data (case names such as ``unclean [kafka-2.8]``, messages, reasons) is never read as
Rich markup. Each distinct skip reason is printed once, with the cases it concerns.

The checks run in a worker thread (``interrupts.run_interruptibly``), so that Ctrl-C or SIGTERM is heard at once
even while Z3 holds the worker in C code: the run is cancelled, the worker pools, Z3 and (from the console
script) every child process are stopped, the reports say "interrupted", and the command ends with 130 / 143 —
an interrupted gate never passes.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from kcspec import options
from kcspec.conformance.selfcheck.gate.cases import (
    GATE_VERDICTS,
    CaseResult,
    Check,
    VerifyOptions,
    VerifyReport,
)
from kcspec.conformance.selfcheck.gate.checks import CHECKS
from kcspec.conformance.selfcheck.gate.reports import write_json, write_junit
from kcspec.conformance.selfcheck.gate.run import FAILING, run_gate
from kcspec.conformance.verdicts import Verdict
from kcspec.model import interrupts
from kcspec.spec.profiles import PROFILES

STYLE = {
    Verdict.passed: "green",
    Verdict.failed: "bold red",
    Verdict.skipped: "yellow",
    Verdict.errored: "bold magenta",
}
HEARTBEAT_SECONDS = 25.0
"""Silence before a heartbeat line: under 30 s with room to spare (CI systems count minutes of silence; the README
promises a line at least every 30 s)."""


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


@dataclass
class _Log:
    """The plain-line output of a run without a terminal; lines come from the worker thread (cases) and the
    main thread (heartbeat), one at a time."""

    heartbeat: float
    start: float = field(default_factory=time.monotonic)
    last_line: float = field(default_factory=time.monotonic)
    running: tuple[str, str, float] | None = None
    done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def line(self, text: str) -> None:
        with self.lock:
            click.echo(text)
            self.last_line = time.monotonic()

    def started(self, check: str, case: str) -> None:
        with self.lock:
            self.running = (check, case, time.monotonic())

    def finished(self, case: CaseResult) -> None:
        self.done += 1
        self.line(_case_line(case))
        if case.status in FAILING and case.counterexample:
            self.line(f"  counterexample: {case.counterexample}")

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_line < self.heartbeat:
            return
        what = "starting"
        if self.running is not None:
            check, case, since = self.running
            what = f"running {check}{': ' + case if case else ''} for {_duration(now - since)}"
        self.line(f"... {what} ({self.done} cases done, {_duration(now - self.start)} in all)")


def _case_line(case: CaseResult) -> str:
    status = case.status.value.upper() if case.status in FAILING else case.status.value
    message = case.message.splitlines()[0] if case.message else ""
    return f"{status:<8}{case.check}: {case.name}{' — ' + message if message else ''} ({case.seconds:.1f}s)"


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
@click.option(
    "--fail-fast",
    is_flag=True,
    help="Stop at the first failed or errored case (its counterexample is shown).",
)
@click.option(
    "--heartbeat",
    type=click.FloatRange(min=0.1),
    default=HEARTBEAT_SECONDS,
    show_default=True,
    help="Without a terminal: print a line naming what runs whenever nothing was printed for this many seconds.",
)
@click.option("-v", "--verbose", is_flag=True, help="Print the details of every failed case.")
def command(
    profiles: tuple[str, ...],
    checks: tuple[str, ...],
    out: Path,
    json_path: Path | None,
    junit_path: Path | None,
    tla2tools: str | None,
    fail_fast: bool,
    heartbeat: float,
    verbose: bool,
) -> None:
    """Run every check kcspec has and fail on any violation: the gate to put in CI.

    Exit code 0 when every case passed or was skipped (with its reason), 1 when a violation or
    divergence was found (the counterexample path is printed), 2 on bad usage or a missing dependency,
    130 / 143 when interrupted (the reports say so; an interrupted run never passes).

    \b
    Examples:
      kcspec verify
      kcspec verify --profile kafka-1.1 --junit verify.xml --json verify.json
      kcspec verify --check prove --check diagrams --fail-fast
    """
    console = Console(stderr=False, highlight=False)
    terminal = console.is_terminal
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
    cancel = threading.Event()
    log = _Log(heartbeat)
    interruption: BaseException | None = None
    if not terminal:
        log.line(
            f"kcspec verify: {', '.join(c.name for c in selected)} on {', '.join(opts.profiles)}"
            f" (a line per case; a heartbeat after {heartbeat:g}s without one)"
        )
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not terminal,
    ) as progress:
        total = progress.add_task("verify", total=sum(c.cost * len(opts.profiles) for c in selected))

        def on_start(check: str, case: str) -> None:
            log.started(check, case)
            if terminal and not case:
                progress.update(total, description=check)

        def on_case(case: CaseResult) -> None:
            if cancel.is_set():
                return
            if not terminal:
                log.finished(case)
                return
            progress.advance(total)
            if case.status in FAILING:
                console.print(_styled_case(case))
                if case.counterexample:
                    console.print(Text(f"  counterexample: {case.counterexample}"))

        def work() -> VerifyReport:
            return run_gate(
                selected, opts, report, fail_fast=fail_fast, cancel=cancel, on_start=on_start, on_case=on_case
            )

        try:
            interrupts.run_interruptibly(
                work, options.interrupt_handling(), cancel=cancel, tick=None if terminal else log.tick
            )
        except (KeyboardInterrupt, interrupts.Terminated) as e:
            interruption = e
            # a copy: the worker thread may still be unwinding into ``report``
            report = dataclasses.replace(
                report, cases=list(report.cases), interrupted=interrupts.describe(e), stopped=None
            )
            report.seconds = time.monotonic() - log.start
            report.not_run = tuple(c.name for c in selected if not any(report.counts(c.name).values()))

    cases = report.cases
    if terminal:
        console.print(_table(selected, report))
    else:
        _plain_table(selected, report)
    _print_skips(cases, console if terminal else None)
    if verbose or report.failed:
        for case in report.failed:
            if case.details:
                _out(console if terminal else None, Text(f"{case.check}: {case.name}:\n{case.details}"))
    if json_path:
        write_json(report, json_path)
    if junit_path:
        write_junit(report, junit_path)
    counts = report.counts()
    summary = (
        f"{counts[Verdict.passed]} passed, {counts[Verdict.failed]} failed, {counts[Verdict.skipped]} skipped, "
        f"{counts[Verdict.errored]} errored in {report.seconds:.1f}s"
    )
    if report.stopped:
        summary += f"; {report.stopped}"
    if report.not_run:
        summary += f"; not run: {', '.join(report.not_run)}"
    if interruption is not None:
        summary = (
            f"interrupted ({report.interrupted}): the gate did not pass; before the interrupt: {summary}"
        )
    _out(console if terminal else None, Text(summary))
    if interruption is not None:
        raise interruption
    sys.exit(0 if report.ok else 1)


def _out(console: Console | None, text: Text) -> None:
    if console is None:
        click.echo(text.plain)
    else:
        console.print(text)


def _styled_case(case: CaseResult) -> Text:
    return Text.assemble(
        (case.status.value.upper(), STYLE[case.status]), f" {case.check}: {case.name} — {case.message}"
    )


def _table(selected: Iterable[Check], report: VerifyReport) -> Table:
    table = Table(title="kcspec verify")
    table.add_column("check")
    table.add_column("what it checks")
    for status in GATE_VERDICTS:
        table.add_column(status.value, justify="right")
    for check in selected:
        counts = report.counts(check.name)
        table.add_row(
            Text(check.name),
            Text(check.description),
            *(Text(str(counts[s]), style=STYLE[s] if counts[s] else "") for s in GATE_VERDICTS),
        )
    return table


def _plain_table(selected: Iterable[Check], report: VerifyReport) -> None:
    checks = list(selected)
    width = max([len("check"), *(len(c.name) for c in checks)])
    click.echo(f"{'check':<{width}}  " + "  ".join(f"{s.value:>7}" for s in GATE_VERDICTS))
    for check in checks:
        counts = report.counts(check.name)
        click.echo(f"{check.name:<{width}}  " + "  ".join(f"{counts[s]:>7}" for s in GATE_VERDICTS))


def _print_skips(cases: list[CaseResult], console: Console | None) -> None:
    """Each distinct skip reason once, with the cases it concerns."""
    by_reason: dict[str, list[CaseResult]] = {}
    for case in cases:
        if case.status is Verdict.skipped:
            by_reason.setdefault(case.message, []).append(case)
    for reason, group in by_reason.items():
        names = ", ".join(f"{c.check}: {c.name}" for c in group)
        head = Text.assemble(("skipped", "yellow") if console else "skipped", f" ({len(group)}) {names}")
        _out(console, head)
        _out(console, Text("  because: " + reason.replace("\n", "\n  ")))
