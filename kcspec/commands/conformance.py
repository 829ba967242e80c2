"""``kcspec conformance run | export | replay | example-sut``: test a controller implementation against the spec."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kcspec import options
from kcspec.conformance.adapters.base import Adapter
from kcspec.model.files import with_path, write_atomically
from kcspec.spec import profiles as spec_profiles

PROFILES = tuple(spec_profiles.PROFILES)
"""The spec's profiles, in the spec's order (the default profile first)."""
LEVELS = ("elections", "machines", "controller")

RUN_EXAMPLES = """\b
Examples:
  kcspec conformance run --sut "kcspec serve-reference"
  kcspec conformance run --sut "node $(kcspec conformance example-sut)" --level machines --junit out.xml
  kcspec conformance run --adapter my_controller:MyController --profile kafka-1.1 --html report.html
"""


@click.group(name="conformance")
def command() -> None:
    """Run the conformance suite against a controller implementation (a SUT)."""


def _load_adapter(
    sut: str | None, adapter: str | None, timeout: float, max_line: int, budget: float | None = None
) -> Adapter:
    """The adapter of ``--sut`` or ``--adapter``. A subprocess SUT gets a grace of 30 s (or ``timeout`` if
    longer) for its first reply, for runtimes slow to start; ``budget`` bounds that grace too. An in-process
    SUT's calls run under ``timeout`` in a worker thread (a hung call stops the run)."""
    from kcspec.conformance.adapters.inprocess import ControllerSut, InProcessAdapter
    from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
    from kcspec.model.interrupts import Terminated

    if (sut is None) == (adapter is None):
        options.fail('give exactly one of --sut "CMD ARGS" or --adapter module:Class')
    if sut is not None:
        try:
            startup = max(timeout, 30.0) if budget is None else min(max(timeout, 30.0), budget)
            return SubprocessAdapter(sut, timeout=timeout, startup_timeout=startup, max_line_bytes=max_line)
        except ValueError as exc:
            options.fail(f"--sut: {exc}")
    assert adapter is not None
    module_name, sep, class_name = adapter.partition(":")
    if not sep or not module_name or not class_name:
        options.fail(f"--adapter: expected module:Class, got {adapter!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        options.fail(f"--adapter: cannot import {module_name!r}: {exc}")
    except (KeyboardInterrupt, Terminated):
        raise
    except BaseException as exc:  # the module's own code failed, sys.exit() included: not kcspec's exit
        options.fail(f"--adapter: importing {module_name!r} raised {type(exc).__name__}: {exc}")
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, ControllerSut)):
        options.fail(
            f"--adapter: {adapter} is not a subclass of kcspec.conformance.adapters.inprocess.ControllerSut"
        )
    assert isinstance(cls, type)
    try:
        instance = cls()
    except (KeyboardInterrupt, Terminated):
        raise
    except BaseException as exc:  # the SUT's own constructor (sys.exit() included): its failure, reported
        options.fail(f"--adapter: {adapter}() raised {type(exc).__name__}: {exc}")
    return InProcessAdapter(instance, timeout=timeout)


def _vectors(source: Path | None, profile: str, console: Console) -> list[object]:
    """The vectors to run: ``--vectors DIR``, else the cached ones of this version, profile and sources, else
    generated now (and cached for the next run). Each way says what it did and how long it took."""
    from kcspec.conformance.vectors import cache, files, generate
    from kcspec.conformance.vectors.model import VectorError

    started = time.monotonic()
    if source is not None:
        try:
            loaded = list(files.load_dir(source))
        except VectorError as exc:
            options.fail(str(exc))
        console.print(f"vectors: {len(loaded)} read from {source} in {time.monotonic() - started:.1f} s")
        return list(loaded)
    cached = cache.load(profile)
    if cached is not None:
        console.print(
            f"vectors: {len(cached)} of profile {profile} read from the cache {cache.entry_dir(profile)} "
            f"in {time.monotonic() - started:.1f} s",
            highlight=False,
        )
        return list(cached)
    with console.status(
        f"generating the vectors of profile {profile} (once per kcspec version and sources) ..."
    ):
        gen = generate.generate([profile])
    spent = time.monotonic() - started
    stored = cache.store(profile, list(gen.vectors))
    console.print(
        f"vectors: {len(gen.vectors)} generated in {spent:.1f} s ({len(gen.vectors) / max(spent, 1e-9):.0f}/s)"
        + (
            f", cached in {stored}"
            if stored is not None
            else ", not cached (the cache folder is not writable)"
        ),
        highlight=False,
    )
    for ident, reason in gen.unanswered[:3]:
        console.print(f"[yellow]note:[/yellow] {escape(f'no vector for {ident}: {reason}')}", highlight=False)
    if len(gen.unanswered) > 3:
        console.print(
            f"[yellow]note:[/yellow] {len(gen.unanswered)} inputs have no vector (oracles unavailable)"
        )
    if gen.disagreements:
        console.print(
            f"[yellow]note:[/yellow] {len(gen.disagreements)} inputs dropped: spec and reference disagree"
        )
    return list(gen.vectors)


@command.command(name="run", epilog=RUN_EXAMPLES)
@click.option(
    "--sut", metavar='"CMD ARGS"', help="Command that starts the SUT (protocol v1 on stdin/stdout)."
)
@click.option("--adapter", metavar="module:Class", help="An in-process ControllerSut subclass.")
@options.profile()
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default="controller",
    show_default=True,
    help="Run vectors up to this level.",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0.1),
    default=None,
    metavar="SECONDS",
    help="Stop after this many seconds; the rest is reported as skipped.",
)
@click.option(
    "--vectors",
    "vectors_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Run exported vectors from this directory instead of generating them.",
)
@click.option(
    "--differential",
    "examples",
    type=click.IntRange(min=0),
    default=None,
    help="Random event sequences run against the reference controller (controller level only; default "
    "300 at --level controller, for at most 40 s unless --budget is given; 0 turns it off). Every distinct "
    "divergence is shrunk and written as a trace.",
)
@options.seed(default=0, help="Seed of the differential run.")
@click.option(
    "--known",
    "known_path",
    type=click.Path(path_type=Path),
    default=None,
    help="JSON file of the SUT's acknowledged deviations (vector ids or divergence signatures, each with a "
    "reason): reported as known, not failing the run; a listed vector that passes fails it (stale entry).",
)
@click.option(
    "--trace-dir",
    type=click.Path(path_type=Path),
    default=None,
    callback=options.output_dir,
    help="Where counterexample traces are written (default: conformance-traces/ beside the --json report, "
    "else a new folder kcspec-traces/<profile>-seed<seed>-<time>/ under the cache folder; the run names it).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.01),
    default=10.0,
    show_default=True,
    help="Seconds the SUT may take per message.",
)
@click.option("--max-line-bytes", type=click.IntRange(min=1024), default=16 * 1024 * 1024, show_default=True)
@options.report_file("--json", "json_out", help="Write the JSON report here.")
@options.report_file("--junit", "junit_out", help="Write JUnit XML here.")
@options.report_file("--html", "html_out", help="Write the HTML report here.")
def run_cmd(
    sut: str | None,
    adapter: str | None,
    profile: str,
    level: str,
    budget: float | None,
    vectors_dir: Path | None,
    examples: int | None,
    seed: int,
    known_path: Path | None,
    trace_dir: Path | None,
    timeout: float,
    max_line_bytes: int,
    json_out: Path | None,
    junit_out: Path | None,
    html_out: Path | None,
) -> None:
    """Run the conformance vectors against a SUT and report. Exit code 0: everything run passed
    (not-supported vectors do not count against the SUT); 1: a divergence or a SUT error; 2: bad
    usage, bad vector files, a SUT that cannot be started, or a run in which no vector ran; 3: an
    internal error of kcspec; 130 / 143: interrupted by Ctrl-C / SIGTERM (the SUT is stopped)."""
    from kcspec.conformance import known as known_file
    from kcspec.conformance import runner
    from kcspec.conformance.reports import html_report, json_report, junit, terminal
    from kcspec.conformance.vectors.model import Level, Vector
    from kcspec.conformance.verdicts import Outcome, RunReport

    console = Console(stderr=False)
    if examples is not None and examples > 0 and Level[level] is not Level.controller:
        options.fail(
            f"--differential runs controller events: it needs --level controller, not --level {level}"
        )
    if examples is None:
        from kcspec.conformance.differential import DEFAULT_EXAMPLES

        examples = DEFAULT_EXAMPLES if Level[level] is Level.controller else 0
    known = known_file.NO_KNOWN
    if known_path is not None:
        try:
            known = known_file.load(known_path)
        except known_file.KnownFileError as exc:
            options.fail(f"--known: {exc}")
    the_adapter = _load_adapter(sut, adapter, timeout, max_line_bytes, budget)
    started = time.monotonic()
    # the SUT first: a wrong --sut is reported at once, before any vector is generated
    console.print(f"starting the SUT: {the_adapter.description}", highlight=False)
    try:
        session = runner.open_session(the_adapter, profile)
    except runner.SessionError as exc:
        options.fail(str(exc))
    _greeted(session, console, time.monotonic() - started)
    vectors = [v for v in _vectors(vectors_dir, profile, console) if isinstance(v, Vector)]
    selected = runner.select_vectors(vectors, profile, Level[level])
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(f"conformance {profile}/{level}", total=len(selected))

        def advance(_o: Outcome) -> None:
            progress.advance(task)

        try:
            report = runner.run(
                the_adapter,
                selected,
                profile=profile,
                level=Level[level],
                budget=budget,
                progress=advance,
                session=session,
            )
        except runner.SessionError as exc:
            options.fail(str(exc))
    console.print(
        f"vectors: {len(selected)} run in {report.seconds:.1f} s ({report.exchanges} exchanges)",
        highlight=False,
    )
    vector_outcomes, known_notes = known_file.apply_to_vectors(report.outcomes, known)
    diff_outcomes: list[Outcome] = []
    notes: list[str] = []
    if examples and Level[level] is Level.controller:
        from kcspec.conformance import differential

        remaining = (
            differential.DEFAULT_SECONDS
            if budget is None
            else max(0.0, budget - (time.monotonic() - started))
        )
        trace_dir = trace_dir or _default_trace_dir(json_out, profile, seed)
        diff_outcomes, notes = differential.run_differential(
            the_adapter,
            profile=profile,
            examples=examples,
            seed=seed,
            trace_dir=trace_dir,
            budget=remaining,
            console=console,
            known=known,
        )
        if any(o.verdict.value in ("failed", "errored", "known") for o in diff_outcomes):
            notes.append(f"counterexample traces are in {trace_dir}")
    elif known.signatures:
        notes = [
            f"known deviation not checked (no differential run): {d.describe()}" for d in known.signatures
        ]
    report = RunReport(
        report.sut,
        report.profile,
        report.level,
        tuple(vector_outcomes) + tuple(diff_outcomes),
        time.monotonic() - started,
        report.exchanges,
        report.notes + tuple(known_notes) + tuple(notes),
        exchange_seconds=report.exchange_seconds,
    )
    terminal.print_report(report, console)
    for path, render in (
        (json_out, json_report.render),
        (junit_out, junit.render),
        (html_out, html_report.render),
    ):
        if path is not None:
            write_atomically(path, render(report))  # a full disk leaves no truncated report
            console.print(f"wrote {path}", markup=False)
    sys.exit(report.exit_code())


def _greeted(session: object, console: Console, seconds: float) -> None:
    """Say who answered ``hello``, and what of its ``hello`` is ignored."""
    from kcspec.conformance.runner import Session
    from kcspec.spec.events import EVENTS_BY_KIND

    assert isinstance(session, Session) and session.hello is not None
    h = session.hello
    console.print(
        f"SUT {h.implementation.name} {h.implementation.version} answered in {seconds:.1f} s: protocol "
        f"{h.protocol_version}.{h.protocol_minor}, profiles {', '.join(h.profiles)}, capabilities "
        f"{', '.join(sorted(c.name for c in h.capabilities)) or 'none'}",
        highlight=False,
    )
    for warning in h.warnings(EVENTS_BY_KIND):
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


def _default_trace_dir(json_out: Path | None, profile: str, seed: int) -> Path:
    """``conformance-traces/`` beside the JSON report, else a new named folder under the cache folder (never the
    working folder: a run from a checkout must not write into it)."""
    if json_out is not None:
        return json_out.parent / "conformance-traces"
    from kcspec.conformance.vectors.cache import cache_root

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return cache_root().parent / "kcspec-traces" / f"{profile}-seed{seed}-{stamp}"


@command.command(
    name="export",
    epilog="""\b
Example:
  kcspec conformance export vectors/ --profile kafka-2.8
""",
)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), callback=options.output_dir)
@options.profile(multiple=True, help="Profiles to export (default: all).")
@options.overwrite_option("DIRECTORY")
def export_cmd(directory: Path, profiles: tuple[str, ...], overwrite: bool) -> None:
    """Write the vectors as plain JSON files, with their JSON Schema, an index and the traceability report."""
    from kcspec.conformance.vectors import files, generate, traceability

    chosen = profiles or PROFILES
    gen = generate.generate(chosen)
    if not gen.vectors:
        options.fail("no vectors could be generated: " + "; ".join(r for _, r in gen.unanswered[:3]))
    report = traceability.report(gen.vectors, chosen)
    with options.claimed_dir(directory, flag="DIRECTORY", overwrite=overwrite):
        try:
            n = files.export(gen.vectors, directory, report)
        except OSError as exc:  # a write's error names no file (a full disk): the folder is named instead
            raise with_path(exc, directory) from None
    console = Console()
    console.print(
        f"wrote {n} vectors to {directory} (oracles: {', '.join(gen.oracles)}; {gen.seconds:.1f} s)",
        markup=False,
    )
    if gen.unanswered:
        console.print(
            f"[yellow]{len(gen.unanswered)} inputs have no vector[/yellow] (no oracle could answer), e.g. "
            + escape(f"{gen.unanswered[0][0]}: {gen.unanswered[0][1]}"),
            highlight=False,
        )
    if gen.disagreements:
        console.print(
            f"[yellow]{len(gen.disagreements)} inputs dropped because the oracles disagree[/yellow], e.g. "
            + escape(f"{gen.disagreements[0][0]}"),
            highlight=False,
        )
    missing = traceability.uncovered(gen.vectors, chosen)
    if missing:
        console.print(
            "[yellow]sections without vectors:[/yellow] "
            + escape(", ".join(f"{s} ({p})" for s, p in missing))
        )


@command.command(
    name="replay",
    epilog="""\b
Example:
  kcspec conformance replay conformance-traces/divergence-kafka-2.8-0.json --sut "python my_sut.py"
""",
)
@click.argument("trace", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--sut", metavar='"CMD ARGS"', help="Command that starts the SUT.")
@click.option("--adapter", metavar="module:Class", help="An in-process ControllerSut subclass.")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=10.0, show_default=True)
def replay_cmd(trace: Path, sut: str | None, adapter: str | None, timeout: float) -> None:
    """Replay a trace (a counterexample) on a SUT, step by step, against the reference controller.
    Exit code 0 if the SUT now agrees at every step, 1 at the first divergence."""
    from kcspec.conformance import differential

    the_adapter = _load_adapter(sut, adapter, timeout, 16 * 1024 * 1024)
    console = Console()
    try:
        code = differential.replay_file(trace, the_adapter, console)
    except differential.TraceError as exc:
        options.fail(str(exc))
    sys.exit(code)


EXAMPLE_SUTS = {"node": "node/sut.js", "buggy": "buggy_controller.py"}
"""The example SUTs the package ships (``kcspec.conformance.examples``), by name, and their main file."""


@command.command(
    name="example-sut",
    epilog="""\b
Examples:
  kcspec conformance example-sut                       the path of the Node.js example's sut.js
  kcspec conformance run --sut "node $(kcspec conformance example-sut)" --level controller
  kcspec conformance example-sut --command             the whole --sut command, ready to paste
""",
)
@click.argument("name", type=click.Choice(sorted(EXAMPLE_SUTS)), default="node")
@click.option("--command", "as_command", is_flag=True, help="Print the command that runs it (for --sut).")
def example_sut_cmd(name: str, as_command: bool) -> None:
    """Print where the installed package keeps an example SUT (the Node.js controller by default; ``buggy`` is
    a Python controller with a planted bug), so that the README's commands work from a wheel as well as from a
    checkout."""
    import shlex
    from importlib.resources import files

    path = Path(str(files("kcspec.conformance").joinpath("examples", *EXAMPLE_SUTS[name].split("/"))))
    if not path.is_file():
        options.fail(f"this installation of kcspec does not ship the {name} example ({path} is missing)")
    if not as_command:
        click.echo(str(path))
        return
    runner = "node" if path.suffix == ".js" else sys.executable
    click.echo(f"{shlex.quote(runner)} {shlex.quote(str(path))}")
