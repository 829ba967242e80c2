"""The benchmarks' one runner: what each measures, run it at full size or as a smoke test, and keep its dated log.

Every benchmark is declared once in ``benchmarks/manifest.toml`` (its script, metric, configuration, target, the
arguments of its full run and of its smallest run, its results log); the scripts that are not benchmarks are
declared there as helpers.

    .venv/bin/python benchmarks/run.py list                   # name, metric, target, last figure and its date
    .venv/bin/python benchmarks/run.py run NAME [ARGS…]       # the full run (ARGS are added to the manifest's)
    .venv/bin/python benchmarks/run.py smoke [NAME…]          # the smallest run of each named one (or all)
    .venv/bin/python benchmarks/run.py check                  # the manifest against the scripts in benchmarks/

``run`` prints the machine header (``harness.py``: date, git revision and whether the tree is dirty, CPU, Python
build, calibration, load average), runs the script, prints the load average after it, and **appends** the entry —
header, command, exit status, wall and CPU seconds, the headline figure and the script's whole output — to the
benchmark's results log (``log`` in the manifest, under ``benchmarks/results/``). A log keeps its prose at the top
(what people concluded); the runner's entries follow under "Runs recorded by benchmarks/run.py", **newest last**
(appending never rewrites what is there). Raw output a script writes (JSON dumps, progress logs) goes to
``benchmarks/raw/NAME/`` (``{out}`` in the manifest's arguments), which git ignores.

``smoke`` runs each benchmark at its smallest size in a temporary folder and writes nothing under ``benchmarks/``:
it checks that the script still runs (its exit status is one the manifest allows) and still prints its metric (the
manifest's ``figure`` pattern is found in its output). It exits 1 naming every benchmark that failed. Exit 2: a bad
manifest or an unknown name.

The headline figure of a run is the first group of the manifest's ``figure`` regular expression in the output (the
whole match when it has no group); ``list`` shows the newest logged one, or — for a benchmark not yet run through
the runner — the ``recorded`` figure the manifest quotes from its results file.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
RAW = HERE / "raw"
OUT_PLACEHOLDER = "{out}"
LOG_HEADING = "## Runs recorded by benchmarks/run.py (newest last)"
ENTRY = re.compile(r"^### (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC) · ", re.M)
FIGURE_LINE = re.compile(r"^- figure: (.*)$", re.M)
SMOKE_TIMEOUT = 900.0
"""Seconds a smoke run may take before it is stopped and counted as failed (a hung JVM, say). The slowest, on
the shared 2-core machine at load 15–21 (2026-11-28), took 201 s (explore_spark: Spark's start-up and its Python
workers compiling the spec) and all fifteen 871 s together; their own CPU time was 90 s."""


class ManifestError(Exception):
    """The manifest cannot be read or an entry is malformed; the message names the entry and the field."""


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as the manifest declares it."""

    name: str
    script: str
    metric: tuple[str, ...]
    configuration: str
    target: str
    args: tuple[str, ...]
    smoke: tuple[str, ...]
    smoke_exit: tuple[int, ...]
    log: str
    figure: str
    unit: str
    recorded: str
    recorded_on: str
    needs: tuple[str, ...]

    def command(self, out: Path, extra: Sequence[str] = (), smoke: bool = False) -> list[str]:
        """The command line: this interpreter, the script, the full or smoke arguments with ``{out}`` replaced
        by ``out``, then ``extra``."""
        args = [a.replace(OUT_PLACEHOLDER, str(out)) for a in (self.smoke if smoke else self.args)]
        return [sys.executable, str(HERE / self.script), *args, *extra]

    def headline(self, output: str) -> str | None:
        """The headline figure in ``output`` (``None``: the output does not name the metric)."""
        found = re.search(self.figure, output, re.M)
        if found is None:
            return None
        value = (found.group(1) if found.groups() else found.group(0)).strip()
        return f"{value} {self.unit}".strip()


@dataclass(frozen=True)
class Helper:
    """A script of ``benchmarks/`` that is not a benchmark, and what it is for."""

    script: str
    purpose: str


@dataclass(frozen=True)
class Manifest:
    benchmarks: tuple[Benchmark, ...]
    helpers: tuple[Helper, ...]

    def by_name(self, name: str) -> Benchmark:
        for b in self.benchmarks:
            if b.name == name:
                return b
        known = ", ".join(b.name for b in self.benchmarks)
        raise ManifestError(f"no benchmark named {name!r} in {MANIFEST.name} (known: {known})")


def _text(entry: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = entry.get(key, default)
    if value is None:
        raise ManifestError(f"{where}: missing field {key!r}")
    if not isinstance(value, str):
        raise ManifestError(f"{where}: field {key!r} must be a string, not {type(value).__name__}")
    return value


def _list(entry: dict[str, Any], key: str, kind: type, where: str, default: list[Any]) -> tuple[Any, ...]:
    value = entry.get(key, default)
    if not isinstance(value, list) or not all(type(v) is kind for v in value):
        raise ManifestError(f"{where}: field {key!r} must be a list of {kind.__name__}")
    return tuple(value)


def load_manifest(path: Path = MANIFEST) -> Manifest:
    """The manifest at ``path``, every field checked for presence and type."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path} is not valid TOML: {exc}") from exc
    benchmarks = []
    for i, entry in enumerate(data.get("benchmark", [])):
        where = f"{path.name}: [[benchmark]] #{i + 1} ({entry.get('name', 'unnamed')})"
        if isinstance(entry.get("metric"), str):
            entry = {**entry, "metric": [entry["metric"]]}
        bench = Benchmark(
            name=_text(entry, "name", where),
            script=_text(entry, "script", where),
            metric=_list(entry, "metric", str, where, []),
            configuration=_text(entry, "configuration", where),
            target=_text(entry, "target", where),
            args=_list(entry, "args", str, where, []),
            smoke=_list(entry, "smoke", str, where, []),
            smoke_exit=_list(entry, "smoke_exit", int, where, [0]),
            log=_text(entry, "log", where),
            figure=_text(entry, "figure", where),
            unit=_text(entry, "unit", where, ""),
            recorded=_text(entry, "recorded", where, ""),
            recorded_on=_text(entry, "recorded_on", where, ""),
            needs=_list(entry, "needs", str, where, []),
        )
        if not bench.metric:
            raise ManifestError(f"{where}: field 'metric' names no metric")
        try:
            re.compile(bench.figure)
        except re.error as exc:
            raise ManifestError(f"{where}: field 'figure' is not a regular expression: {exc}") from exc
        benchmarks.append(bench)
    helpers = []
    for i, entry in enumerate(data.get("helper", [])):
        where = f"{path.name}: [[helper]] #{i + 1} ({entry.get('script', 'unnamed')})"
        helpers.append(Helper(_text(entry, "script", where), _text(entry, "purpose", where)))
    return Manifest(tuple(benchmarks), tuple(helpers))


def problems(manifest: Manifest, folder: Path = HERE) -> list[str]:
    """What is wrong with ``manifest`` against the scripts in ``folder``: a name declared twice, a declared script
    that does not exist, a script that is neither a benchmark nor a helper, a log outside ``results/``."""
    found: list[str] = []
    names = [b.name for b in manifest.benchmarks]
    found += [
        f"benchmark {n!r} is declared {names.count(n)} times"
        for n in sorted(set(names))
        if names.count(n) > 1
    ]
    declared = [b.script for b in manifest.benchmarks] + [h.script for h in manifest.helpers]
    helpers = [h.script for h in manifest.helpers]
    found += [
        f"helper {s!r} is declared {helpers.count(s)} times"
        for s in sorted(set(helpers))
        if helpers.count(s) > 1
    ]
    found += [
        f"{s} is declared in the manifest but does not exist in {folder}"
        for s in declared
        if not (folder / s).is_file()
    ]
    found += [
        f"{p.name} is neither a benchmark nor a helper in {MANIFEST.name}"
        for p in sorted(folder.glob("*.py"))
        if p.name not in declared
    ]
    for b in manifest.benchmarks:
        if not b.log.startswith("results/") or not b.log.endswith(".md"):
            found.append(f"benchmark {b.name!r}: its log {b.log!r} is not a results/*.md file")
        if not b.smoke_exit:
            found.append(f"benchmark {b.name!r}: smoke_exit allows no exit status")
    return found


@dataclass(frozen=True)
class Outcome:
    """One run of a script: its exit status, output, wall and CPU seconds (its process tree, once ended)."""

    command: tuple[str, ...]
    returncode: int
    output: str
    wall: float
    cpu: float
    timed_out: bool


def _group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs. A zombie does not count: an orphan's zombie waits for an
    init that may never reap it (a container's first process often does not), and it holds nothing."""
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():  # no /proc: any member, zombies included
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def stop_group(proc: subprocess.Popen[str], grace: float = 5.0) -> None:
    """SIGTERM to ``proc``'s process group, SIGKILL to what is left of it after ``grace`` seconds (``proc`` is
    reaped meanwhile, and zombies do not count as left: ``_group_running``)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()
        if not _group_running(proc.pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def execute(
    command: Sequence[str], env: dict[str, str] | None, timeout: float | None, echo: bool = True
) -> Outcome:
    """Run ``command`` from the repository's root in a process group of its own, echoing its output as it comes.
    After ``timeout`` seconds the group is stopped; when the script ends, whatever it left running in its group
    (a JVM, a worker) is stopped too, so a benchmark leaves nothing behind."""
    cpu0, start = harness.children_cpu_seconds(), time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=harness.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    lines: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_group(proc)
        proc.wait()
    except BaseException:
        stop_group(proc, grace=1.0)
        proc.wait()
        raise
    stop_group(proc)
    reader.join(10.0)
    return Outcome(
        tuple(command),
        proc.returncode,
        "".join(lines),
        time.perf_counter() - start,
        harness.children_cpu_seconds() - cpu0,
        timed_out,
    )


def child_env(machine: harness.Machine) -> dict[str, str]:
    """The environment of a script the runner starts: the header printed, the calibration passed on."""
    return dict(
        os.environ,
        **{
            harness.RUNNER_ENV: "1",
            harness.CALIBRATION_ENV: repr(machine.calibration),
            "PYTHONUNBUFFERED": "1",
        },
    )


def print_header(machine: harness.Machine, what: str) -> None:
    print(what)
    for line in machine.lines():
        print(f"  {line}")
    print(flush=True)


def log_entry(bench: Benchmark, machine: harness.Machine, outcome: Outcome, load_after: harness.Load) -> str:
    """The results log's entry of one full run (Markdown)."""
    shown = shlex.join([".venv/bin/python", f"benchmarks/{bench.script}", *(outcome.command[2:])]).replace(
        str(harness.ROOT) + "/", ""
    )
    figure = bench.headline(outcome.output)
    status = "timed out" if outcome.timed_out else f"exit {outcome.returncode}"
    lines = [
        f"### {machine.started} · {bench.name} · {status}",
        "",
        f"    {shown}",
        "",
        *(f"- {line}" for line in machine.lines(load_after)),
        f"- wall {outcome.wall:.1f} s, CPU {outcome.cpu:.1f} s (the script and the processes it waited for)",
        f"- figure: {figure if figure is not None else 'not found in the output'}",
        f"- metric: {'; '.join(bench.metric)}",
        "",
        "```text",
        outcome.output.rstrip("\n").replace("```", "'''"),
        "```",
        "",
    ]
    return "\n".join(lines)


def append_entry(path: Path, entry: str, title: str) -> None:
    """Append ``entry`` to the log at ``path`` (created with ``title``), under the runner's heading."""
    text = path.read_text(encoding="utf-8") if path.exists() else f"# {title}\n"
    if LOG_HEADING not in text:
        text = text.rstrip("\n") + f"\n\n{LOG_HEADING}\n"
    path.write_text(text.rstrip("\n") + "\n\n" + entry, encoding="utf-8")


def last_logged(path: Path) -> tuple[str, str] | None:
    """The date and figure of the newest runner entry of the log at ``path``, if any."""
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    entries = list(ENTRY.finditer(text))
    if not entries:
        return None
    last = entries[-1]
    figure = FIGURE_LINE.search(text, last.end())
    return last.group(1), figure.group(1) if figure else "?"


def cmd_list(manifest: Manifest) -> int:
    rows = []
    for b in manifest.benchmarks:
        logged = last_logged(HERE / b.log)
        figure, date = (logged[1], logged[0]) if logged else (b.recorded or "—", b.recorded_on or "—")
        rows.append((b.name, "; ".join(b.metric), b.target, figure, date))
    print(harness.markdown_table(("name", "metric", "target", "last figure", "date"), rows))
    return 0


def cmd_run(manifest: Manifest, name: str, extra: Sequence[str]) -> int:
    bench = manifest.by_name(name)
    machine = harness.machine()
    out = RAW / bench.name
    out.mkdir(parents=True, exist_ok=True)
    command = bench.command(out, extra)
    print_header(machine, f"benchmark {bench.name}: {shlex.join(command)}")
    outcome = execute(command, child_env(machine), timeout=None)
    load_after = harness.load_average()
    print(f"\nload average after: {harness.format_load(load_after)}; exit {outcome.returncode}")
    log = HERE / bench.log
    append_entry(
        log, log_entry(bench, machine, outcome, load_after), f"{bench.name}: {'; '.join(bench.metric)}"
    )
    print(f"appended to {log.relative_to(harness.ROOT)}")
    return outcome.returncode


def cmd_smoke(manifest: Manifest, names: Sequence[str], timeout: float) -> int:
    chosen = [manifest.by_name(n) for n in names] if names else list(manifest.benchmarks)
    machine = harness.machine(calibrate_repeat=3)
    print_header(machine, f"smoke run of {len(chosen)} benchmark(s) at their smallest size")
    rows, failed = [], []
    with tempfile.TemporaryDirectory(prefix="kcspec-bench-smoke-") as tmp:
        for bench in chosen:
            out = Path(tmp) / bench.name
            out.mkdir()
            command = bench.command(out, smoke=True)
            print(f"== {bench.name}: {shlex.join(command)}", flush=True)
            outcome = execute(command, child_env(machine), timeout)
            figure = bench.headline(outcome.output)
            if outcome.timed_out:
                verdict = f"FAILED: stopped after {timeout:.0f} s"
            elif outcome.returncode not in bench.smoke_exit:
                allowed = " or ".join(map(str, bench.smoke_exit))
                verdict = f"FAILED: exit {outcome.returncode} (expected {allowed})"
            elif figure is None:
                verdict = f"FAILED: the output does not name its metric (pattern {bench.figure!r})"
            else:
                verdict = "ok"
            if verdict != "ok":
                failed.append(bench.name)
            rows.append((bench.name, verdict, f"{outcome.wall:.1f}", f"{outcome.cpu:.1f}", figure or "—"))
            print(f"== {bench.name}: {verdict} in {outcome.wall:.1f} s\n", flush=True)
    print(harness.markdown_table(("benchmark", "smoke run", "wall s", "CPU s", "figure"), rows, "llrr"))
    print(f"load average after: {harness.format_load()}")
    if failed:
        print(f"smoke run failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="every benchmark: metric, target, last figure and its date")
    run = sub.add_parser("run", help="run one benchmark at full size and append to its results log")
    run.add_argument("name")
    run.add_argument("extra", nargs=argparse.REMAINDER, help="arguments added to the manifest's")
    smoke = sub.add_parser("smoke", help="run benchmarks at their smallest size (all when none is named)")
    smoke.add_argument("names", nargs="*")
    smoke.add_argument("--timeout", type=float, default=SMOKE_TIMEOUT, help="seconds per benchmark")
    sub.add_parser("check", help="check the manifest against the scripts in benchmarks/")
    args = ap.parse_args(argv)
    try:
        manifest = load_manifest()
        if args.command == "list":
            return cmd_list(manifest)
        if args.command == "run":
            return cmd_run(manifest, args.name, args.extra)
        if args.command == "smoke":
            return cmd_smoke(manifest, args.names, args.timeout)
        found = problems(manifest)
        print("\n".join(found) if found else f"{MANIFEST.name}: {len(manifest.benchmarks)} benchmarks, fine")
        return 1 if found else 0
    except ManifestError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
