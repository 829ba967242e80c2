"""``kcspec audit``: replay recorded controller history (Kafka logs, JSONL traces) against the spec on Spark."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

EPILOG = """\b
Examples:
  kcspec audit /var/log/kafka --out audit-out
  kcspec audit real-logs/ --history file --out out   (unrelated clusters' files side by side)
  kcspec audit broker*/state-change.log* broker*/controller.log* --profile kafka-1.1 --out out
  kcspec audit traces/run.jsonl --format jsonl --master spark://host:7077 --out out
\b
Exit codes: 0 no violations, 1 violations found (see OUT/violations.jsonl), 2 bad input.
Every file given, or found under a directory, is audited; lines that are not log records are
quarantined with a reason (OUT/quarantine.jsonl). Spark's own output goes to a log file, not the terminal.
"""


@click.command("audit", epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "kafka-log", "jsonl"]),
    default="auto",
    show_default=True,
    help="Input format; auto treats *.jsonl / *.ndjson (optionally .gz) as traces, the rest as Kafka logs.",
)
@click.option(
    "--profile", default="kafka-2.8", show_default=True, help="Semantics profile whose tables are checked."
)
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option(
    "--history",
    "history_key",
    type=click.Choice(["dir", "file"]),
    default="dir",
    show_default=True,
    help="What one cluster's history is: all files of a directory, or each file on its own.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="audit-out",
    show_default=True,
    help="Output directory (violations, quarantine, coverage, stats, summary.html).",
)
def command(
    paths: tuple[str, ...], fmt: str, profile: str, master: str, history_key: str, out_dir: str
) -> None:
    """Audit Kafka state-change.log / controller.log files (rotated, .gz, several brokers) and canonical
    JSONL traces against the spec; every line is parsed or quarantined."""
    err = Console(stderr=True)
    from kcspec.spec.profiles import get_profile

    try:
        prof = get_profile(profile)
    except KeyError as exc:
        err.print(f"[red]error:[/red] --profile: {exc.args[0]}")
        sys.exit(2)
    try:
        from kcspec.conformance.audit.spark_job import InputError, expand_inputs
    except ImportError:
        err.print("[red]error:[/red] pyspark is not installed: pip install 'kcspec[spark]' (needs Java 17)")
        sys.exit(2)
    try:
        inputs = expand_inputs(list(paths), fmt)
    except InputError as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(2)
    if inputs.skipped:
        names = ", ".join(inputs.skipped[:5]) + (" …" if len(inputs.skipped) > 5 else "")
        err.print(
            f"skipped {len(inputs.skipped)} hidden file(s) under the given directories: {names}", markup=False
        )
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        err.print(f"[red]error:[/red] --out {out_dir}: exists and is not a directory")
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)

    from kcspec.conformance.audit.pipeline import run_audit
    from kcspec.conformance.audit.session import make_session, spark_log_path

    start = time.monotonic()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(f"starting Spark ({master}) …", total=None)
        try:
            spark = make_session(master)
        except Exception as exc:  # the JVM did not start: Java missing, bad --master, …
            progress.stop()
            err.print(
                f"[red]error:[/red] Spark did not start ({escape(str(exc))}); its output: {spark_log_path()}"
            )
            sys.exit(2)

        def step(text: str) -> None:
            progress.update(task, description=f"{text} …")
            progress.console.print(f"[dim]{time.monotonic() - start:7.1f}s[/dim] {text}")

        summary = run_audit(spark, inputs, out, prof, step, history_key)
    elapsed = time.monotonic() - start
    con = Console()
    table = Table(title=f"kcspec audit ({prof.name}) — {elapsed:.1f}s")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("lines read", str(summary.lines_read))
    table.add_row("parsed", str(summary.parsed))
    table.add_row("quarantined", str(summary.quarantined))
    table.add_row("violations", str(summary.violations))
    con.print(table)
    con.print(
        f"parsed + quarantined = {summary.parsed + summary.quarantined} = lines read {summary.lines_read}"
    )
    for reason, n in sorted(summary.by_reason.items()):
        con.print(f"  quarantined [{reason}]: {n}", markup=False)
    for q in summary.quarantine_sample[:5]:
        con.print(f"    {q['file']}:{q['line']}: {str(q['text'])[:100]!r}", markup=False)
    for rule, n in sorted(summary.by_rule.items()):
        con.print(f"  violation [{rule}]: {n}", markup=False)
    for v in summary.violation_sample[:10]:
        con.print(f"    {v['file']}:{v['line']}: {v['message']}", markup=False)
    con.print(f"report: {out / 'summary.html'}")
    sys.exit(1 if summary.violations else 0)
