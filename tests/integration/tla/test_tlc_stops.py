"""A real TLC stopped: by its timeout, and by Ctrl-C, SIGTERM and SIGKILL of ``kcspec`` — no JVM and no temporary
folder left behind. (Apart from ``test_tlc_real.py`` so that the two files' minutes of TLC can run on two
workers.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kcspec.model.tla.config import CROSSCHECK_DEFAULT, ModelConfig
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import Outcome
from kcspec.model.tlc.run import run_tlc

from tests.support.timing import scaled

pytestmark = pytest.mark.integration


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_timeout_stops_tlc(tools: Toolchain, module_dir: Callable[[str, ModelConfig], Path]) -> None:
    module = module_dir("kafka-2.8", CROSSCHECK_DEFAULT)  # minutes of TLC: stopped long before the end
    result = run_tlc(TlcArgs(module=module, timeout_s=8), tools)
    assert result.outcome is Outcome.TIMEOUT, result.raw_output[-2000:]
    metadir = result.argv[result.argv.index("-metadir") + 1]
    assert _wait_until(lambda: not _processes_mentioning(metadir), 30), "TLC's JVM outlived the timeout"
    assert not Path(metadir).parent.exists(), "the run's temporary folder was left behind"


def _alive(pid: int) -> bool:
    """Running and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _child_jvms(parent: int) -> list[int]:
    """The JVMs running TLC on a model that ``parent`` started (not the version probe)."""
    out = []
    for pid in _processes_mentioning("tlc2.TLC"):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if ppid == parent and b"KcspecVersionProbe" not in cmdline:
            out.append(pid)
    return out


@pytest.mark.parametrize(
    ("signum", "expected"),
    [
        (signal.SIGINT, 130),
        # SIGTERM takes Ctrl-C's path (both raise in the command's thread): the slow tier
        pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow),
        (signal.SIGKILL, -signal.SIGKILL),
    ],
    ids=["ctrl-c", "sigterm", "sigkill"],
)
def test_a_signal_to_kcspec_leaves_no_jvm_and_no_temporary_folder(
    tmp_path: Path, tools: Toolchain, signum: int, expected: int
) -> None:
    """``kcspec tla crosscheck`` on the default 2-broker model (minutes of TLC), stopped while TLC runs: the exit
    status is 128 + signal (SIGKILL: killed), and TLC's JVM and the temporary folders are gone."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "TLA2TOOLS_JAR": str(tools.jar)}
    argv = [sys.executable, "-m", "kcspec", "tla", "crosscheck", "--profile", "kafka-2.8"]
    # as from a terminal: SIGINT at its default (a pytest-xdist worker ignores it, and an ignored SIGINT is inherited:
    # kcspec then keeps ignoring it, as a background job of a shell does)
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    jvms: list[int] = []
    try:
        # TLC checks the model (a JVM of kcspec's still there 2 s after it was first seen: not a short-lived one)
        deadline = time.monotonic() + scaled(300)
        while time.monotonic() < deadline and proc.poll() is None:
            if _child_jvms(proc.pid):
                time.sleep(2)
                jvms = _child_jvms(proc.pid)
                if jvms:
                    break
            time.sleep(0.1)
        if not jvms:
            proc.kill()
            raise AssertionError(
                f"TLC never started: {proc.communicate(timeout=scaled(60))[0].decode()[-2000:]}"
            )
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=scaled(120))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == expected, output.decode()[-2000:]
    if signum != signal.SIGKILL:
        assert b"interrupted" in output
    assert _wait_until(lambda: not any(map(_alive, jvms)), scaled(60)), f"JVM {jvms} outlived kcspec"
    assert _wait_until(lambda: not list(tmp.iterdir()), scaled(60)), f"left behind: {sorted(tmp.iterdir())}"
