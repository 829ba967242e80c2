"""``kcspec tla``: export the spec as a TLA+ module, model-check it with TLC, read saved TLC output.

Exit codes: 0 no error found; 1 an invariant violation or deadlock (the counterexample is written as a
canonical kcspec trace); 2 bad input, a missing dependency (Java, tla2tools.jar, the spec's actions),
a parse/semantic error in the module, a TLC error or a timeout.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from kcspec import options
from kcspec.commands import tla_resumable as resumable
from kcspec.conformance.reports.json_report import write_document
from kcspec.model.tla.config import CROSSCHECK_DEFAULT, ModelConfig
from kcspec.model.tla.module import GeneratedModule, ModuleError, generate
from kcspec.model.tla.syntax import SyntaxCheckUnavailable, check_syntax
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import ToolNotFound, find_toolchain
from kcspec.model.tlc.output import Outcome, SourceError, Stats, TlcReport, parse_output
from kcspec.model.tlc.run import TlcInterrupted, TlcResult, run_tlc
from kcspec.model.tlc.trace import NEXT_LABEL, TlcAction
from kcspec.spec import profiles

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.tla_crosscheck import CrosscheckResult, StateSample

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


@contextlib.contextmanager
def _interruptible(console: Console) -> Iterator[None]:
    """Ctrl-C or SIGTERM ends the command with 130 or 143 (128 + signal) after TLC's process group is killed.

    ``run_tlc`` kills TLC's group itself when a signal arrives while it waits; here SIGTERM is also turned into
    an exception for the rest of the command (the explorer's part of a crosscheck), so that ``finally`` blocks
    run instead of Python dying on the spot."""

    def raise_interrupted(signum: int, frame: object) -> None:
        raise TlcInterrupted(signum)

    previous = signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        yield
    except KeyboardInterrupt:
        console.print("[yellow]interrupted (SIGINT); TLC was stopped[/yellow]")
        raise click.exceptions.Exit(128 + signal.SIGINT) from None
    except TlcInterrupted as exc:
        console.print(f"[yellow]interrupted: {exc}[/yellow]")
        raise click.exceptions.Exit(exc.exit_code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _status_line(console: Console) -> Iterator[Callable[[str], None]]:
    """A spinner with one status line (``TLC: starting`` until the first call) and the elapsed time, for a run
    that Ctrl-C or SIGTERM stop (``_interruptible``); yields the function that sets the line.

    Written to a file or a pipe (a run of hours under ``nohup``, a CI log), where a spinner shows nothing until
    the end, each new status is a line of its own with the time elapsed (TLC reports its progress every minute)."""
    if not console.is_terminal:
        started = time.monotonic()
        last: list[str] = []

        def log(line: str) -> None:
            if last != [line]:
                last[:] = [line]
                elapsed = int(time.monotonic() - started)
                stamp = f"{elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}"
                console.print(f"{stamp} {line}", highlight=False, markup=False, soft_wrap=True)

        with _interruptible(console):
            yield log
        return
    with (
        _interruptible(console),
        Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console
        ) as bar,
    ):
        task = bar.add_task("TLC: starting", total=None)
        yield lambda line: bar.update(task, description=line)


def _tlc_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """TLC's run: ``--workers``, ``--heap`` and ``--timeout`` (``tla check`` and ``tla crosscheck``)."""
    for opt in reversed(
        (
            click.option(
                "--workers", type=int, default=1, show_default=True, help="TLC worker threads (0 = auto)."
            ),
            click.option("--heap", "heap_mb", type=int, default=None, help="JVM heap in MiB."),
            click.option(
                "--timeout", "timeout_s", type=float, default=None, help="Stop TLC after this many seconds."
            ),
        )
    ):
        fn = opt(fn)
    return fn


def _model_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return _model_options_with(ModelConfig())(fn)


def _model_options_with(d: ModelConfig) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The model's options with ``d``'s values as their defaults."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        return _apply_model_options(fn, d)

    return deco


def _apply_model_options(fn: Callable[..., Any], d: ModelConfig) -> Callable[..., Any]:
    opts = [
        options.profile(),
        *(
            click.option(name, type=int, default=default, show_default=True, help=text)
            for name, default, text in (
                ("--brokers", d.brokers, "Broker ids 0..B-1."),
                ("--topics", d.topics, "Topics t0..t(T-1)."),
                ("--partitions", d.partitions, "Partitions per topic."),
                ("--rf", d.rf, "Replication factor of created topics."),
                ("--max-controller-epoch", d.max_controller_epoch, "State bound."),
                ("--max-leader-epoch", d.max_leader_epoch, "State bound."),
                ("--max-zxid", d.max_zxid, "State bound (broker epochs)."),
                ("--max-zk-version", d.max_zk_version, "State bound (a partition znode's version)."),
                (
                    "--max-queued-requests",
                    d.max_queued_requests,
                    "Model bound: admin elections that may wait in the controller's event queue (0: none).",
                ),
            )
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _config(kw: dict[str, Any]) -> ModelConfig:
    try:
        return ModelConfig(
            brokers=kw["brokers"],
            topics=kw["topics"],
            partitions=kw["partitions"],
            rf=kw["rf"],
            max_controller_epoch=kw["max_controller_epoch"],
            max_leader_epoch=kw["max_leader_epoch"],
            max_zxid=kw["max_zxid"],
            max_zk_version=kw["max_zk_version"],
            max_queued_requests=kw["max_queued_requests"],
        )
    except ValueError as exc:
        options.fail(str(exc))


def _generate(kw: dict[str, Any]) -> GeneratedModule:
    config = _config(kw)
    try:
        return generate(profiles.get_profile(kw["profile"]), config)
    except ModuleError as exc:
        options.fail(f"cannot generate the TLA+ module: {exc}")


def _write(module: GeneratedModule, out: Path) -> tuple[Path, ...]:
    """Write the module's files; every path written, the .tla first."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / f"{module.name}.tla": module.tla,
        out / f"{module.name}.cfg": module.cfg,
        # the liveness PROPERTYs under FairSpec: java ... tlc2.TLC -config <Module>_liveness.cfg <Module>
        out / f"{module.name}_liveness.cfg": module.liveness_cfg,
        out / f"{module.name}.map.json": module.source_map_json(),
    }
    for path, content in files.items():
        path.write_text(content, encoding="utf-8")
    return tuple(files)


@click.group(name="tla")
def command() -> None:
    """The spec as TLA+: export the module, check it with TLC, read TLC's output.

    \b
    Examples:
      kcspec tla export --brokers 3 --partitions 2 --out build/tla
      TLA2TOOLS_JAR=~/tla2tools.jar kcspec tla check --brokers 2 --timeout 600
      kcspec tla parse-output tlc.log
    """


@command.command(name="export")
@_model_options
@options.out_dir(default="tla", help="Folder for <Module>.tla, .cfg, _liveness.cfg and .map.json.")
def export(out: Path, **kw: Any) -> None:
    """Write the TLA+ module and TLC configuration of one model, and check the module's syntax.

    \b
    Example:
      kcspec tla export --profile kafka-1.1 --brokers 3 --topics 1 --partitions 2 --rf 2 --out build/tla
    """
    module = _generate(kw)
    written = _write(module, out)
    path = written[0]
    console = Console()
    # every file written is listed, then the syntax check's result (also when it is skipped or finds problems:
    # the files are written either way, for reading the problems in place)
    console.print(f"wrote {path} ({len(module.tla.splitlines())} lines)", highlight=False, soft_wrap=True)
    for other in written[1:]:
        console.print(f"wrote {other}", highlight=False, soft_wrap=True)
    try:
        problems = check_syntax(module.tla)
    except SyntaxCheckUnavailable as exc:
        console.print(
            f"[yellow]syntax check skipped (and SANY's semantic rules with it):[/yellow] {escape(str(exc))}"
        )
        return
    if problems:
        for p in problems:
            origin = module.origin(p.line)
            where = f" [{origin.definition}; {origin.rule or '-'}]" if origin else ""
            console.print(f"[red]{escape(f'{path}:{p}')}[/red]{escape(where)}", highlight=False)
        console.print(f"[red]syntax check (tree-sitter): {len(problems)} problem(s)[/red]")
        raise click.exceptions.Exit(EXIT_USAGE)
    console.print(
        "syntax check (tree-sitter): the module parses; SANY's semantic rules hold (names, arities, .cfg)"
    )


@command.command(name="modules")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Exit 1 when a committed module is stale, missing or left over.",
)
@click.option(
    "--out",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    callback=options.output_dir,
    help="Folder of the committed modules (default: docs/tla of this checkout).",
)
def modules(check_only: bool, folder: Path | None) -> None:
    """Write (or --check) the TLA+ modules of the manifest's models (model/tla/state_counts.json), committed so
    that a rule change shows its TLA+ diff in review.

    \b
    Examples:
      kcspec tla modules            rewrite docs/tla/<model>/ from the spec
      kcspec tla modules --check    exit 1 if a committed module is stale
    """
    from kcspec.model.tla import committed

    target = committed.MODULES if folder is None else folder
    if folder is None and not (committed.ROOT / "pyproject.toml").is_file():
        # an installed package: there is no checkout whose docs/tla to rewrite
        options.fail(f"{committed.ROOT} is not a checkout of kcspec; give --out FOLDER")
    if check_only and not target.is_dir():
        options.fail(f"{target} does not exist (run 'kcspec tla modules' first)")
    try:
        want = committed.expected_files()
    except ModuleError as exc:
        options.fail(f"cannot generate the TLA+ modules: {exc}")
    if check_only:
        result = committed.check(target, want)
        if not result.up_to_date:
            click.echo(
                f"{target}: the committed TLA+ modules differ from the spec; regenerate with 'kcspec tla modules'"
            )
            for line in result.lines():
                click.echo(f"  {line}")
            raise click.exceptions.Exit(EXIT_VIOLATION)
        click.echo(f"TLA+ modules up to date: {result.checked} file(s) in {target} match the spec")
        return
    changed = committed.write(target, want)
    click.echo(f"{len(changed)} file(s) written or removed in {target} ({len(want)} expected)")
    for path in changed:
        click.echo(f"  {path}")


def _origins(path: Path) -> list[list[str | None]] | None:
    mapping = path.with_suffix(".map.json")
    if not mapping.is_file():
        return None
    try:
        data = json.loads(mapping.read_text(encoding="utf-8"))
        lines: list[list[str | None]] = data["lines"]
        return lines
    except (json.JSONDecodeError, KeyError, TypeError):
        return None


def _print_report(report: TlcReport, origins: list[list[str | None]] | None, console: Console) -> None:
    t = Table(title=escape(report.version) if report.version else "TLC")
    t.add_column("outcome")
    t.add_column("states generated", justify="right")
    t.add_column("distinct states", justify="right")
    t.add_column("depth", justify="right")
    t.add_column("time", justify="right")
    st = report.stats
    t.add_row(
        report.outcome.value + (f": {report.violated}" if report.violated else ""),
        _n(st.generated),
        _n(st.distinct),
        _n(st.depth),
        f"{st.duration_ms / 1000:.1f} s" if st.duration_ms is not None else "-",
    )
    console.print(t)
    for err in report.source_errors:
        console.print(f"[red]{_where(err, origins)}[/red]", highlight=False)
    if report.error and report.outcome is not Outcome.OK:
        console.print(report.error, highlight=False, markup=False)
    if report.depth_bounded and report.outcome is Outcome.OK:
        console.print(
            "depth-bounded search (--depth): no error within the bound; states beyond it were not checked",
            highlight=False,
            markup=False,
        )
    for s in report.trace:
        label = "initial state" if s.action is None else _action_label(s.action, origins)
        console.print(f"  state {s.number}: {label}", highlight=False)


_LINE = re.compile(r"line (\d+)")


def _action_label(action: TlcAction, origins: list[list[str | None]] | None) -> str:
    """A step's action as TLC names it, with the action a ``Next`` label stands for (the entry of ``Next`` on the
    line TLC gives, from the module's line map)."""
    m = _LINE.match(action.location)
    if action.name != NEXT_LABEL or m is None or origins is None or not 1 <= int(m.group(1)) <= len(origins):
        return action.name
    rule = origins[int(m.group(1)) - 1][1]
    return f"{action.name} ({rule.split(' (')[0]})" if rule else action.name


def _where(err: SourceError, origins: list[list[str | None]] | None) -> str:
    text = f"{err.module}.tla line {err.line}, column {err.column}: {err.message}"
    if origins is not None and 1 <= err.line <= len(origins):
        definition, rule = origins[err.line - 1]
        text += f"  (generated for {definition}" + (f", rule {rule}" if rule else "") + ")"
    return text


def _n(v: int | None) -> str:
    return f"{v:,}" if v is not None else "-"


def _exit_code(outcome: Outcome) -> int:
    if outcome is Outcome.OK:
        return EXIT_OK
    if outcome in (Outcome.INVARIANT_VIOLATED, Outcome.PROPERTY_VIOLATED, Outcome.DEADLOCK):
        return EXIT_VIOLATION
    return EXIT_USAGE


@command.command(name="check")
@_model_options
@click.option(
    "--module",
    "module_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Check this .tla file (with its .cfg) instead of generating one.",
)
@options.tla2tools()
@_tlc_options
@click.option(
    "--depth", type=int, default=None, help="Bound the search depth (depth-first iterative deepening)."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="TLC's random seed and fingerprint polynomial (seed mod 131): with one worker the same seed gives the "
    "same run, and the same lasso under --liveness.",
)
@click.option(
    "--liveness",
    is_flag=True,
    help="Check the liveness properties under the controller's fairness (<Module>_liveness.cfg) instead of the "
    "invariants.",
)
@options.out_dir(default="tla-check", help="Folder for the module, TLC's raw output and the counterexample.")
@click.option(
    "--checkpoint",
    "checkpoint_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    callback=options.output_dir,
    help="Let TLC checkpoint its search in this folder (a folder without a checkpoint), so that a run stopped by "
    "--timeout, Ctrl-C or a kill continues with --resume.",
)
@click.option(
    "--checkpoint-minutes",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"Minutes between TLC's checkpoints (default {resumable.DEFAULT_MINUTES:g}; TLC takes one at its next "
    "progress report, about every minute).",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Continue the run checkpointed in this folder (same options), checkpointing there.",
)
def check(
    module_path: Path | None,
    tla2tools: str | None,
    workers: int,
    heap_mb: int | None,
    depth: int | None,
    seed: int,
    liveness: bool,
    timeout_s: float | None,
    out: Path,
    checkpoint_dir: Path | None,
    checkpoint_minutes: float | None,
    resume_dir: Path | None,
    **kw: Any,
) -> None:
    """Model-check the spec's TLA+ module with TLC (run as a subprocess).

    With --liveness, TLC checks LeaderEventuallyElected, ReassignmentEventuallyCompletes and
    DeletionEventuallyCompletes under weak fairness of the controller's own actions (model/tla/liveness.py);
    a counterexample is a lasso, written as a kcspec trace with the properties it violates and whether Kafka is
    known not to satisfy them there (§12).

    With --checkpoint DIR, TLC checkpoints its search in DIR; a run stopped by --timeout (TLC then takes a last
    checkpoint), Ctrl-C or a kill continues with --resume DIR and the same options, as often as needed
    (model/tlc/checkpoint.py).

    \b
    Examples:
      TLA2TOOLS_JAR=/opt/tla2tools.jar kcspec tla check --brokers 2 --partitions 1 --workers 2 --timeout 900
      kcspec tla check --brokers 3 --max-zxid 4 --checkpoint run3 --timeout 3600   (later: --resume run3)
      kcspec tla check --liveness --brokers 1 --rf 1 --max-zxid 2 --max-controller-epoch 1 --max-leader-epoch 1 \\
          --max-zk-version 0
    """
    console = Console()
    if checkpoint_dir is not None and resume_dir is not None:
        options.fail("--checkpoint and --resume: give one (--resume DIR continues the run in DIR)")
    if checkpoint_minutes is not None and checkpoint_dir is None and resume_dir is None:
        options.fail("--checkpoint-minutes: give it with --checkpoint DIR or --resume DIR")
    try:
        tools = find_toolchain(Path(tla2tools) if tla2tools else None)
    except ToolNotFound as exc:
        options.fail(str(exc))
    module: GeneratedModule | None = None
    if module_path is None:
        module = _generate(kw)
        module_path = _write(module, out)[0]
    elif not module_path.is_file() or not module_path.with_suffix(".cfg").is_file():
        options.fail(f"--module {module_path}: the .tla file and its .cfg beside it must both exist")
    config_path = module_path.with_suffix(".cfg")
    if liveness:
        config_path = module_path.with_name(f"{module_path.stem}_liveness.cfg")
        if not config_path.is_file():
            options.fail(
                f"--liveness: {config_path} (the liveness configuration beside the module) does not exist"
            )
    try:
        args = TlcArgs(
            module=module_path,
            config=config_path,
            workers=workers,
            heap_mb=heap_mb,
            depth=depth,
            timeout_s=timeout_s,
            dump_trace_json=out / "trace.tlc.json",
            seed=seed,
            liveness_at_end=liveness,
        )
    except ValueError as exc:
        options.fail(f"--seed: {exc}" if "seed" in str(exc) else str(exc))
    out.mkdir(parents=True, exist_ok=True)
    console.print(tools.describe(), highlight=False, markup=False, soft_wrap=True)
    run_opts = resumable.run_options(
        kw,
        liveness=liveness,
        seed=seed,
        depth=depth,
        workers=workers,
        module="generated" if module is not None else module_path.name,
    )
    sitting = resumable.begin(checkpoint_dir, resume_dir, run_opts, module_path, config_path, console)
    if sitting is not None:
        args = resumable.tlc_args(args, sitting, checkpoint_minutes or resumable.DEFAULT_MINUTES)

    repeat = (
        "repeats this run" if args.workers == 1 else "repeats TLC's choices (the workers' order still varies)"
    )
    console.print(
        f"seed {args.seed} (fingerprint polynomial {args.fingerprint}): --seed {args.seed} {repeat}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    with _status_line(console) as say:

        def progress(stats: Stats) -> None:
            say(f"TLC: {_n(stats.distinct)} distinct states, depth {_n(stats.depth)}")

        try:
            result = run_tlc(args, tools, on_progress=progress)
        except BaseException:
            if sitting is not None:
                resumable.end(sitting, None, "", console)
            raise
    (out / "tlc-output.txt").write_text(result.raw_output, encoding="utf-8")
    _print_report(result.report, _origins(module_path), console)
    if sitting is not None:
        resumable.end(sitting, result.report, result.raw_output, console)
    if result.outcome in (Outcome.INVARIANT_VIOLATED, Outcome.DEADLOCK):
        _write_counterexample(result, kw["profile"], _config(kw), out, console)
    if result.outcome is Outcome.PROPERTY_VIOLATED:
        _write_lasso(result, kw["profile"], _config(kw), out, console)
    raise click.exceptions.Exit(_exit_code(result.outcome))


def _write_lasso(result: TlcResult, profile: str, config: ModelConfig, out: Path, console: Console) -> None:
    """A liveness counterexample: the properties it violates (TLC names none), each with the §12 gap that
    explains it if Kafka is known not to make progress there, and the lasso as a kcspec trace."""
    from kcspec.model.tla.liveness_report import LivenessError, read_lasso

    try:
        found = read_lasso(result.raw_output, profile, config)
    except LivenessError as exc:
        console.print(
            f"[yellow]the lasso could not be translated to a kcspec trace:[/yellow] {escape(str(exc))}"
        )
        return
    for line in found.summary_lines():
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    path = out / "counterexample.json"
    path.write_text(found.lasso.trace.to_json(), encoding="utf-8")
    console.print(
        f"lasso ({len(found.lasso.trace.steps)} events, {found.shape}) written to {path}",
        highlight=False,
        markup=False,
    )


def _write_counterexample(
    result: TlcResult, profile: str, config: ModelConfig, out: Path, console: Console
) -> None:
    """The counterexample as a kcspec trace (``kcspec conformance replay`` replays it). Each step's event is
    recovered by matching TLC's states against the model's event instances, so the model options must describe
    the model TLC checked (with ``--module``, the module's own model)."""
    from kcspec.model.tla.counterexample import CounterexampleError, to_trace

    note = f"TLC: {result.outcome.value}" + (f" ({result.report.violated})" if result.report.violated else "")
    try:
        trace = to_trace(result.trace, profile, note=note, config=config)
    except CounterexampleError as exc:
        console.print(
            f"[yellow]the counterexample could not be translated to a kcspec trace:[/yellow] {escape(str(exc))}"
        )
        return
    path = out / "counterexample.json"
    path.write_text(trace.to_json(), encoding="utf-8")
    console.print(f"counterexample ({len(trace.steps)} events) written to {path}")


@command.command(name="crosscheck")
@_model_options_with(CROSSCHECK_DEFAULT)
@options.tla2tools()
@_tlc_options
@click.option(
    "--max-states",
    type=int,
    default=1_000_000,
    show_default=True,
    help="Stop the explorer (and report it) beyond this many distinct states.",
)
@click.option(
    "--samples", type=int, default=3, show_default=True, help="States reachable on one side only to print."
)
@click.option(
    "--explorer-workers",
    type=int,
    default=None,
    help="Explorer processes (--workers is TLC's threads). Two or more run at a lower priority than TLC (nice +5), "
    "so TLC keeps its core and they share the rest.  [default: the machine's cores, at most 2]",
)
@click.option(
    "--lockstep",
    is_flag=True,
    help="Also step the spec beside the reference controller and compare every transition (kcspec explore's "
    "refinement check; about 1.5x the explorer's time). Without it the explorer runs the reference controller "
    "alone: TLC on the module generated from the spec is the other side.",
)
@options.report_file("--json", "json_out", help="Write the comparison as JSON.")
def crosscheck(
    tla2tools: str | None,
    workers: int,
    heap_mb: int | None,
    timeout_s: float | None,
    max_states: int,
    samples: int,
    explorer_workers: int | None,
    lockstep: bool,
    json_out: Path | None,
    **kw: Any,
) -> None:
    """Compare TLC's state space of the generated module with the explorer's on the reference controller.

    The default model is two brokers, replication factor 2, bounds 1/1/3/0 (model/tla/config.py
    CROSSCHECK_DEFAULT), which both sides bring to the fixed point in minutes. Same model on both sides: the
    empty cluster, every action with every parameter value of the model's
    domains, the model's bounds, no symmetry, no depth bound. Exit code 0 when the distinct-state counts and
    the sets of states are equal, 1 when they differ (states reachable in one and not the other are printed)
    or either side found a violation, 2 when TLC or Java is missing, TLC failed or the explorer reached
    --max-states. The explorer keeps a fingerprint per state (its level files on disk), as `kcspec explore`
    does, so the comparison is bounded by time, not memory.

    \b
    Example:
      TLA2TOOLS_JAR=/opt/tla2tools.jar kcspec tla crosscheck --profile kafka-2.8 --brokers 1 --rf 1 \\
          --max-controller-epoch 1 --max-leader-epoch 1 --max-zk-version 1 --max-zxid 2
    """
    from kcspec.conformance.selfcheck.tla_crosscheck import (
        CrosscheckArgs,
        CrosscheckError,
        default_explorer_workers,
        run_crosscheck,
    )

    config = _config(kw)
    try:
        args = CrosscheckArgs(
            kw["profile"],
            config,
            workers,
            heap_mb,
            timeout_s,
            max_states=max_states,
            samples=samples,
            explorer_workers=default_explorer_workers() if explorer_workers is None else explorer_workers,
            lockstep=lockstep,
        )
    except ValueError as exc:
        options.fail(str(exc))
    try:
        tools = find_toolchain(Path(tla2tools) if tla2tools else None)
    except ToolNotFound as exc:
        options.fail(str(exc))
    console = Console()
    console.print(tools.describe(), highlight=False, markup=False, soft_wrap=True)
    with _status_line(console) as say:

        def tlc_progress(stats: Stats) -> None:
            say(f"TLC: {_n(stats.distinct)} distinct states")

        def explore_progress(stats: Any) -> None:
            say(f"explorer: {stats.distinct_states:,} distinct states")

        try:
            result = run_crosscheck(
                args, tools, on_tlc_progress=tlc_progress, on_explore_progress=explore_progress
            )
        except (CrosscheckError, ModuleError) as exc:
            options.fail(str(exc))
    _print_crosscheck(result, console)
    if json_out is not None:
        # what the explorer side ran: the reference controller alone, or the spec beside it (--lockstep)
        write_document(json_out, {**_crosscheck_json(result), "lockstep": lockstep})
    raise click.exceptions.Exit(result.exit_code)


def _print_crosscheck(result: CrosscheckResult, console: Console) -> None:
    from kcspec.spec import codec

    t = Table(title=f"crosscheck: {result.verdict.value}")
    t.add_column("")
    t.add_column("distinct states", justify="right")
    t.add_column("only here", justify="right")
    t.add_row("TLC (generated module)", _n(result.tlc_distinct), _n(result.only_tlc))
    t.add_row("TLC's state dump", _n(result.dumped), "")
    t.add_row("explorer (reference controller)", _n(result.explorer_distinct), _n(result.only_explorer))
    console.print(t)
    console.print(result.message, highlight=False, markup=False)
    from kcspec.conformance.selfcheck.tla_crosscheck import CrosscheckOutcome

    if result.verdict is CrosscheckOutcome.TLC_FAILED:
        _print_report(result.tlc.report, None, console)
    for title, items in (
        ("reachable in TLC's model only", result.tlc_samples),
        ("reachable by the reference controller only", result.explorer_samples),
    ):
        for sample in items:
            console.print(f"[bold]{title}:[/bold]", highlight=False)
            if sample.path is not None:
                for i, ev in enumerate(sample.path, 1):
                    console.print(f"  {i}. {ev.kind} {codec.dumps(ev)}", highlight=False, markup=False)
            console.print("  state: " + codec.dumps(sample.state), highlight=False, markup=False)


def _crosscheck_json(result: CrosscheckResult) -> dict[str, Any]:
    from kcspec.spec import codec

    def sample(x: StateSample) -> dict[str, Any]:
        return {
            "state": json.loads(codec.dumps(x.state)),
            "events": None if x.path is None else [json.loads(codec.dumps(e)) for e in x.path],
        }

    return {
        "verdict": result.verdict.value,
        "message": result.message,
        "tlc": {
            "outcome": result.tlc.outcome.value,
            "distinct_states": result.tlc_distinct,
            "version": result.tlc.report.version,
        },
        "tlc_dumped_states": result.dumped,
        "explorer_distinct_states": result.explorer_distinct,
        "only_tlc": result.only_tlc,
        "only_explorer": result.only_explorer,
        "tlc_samples": [sample(x) for x in result.tlc_samples],
        "explorer_samples": [sample(x) for x in result.explorer_samples],
    }


@command.command(name="parse-output")
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--module",
    "module_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The checked .tla (its .map.json maps error lines back to the spec's rules).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def parse_output_cmd(output: Path, module_path: Path | None, as_json: bool) -> None:
    """Read a saved TLC transcript (-tool or plain mode) and summarise it; the exit code follows the outcome.

    \b
    Example:
      kcspec tla parse-output tla-check/tlc-output.txt --module tla-check/KafkaController_2_8_2.tla
    """
    try:
        text = output.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        options.fail(f"{output}: cannot read TLC output ({exc})")
    report = parse_output(text, module_path.stem if module_path else None)
    if as_json:
        st = report.stats
        click.echo(
            json.dumps(
                {
                    "outcome": report.outcome.value,
                    "violated": report.violated,
                    "version": report.version,
                    "states_generated": st.generated,
                    "distinct_states": st.distinct,
                    "depth": st.depth,
                    "depth_bounded": report.depth_bounded,
                    "states_left_on_queue": st.left_on_queue,
                    "duration_ms": st.duration_ms,
                    "error": report.error,
                    "trace_length": len(report.trace),
                    "source_errors": [[e.module, e.line, e.column, e.message] for e in report.source_errors],
                },
                indent=2,
            )
        )
    else:
        _print_report(report, _origins(module_path) if module_path else None, Console())
    raise click.exceptions.Exit(_exit_code(report.outcome))
