"""A watchdog that ends a killed run's processes and removes its folders.

It is for a process killed outright (SIGKILL: the OOM killer, a CI runner's hard cancel), which no handler of
this process can see.

The watchdog is a tiny Python process in a session of its own (a kill of this process's group does not reach
it) that polls its parent; when the parent is gone, it kills the process group it was given (TLC's JVM) and
removes the folders it was given (TLC's working folder, the explorer's level files), then exits. It imports
nothing of kcspec, so it starts in a few milliseconds from any installation. A run that ends normally stops
its watchdog (``stop_watchdog``) and cleans up after itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_running: set[int] = set()

WATCHDOG = """
import os, shutil, signal, sys, time
parent, group, folders = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
while os.getppid() == parent:
    time.sleep(0.2)
if group > 0:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
for folder in folders:
    shutil.rmtree(folder, ignore_errors=True)
"""
"""The watchdog's program: arguments parent pid, process group to kill (0: none), folders to remove."""


def start_watchdog(group: int | None, folders: tuple[Path, ...]) -> subprocess.Popen[bytes] | None:
    """A watchdog of this process for ``group`` (a process group id, or ``None``) and ``folders``; ``None`` when
    it cannot be started (the caller's other safeguards then stand alone: the folders would be left)."""
    try:
        watchdog = subprocess.Popen(
            [sys.executable, "-I", "-c", WATCHDOG, str(os.getpid()), str(group or 0), *map(str, folders)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    _running.add(watchdog.pid)
    return watchdog


def watchdogs() -> frozenset[int]:
    """The process ids of this process's running watchdogs: children that must outlive it (an interrupted
    command line that ends its children, ``interrupts.end_children``, leaves them to do their work)."""
    return frozenset(_running)


def stop_watchdog(watchdog: subprocess.Popen[bytes] | None) -> None:
    """End a watchdog whose run is over (nothing of the run is removed by it)."""
    if watchdog is None:
        return
    _running.discard(watchdog.pid)
    watchdog.kill()
    watchdog.wait()
