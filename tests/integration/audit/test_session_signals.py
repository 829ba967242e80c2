"""A Spark session made as a library call leaves the process's SIGINT and SIGTERM handlers as they were
(pyspark's own SIGINT handler undone); the command line's ``handled_interrupts`` installs the audit's and
restores the earlier ones when it ends."""

from __future__ import annotations

import signal

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.model.spark import session

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _mine(signum: int, frame: object) -> None:
    raise AssertionError("not called")


def test_make_session_leaves_the_handlers_and_the_command_line_restores_them() -> None:
    before = {s: signal.getsignal(s) for s in session.SIGNALS}
    signal.signal(signal.SIGTERM, _mine)
    try:
        session.make_session("local[1]", shuffle_partitions=1, app="kcspec-test-signals")
        assert signal.getsignal(signal.SIGTERM) is _mine
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
        with session.handled_interrupts():
            session.make_session("local[1]", shuffle_partitions=1, interrupts=True)
            assert signal.getsignal(signal.SIGTERM) is session._interrupted
            assert signal.getsignal(signal.SIGINT) is session._interrupted
        assert signal.getsignal(signal.SIGTERM) is _mine
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    finally:
        for s, h in before.items():
            signal.signal(s, h)
