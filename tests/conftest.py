"""What every test run shares: tiers by folder, a run that stops when it is told to, and nothing left running.

* **Tiers.** A test's tier is the first folder under ``tests/``: ``unit``, ``integration``, ``quality`` or
  ``slow`` (``tests/README.md`` says what each is for). Each test gets its tier as a marker, so ``-m unit``
  works as well as naming the folder. A unit test's call is meant to take under ``UNIT_CPU_SECONDS`` of CPU
  time: one over it is named at the end of the run, and one over three times that (times
  ``KCSPEC_TEST_TIME_SCALE``) fails and says to move it to the integration tier. CPU time, not wall-clock time,
  and a factor of three of headroom, so that a loaded machine (whose cores do less per second) does not fail it.
* **Stopping.** SIGTERM to the run (a CI job's timeout or cancel, ``timeout``, ``kill``) stops it within
  seconds with exit 143, also with pytest-xdist workers and after a test ran a ``kcspec`` command in-process:
  the signal handlers a test leaves installed are put back after it, and a test ended by kcspec's own
  ``Terminated`` stops the session instead of counting as one failure.
* **Nothing left running.** The controlling pytest process makes itself the subreaper of everything it starts
  (Linux ``PR_SET_CHILD_SUBREAPER``): a process orphaned by a test or by a killed worker is re-parented to it
  and ended when the run ends. Workers die with the controller (``PR_SET_PDEATHSIG``).
* **Order.** The test files are collected longest first (``tests/support/file_order.py``, from the times of a
  recorded run), so that the workers of ``--dist loadfile`` do not end on one long file while a core idles.
  pytest-xdist (3.6 on) hands out the files of ``--dist loadfile`` by their number of tests unless told not to
  (``--loadscope-reorder``, on by default), which undid that order: it is turned off here.
* **TLC** runs with the C1 compiler only (``KCSPEC_TLC_JAVA_OPTIONS``, unless set already): the suite's TLC runs
  last seconds, and C2's compilation of TLC's evaluator doubles their CPU (``model/tlc/locate.py``). One test
  (``test_tlc_real.py``) runs TLC with the JVM's defaults, as a user's run does.
* **Hypothesis** runs without its per-example deadline (a busy machine is not a bug) and with the seed the
  Makefile passes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import SupportsFloat, cast

import pytest
from hypothesis import HealthCheck, settings
from pluggy import Result

from tests.support.file_order import load_seconds, longest_first
from tests.support.processes import alive, descendants
from tests.support.timing import scaled

pytest_plugins = ["tests.support.conformance_fixtures"]

os.environ.setdefault(
    "KCSPEC_TLC_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1"
)  # inherited by every process started

TIERS = ("unit", "integration", "quality", "slow")
UNIT_CPU_SECONDS = 1.0
"""The unit tier's target for one test's call (CPU seconds); three times this, times the time scale, fails it."""
_over_target: list[tuple[str, float]] = []

_TESTS = Path(__file__).resolve().parent

settings.register_profile(
    "kcspec", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("kcspec")

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_terminated = False


def _prctl(option: int, value: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _on_sigterm(signum: int, frame: object) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt("SIGTERM")


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: the {tier} tier (tests/{tier}/; see tests/README.md)")
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # The tests of Ctrl-C expect what a terminal gives: SIGINT raising KeyboardInterrupt here and at its default
        # in the processes they start. A suite started as a background job of a non-interactive shell (``cmd &``
        # in a script) has SIGINT ignored, and every process inherits that: such a test would wait forever.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if _is_worker(config):
        # A worker ends with the controller, whatever ends the controller (SIGKILL included).
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() == 1:
            os._exit(128 + signal.SIGTERM)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    else:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        signal.signal(signal.SIGTERM, _on_sigterm)
        if hasattr(config.option, "loadscopereorder"):
            # the files in the order of pytest_collection_modifyitems (longest first), not by number of tests
            config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = longest_first(items, load_seconds())  # the longest files first (tests/support/file_order.py)
    for item in items:
        tier = _tier_of(Path(str(item.path)))
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))


def _tier_of(path: Path) -> str | None:
    try:
        first = path.resolve().relative_to(_TESTS).parts[0]
    except (ValueError, IndexError):
        return None
    return first if first in TIERS else None


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """Whatever a test installs for SIGINT and SIGTERM (a ``kcspec`` command run in-process) is put back."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in before.items():
        if signal.getsignal(sig) is not handler and handler is not None:
            signal.signal(sig, handler)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    start = time.process_time()
    yield
    item.stash[_CPU] = time.process_time() - start


_CPU = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.excinfo is not None and type(call.excinfo.value).__name__ == "Terminated":
        # kcspec's SIGTERM exception (kcspec.model.interrupts.Terminated) escaped a test that ran a command
        # in-process: the run was told to stop, not this test to fail.
        global _terminated
        _terminated = True
        item.session.shouldstop = "SIGTERM"
        return
    if report.when != "call" or not report.passed or item.get_closest_marker("unit") is None:
        return
    cpu = item.stash.get(_CPU, 0.0)
    limit = scaled(3 * UNIT_CPU_SECONDS)
    if cpu > limit:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} used {cpu:.2f} s of CPU time: unit tests are meant to take under "
            f"{UNIT_CPU_SECONDS:.0f} s and fail over {limit:.2f} s (tests/README.md). Make it cheaper, or move it "
            "to tests/integration/."
        )
    elif cpu > UNIT_CPU_SECONDS:
        report.user_properties.append(("unit_cpu_seconds", cpu))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "unit_cpu_seconds":
            _over_target.append((report.nodeid, float(cast(SupportsFloat, value))))  # a float, appended above


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _over_target:
        terminalreporter.section("unit tests over the 1 s target (CPU seconds)")
        for nodeid, cpu in sorted(_over_target, key=lambda x: -x[1]):
            terminalreporter.line(f"{cpu:6.2f}  {nodeid}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _terminated and not _is_worker(session.config):
        session.exitstatus = 128 + signal.SIGTERM


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _is_worker(config):
        _end_descendants()


def _end_descendants() -> None:
    """End every process still below this one (orphans of tests re-parented here included): SIGTERM, then
    SIGKILL for those still there after a grace period; then reap them."""
    me = os.getpid()
    left = descendants(me)
    if not left:
        return
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and any(alive(p) for p in descendants(me)):
        _reap()
        time.sleep(0.05)
    for pid in descendants(me):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _reap()


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
