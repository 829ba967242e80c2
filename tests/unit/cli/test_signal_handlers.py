"""Only the command line sets signal handlers, and only for the length of a command: a ``kcspec`` command run
in-process (a test, a notebook) leaves the caller's SIGINT and SIGTERM handlers as they were — whether it passed,
failed or was interrupted — and the library call ``run_interruptibly`` never sets a handler nor ends the process:
it hands the interrupt back to its caller after stopping what was registered."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from kcspec.model import interrupts

from kcspec.cli import main


def _handlers() -> dict[signal.Signals, object]:
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


@pytest.fixture
def own_handlers() -> Iterator[dict[signal.Signals, object]]:
    """Handlers of the test's own, so that "restored" cannot pass by accident on Python's defaults."""

    def mine(signum: int, frame: object) -> None:
        raise AssertionError("the test's own handler was called")

    before = _handlers()
    signal.signal(signal.SIGTERM, mine)
    signal.signal(signal.SIGINT, mine)
    try:
        yield _handlers()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def test_a_command_run_in_process_leaves_the_handlers_as_they_were(
    own_handlers: dict[signal.Signals, object],
) -> None:
    result = CliRunner().invoke(main, ["spec", "show", "--profile", "kafka-2.8"])
    assert result.exit_code == 0, result.output
    assert _handlers() == own_handlers


def test_an_interrupted_command_exits_130_and_restores_the_handlers(
    own_handlers: dict[signal.Signals, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    import kcspec.commands.spec_show as spec_show

    seen: dict[str, object] = {}

    def interrupted(*args: object, **kwargs: object) -> None:
        seen["during"] = _handlers()
        raise interrupts.Terminated()

    monkeypatch.setattr(spec_show.show, "callback", interrupted)
    result = CliRunner().invoke(main, ["spec", "show"])
    assert result.exit_code == 143, result.output
    assert "interrupted (SIGTERM)" in result.output
    during = seen["during"]
    assert isinstance(during, dict) and during[signal.SIGINT] is signal.default_int_handler, during
    assert _handlers() == own_handlers


def test_run_interruptibly_hands_the_interrupt_back_after_stopping_the_work() -> None:
    """No handler is set and the process goes on: the caller gets the ``KeyboardInterrupt``, the stoppers ran and
    the work was told to stop."""
    before = _handlers()
    cancel = threading.Event()
    stopped = threading.Event()

    def work() -> str:
        while not cancel.is_set():
            time.sleep(0.01)
        return "cancelled"

    def tick() -> None:
        if not hasattr(tick, "sent"):
            tick.sent = True  # type: ignore[attr-defined]
            signal.raise_signal(signal.SIGINT)  # Python's own handler in the test process: KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), interrupts.stopper(stopped.set):
        interrupts.run_interruptibly(work, interrupts.Handling(grace_seconds=5.0), cancel=cancel, tick=tick)
    assert cancel.is_set() and stopped.is_set()
    assert _handlers() == before


def test_the_work_s_result_and_errors_come_back_to_the_caller() -> None:
    assert interrupts.run_interruptibly(lambda: 42) == 42

    def broken() -> None:
        raise ValueError("planted")

    with pytest.raises(ValueError, match="planted"):
        interrupts.run_interruptibly(broken)


def test_kept_handlers_puts_back_what_a_block_installed() -> None:
    before = _handlers()
    with interrupts.kept_handlers():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    assert _handlers() == before


def test_a_hook_runs_before_the_interrupt_is_raised_and_the_handlers_come_back() -> None:
    before = _handlers()
    heard: list[int] = []
    with pytest.raises(interrupts.Terminated), interrupts.handlers_installed(on_signal=heard.append):
        signal.raise_signal(signal.SIGTERM)
    assert heard == [signal.SIGTERM]
    assert _handlers() == before
