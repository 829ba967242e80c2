"""Stopping a checkpointed exploration in the middle: the level its folder's checkpoint records, and a run killed
(its whole process group, with SIGKILL) once that checkpoint reaches a given level."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.timing import scaled


def checkpointed_level(folder: Path) -> int:
    """The last complete level ``folder``'s ``checkpoint.json`` records (-1 without one)."""
    try:
        return int(json.loads((folder / "checkpoint.json").read_text())["level"])
    except (FileNotFoundError, ValueError, KeyError):
        return -1


def kill_at_level(script: str, args: list[str], folder: Path, level: int) -> int:
    """Run ``python -c script *args`` in a session of its own, SIGKILL its process group as soon as the checkpoint
    in ``folder`` is of ``level`` or later, and return the level checkpointed then. Fails if the run ends first or
    reaches no such checkpoint within ten (scaled) minutes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args], start_new_session=True, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + scaled(600)
        while checkpointed_level(folder) < level:
            assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read()!r}"  # type: ignore[union-attr]
            assert time.monotonic() < deadline, f"no checkpoint of level {level} within 10 minutes"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=scaled(60))
    return checkpointed_level(folder)
