"""Run TLC hermetically: copy the module and its config into a fresh temporary folder, run ``tlc2.TLC -tool``
there with a wall-clock timeout, stream progress, and return a ``TlcResult`` that keeps the raw output.

TLC runs in a JVM that must never outlive the run: it is started in its own process group
(``start_new_session``), and the whole group is killed when the timeout passes, when this process receives
SIGINT (Ctrl-C) or SIGTERM while waiting, and whenever the wait ends by an exception. A signal is then
re-raised as ``TlcInterrupted`` carrying the exit status the command line must end with (130 for SIGINT,
143 for SIGTERM, the shell's 128 + signal number).

When this process dies without a chance to clean up (SIGKILL: the OOM killer, a CI runner's hard cancel), two
things still end the run: the JVM is started with ``PR_SET_PDEATHSIG`` = SIGKILL (Linux: the kernel kills it when
the thread that started it dies), and a watchdog — a tiny Python process in a session of its own, which a kill
of this process's group does not reach — polls this process; when it is gone, the watchdog kills TLC's group
and removes the run's temporary folders, then exits. A run that ends normally stops its watchdog.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from kcspec.model.orphans import start_watchdog, stop_watchdog
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.command import tlc_argv
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import PROGRESS, Outcome, Stats, TlcReport, parse_tool_output, split_messages
from kcspec.model.tlc.trace import TlcTraceState, TraceFormatError, load_json_trace


class TlcInterrupted(BaseException):
    """The run was stopped by a signal (TLC's process group has been killed); ``exit_code`` is 128 + signal.

    A ``BaseException``, as ``KeyboardInterrupt`` is: it is raised asynchronously, wherever the main thread is (in
    the explorer's generated code, during a crosscheck), and no ``except Exception`` on the way may take it for
    an error of the code it interrupted."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}; TLC's process group was killed")
        self.signum = signum
        self.exit_code = 128 + signum


@dataclass(frozen=True)
class TlcResult:
    """The outcome of one run: the parsed report, the process's exit code and the raw output."""

    report: TlcReport
    exit_code: int | None
    argv: tuple[str, ...]
    raw_output: str
    wall_s: float
    json_trace: tuple[TlcTraceState, ...] = ()

    @property
    def outcome(self) -> Outcome:
        return self.report.outcome

    @property
    def trace(self) -> tuple[TlcTraceState, ...]:
        """The counterexample: the JSON dump when TLC wrote one, else the states of the ``-tool`` output."""
        return self.json_trace or self.report.trace


ProgressCallback = Callable[[Stats], None]


def run_tlc(
    args: TlcArgs,
    tools: Toolchain,
    *,
    on_progress: ProgressCallback | None = None,
    extra_files: tuple[Path, ...] = (),
    remove_on_death: tuple[Path, ...] = (),
    stop: threading.Event | None = None,
) -> TlcResult:
    """Run TLC on ``args.module`` in a temporary folder (the caller's folders are never written).

    ``remove_on_death``: the caller's own temporary folders, removed by the watchdog with the run's folder if
    this process is killed during the run. ``stop``: set by another thread (TLC run from a thread of its own
    beside other work) to end the run; TLC's group is killed and the result's outcome is TLC's partial one."""
    with tempfile.TemporaryDirectory(prefix="kcspec-tlc-") as tmp:
        work = Path(tmp)
        shutil.copy(args.module, work / args.module.name)
        shutil.copy(args.config_path, work / args.config_path.name)
        for f in extra_files:
            shutil.copy(f, work / f.name)
        dump = work / "trace.json" if args.dump_trace_json is not None else None
        states = work / "states.dump" if args.dump_states is not None else None
        local = replace(
            args,
            module=work / args.module.name,
            config=work / args.config_path.name,
            dump_trace_json=dump,
            dump_states=states,
        )
        argv = tlc_argv(local, tools, metadir=str(work / "states"))
        raw, code, timed_out, wall = _execute(
            argv, work, args.timeout_s, on_progress, (work, *remove_on_death), stop
        )
        report = parse_tool_output(raw, args.module_name)
        if timed_out:
            report = replace(
                report, outcome=Outcome.TIMEOUT, error=f"TLC was stopped after {args.timeout_s:g} s"
            )
        json_trace: tuple[TlcTraceState, ...] = ()
        if dump is not None and dump.is_file():
            try:
                json_trace = load_json_trace(dump)
            except TraceFormatError as exc:
                report = replace(report, error=(report.error or "") + f"\nunreadable JSON trace: {exc}")
            if args.dump_trace_json is not None:
                shutil.copy(dump, args.dump_trace_json)
        if states is not None and args.dump_states is not None and states.is_file():
            shutil.copy(states, args.dump_states)
        return TlcResult(report, code, tuple(argv), raw, wall, json_trace)


def _execute(
    argv: list[str],
    cwd: Path,
    timeout_s: float | None,
    on_progress: ProgressCallback | None,
    folders: tuple[Path, ...] = (),
    stop: threading.Event | None = None,
) -> tuple[str, int | None, bool, float]:
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_die_with_parent(os.getpid()),
    )
    watchdog = start_watchdog(proc.pid, folders)
    lines: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        pending: list[str] = []
        for line in proc.stdout:
            lines.append(line)
            pending.append(line)
            if on_progress is not None and line.startswith("@!@!@ENDMSG"):
                for msg in split_messages("".join(pending)):
                    if msg.code == PROGRESS:
                        on_progress(parse_tool_output("".join(pending)).stats)
                pending = []

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    with _signals_raise():
        try:
            _wait(proc, timeout_s, stop)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # timeout, Ctrl-C, SIGTERM or any other exception: the JVM and its children go with us
            if proc.poll() is None:
                _kill_group(proc)
            stop_watchdog(watchdog)
    reader.join(timeout=10)
    return "".join(lines), proc.returncode, timed_out, time.monotonic() - start


def _wait(proc: subprocess.Popen[str], timeout_s: float | None, stop: threading.Event | None) -> None:
    """Wait for TLC to end, at most ``timeout_s`` (``TimeoutExpired``), or until ``stop`` is set."""
    if stop is None:
        proc.wait(timeout=timeout_s)
        return
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while not stop.is_set():
        step = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
        if step <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout_s or 0.0)
        try:
            proc.wait(timeout=step)
            return
        except subprocess.TimeoutExpired:
            continue


PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> Callable[[], None]:
    """Run in the child before ``exec``: ask the kernel for SIGKILL when the parent dies (Linux only; elsewhere
    the watchdog alone ends the run), and exit at once when the parent is already gone."""

    def set_pdeathsig() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            os._exit(1)

    return set_pdeathsig


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While TLC runs, SIGINT and SIGTERM raise ``TlcInterrupted`` (so the ``finally`` above kills TLC's group).

    Python's default for SIGTERM is to die at once without cleaning up, which would leave the JVM running.
    Handlers can only be installed from the main thread; elsewhere the defaults stay (and the caller's own
    handling applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupted(signum: int, frame: object) -> None:
        raise TlcInterrupted(signum)

    previous = {sig: signal.signal(sig, raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait()
