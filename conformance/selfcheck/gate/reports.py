"""Machine-readable reports of a ``kcspec verify`` run: JSON and JUnit XML (one test case per check case)."""

from __future__ import annotations

import platform
from pathlib import Path

from kcspec.conformance.reports.json_report import write_document
from kcspec.conformance.reports.junit import JunitCase, JunitSuite, render_suites
from kcspec.conformance.selfcheck.gate.cases import VerifyReport


def write_json(report: VerifyReport, path: Path) -> None:
    data = {
        "tool": "kcspec verify",
        "python": platform.python_version(),
        "seconds": round(report.seconds, 3),
        "ok": not report.failed,
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
    write_document(path, data)


def write_junit(report: VerifyReport, path: Path) -> None:
    """One suite per check, one case per check case (through the kit's JUnit writer)."""
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
                for c in report.cases
                if c.check == check
            ),
        )
        for check in dict.fromkeys(c.check for c in report.cases)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_suites("kcspec verify", suites, report.seconds), encoding="utf-8")
