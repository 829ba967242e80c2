"""The test suite itself stops when told to: SIGTERM to a run on two workers, after a test has run a ``kcspec``
command in-process (which installs kcspec's own signal handlers), ends it with exit 143 within seconds, and no
process a test started is left running; the same for a run in one process, started by ``make``."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.processes import alive
from tests.support.timing import scaled

_SUITE = """
import os, subprocess, sys, time
from pathlib import Path
from click.testing import CliRunner
from kcspec.cli import main

OUT = Path(os.environ["SUITE_OUT"])

def test_a_command_run_in_process():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0

def test_a_child_left_running_then_a_long_wait():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    (OUT / "child.pid").write_text(str(child.pid))
    (OUT / "started").write_text("")
    time.sleep(600)

def test_another_long_wait():
    time.sleep(600)
"""


def _suite(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A suite of our own conftest's tests in a folder under ``tests/`` (so that ``tests/conftest.py`` applies)."""
    folder = ROOT / "tests" / "integration" / "suite" / f"_stopping_{os.getpid()}_{tmp_path.name}"
    folder.mkdir()
    (folder / "test_sleepy.py").write_text(_SUITE)
    env = {**os.environ, "SUITE_OUT": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    return folder, env


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + scaled(120)
    while not path.exists():
        assert proc.poll() is None, f"the suite ended before its long test started: {proc.communicate()}"
        assert time.monotonic() < deadline, "the suite's long test never started"
        time.sleep(0.1)


def _assert_gone(child: int) -> None:
    deadline = time.monotonic() + scaled(10)
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "a process a test started outlived the run"


@pytest.mark.parametrize("through", ["pytest", "make"])
def test_sigterm_ends_a_two_worker_run_with_143_and_leaves_nothing_running(
    tmp_path: Path, through: str
) -> None:
    folder, env = _suite(tmp_path)
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", str(folder)]
    if (
        through == "make"
    ):  # and in one process: the test that waits is interrupted in the pytest process itself
        makefile = tmp_path / "Makefile"
        makefile.write_text("run:\n\t" + " ".join([*pytest_cmd[:-3], str(folder)]) + "\n")
        cmd = ["make", "-s", "-f", str(makefile), "run"]
    else:
        cmd = pytest_cmd
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(tmp_path / "started", proc)
        child = int((tmp_path / "child.pid").read_text())
        proc.send_signal(signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=scaled(60))
        except subprocess.TimeoutExpired:
            pytest.fail("the run went on after SIGTERM")
        text = output.decode(errors="replace")
        if through == "pytest":
            assert proc.returncode == 143, f"exit {proc.returncode}, expected 143:\n{text[-3000:]}"
        else:
            # make passes SIGTERM on to its recipe, reports the recipe's exit, then ends by the signal itself
            # (a shell shows 143)
            assert proc.returncode == -signal.SIGTERM, f"exit {proc.returncode}:\n{text[-3000:]}"
            assert "Error 143" in text, f"pytest under make did not end with 143:\n{text[-3000:]}"
        _assert_gone(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def test_ctrl_c_ends_a_two_worker_run_as_interrupted_and_leaves_nothing_running(tmp_path: Path) -> None:
    """Ctrl-C, as a terminal sends it (SIGINT to the whole foreground process group): pytest's own "interrupted"
    (exit 2) within seconds, and the process a test started in a session of its own (so the terminal's signal
    never reached it) is ended too."""
    folder, env = _suite(tmp_path)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", str(folder)]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        _wait_for(tmp_path / "started", proc)
        child = int((tmp_path / "child.pid").read_text())
        os.killpg(proc.pid, signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=scaled(60))
        except subprocess.TimeoutExpired:
            pytest.fail("the run went on after Ctrl-C")
        text = output.decode(errors="replace")
        assert proc.returncode == 2, f"exit {proc.returncode}, expected 2 (interrupted):\n{text[-3000:]}"
        _assert_gone(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
