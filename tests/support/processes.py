"""Whether processes of a run are still there: pids recorded by the fake SUTs, checked through /proc."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.support.timing import scaled


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting to be reaped counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def recorded_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def left_running(path: Path, wait: float = 3.0) -> list[int]:
    """The recorded pids still running after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        running = [p for p in recorded_pids(path) if alive(p)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


@contextlib.contextmanager
def kcspec_process(
    args: list[str], env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m kcspec ARGS`` in a session of its own (so that a "terminal" Ctrl-C can be sent to its group
    alone); whatever is left of it is killed when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kcspec", *args],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def controller_run(sut: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """The default ``kcspec conformance run --sut SUT --level controller`` (JSON report in ``cwd``): the
    process and the failed outcomes of its report (as parsed from JSON)."""
    import json

    report = cwd / "report.json"
    argv = [sys.executable, "-m", "kcspec", "conformance", "run", "--sut", sut, "--level", "controller"]
    result = subprocess.run(
        [*argv, "--json", str(report)], capture_output=True, text=True, timeout=scaled(900), cwd=cwd
    )
    outcomes = json.loads(report.read_text())["outcomes"] if report.exists() else []
    return result, [o for o in outcomes if o["verdict"] == "failed"]
