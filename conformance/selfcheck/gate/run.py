"""Running the gate: the selected checks' cases in order, each finished case handed to a listener as it comes.

The run can be cancelled between cases (an interrupt: the case in progress when it came is not reported, since
an interrupted case proves nothing), and with ``fail_fast`` it stops at the first failed or errored case. What
the run did is a ``VerifyReport``; what ``kcspec verify`` prints is its own business.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence

from kcspec.conformance.selfcheck.gate.cases import (
    START_LISTENER,
    CaseResult,
    Check,
    VerifyOptions,
    VerifyReport,
)
from kcspec.conformance.verdicts import Verdict

FAILING = (Verdict.failed, Verdict.errored)


def run_gate(
    checks: Sequence[Check],
    opts: VerifyOptions,
    report: VerifyReport,
    *,
    fail_fast: bool = False,
    cancel: threading.Event | None = None,
    on_start: Callable[[str, str], None] | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
) -> VerifyReport:
    """Run ``checks`` into ``report`` (given by the caller, so that what finished before an interrupt is there
    to report): ``on_start(check, case)`` when a case starts (the case is ``""`` when only the check is known),
    ``on_case`` when it has finished. Stops when ``cancel`` is set, or, with ``fail_fast``, after the first
    failed or errored case (``report.stopped`` says so); ``report.not_run`` lists the checks not reached."""
    start = time.perf_counter()
    token = START_LISTENER.set(on_start)
    try:
        for index, check in enumerate(checks):
            if cancel is not None and cancel.is_set():
                report.not_run = tuple(c.name for c in checks[index:])
                return report
            if on_start is not None:
                on_start(check.name, "")
            cases = check.run(opts)
            try:
                for case in cases:
                    if cancel is not None and cancel.is_set():
                        report.not_run = tuple(c.name for c in checks[index + 1 :])
                        return report
                    if case.check != check.name:  # a check may label its cases (e.g. tla-syntax, tlc)
                        case = dataclasses.replace(case, check=check.name, name=f"{case.check}: {case.name}")
                    report.cases.append(case)
                    if on_case is not None:
                        on_case(case)
                    if fail_fast and case.status in FAILING:
                        report.stopped = (
                            f"--fail-fast: stopped at the first failure ({case.check}: {case.name})"
                        )
                        report.not_run = tuple(c.name for c in checks[index + 1 :])
                        return report
            finally:
                close = getattr(cases, "close", None)  # a generator's code after its last yield never runs
                if close is not None:
                    close()
        return report
    finally:
        START_LISTENER.reset(token)
        report.seconds = time.perf_counter() - start
