"""The local engine's JVM ends with ``kcspec audit`` whenever the signal comes: SIGTERM or Ctrl-C (SIGINT) at
0.5, 1, 2 and 4 s after its JVM started (while it loads, while it reads the logs) ends the command with 143 /
130, no JVM of the run is left, and nothing is reported as an internal error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from tests.integration.audit.test_signal_jvm import _wait
from tests.support.timing import scaled

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LINE = (
    "[2021-06-01 10:{m:02d}:{s:02d},000] TRACE [Controller id=1 epoch=3] Changed state of replica 1 for "
    "partition orders-{p} from NonExistentReplica to NewReplica (state.change.logger)\n"
)


def _jvms(pid: int) -> list[int]:
    """The local engine's JVMs under the ``kcspec`` process ``pid`` (children running ``LocalAudit``)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if "kcspec.audit.LocalAudit" in cmd and parent == pid:
            found.append(int(d.name))
    return found


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(p)
    return alive


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000,000 lines: well over the last signal's 4 s of reading for the local engine, even on a fast machine
    (so that the skip below, for an audit that ended first, stays the exception it is meant to be)."""
    log = tmp_path_factory.mktemp("signals") / "state-change.log"
    with log.open("w") as out:
        for i in range(2_000_000):
            out.write(LINE.format(m=(i // 60) % 60, s=i % 60, p=i % 5000))
    return log


@pytest.mark.parametrize("delay", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_local_jvm_ends_with_the_audit(big_log: Path, tmp_path: Path, delay: float, signum: int) -> None:
    kcspec = Path(sys.executable).parent / "kcspec"
    proc = subprocess.Popen(
        [str(kcspec), "audit", str(big_log), "--engine", "local", "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a signal to it alone, as a job control or CI would send
    )
    seen: list[int] = []
    try:
        assert _wait(lambda: _jvms(proc.pid) or proc.poll() is not None, scaled(120)), "no JVM started"
        seen = _jvms(proc.pid)
        time.sleep(delay)
        os.kill(proc.pid, signum)
        code = proc.wait(timeout=scaled(120))
        assert _wait(lambda: not _alive(seen), scaled(30)), f"JVM(s) {_alive(seen)} left after kcspec ended"
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        assert "internal error" not in err and "Traceback" not in err, err[-2000:]
        # the signal may come after the audit finished: then its own exit code stands
        assert code in (128 + signum, 0), f"exit {code} for signal {signum} at {delay} s\n{err[-2000:]}"
        if code == 0:
            pytest.skip(f"the audit had finished before the signal at {delay} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in _alive(seen):
            os.kill(p, signal.SIGKILL)
