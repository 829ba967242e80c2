"""Robustness of the subprocess adapter against SUTs that crash, hang, print garbage, answer with the
wrong id, send a 100 MB line, a reply nested 1,000 levels deep or a 4,400-digit integer, or exit in the
middle of a run: each gives a clear ``SutFailure`` and the adapter can start a fresh session afterwards.
The SUT's whole process group ends with the session: nothing of it (a program behind a wrapper script, a
grandchild holding its stdout) is left running (the ``sut_pids`` fixture checks every recorded pid)."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest
from kcspec.conformance.adapters.base import FailureKind, SutFailure
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.protocol import messages as m
from kcspec.spec.vocabulary import ElectionInput, ElectionStrategy, LeaderAndIsr

from tests.support.paths import SUPPORT

FAKE = SUPPORT / "fakes" / "fake_sut.py"
ELECT = m.Elect(
    ElectionStrategy.OfflinePartitionLeaderElectionStrategy,
    ElectionInput(
        assignment=(1, 2),
        target_replicas=(1, 2),
        leader_and_isr=LeaderAndIsr(1, 0, (1, 2), 0),
        online=frozenset({2}),
        online_or_shutting_down=frozenset({2}),
        shutting_down=frozenset(),
    ),
)


def fake(mode: str, good: int = 1, timeout: float = 1.0) -> SubprocessAdapter:
    return SubprocessAdapter(
        [sys.executable, str(FAKE), mode, str(good)], timeout=timeout, startup_timeout=10.0
    )


def open_with_one_good(adapter: SubprocessAdapter) -> None:
    adapter.start()
    hello = adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8"))
    assert isinstance(hello, m.HelloReply)
    assert hello.implementation.name == "fake"
    assert isinstance(adapter.call(ELECT), m.ElectionReply)


@pytest.mark.parametrize(
    ("mode", "kind", "fragment"),
    [
        ("crash", FailureKind.crashed, "exit code 3"),
        ("hang", FailureKind.timeout, "no reply within 1 s"),
        ("garbage", FailureKind.malformed, "not JSON"),
        ("wrong_id", FailureKind.wrong_id, "got a reply with id"),
        ("huge", FailureKind.oversized, "exceeded"),
        ("exit", FailureKind.exited, "exit"),
        ("deep", FailureKind.malformed, "nested deeper than 64"),
        ("bigint", FailureKind.malformed, "a number literal of 4400 characters"),
        ("orphan", FailureKind.crashed, "another process still holds its output open"),
        ("daemon", FailureKind.exited, "exited with code 0"),
        ("surrogate", FailureKind.malformed, "unpaired UTF-16 surrogate"),
    ],
)
def test_misbehaviour_is_a_clear_failure_and_the_adapter_recovers(
    mode: str, kind: FailureKind, fragment: str, sut_pids: Path
) -> None:
    adapter = fake(mode)
    try:
        open_with_one_good(adapter)
        started = time.monotonic()
        with pytest.raises(SutFailure) as info:
            adapter.call(ELECT)
        assert info.value.kind is kind, info.value
        assert fragment in str(info.value)
        assert time.monotonic() - started < 8.0
        assert adapter.pid is None, "a broken session must be killed"
        if mode == "crash":
            assert "simulated crash" in info.value.stderr
        # a fresh session works again
        open_with_one_good(adapter)
    finally:
        adapter.close()


def test_missing_program_cannot_start() -> None:
    adapter = SubprocessAdapter(["/nonexistent/kcspec-sut"])
    with pytest.raises(SutFailure) as info:
        adapter.start()
    assert info.value.kind is FailureKind.cannot_start
    assert "/nonexistent/kcspec-sut" in str(info.value)


def test_unexpected_reply_type_keeps_the_session() -> None:
    adapter = fake("none", 0)
    try:
        adapter.start()
        adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8"))
        reply = adapter.call(m.Snapshot())
        assert isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.unsupported
        pid = adapter.pid
        assert isinstance(adapter.call(ELECT), m.ElectionReply)
        assert adapter.pid == pid
    finally:
        adapter.close()


def wrapped(mode: str, good: int = 1, timeout: float = 1.0) -> SubprocessAdapter:
    """The fake behind a shell script that stays alive as its parent (as wrapper scripts do)."""
    inner = shlex.join([sys.executable, str(FAKE), mode, str(good)])
    return SubprocessAdapter(
        ["sh", "-c", f"{inner}; echo wrapper-done >&2"], timeout=timeout, startup_timeout=10.0
    )


def test_hung_sut_behind_a_wrapper_is_killed_with_its_group(sut_pids: Path) -> None:
    adapter = wrapped("hang")
    try:
        open_with_one_good(adapter)
        with pytest.raises(SutFailure) as info:
            adapter.call(ELECT)
        assert info.value.kind is FailureKind.timeout
    finally:
        adapter.close()
    # sut_pids: the python program behind "sh -c" has ended too, not only the shell


def test_grandchild_holding_stdout_does_not_delay_the_failure(sut_pids: Path) -> None:
    adapter = fake("orphan", timeout=30.0)
    try:
        open_with_one_good(adapter)
        started = time.monotonic()
        with pytest.raises(SutFailure) as info:
            adapter.call(ELECT)
        assert time.monotonic() - started < 5.0, "the exit must be noticed, not the 30 s timeout waited"
        assert "exit code 3" in str(info.value)
        assert "left a grandchild" in info.value.stderr
    finally:
        adapter.close()


def test_close_ends_the_whole_group(sut_pids: Path) -> None:
    adapter = wrapped("none", 0)
    adapter.start()
    adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8"))
    adapter.close()


def test_interrupt_while_waiting_kills_the_group_at_once(sut_pids: Path) -> None:
    import signal
    import threading

    adapter = wrapped("hang", timeout=60.0)
    open_with_one_good(adapter)
    timer = threading.Timer(0.3, lambda: signal.raise_signal(signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        adapter.call(ELECT)
    assert time.monotonic() - started < 5.0
    assert adapter.pid is None
    adapter.close()


def test_close_ends_the_process() -> None:
    adapter = fake("none", 0)
    adapter.start()
    adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8"))
    proc = adapter._proc
    assert proc is not None
    adapter.close()
    assert proc.poll() is not None


def test_pipes_numbered_above_1024_work(sut_pids: Path) -> None:
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard limit of open files is {hard}: cannot open 1,100 descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        held.append(null)
        while max(held) < 1100:
            held.append(os.dup(null))
        adapter = fake("none", 0)
        try:
            open_with_one_good(adapter)
            assert adapter._proc is not None and adapter._proc.stdout is not None
            assert adapter._proc.stdout.fileno() > 1024, "the pipes should be numbered above select's limit"
        finally:
            adapter.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
