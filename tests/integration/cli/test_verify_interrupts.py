"""An interrupted ``kcspec verify`` never passes: Ctrl-C (or SIGTERM) during any check — the proofs with their Z3
queries and worker pool, the explorer's worker processes, the conformance check's SUT subprocess, the TLA+
checks — ends the run with 130 (143), the JSON and JUnit reports say "interrupted", and no process of the run
is left behind.

Each test starts ``kcspec verify --check KIND`` without a terminal, waits for its heartbeat to say that KIND
runs (with generous limits: the machine may be loaded), then interrupts it the way a terminal (Ctrl-C to the
process group) or a service manager (SIGTERM to the main process) does."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import alive, descendants

pytestmark = pytest.mark.integration

START_LIMIT = 300.0
"""How long a check may take to be seen running (spawning Z3 workers on a loaded machine is slow)."""
STOP_LIMIT = 30.0
"""How long the run may take to end after the signal; the target (2 s) is recorded in benchmarks, not here."""


@contextlib.contextmanager
def _verify(
    args: list[str], env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str], list[str]]]:
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "kcspec", "verify", "--heartbeat", "0.5", *args],
        start_new_session=True,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
            seen.append(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        yield proc, lines, seen
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _wait_for(proc: subprocess.Popen[str], lines: queue.Queue[str], needle: str, seen: list[str]) -> None:
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        if needle in line:
            return
    raise AssertionError(f"never saw {needle!r} (exit {proc.poll()}); output:\n{''.join(seen)[-3000:]}")


def _interrupt(proc: subprocess.Popen[str], sig: signal.Signals, seen: list[str]) -> tuple[int, list[int]]:
    workers = [p for p in descendants(proc.pid) if alive(p)]
    if sig is signal.SIGINT:
        os.killpg(proc.pid, sig)  # as a terminal does: the whole foreground process group
    else:
        os.kill(proc.pid, sig)  # as a service manager does: the main process only
    try:
        code = proc.wait(timeout=STOP_LIMIT)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"kcspec verify still ran {STOP_LIMIT:.0f} s after {sig.name}:\n{''.join(seen)[-3000:]}"
        ) from None
    return code, workers


CASES = [
    # (check, what the heartbeat names while it runs, signal)
    ("prove", "running prove: proof suite", signal.SIGINT),
    ("prove", "running prove: proof suite", signal.SIGTERM),
    ("explore", "running explore: TLA+ model to the fixed point", signal.SIGINT),
    ("conformance", "running conformance: reference controller over the protocol", signal.SIGINT),
    ("tla", "running tla", signal.SIGINT),
    ("spec-vs-reference", "running spec-vs-reference", signal.SIGINT),
]


@pytest.mark.parametrize(("check", "running", "sig"), CASES, ids=[f"{c}-{s.name}" for c, _, s in CASES])
def test_an_interrupted_check_ends_the_run_as_interrupted_never_passed(
    tmp_path: Path, check: str, running: str, sig: signal.Signals
) -> None:
    json_path, junit_path = tmp_path / "verify.json", tmp_path / "verify.xml"
    args = [
        "--check",
        check,
        "--out",
        str(tmp_path / "out"),
        "--json",
        str(json_path),
        "--junit",
        str(junit_path),
    ]
    # With the generated code cached on disk the spec-vs-reference check ends within a second; without the cache it
    # compiles the spec for seconds first, long enough to be interrupted inside the check.
    env = {"KCSPEC_CACHE_DIR": "off"} if check == "spec-vs-reference" else {}
    tmp = (
        tmp_path / "tmp"
    )  # the run's temporary folders: none may be left (the explorer's level files included)
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    with _verify(args, env) as (proc, lines, seen):
        _wait_for(proc, lines, running, seen)
        time.sleep(1.0)  # well inside the check (a Z3 query, a level of the exploration, a SUT exchange)
        code, workers = _interrupt(proc, sig, seen)
        time.sleep(0.5)
        output = "".join(seen)
    assert code == 128 + sig, f"exit {code} after {sig.name}, expected {128 + sig}:\n{output[-3000:]}"
    assert "interrupted" in output and "the gate did not pass" in output, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    report = json.loads(json_path.read_text())
    assert report["ok"] is False and report["interrupted"] in ("Ctrl-C", "SIGTERM"), report
    suites = ET.parse(junit_path).getroot()
    interrupted = [s for s in suites.iter("testsuite") if s.get("name") == "interrupted"]
    assert interrupted and interrupted[0].get("errors") == "1", ET.tostring(suites, encoding="unicode")[:2000]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in workers):
        time.sleep(0.1)
    left = [p for p in workers if alive(p)]
    assert not left, f"processes of the run left running after {sig.name}: {left}"
    while time.monotonic() < deadline and list(tmp.iterdir()):
        time.sleep(0.1)
    assert not list(tmp.iterdir()), (
        f"left in TMPDIR after {sig.name}: {sorted(p.name for p in tmp.iterdir())}"
    )


def test_without_a_terminal_a_heartbeat_names_what_runs(tmp_path: Path) -> None:
    """A CI log is never silent for long: while a case runs, a line says which one and for how long."""
    args = ["--check", "conformance", "--profile", "kafka-2.8", "--out", str(tmp_path)]
    with _verify(args) as (proc, lines, seen):
        _wait_for(
            proc,
            lines,
            "... running conformance: reference controller over the protocol [kafka-2.8] for",
            seen,
        )
        _wait_for(proc, lines, "... running conformance", seen)  # and again
