"""A search killed outright (SIGKILL: the OOM killer, a CI runner's hard cancel) leaves nothing behind: its worker
processes die with it and its temporary level files (gigabytes for a big model) are removed by its watchdog."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import alive, descendants
from tests.support.timing import scaled

pytestmark = pytest.mark.integration

RUN = """
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load
entry = next(e for e in load() if e.name == "two-broker-default-2.8")
search(model_space(entry.profile, entry.config), workers=2)
"""
"""A search of minutes (87,528 states) on two worker processes, no checkpoint: its level files are temporary."""


def test_a_killed_search_leaves_no_process_and_no_level_files(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN],
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + scaled(120)
        folders: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            folders = [f for f in tmp.glob("kcspec-explore-*") if list(f.glob("trail-0003-*.bin"))]
            if folders:
                break
            time.sleep(0.1)
        if not folders:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            raise AssertionError(
                f"the search never wrote level 3 (exit {proc.returncode}): {err.decode()[-2000:]}"
            )
        workers = [p for p in descendants(proc.pid) if alive(p)]
        proc.send_signal(signal.SIGKILL)  # the coordinator only, as the OOM killer does
        proc.wait()
        deadline = time.monotonic() + scaled(10)
        while time.monotonic() < deadline and (list(tmp.iterdir()) or any(alive(p) for p in workers)):
            time.sleep(0.1)
        assert not list(tmp.iterdir()), f"left in TMPDIR: {sorted(p.name for p in tmp.rglob('*'))[:10]}"
        assert not [p for p in workers if alive(p)], "worker processes outlived the search"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
