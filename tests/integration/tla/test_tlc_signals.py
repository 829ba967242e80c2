"""Ctrl-C and SIGTERM during ``kcspec tla check`` / ``crosscheck`` kill TLC's whole process group (the JVM and
anything it started) and end the command with 130 or 143, checked with a stand-in ``java`` that never ends."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.timing import scaled


def _hanging_java(tmp_path: Path) -> tuple[Path, Path]:
    """A ``java`` that starts a long-running child (as a JVM starts threads and helpers) and waits for it."""
    pidfile = tmp_path / "child.pid"
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(
        f'#!/bin/sh\nsleep 600 &\necho $! > "{pidfile}.tmp"\nmv "{pidfile}.tmp" "{pidfile}"\nwait\n'
    )
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"")
    return jar, pidfile


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("subcommand", ["check", "crosscheck"])
@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_kills_tlc_and_sets_the_exit_status(
    tmp_path: Path, subcommand: str, signum: int, expected: int
) -> None:
    jar, pidfile = _hanging_java(tmp_path)
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "jdk")}
    env.pop("TLA2TOOLS_JAR", None)
    argv = [sys.executable, "-m", "kcspec", "tla", subcommand, "--tla2tools", str(jar), "--brokers", "1"]
    argv += ["--rf", "1", "--max-controller-epoch", "1", "--max-leader-epoch", "1", "--max-zxid", "2"]
    argv += ["--max-zk-version", "0"]
    if subcommand == "check":
        argv += ["--out", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + scaled(120)
        while not pidfile.is_file() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pidfile.is_file(), (
            f"the stand-in TLC never started: {proc.communicate(timeout=scaled(30))[0]!r}"
        )
        child = int(pidfile.read_text())
        assert _running(child)
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=scaled(60))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == expected, output.decode()
    assert b"interrupted" in output
    deadline = time.monotonic() + scaled(10)
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child), f"TLC's child process {child} outlived the {signal.Signals(signum).name}"
