"""Machine-readable reports of a ``kcspec verify`` run: JSON and JUnit XML (one test case per check case)."""

from __future__ import annotations

import json
import platform
import xml.etree.ElementTree as ET
from pathlib import Path

from kcspec.conformance.selfcheck.gate.cases import Status, VerifyReport


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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def write_junit(report: VerifyReport, path: Path) -> None:
    suites = ET.Element("testsuites", name="kcspec verify", time=f"{report.seconds:.3f}")
    for check in dict.fromkeys(c.check for c in report.cases):
        cases = [c for c in report.cases if c.check == check]
        counts = report.counts(check)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=check,
            tests=str(len(cases)),
            failures=str(counts[Status.FAILED]),
            errors=str(counts[Status.ERRORED]),
            skipped=str(counts[Status.SKIPPED]),
            time=f"{sum(c.seconds for c in cases):.3f}",
        )
        for c in cases:
            tc = ET.SubElement(
                suite, "testcase", classname=f"kcspec.{check}", name=c.name, time=f"{c.seconds:.3f}"
            )
            text = "\n".join(
                x for x in (c.details, f"counterexample: {c.counterexample}" if c.counterexample else "") if x
            )
            if c.status is Status.FAILED:
                ET.SubElement(tc, "failure", message=c.message).text = text
            elif c.status is Status.ERRORED:
                ET.SubElement(tc, "error", message=c.message).text = text
            elif c.status is Status.SKIPPED:
                ET.SubElement(tc, "skipped", message=c.message)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
