"""Unit tier: the benchmark runner's end-of-script clean-up does not wait on zombies (``benchmarks/run.py``).

An orphan's zombie stays in its process group until the machine's first process reaps it, which in a container
may be never; ``killpg(group, 0)`` still succeeds on it. The runner used to wait its whole grace period for such
a group at the end of every benchmark script that left a process behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.bench_modules import run

# The group's leader leaves a child that ends after it (an orphan, reparented); it prints the child's pid.
LEAVE_ORPHAN = (
    "import subprocess, sys; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({sleep})'], "
    "stdout=subprocess.DEVNULL); "
    "print(p.pid, flush=True)"
)


def _stat(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _leave_orphan(sleep: float) -> tuple[int, int]:
    """Start a group whose leader exits at once, leaving a child that sleeps ``sleep`` s; (group, child pid)."""
    leader = subprocess.Popen(
        [sys.executable, "-c", LEAVE_ORPHAN.format(sleep=sleep)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, _ = leader.communicate(timeout=60)
    return leader.pid, int(out.split()[0])


def test_a_group_of_zombies_is_not_running() -> None:
    group, child = _leave_orphan(0)
    deadline = time.monotonic() + 30
    while _stat(child) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    state = _stat(child)
    assert state in (None, "Z"), f"the orphan {child} did not end (state {state})"
    assert not run._group_running(group), f"a group whose only member is a zombie ({state}) counts as running"


def test_a_live_member_is_running_until_stopped() -> None:
    group, child = _leave_orphan(600)
    try:
        assert run._group_running(group), f"the group {group} with its live orphan {child} is not seen"
    finally:
        os.killpg(group, 9)
    deadline = time.monotonic() + 30
    while _stat(child) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not run._group_running(group)
