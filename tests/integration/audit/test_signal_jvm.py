"""The driver JVM ends with ``kcspec audit`` whenever the signal comes: SIGTERM or Ctrl-C (SIGINT) at 0.5, 1, 2
and 4 s after the JVM started (while Spark starts, while the gateway connects, while the logs are parsed)
ends the command with 143 / 130, and no JVM of the run is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.slow]

LINE = (
    "[2021-06-01 10:00:{s:02d},000] TRACE [Controller id=1 epoch=3] Changed state of replica 1 for partition "
    "orders-{p} from NonExistentReplica to NewReplica (state.change.logger)\n"
)
START_TIMEOUT = 300.0
"""Seconds allowed for the JVM to appear, and for the command and its JVM to end (a loaded machine is slow)."""


def _jvms(pid: int) -> list[int]:
    """The JVMs of the ``kcspec`` process ``pid``: their command line names its private configuration folder."""
    mark = f"kcspec-audit-spark-{pid}-"
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # the driver JVM, not spark-class's short-lived launcher (whose arguments name the folder too)
        if "java" in cmd and mark in cmd and "org.apache.spark.launcher.Main" not in cmd:
            found.append(int(d.name))
    return found


def _wait(until: object, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if until():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("delay", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_jvm_ends_with_the_audit(tmp_path: Path, delay: float, signum: int) -> None:
    log = tmp_path / "state-change.log"
    log.write_text("".join(LINE.format(s=i % 60, p=i) for i in range(2000)))
    kcspec = Path(sys.executable).parent / "kcspec"
    proc = subprocess.Popen(
        [str(kcspec), "audit", str(log), "--master", "local[1]", "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a signal to it alone, as a job control or CI would send
    )
    try:
        assert _wait(lambda: _jvms(proc.pid) or proc.poll() is not None, START_TIMEOUT), "no JVM started"
        seen = _jvms(proc.pid)
        time.sleep(delay)
        os.kill(proc.pid, signum)
        try:
            code = proc.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"kcspec audit still running {START_TIMEOUT:.0f} s after the signal at {delay} s")
        # every JVM of the run, also one that was still starting when the signal came
        gone = _wait(lambda: not _jvms(proc.pid), START_TIMEOUT)
        assert gone, (
            f"JVM(s) {seen} / {_jvms(proc.pid)} still running after kcspec ended (signal at {delay} s)"
        )
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        # the signal may come after the audit finished (a small input): then its own exit code stands
        assert code in (128 + signum, 0, 1), f"exit {code} for signal {signum} at {delay} s\n{err[-2000:]}"
        if code in (0, 1):
            pytest.skip(f"the audit had finished before the signal at {delay} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in _jvms(proc.pid):
            os.kill(p, signal.SIGKILL)
