"""Interrupts: Ctrl-C and SIGTERM stop any ``kcspec`` command promptly, with exit 130 or 143, and leave no
process of the run behind. (Here in ``model/`` so that the machinery that starts worker processes can use it
without importing upward; the CLI installs it for every command.)

Exit codes (DESIGN.md): 1 means "a violation or divergence was found", so an interrupted run must never exit 1
(click's own handling of Ctrl-C prints "Aborted!" and exits 1) nor 0. The conventions of shells are used:
128 + the signal's number, 130 for SIGINT and 143 for SIGTERM.

* ``Terminated`` is raised in the main thread on SIGTERM (``install_sigterm``), so that ``finally`` blocks and
  context managers (which kill child processes) run exactly as for Ctrl-C's ``KeyboardInterrupt``.
* ``run_interruptibly`` runs long work that spends its time in C code (Z3) in a worker thread: a signal
  handler only runs when the main thread returns to Python, which a single Z3 query may not do for minutes,
  so the main thread only waits, and on an interrupt it calls the registered stoppers (terminate worker pools,
  interrupt Z3) and ends the process within a second even if the work does not return.
* ``worker_initializer`` is for ``multiprocessing`` pools: workers ignore SIGINT (the terminal sends it to the
  whole process group; the parent decides) and, on Linux, are sent SIGTERM by the kernel when their parent
  dies, so a killed ``kcspec`` leaves no worker running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM
GRACE_SECONDS = 1.0
"""How long interrupted work may take to unwind before the process ends regardless."""


class Terminated(BaseException):
    """The process received SIGTERM (a ``BaseException``, like ``KeyboardInterrupt``, so that ``except
    Exception`` clauses do not swallow it)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


def install_sigterm() -> None:
    """Turn SIGTERM into ``Terminated`` in the main thread (no-op elsewhere: only it may set handlers)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


def exit_code(exc: BaseException) -> int:
    """The exit status for an interrupt: 130 for Ctrl-C, 143 for SIGTERM."""
    return EXIT_SIGTERM if isinstance(exc, Terminated) else EXIT_SIGINT


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


def run_interruptibly(work: Callable[[], T]) -> T:
    """Run ``work`` in a worker thread while the main thread waits; on Ctrl-C or SIGTERM call the stoppers,
    print how the run ended and end the process (130 / 143) — within ``GRACE_SECONDS`` even when ``work`` is
    inside a long C call."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as e:  # re-raised in the main thread
            box["error"] = e

    thread = threading.Thread(target=target, name="kcspec-work", daemon=True)
    install_sigterm()
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except (KeyboardInterrupt, Terminated) as e:
        stop_all()
        thread.join(GRACE_SECONDS)
        code = exit_code(e)
        print(f"\ninterrupted ({'SIGTERM' if code == EXIT_SIGTERM else 'Ctrl-C'}): stopped", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # the work thread may still be inside C code; nothing of it is worth waiting for
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


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
