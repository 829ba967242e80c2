"""Fixtures of the conformance tests: ``sut_pids`` checks that no process of a fake SUT is left running."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import left_running


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
