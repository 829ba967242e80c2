"""Ctrl-C and SIGTERM during ``kcspec audit``: one line and 130 / 143 (never an internal error, even when the
interrupt surfaces as a py4j error raised while it was handled), no py4j traceback on the way out, and the
process's Spark configuration folder removed on every exit path."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kcspec.model import interrupts
from kcspec.model.spark import session

from kcspec.commands.audit import stop_if_interrupted
from tests.support.timing import scaled


class FakePy4JError(Exception):
    """Stands for py4j's error on a connection the interrupt broke."""


def _error_while_handling(interrupt: BaseException) -> Exception:
    try:
        try:
            raise interrupt
        except BaseException:
            raise FakePy4JError("py4j does not exist in the JVM") from None
    except FakePy4JError as e:
        return e


def test_an_error_raised_while_an_interrupt_was_handled_is_the_interrupt() -> None:
    # ``from None`` hides the context from tracebacks but keeps it: the interrupt is still found
    for interrupt in (interrupts.Terminated(), KeyboardInterrupt()):
        err = _error_while_handling(interrupt)
        assert session.interrupt_in(err) is interrupt, f"{type(interrupt).__name__} not found behind {err!r}"
        with pytest.raises(type(interrupt)):
            stop_if_interrupted(err)


def test_an_error_without_an_interrupt_behind_it_is_not_one() -> None:
    try:
        try:
            raise ValueError("first")
        except ValueError as inner:
            raise RuntimeError("second") from inner
    except RuntimeError as err:
        assert session.interrupt_in(err) is None
        stop_if_interrupted(err)  # returns: the caller reports it as an internal error


def test_the_signal_handler_silences_logging_and_raises_the_interrupt() -> None:
    try:
        with pytest.raises(interrupts.Terminated):
            session._interrupted(signal.SIGTERM, None)
        assert logging.root.manager.disable >= logging.CRITICAL, "logging not disabled during shutdown"
        with pytest.raises(KeyboardInterrupt):
            session._interrupted(signal.SIGINT, None)
    finally:
        logging.disable(logging.NOTSET)


_CHILD = """
import os, signal, sys, time
from kcspec.model.spark import session
print(session.conf_dir(), flush=True)
how = sys.argv[1]
if how == "error":
    raise RuntimeError("boom")
if how in ("INT", "TERM"):
    session.quiet_interrupts()
    os.kill(os.getpid(), getattr(signal, "SIG" + how))
    time.sleep(10)
"""


@pytest.mark.parametrize("how", ["normal", "error", "INT", "TERM"])
def test_the_configuration_folder_is_removed_on_every_exit_path(how: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, how], capture_output=True, text=True, timeout=scaled(60), check=False
    )
    folder = Path(proc.stdout.strip().splitlines()[0])
    assert folder.name.startswith(f"{session.CONF_PREFIX}"), proc.stdout + proc.stderr
    assert not folder.exists(), f"{how}: {folder} left behind (exit {proc.returncode}): {proc.stderr}"


def test_keep_spark_log_copies_the_log_into_the_output(tmp_path: Path) -> None:
    log = session.spark_log_path()
    log.write_text("spark: ERROR something\n")
    try:
        kept = session.keep_spark_log(tmp_path)
        assert kept == tmp_path / "spark.log"
        assert kept.read_text() == "spark: ERROR something\n"
        assert session.keep_spark_log(tmp_path / "missing") == log  # cannot copy: the original, kept
        assert session._keep, "a log that could not be copied is removed at exit"
    finally:
        session._keep.clear()
        log.unlink()


def test_a_log_named_as_the_only_evidence_is_kept() -> None:
    child = "from kcspec.model.spark import session; print(session.kept_spark_log().parent)"
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=scaled(60), check=True
    )
    folder = Path(proc.stdout.strip())
    try:
        assert folder.is_dir(), f"{folder} removed although its log was named: {proc.stderr}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.spark
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_audit_ends_with_one_line(tmp_path: Path, sig: signal.Signals) -> None:
    pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")
    kcspec = [sys.executable, "-m", "kcspec"]
    logs = tmp_path / "logs"
    subprocess.run(
        [
            *kcspec,
            "simulate",
            "--emit-logs",
            str(logs),
            "--brokers",
            "3",
            "--partitions",
            "4",
            *("--events", "100", "--seed", "1"),
        ],
        capture_output=True,
        check=True,
        timeout=scaled(120),
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the run's configuration folder is made here
    # --engine spark: this test is about interrupting Spark's py4j calls. On this small input the default engine
    # is the local one, which ends less than a second after "parsing" (the local engine's own signal tests use a
    # large log: test_local_engine_signals.py); Spark is still parsing for seconds after that line.
    proc = subprocess.Popen(
        [*kcspec, "audit", str(logs), "--engine", "spark", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # interrupt it while Spark works (py4j calls in flight)
        seen.append(line)
        if "parsing" in line:
            break
    time.sleep(1.0)
    proc.send_signal(sig)
    _, rest = proc.communicate(timeout=scaled(120))
    stderr = "".join(seen) + rest
    expected = interrupts.EXIT_SIGTERM if sig == signal.SIGTERM else interrupts.EXIT_SIGINT
    assert proc.returncode == expected, f"exit {proc.returncode}, expected {expected}:\n{stderr}"
    assert stderr.rstrip().endswith(
        "interrupted (SIGTERM)" if sig == signal.SIGTERM else "interrupted (Ctrl-C)"
    )
    for noise in ("Traceback", "ERROR:root", "internal error", "reentrant", "Py4J"):
        assert noise not in stderr, f"{noise!r} on the terminal:\n{stderr}"
    left = list(tmp_path.glob(f"{session.CONF_PREFIX}*"))
    assert not left, f"left behind: {left}"
