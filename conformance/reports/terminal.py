"""The terminal summary of a conformance run: counts per level and section, then every divergence."""

from __future__ import annotations

from collections import defaultdict

from kcspec.conformance.verdicts import Outcome, RunReport, Verdict
from rich.console import Console
from rich.table import Table

STYLE = {
    Verdict.passed: "green",
    Verdict.failed: "bold red",
    Verdict.errored: "bold magenta",
    Verdict.skipped: "yellow",
    Verdict.not_supported: "dim",
    Verdict.known: "cyan",
}


def print_report(report: RunReport, console: Console, *, max_details: int = 10) -> None:
    sut = report.sut
    console.print(
        f"[bold]SUT[/bold] {sut.name} {sut.version} ({sut.description}); protocol v{sut.protocol_version}; "
        f"capabilities: {', '.join(sut.capabilities) or 'none'}"
    )
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    table = Table(title=f"Conformance — profile {report.profile}, level {report.level}")
    table.add_column("section")
    for v in Verdict:
        table.add_column(v.value, justify="right", style=STYLE[v])
    per_section: dict[str, dict[Verdict, int]] = defaultdict(lambda: dict.fromkeys(Verdict, 0))
    for o in report.outcomes:
        for s in o.sections[:1]:
            per_section[s][o.verdict] += 1
    for section in sorted(per_section, key=_section_key):
        row = per_section[section]
        table.add_row(section, *(str(row[v]) if row[v] else "" for v in Verdict))
    counts = report.counts()
    table.add_row("[bold]total[/bold]", *(f"[bold]{counts[v]}[/bold]" for v in Verdict), end_section=True)
    console.print(table)
    bad = [o for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)]
    groups = [o for o in bad if is_differential(o)]
    vectors = [o for o in bad if not is_differential(o)]
    for o in vectors[:max_details]:
        print_outcome(o, console)
    if len(vectors) > max_details:
        console.print(
            f"... and {len(vectors) - max_details} more failing vectors (see --json / --junit / --html)"
        )
    if groups:  # always shown, however many vectors failed: one group per cause, each with its shrunk trace
        console.print(f"\n[bold]differential testing: {len(groups)} divergence group(s)[/bold]")
        for o in groups:
            print_outcome(o, console)
    rate = report.exchanges_per_second
    if report.nothing_ran():
        console.print(f"[bold red]NOTHING RAN[/bold red]: {report.nothing_ran()}", highlight=False)
    verdict = (
        "[bold green]PASS[/bold green]"
        if report.ok
        else "[bold red]FAIL[/bold red]"
        if report.diverged
        else "[bold red]NOTHING RAN[/bold red]"
    )
    console.print(
        f"{verdict}: {len(report.outcomes)} vectors in {report.seconds:.2f} s "
        f"({report.exchanges} exchanges, {rate:.0f}/s of exchange time)"
    )


def is_differential(o: Outcome) -> bool:
    """The outcome of a divergence group of differential testing (not of a vector)."""
    return ".differential." in o.id


def print_outcome(o: Outcome, console: Console) -> None:
    console.print(f"\n[{STYLE[o.verdict]}]{o.verdict.value.upper()}[/] {o.id} ({', '.join(o.sections)})")
    console.print(f"  {o.description}", markup=False)
    console.print(f"  {o.reason}", markup=False)
    for d in o.differences[:20]:
        console.print(f"    {d.render()}", markup=False)
    if len(o.differences) > 20:
        console.print(f"    ... {len(o.differences) - 20} more differences")
    if o.stderr.strip():
        tail = "\n".join(o.stderr.strip().splitlines()[-8:])
        console.print("  SUT stderr (tail):", markup=False)
        console.print("    " + tail.replace("\n", "\n    "), markup=False)


def _section_key(section: str) -> tuple[int, ...]:
    digits = section.lstrip("§").split(".")
    return tuple(int(d) if d.isdigit() else 0 for d in digits)
