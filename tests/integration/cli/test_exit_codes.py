"""The exit-code contract of every leaf command, as a CI system sees it (DESIGN.md): 0 pass, 1 a violation or
divergence was found, 2 bad usage or bad input (with a message, never a traceback), 130 on Ctrl-C and 143 on
SIGTERM (never 0 or 1), with no process of the run left behind.

A "1" is produced the way a user meets it: a controller with a known historical bug planted (the bug zoo's
mutants) or the deliberately buggy example controller."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance import differential
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.examples.buggy_controller import BuggyController
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from rich.console import Console

from kcspec.cli import main
from tests.support.paths import ROOT
from tests.support.processes import alive, descendants, kcspec_process
from tests.support.timing import scaled

BUGGY = f"{sys.executable} {ROOT / 'conformance' / 'examples' / 'buggy_controller.py'}"
REFERENCE = f"{sys.executable} -m kcspec serve-reference"


def _leaf_commands() -> list[str]:
    import click

    names: list[str] = []

    ctx = click.Context(main)

    def walk(prefix: str, cmd: click.Command) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, f"kcspec {prefix} lists {name!r} but cannot load it"
                walk(f"{prefix} {name}".strip(), sub)
        else:
            names.append(prefix)

    walk("", main)
    return names


def invoke(args: list[str], mutant: str | None = None) -> tuple[int, str]:
    runner = CliRunner()
    with HISTORICAL_BY_NAME[mutant].active() if mutant else contextlib.nullcontext():
        result = runner.invoke(main, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"kcspec {' '.join(args)} raised instead of exiting: {result.exception!r}")
    return result.exit_code, result.output


@pytest.mark.parametrize("command", _leaf_commands())
def test_every_leaf_command_rejects_an_unknown_option_with_exit_2(command: str) -> None:
    code, out = invoke([*command.split(), "--no-such-option"])
    assert code == 2, f"kcspec {command} --no-such-option exited {code}:\n{out}"
    assert "No such option" in out


def test_the_table_below_covers_every_leaf_command() -> None:
    covered = {case[0] for case in CASES}
    missing = sorted(set(_leaf_commands()) - covered - {"serve-reference"})
    assert not missing, f"leaf commands whose 0/1/2 contract is not tested: {missing}"


def _msg(code: int, body: str, severity: int = 0) -> str:
    return f"@!@!@STARTMSG {code}:{severity} @!@!@\n{body}\n@!@!@ENDMSG {code} @!@!@\n"


# TLC's -tool transcripts (the message codes and texts of a real TLC 2026 run), cut to what a summary reads.
TLC_OK = (
    _msg(2262, "TLC2 Version 2026.04.29.170100 (rev: cc6b616)")
    + _msg(2193, "Model checking completed. No error has been found.")
    + _msg(2199, "280 states generated, 280 distinct states found, 0 states left on queue.")
    + _msg(2194, "The depth of the complete state graph search is 5.")
    + _msg(2186, "Finished in 1012ms at (2026-11-22 04:05:16)")
)
TLC_VIOLATION = (
    _msg(2262, "TLC2 Version 2026.04.29.170100 (rev: cc6b616)")
    + _msg(2110, "Invariant EpochSmall is violated.", 1)
    + _msg(2121, "The behavior up to this point is:", 1)
    + _msg(2217, "1: <Initial predicate>\n/\\ epoch = 0\n", 4)
    + _msg(2217, "2: <Elect line 14, col 16 to line 20, col 31 of module Toy>\n/\\ epoch = 1\n", 4)
    + _msg(2199, "8 states generated, 8 distinct states found, 5 states left on queue.")
    + _msg(2186, "Finished in 682ms at (2026-11-22 04:05:18)")
)


def _replay_trace(tmp: Path) -> Path:
    """A real counterexample trace: a divergence of the buggy example found by differential testing (in this
    process: ``conformance run --sut BUGGY`` with its exit code 1 is a case of the table, and the command would
    first run every vector of the controller level through the subprocess)."""
    outcomes, notes = differential.run_differential(
        InProcessAdapter(BuggyController()),
        profile="kafka-2.8",
        examples=100,
        seed=0,
        trace_dir=tmp / "traces",
        console=Console(file=io.StringIO()),
    )
    traces = sorted((tmp / "traces").glob("*.json"))
    assert traces, f"no trace written: {outcomes} {notes}"
    return traces[0]


@pytest.fixture(scope="module")
def replay_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One trace for the replay cases (finding it runs a differential campaign: seconds)."""
    return _replay_trace(tmp_path_factory.mktemp("replay"))


# (command, arguments after it, expected exit code, planted bug or None). "{tmp}" is a fresh folder.
CASES: list[tuple[str, list[str], int, str | None]] = [
    ("spec show", ["--profile", "kafka-1.1"], 0, None),
    ("spec show", ["--profile", "kafka-9"], 2, None),
    ("spec show", ["--rule", "no-such-rule"], 2, None),
    ("spec rules", ["--check", "--out", "{tmp}/missing.md"], 2, None),
    ("spec dump", ["--profile", "kafka-1.1", "--out", "{tmp}/dump.txt"], 0, None),
    ("spec dump", ["--profile", "kafka-9"], 2, None),
    ("verify", ["--check", "spec-vs-reference", "--profile", "kafka-2.8", "--out", "{tmp}"], 0, None),
    ("verify", ["--check", "spec-vs-reference", "--profile", "kafka-2.8", "--out", "{tmp}"], 1, "kafka-1503"),
    ("verify", ["--check", "no-such-check"], 2, None),
    ("explore", ["--brokers", "2", "--rf", "2", "--depth", "2", "--out", "{tmp}"], 0, None),
    ("explore", ["--brokers", "3", "--rf", "3", "--depth", "3", "--out", "{tmp}"], 1, "kafka-1503"),
    ("explore", ["--brokers", "0", "--out", "{tmp}"], 2, None),
    (
        "fuzz",
        [
            "--profile",
            "kafka-2.8",
            "--budget",
            "3s",
            "--seed",
            "1",
            "--out",
            "{tmp}",
            "--database",
            "{tmp}/db",
        ],
        0,
        None,
    ),
    ("fuzz", ["--budget", "ninety", "--out", "{tmp}"], 2, None),
    (
        "simulate",
        ["--emit-logs", "{tmp}/logs", "--brokers", "2", "--rf", "2", "--events", "5", "--seed", "1"],
        0,
        None,
    ),
    ("simulate", ["--inject", "no-such-bug", "--emit-logs", "{tmp}/logs"], 2, None),
    ("audit", ["{tmp}/does-not-exist"], 2, None),
    ("audit", ["{tmp}", "--format", "yaml"], 2, None),
    ("conformance run", ["--sut", REFERENCE, "--level", "elections"], 0, None),
    ("conformance run", ["--sut", BUGGY, "--level", "elections", "--trace-dir", "{tmp}"], 1, None),
    ("conformance run", ["--level", "elections"], 2, None),
    ("conformance export", ["{tmp}/vectors", "--profile", "kafka-1.1"], 0, None),
    ("conformance export", ["{tmp}/vectors", "--profile", "kafka-0"], 2, None),
    ("conformance example-sut", ["--command"], 0, None),
    ("conformance example-sut", ["no-such-example"], 2, None),
    ("conformance replay", ["{trace}", "--sut", REFERENCE], 0, None),
    ("conformance replay", ["{trace}", "--sut", BUGGY], 1, None),
    ("conformance replay", ["{tmp}/missing.json", "--sut", REFERENCE], 2, None),
    ("tla export", ["--brokers", "1", "--rf", "1", "--out", "{tmp}"], 0, None),
    ("tla export", ["--brokers", "-1", "--out", "{tmp}"], 2, None),
    ("tla modules", ["--check", "--out", "{tmp}/none"], 2, None),
    ("tla check", ["--tla2tools", "{tmp}/missing.jar", "--out", "{tmp}"], 2, None),
    ("tla crosscheck", ["--tla2tools", "{tmp}/missing.jar", "--out", "{tmp}"], 2, None),
    ("diagrams", ["--out", "{tmp}", "--format", "dot"], 0, None),
    ("diagrams", ["--format", "gif"], 2, None),
    ("bugzoo", ["--mutant", "no-such-mutant"], 2, None),
    ("tla parse-output", ["{tmp}/ok.txt"], 0, None),
    ("tla parse-output", ["{tmp}/violation.txt"], 1, None),
    ("tla parse-output", ["{tmp}/missing.txt"], 2, None),
    ("prove", ["--brokers", "0"], 2, None),
]


@pytest.mark.parametrize(
    ("command", "args", "expected", "mutant"),
    CASES,
    ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)],
)
def test_exit_code(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    command: str,
    args: list[str],
    expected: int,
    mutant: str | None,
) -> None:
    trace = request.getfixturevalue("replay_trace") if "{trace}" in args else None
    (tmp_path / "ok.txt").write_text(TLC_OK)
    (tmp_path / "violation.txt").write_text(TLC_VIOLATION)
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{trace}", str(trace)) for a in args]
    code, out = invoke([*command.split(), *argv], mutant)
    planted = f" with {mutant} planted" if mutant else ""
    assert code == expected, (
        f"kcspec {command} {' '.join(argv)}{planted}: exit {code}, expected {expected}\n{out}"
    )
    if expected == 2:
        assert "Traceback" not in out, out


# ----------------------------------------------------------------------------------------------- interrupts


def _started(args: list[str]) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    return kcspec_process(args)


def _wait_for_workers(proc: subprocess.Popen[bytes], count: int, limit: float) -> list[int]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            assert proc.stderr is not None  # kcspec_process pipes stderr
            raise AssertionError(
                f"kcspec ended before it was interrupted: {proc.stderr.read().decode()[-2000:]}"
            )
        procs = [p for p in descendants(proc.pid) if alive(p)]
        if len(procs) >= count:
            return procs
        time.sleep(0.2)
    raise AssertionError(f"kcspec did not start {count} worker processes within {limit} s")


def _interrupt(proc: subprocess.Popen[bytes], sig: signal.Signals) -> tuple[int, float, str]:
    start = time.monotonic()
    if sig is signal.SIGINT:
        os.killpg(proc.pid, sig)  # as a terminal does: the whole foreground process group
    else:
        os.kill(proc.pid, sig)  # as a service manager does: the main process only
    try:
        _, err = proc.communicate(timeout=scaled(30))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"kcspec did not stop within 30 s of {sig.name}") from None
    return proc.returncode, time.monotonic() - start, err.decode()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_prove_stops_within_two_seconds_and_leaves_no_worker(sig: signal.Signals) -> None:
    with _started(["prove", "--profile", "kafka-2.8"]) as proc:
        workers = _wait_for_workers(proc, 3, limit=120)  # the resource tracker and two Z3 worker processes
        time.sleep(1.0)  # well inside a Z3 query
        code, seconds, err = _interrupt(proc, sig)
        assert code == 128 + sig, f"exit {code} after {sig.name}:\n{err[-2000:]}"
        assert seconds <= 2.0, f"kcspec prove took {seconds:.1f} s to stop after {sig.name}"
        deadline = time.monotonic() + scaled(3)
        while time.monotonic() < deadline and any(alive(p) for p in workers):
            time.sleep(0.1)
        left = [p for p in workers if alive(p)]
        assert not left, f"worker processes left running after {sig.name}: {left}"
        assert "Traceback" not in err, err[-2000:]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_long_exploration_interrupted_exits_130_or_143(tmp_path: Path, sig: signal.Signals) -> None:
    with _started(["explore", "--brokers", "3", "--rf", "3", "--depth", "8", "--out", str(tmp_path)]) as proc:
        time.sleep(4.0)
        assert proc.poll() is None, "the exploration ended before it could be interrupted"
        code, _, err = _interrupt(proc, sig)
        assert code == 128 + sig, f"exit {code} after {sig.name}:\n{err[-2000:]}"
        assert "Traceback" not in err, err[-2000:]


def test_an_internal_error_exits_3_with_its_traceback_never_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in kcspec must not read as a verdict: Python would end an uncaught exception with 1."""
    import kcspec.commands.spec_show as spec_show

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug planted by the test")

    monkeypatch.setattr(spec_show.show, "callback", broken)
    result = CliRunner().invoke(main, ["spec", "show"])
    assert result.exit_code == 3, result.output
    assert "internal error: ZeroDivisionError: a bug planted by the test" in result.output
    assert "Traceback" in result.output
