"""``kcspec conformance run`` interrupted by Ctrl-C (SIGINT) or SIGTERM while a SUT hangs — started
directly or behind a wrapper script — exits 130 / 143 (never 0 or 1, the divergence code), with no
traceback, and leaves no process of the SUT running."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import SUPPORT
from tests.support.processes import alive, kcspec_process, left_running, recorded_pids
from tests.support.timing import scaled

FAKE = SUPPORT / "fakes" / "fake_sut.py"


def _kcspec(args: list[str], pids: Path) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    return kcspec_process(args, {"FAKE_SUT_PIDS": str(pids)})


def _wait_for_sut(proc: subprocess.Popen[bytes], pids: Path, count: int) -> None:
    deadline = time.monotonic() + scaled(60)
    while len(recorded_pids(pids)) < count:
        if proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"kcspec ended before it was interrupted: {err.decode()[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError("the SUT did not start within 60 s")
        time.sleep(0.1)
    time.sleep(1.0)  # the SUT has answered hello and hangs on the first vector


@pytest.mark.parametrize("wrapper", [False, True], ids=["direct", "behind-a-wrapper-script"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_exits_128_plus_signal_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, wrapper: bool, sut_pids: Path
) -> None:
    sut = shlex.join([sys.executable, str(FAKE), "hang", "0"])
    if wrapper:
        sut = shlex.join(["sh", "-c", f"{sut}; echo wrapper-done"])
    args = ["conformance", "run", "--sut", sut, "--level", "elections", "--timeout", "120"]
    with _kcspec(args, sut_pids) as proc:
        _wait_for_sut(proc, sut_pids, 1)
        assert alive(recorded_pids(sut_pids)[0]), "the SUT should be hanging, not gone"
        if sig is signal.SIGINT:
            os.killpg(proc.pid, sig)  # as a terminal does (the SUT runs in a session of its own)
        else:
            os.kill(proc.pid, sig)  # as a service manager does: kcspec only
        try:
            _, err = proc.communicate(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"kcspec did not stop within 30 s of {sig.name}") from None
        text = err.decode()
        assert proc.returncode == 128 + sig, f"exit {proc.returncode} after {sig.name}:\n{text[-2000:]}"
        assert "Traceback" not in text, text[-2000:]
    assert not left_running(sut_pids), "the SUT is still running"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupting_a_hanging_in_process_sut_exits_128_plus_signal(
    tmp_path: Path, sig: signal.Signals
) -> None:
    pids = tmp_path / "pids"
    args = [
        "conformance",
        "run",
        "--adapter",
        "tests.support.fakes.inprocess_fakes:HangingSut",
        "--level",
        "elections",
    ]
    with _kcspec(args, pids) as proc:
        _wait_for_sut(proc, pids, 1)  # kcspec's own pid: the SUT hangs inside it
        if sig is signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"kcspec did not stop within 30 s of {sig.name}") from None
        text = err.decode()
        assert proc.returncode == 128 + sig, f"exit {proc.returncode} after {sig.name}:\n{text[-2000:]}"
        assert "Traceback" not in text and "errored" not in text, text[-2000:]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_differential_exits_128_plus_signal_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, sut_pids: Path
) -> None:
    from kcspec.conformance.vectors import files

    from tests.integration.conformance.test_runner_robustness import sample_vectors

    files.export(sample_vectors()[:2], tmp_path / "vectors")
    sut = shlex.join([sys.executable, str(FAKE), "hang_events"])
    args = ["conformance", "run", "--sut", sut, "--vectors", str(tmp_path / "vectors"), "--differential", "5"]
    args += ["--timeout", "120", "--trace-dir", str(tmp_path / "traces")]
    with _kcspec(args, sut_pids) as proc:
        _wait_for_sut(proc, sut_pids, 2)  # the vectors' session, then the differential's
        if sig is signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"kcspec did not stop within 30 s of {sig.name}") from None
        text = err.decode()
        assert proc.returncode == 128 + sig, f"exit {proc.returncode} after {sig.name}:\n{text[-2000:]}"
        assert "Traceback" not in text, text[-2000:]
    assert not left_running(sut_pids), "the SUT is still running"
