"""Leaves nothing behind: a SUT whose helper calls ``setsid`` (a session and process group of its own, out of
reach of the SUT's group kill) is ended with the run, because kcspec is the subreaper of its SUTs' descendants."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.processes import alive


@pytest.mark.integration
@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER and /proc are Linux's"
)
def test_a_setsid_grandchild_is_gone_after_the_run(tmp_path: Path) -> None:
    pidfile = tmp_path / "helper.pid"
    sut = tmp_path / "sut.sh"
    sut.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            setsid sleep 600 </dev/null >/dev/null 2>&1 &
            echo $! > {pidfile}
            exec {sys.executable} -m kcspec serve-reference
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "kcspec", "conformance", "run", "--sut", f"sh {sut}", "--level", "elections"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    still = alive(pid)
    if still:
        os.kill(pid, 9)  # leave nothing behind ourselves either
    assert not still, f"the setsid helper {pid} outlived the run"
