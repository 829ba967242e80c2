"""Machine-readable reports of a ``kcspec verify`` run: JSON and JUnit XML (one test case per check case)."""

from __future__ import annotations

import platform
from pathlib import Path

from kcspec.conformance.reports.json_report import document
from kcspec.conformance.reports.junit import JunitCase, JunitSuite, render_suites
from kcspec.conformance.selfcheck.gate.cases import CaseResult, VerifyReport
from kcspec.conformance.verdicts import Verdict
from kcspec.model.files import write_atomically


def write_json(report: VerifyReport, path: Path) -> None:
    data = {
        "tool": "kcspec verify",
        "python": platform.python_version(),
        "seconds": round(report.seconds, 3),
        "ok": report.ok,
        "interrupted": report.interrupted,
        "stopped": report.stopped,
        "not_run": list(report.not_run),
        "counts": {s.value: n for s, n in report.counts().items()},
        "cases": [
            {
                "check": c.check,
                "name": c.name,
                "status": c.status.value,
                "message": c.message,
                "details": c.details,
                "counterexample": c.counterexample,
                "seconds": round(c.seconds, 3),
            }
            for c in report.cases
        ],
    }
    write_atomically(path, document(data))


def write_junit(report: VerifyReport, path: Path) -> None:
    """One suite per check, one case per check case (through the kit's JUnit writer); an interrupted run has
    one more suite, ``interrupted``, with one errored case, so that no CI system reads it as a pass."""
    cases = list(report.cases)
    if report.interrupted is not None:
        not_run = f"; not run: {', '.join(report.not_run)}" if report.not_run else ""
        cases.append(
            CaseResult(
                "interrupted",
                "kcspec verify",
                Verdict.errored,
                f"interrupted ({report.interrupted}): the gate did not pass{not_run}",
            )
        )
    suites = [
        JunitSuite(
            check,
            tuple(
                JunitCase(
                    f"kcspec.{check}",
                    c.name,
                    c.seconds,
                    c.status,
                    c.message,
                    "\n".join(
                        x
                        for x in (
                            c.details,
                            f"counterexample: {c.counterexample}" if c.counterexample else "",
                        )
                        if x
                    ),
                )
                for c in cases
                if c.check == check
            ),
        )
        for check in dict.fromkeys(c.check for c in cases)
    ]
    write_atomically(path, render_suites("kcspec verify", suites, report.seconds))
