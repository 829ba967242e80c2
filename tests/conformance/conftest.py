"""Fixtures of the conformance tests: ``sut_pids`` checks that no process of a fake SUT is left running."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


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


@pytest.fixture
def sut_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A file the fake SUT appends its pids to (``FAKE_SUT_PIDS``); after the test, every one of them must
    have ended (the test fails naming those left running, and they are killed)."""
    path = tmp_path / "sut.pids"
    monkeypatch.setenv("FAKE_SUT_PIDS", str(path))
    yield path
    running = left_running(path)
    for pid in running:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not running, f"processes of the run left behind: {running}"
