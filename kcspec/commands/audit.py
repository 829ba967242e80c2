"""``kcspec audit``: replay recorded controller history (Kafka logs, JSONL traces) against the spec, on Spark or,
for Kafka logs one machine handles, by the local engine (``local_engine``: no Spark session)."""

from __future__ import annotations

import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from kcspec import options

EPILOG = """\b
Examples:
  kcspec audit /var/log/kafka --out audit-out
  kcspec audit broker-*/ --out out        (one cluster: all files merged, ordered by timestamp)
  kcspec audit real-logs/ --history file --out out   (unrelated clusters' files side by side)
  kcspec audit broker*/state-change.log* broker*/controller.log* --profile kafka-1.1 --out out
  kcspec audit traces/run.jsonl --format jsonl --master spark://host:7077 --out out
  kcspec audit /var/log/kafka --engine spark --out out   (embedded Spark even for a small input)
\b
Exit codes: 0 clean, 1 violations found (see OUT/violations.jsonl), 2 bad usage or bad input
(a file that yields no record or breaks off, more quarantined lines than --max-quarantine, an
unreachable --master), 3 internal error. Every file given is audited, and every file found under a
directory except hidden ones and documents plainly not logs by name (README, .md, .json, …: each
skipped file is listed, with why, on the terminal and in the report); lines that are not log
records are quarantined with a reason (OUT/quarantine.jsonl); a compressed file that breaks off is audited up to that point. An --out folder that is not empty is kept as it is: the
run writes into a fresh sub-folder of it. Spark's own output goes to a log file, not the terminal.
"""
DEFAULT_MASTER = "local[*]"
"""Spark's master when the audit runs on Spark and no ``--master`` was given."""


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
@options.profile(
    optional=True,
    help="Semantics profile whose tables are checked (default: the one the logs' formats say, else kafka-2.8).",
)
@click.option(
    "--master",
    default=None,
    help="Spark master URL (default local[*]); a master given always runs the audit on Spark.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "local", "spark"]),
    default="auto",
    show_default=True,
    help="What runs the audit: Spark, or the local engine (the same reader and rules in one JVM process, "
    "no Spark session: for inputs one machine handles). auto: the local engine for Kafka logs of at most "
    "256 MiB when no --master is given, else Spark.",
)
@click.option(
    "--history",
    "history_key",
    type=click.Choice(["cluster", "dir", "file"]),
    default="cluster",
    show_default=True,
    help="What one cluster's history is: all files given (merged per partition and replica, ordered by "
    "timestamp across brokers and files), all files of a directory, or each file on its own.",
)
@click.option(
    "--max-quarantine",
    type=click.FloatRange(0, 100),
    default=5.0,
    show_default=True,
    help="Percent of the lines read that may be quarantined in a run still called clean.",
)
@options.out_dir(
    default="audit-out",
    help="Output directory (violations, quarantine, coverage, stats, summary.html).",
    name="out_dir",
)
def command(
    paths: tuple[str, ...],
    fmt: str,
    profile: str | None,
    master: str | None,
    engine: str,
    history_key: str,
    max_quarantine: float,
    out_dir: Path,
) -> None:
    """Audit Kafka state-change.log / controller.log files (rotated, .gz, several brokers) and canonical
    JSONL traces against the spec; every line is parsed or quarantined."""
    err = Console(stderr=True)
    from kcspec.spec.profiles import DEFAULT_PROFILE, get_profile

    try:
        prof = get_profile(profile or DEFAULT_PROFILE)
    except KeyError as exc:
        options.fail(f"--profile: {exc.args[0]}")
    try:
        from kcspec.audit.spark_job import InputError, expand_inputs
    except ImportError:
        options.fail("pyspark is not installed: pip install 'kcspec[spark]' (needs Java 17)")
    try:
        inputs = expand_inputs(list(paths), fmt)
    except InputError as exc:
        options.fail(str(exc))
    for name, why in inputs.unreadable:
        err.print(f"not audited {name}: {why}", markup=False)
    for name, why in inputs.skipped[:20]:
        err.print(f"skipped {name}: {why}", markup=False)
    if len(inputs.skipped) > 20:
        err.print(
            f"skipped {len(inputs.skipped) - 20} more file(s) (all listed in OUT/stats.json)", markup=False
        )
    from kcspec.audit.local_engine import chosen_engine

    try:
        engine, why_engine = chosen_engine(engine, master, inputs)
    except InputError as exc:
        options.fail(str(exc))
    if engine == "spark":
        from kcspec.model.spark.master import check_master

        bad_master = check_master(master or DEFAULT_MASTER)
        if bad_master is not None:
            click.echo(f"error: {bad_master}", err=True)  # one line, never wrapped
            sys.exit(2)
    try:
        out = fresh_out(Path(out_dir))
    except OSError as exc:
        err.print(f"error: --out {out_dir}: {exc.strerror or exc}", markup=False)
        sys.exit(2)
    if out != Path(out_dir):
        err.print(f"--out {out_dir} is not empty: writing into {out}", markup=False)
    from kcspec.model.spark.session import handled_interrupts

    with handled_interrupts():
        early = _local_start(inputs, out, history_key) if engine == "local" else None
        try:
            if profile is None and inputs.kafka_logs:
                from kcspec.audit.layouts import chosen_profile

                name, why = chosen_profile(inputs.kafka_logs, DEFAULT_PROFILE)
                prof = get_profile(name)
                err.print(f"profile {name}: {why}", markup=False)
            err.print(f"engine {engine}: {why_engine}", markup=False)
            if engine == "local":
                _audit(inputs, out, prof, None, history_key, profile, max_quarantine, early)
            else:
                _audit(inputs, out, prof, master or DEFAULT_MASTER, history_key, profile, max_quarantine)
        finally:
            if early is not None:
                early.close()  # the audit ended it, unless it never began


def _local_start(inputs: Any, out: Path, history_key: str) -> Any:
    """The local engine's first part (``local_engine.Reading``: its JVM started and reading the logs) begun
    before the profile is chosen (``layouts.chosen_profile``, which reads the files' first lines in Python and
    which only the rules need), or ``None`` when it cannot begin: the audit then begins it itself and reports
    why it cannot, as it would have without this."""
    from kcspec.audit.local_engine import Reading

    try:
        return Reading(inputs, out, history_key)
    except Exception:  # met again where the audit begins (_audit), which reports it
        return None


def _audit(
    inputs: Any,
    out: Path,
    prof: Any,
    master: str | None,
    history_key: str,
    profile: str | None,
    max_quarantine: float,
    early: Any = None,
) -> None:
    """The audit proper, with the command line's interrupt handling (``session.handled_interrupts``): on
    Spark at ``master``, or by the local engine (``local_engine``) when ``master`` is ``None``, going on from
    ``early`` (``_local_start``) when given."""
    err = Console(stderr=True)
    from kcspec.audit.pipeline import conclude, run_audit
    from kcspec.audit.session import make_session
    from kcspec.model.spark.session import input_bytes, java_options_note, keep_spark_log

    start = time.monotonic()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(f"starting Spark ({master}) …" if master else "local engine …", total=None)
        spark = None
        try:
            if master is not None:
                spark = make_session(
                    master, input_size=input_bytes((*inputs.kafka_logs, *inputs.traces)), interrupts=True
                )
        except Exception as exc:  # the JVM did not start: Java missing, bad --master, …
            progress.stop()
            stop_if_interrupted(exc)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            err.print(
                f"[red]error:[/red] Spark did not start ({escape(first)}); its output: {keep_spark_log(out)}"
                f"{escape(java_options_note())}"
            )
            sys.exit(2)

        def step(text: str) -> None:
            progress.update(task, description=f"{text} …")
            progress.console.print(f"[dim]{time.monotonic() - start:7.1f}s[/dim] {text}")

        from kcspec.audit.spark_job import ParserUnavailable

        try:
            if spark is None:
                from kcspec.audit.local_engine import run_local

                summary = run_local(
                    inputs, out, prof, step, history_key, explicit_profile=profile is not None, reading=early
                )
            else:
                summary = run_audit(
                    spark, inputs, out, prof, step, history_key, explicit_profile=profile is not None
                )
            verdict = conclude(out, summary, max_quarantine / 100)
        except ParserUnavailable as exc:  # no JDK: the logs cannot be read as the audit reads them
            progress.stop()
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except Exception as exc:  # a fault of the audit itself: never exit 1, which means "violations"
            progress.stop()
            stop_if_interrupted(exc)
            report_internal_error(exc, out / "internal-error.txt", keep_spark_log(out))
            sys.exit(3)
    elapsed = time.monotonic() - start
    con = Console()
    # what an operator must look at comes first: the verdict, warnings, violations and findings with their lines
    style = "green" if verdict.exit_code == 0 else "red"
    con.print(f"[{style}]{escape(verdict.headline)}[/{style}]")  # the verdict, stated once
    for line in (*verdict.internal, *verdict.problems):
        con.print(f"  {line}", markup=False)
    for line in summary.attention():
        con.print(line, markup=False)
    table = Table(title=f"kcspec audit ({prof.name}) — {elapsed:.1f}s")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("lines read", str(summary.lines_read))
    # "parsed" is every line accounted for without quarantine: records, and the blank and continuation lines
    # between them; a file none of whose lines is a record can still have blank lines, so the two are shown
    records = sum(int(f["record"]) for f in summary.per_file)
    table.add_row("parsed", str(summary.parsed))
    table.add_row("  records", str(records))
    table.add_row("  blank or continuation lines", str(summary.parsed - records))
    table.add_row("quarantined", str(summary.quarantined))
    from kcspec.model.kafka_log.lines import EXCUSED_REASONS

    excused = sum(summary.by_reason.get(r, 0) for r in EXCUSED_REASONS)
    if excused:  # not counted against --max-quarantine
        table.add_row("  out of scope, or before a file's first record", str(excused))
    table.add_row("state transitions checked", str(summary.checked))
    table.add_row("violations", str(summary.violations))
    con.print(table)
    added = summary.parsed + summary.quarantined
    con.print(
        f"parsed + quarantined = {added} {'=' if added == summary.lines_read else '!='} "
        f"lines read {summary.lines_read}"
    )
    for reason, n in sorted(summary.by_reason.items()):
        con.print(f"  quarantined [{reason}]: {n}", markup=False)
    for line in quarantine_lines(summary.quarantine_sample):
        con.print(line, markup=False)
    for rule, n in sorted(summary.by_rule.items()):
        con.print(f"  violation [{rule}]: {n}", markup=False)
    con.print(f"report: {out / 'summary.html'} (exit {verdict.exit_code})")
    sys.exit(verdict.exit_code)


CLAIM = ".kcspec-audit"
"""The file by which a run takes an empty ``--out`` folder as its own (created exclusively: of two runs started
into the same new folder, one gets it and the other writes into a sub-folder of it instead of mixing files)."""


def fresh_out(out: Path) -> Path:
    """Where this run writes: ``out`` when it does not exist or is empty (taken with ``CLAIM``), else a new
    sub-folder of it (``run-<UTC time>``, made here), so that nothing already in ``out`` is overwritten or
    deleted, and two runs into one folder never mix."""
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    if not any(out.iterdir()):
        try:
            os.close(os.open(out / CLAIM, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            pass  # another run took it a moment ago
        else:
            return out
    stamp = datetime.now(UTC).strftime("run-%Y%m%dT%H%M%SZ")
    for n in range(1000):
        sub = out / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            sub.mkdir()
        except FileExistsError:
            continue
        return sub
    raise FileExistsError(17, f"no free sub-folder name {stamp}-N")


def quarantine_lines(sample: list[dict[str, object]], shown: int = 5) -> list[str]:
    """The terminal's lines for the first quarantined lines: file, line and text of each, and the first one's
    reason in full (the codec's message for a JSONL trace line: JSON path and what was expected), so that a
    rejected input says why without opening quarantine.jsonl."""
    lines = [f"    {q['file']}:{q['line']}: {str(q['text'])[:100]!r}" for q in sample[:shown]]
    if sample:
        first = sample[0]
        lines.append(
            f"    first reason ({first['file']}:{first['line']}): {first.get('detail') or first['reason']}"
        )
        if first["reason"] == "bad-trace-line":
            lines.append(
                "    a trace line is one JSON object with keys step, event, state, requests, failures (README: "
                '"The JSONL trace format"); a *.trace.json counterexample is converted with Trace.to_jsonl'
            )
    return lines


def stop_if_interrupted(exc: BaseException) -> None:
    """Re-raise the Ctrl-C or SIGTERM behind ``exc`` (the command group ends the run with one line, 130 or
    143): an interrupt never reads as an internal error or a failed start."""
    from kcspec.model.spark.session import interrupt_in

    interrupt = interrupt_in(exc)
    if interrupt is not None:
        raise interrupt from None


def report_internal_error(exc: BaseException, where: Path, spark_log: Path) -> None:
    """One line on the terminal; the traceback in ``where`` (and Spark's output in its log)."""
    try:
        where.write_text("".join(traceback.format_exception(exc)))
        saved = f"traceback: {where}"
    except OSError:
        saved = "traceback not saved"
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    click.echo(
        f"internal error (a fault of kcspec audit, not of the logs): {type(exc).__name__}: {first}; "
        f"{saved}; Spark's output: {spark_log}",
        err=True,
    )
