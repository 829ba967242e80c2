"""Interrupts: Ctrl-C and SIGTERM stop any ``kcspec`` command promptly, with exit 130 or 143, and leave no
process of the run behind. (Here in ``model/`` so that the machinery that starts worker processes can use it
without importing upward.)

Exit codes (DESIGN.md): 1 means "a violation or divergence was found", so an interrupted run must never exit 1
(click's own handling of Ctrl-C prints "Aborted!" and exits 1) nor 0. The conventions of shells are used:
128 + the signal's number, 130 for SIGINT and 143 for SIGTERM.

Who changes the process: **only the command line.** ``handlers_installed`` (entered by ``kcspec``'s command
group for the length of one command, and left on return, so that a command run in-process — a test, a
notebook — leaves the caller's handlers as they were) turns SIGTERM into ``Terminated`` and SIGINT into
``KeyboardInterrupt`` in the main thread. Library calls never set a handler, never end the process; what they
do on an interrupt is the ``Handling`` their caller passes:

* ``run_interruptibly`` runs long work that spends its time in C code (Z3) or waits on a worker pool in a worker
  thread: a signal handler only runs when the main thread returns to Python, which a single Z3 query may not
  do for minutes, so the main thread only waits; on an interrupt it cancels the work (``cancel``), calls the
  registered stoppers (terminate worker pools, interrupt Z3), with ``Handling.end_children`` ends every child
  process, waits ``Handling.grace_seconds`` for the work to unwind and raises the interrupt again.
* ``kept_handlers`` is for a library call that starts something which sets handlers of its own (pyspark's
  ``SparkContext`` sets one for SIGINT): the handlers found on entry are put back on exit.
* ``worker_initializer`` is for ``multiprocessing`` pools: workers ignore SIGINT (the terminal sends it to the
  whole process group; the parent decides) and, on Linux, are sent SIGTERM by the kernel when their parent
  dies, so a killed ``kcspec`` leaves no worker running.

The command line's own process (``kcspec.cli.run``, the console script) ends with ``os._exit`` once an
interrupted command has reported: a worker thread may still be inside C code, and nothing of it is worth
waiting for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM
GRACE_SECONDS = 1.0
"""How long interrupted work may take to unwind before the caller is given the interrupt regardless."""
SIGNALS = (signal.SIGINT, signal.SIGTERM)
POLL_SECONDS = 0.1
"""How often the waiting main thread returns to Python (where signal handlers run)."""


class Terminated(BaseException):
    """The process received SIGTERM (a ``BaseException``, like ``KeyboardInterrupt``, so that ``except
    Exception`` clauses do not swallow it)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


def exit_code(exc: BaseException) -> int:
    """The exit status for an interrupt: 130 for Ctrl-C, 143 for SIGTERM."""
    return EXIT_SIGTERM if isinstance(exc, Terminated) else EXIT_SIGINT


def describe(exc: BaseException) -> str:
    """How an interrupt reads in a report: ``Ctrl-C`` or ``SIGTERM``."""
    return "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"


@dataclass(frozen=True)
class Handling:
    """What a library call does when the run it belongs to is interrupted, given by its caller."""

    grace_seconds: float = GRACE_SECONDS
    """How long the interrupted work may take to unwind before the interrupt is raised regardless."""
    end_children: bool = False
    """End every child process of this process (``end_children``) on an interrupt: only for the command line's
    own process, where every child belongs to the run (TLC and the SUTs run in process groups of their own, so
    the terminal's Ctrl-C does not reach them). Never inside another program: a test runner's children are not
    the call's to end."""


LIBRARY = Handling()
"""The handling of a call made by a library user or a test: stop what the call registered, nothing else."""
COMMAND_LINE = Handling(grace_seconds=0.5, end_children=True)
"""The handling of the ``kcspec`` console script's own process."""


@contextlib.contextmanager
def handlers_installed(on_signal: Callable[[int], None] | None = None) -> Iterator[None]:
    """For the length of the block: SIGTERM raises ``Terminated`` and SIGINT ``KeyboardInterrupt`` (unless the
    process was started with SIGINT ignored, as a shell does for a background job), after ``on_signal(signum)``
    if given (the audit turns py4j's logging off there); the handlers found on entry are restored on exit. The
    command line enters it for every command; a command may enter it again around a part that needs the hook. A
    no-op outside the main thread (only it may set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raising(signum: int, frame: object) -> None:
        if on_signal is not None:
            on_signal(signum)
        if signum == signal.SIGTERM:
            raise Terminated()
        raise KeyboardInterrupt()

    with kept_handlers():
        signal.signal(signal.SIGTERM, raising if on_signal is not None else _raise_terminated)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, raising if on_signal is not None else signal.default_int_handler)
        yield


@contextlib.contextmanager
def kept_handlers(signals: tuple[signal.Signals, ...] = SIGNALS) -> Iterator[None]:
    """The handlers of ``signals`` found on entry are put back on exit, whatever the block installed (pyspark's
    ``SparkContext``, for example, sets its own for SIGINT). A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Any] = {sig: signal.getsignal(sig) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: set outside Python, cannot be put back from here
                signal.signal(sig, handler)


_stoppers: list[Callable[[], None]] = []
_stoppers_lock = threading.Lock()


@contextlib.contextmanager
def stopper(stop: Callable[[], None]) -> Iterator[None]:
    """Register ``stop`` (for example a pool's ``terminate``) to be called when the run is interrupted."""
    with _stoppers_lock:
        _stoppers.append(stop)
    try:
        yield
    finally:
        with _stoppers_lock, contextlib.suppress(ValueError):
            _stoppers.remove(stop)


def stop_all() -> None:
    """Call every registered stopper (newest first); one that fails does not keep the others from running."""
    with _stoppers_lock:
        todo = list(reversed(_stoppers))
    for stop in todo:
        with contextlib.suppress(Exception):
            stop()


def interrupted(exc: BaseException, handling: Handling = LIBRARY) -> None:
    """What every interrupted run does before it reports: the stoppers are called and, with
    ``handling.end_children``, every child process is ended."""
    stop_all()
    if handling.end_children:
        end_children()


def run_interruptibly(
    work: Callable[[], T],
    handling: Handling = LIBRARY,
    *,
    cancel: threading.Event | None = None,
    tick: Callable[[], None] | None = None,
) -> T:
    """Run ``work`` in a worker thread while the main thread waits (calling ``tick``, if given, about every
    ``POLL_SECONDS``: a heartbeat can be printed from there). On Ctrl-C or SIGTERM (whatever handlers the caller
    installed raise: ``KeyboardInterrupt``, ``Terminated``): ``cancel`` is set, the stoppers are called
    (``interrupted``), the work is given ``handling.grace_seconds`` to unwind, and the interrupt is raised —
    promptly even when ``work`` is inside a long C call (the worker thread is a daemon and is left behind)."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=target, name="kcspec-work", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(POLL_SECONDS)
            if tick is not None:
                tick()
    except (KeyboardInterrupt, Terminated) as e:
        if cancel is not None:
            cancel.set()
        interrupted(e, handling)
        thread.join(handling.grace_seconds)
        raise
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux's ``/proc``; none found elsewhere)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def end_children(wait_seconds: float = 1.0) -> None:
    """End every child process of this process and the process group each leads (TLC's JVM, a SUT and its
    children): SIGTERM, then SIGKILL for what is left after ``wait_seconds``. For the command line's own process
    only (``Handling.end_children``). Watchdogs (``orphans``) are left alone: they end TLC's group and remove a
    run's temporary folders once this process is gone, which is their whole work."""
    from kcspec.model.orphans import watchdogs

    me = os.getpid()
    spared = {_resource_tracker(), *watchdogs()}
    children = [c for c in _children(me) if c not in spared]
    if not children:
        return

    def send(sig: int) -> None:
        for child in children:
            with contextlib.suppress(OSError):
                if os.getpgid(child) == child and child != os.getpgid(me):
                    os.killpg(child, sig)
                else:
                    os.kill(child, sig)

    send(signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if all(_ended(c) for c in children):
            return
        time.sleep(0.05)
    send(signal.SIGKILL)


def _resource_tracker() -> int | None:
    """The pid of ``multiprocessing``'s resource tracker, if this process started one: it is left to end by itself
    when this process ends (the clean-ups run on exit still talk to it)."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    pid = getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)
    return pid if isinstance(pid, int) else None


def _ended(pid: int) -> bool:
    """Whether the process ``pid`` has ended (gone, or a zombie its parent has not waited for yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def worker_initializer() -> None:
    """For ``multiprocessing`` pools: ignore SIGINT, and die with the parent (Linux's parent-death signal)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
            if os.getppid() == 1:  # the parent already died before the signal was asked for
                os._exit(EXIT_SIGTERM)
