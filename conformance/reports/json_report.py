"""The JSON form of a conformance run report (stable keys, for CI systems and dashboards), and kcspec's one JSON
report writer (``document``, ``write_document``): ``kcspec verify --json``, ``kcspec tla crosscheck --json`` and
``kcspec explore --coverage-json`` write theirs through it too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kcspec.conformance.verdicts import Outcome, RunReport


def outcome_json(o: Outcome) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": o.id,
        "level": o.level,
        "sections": list(o.sections),
        "description": o.description,
        "verdict": o.verdict.value,
        "seconds": round(o.seconds, 6),
    }
    if o.reason:
        out["reason"] = o.reason
    if o.differences:
        out["differences"] = [
            {"path": d.path, "expected": d.expected, "actual": d.actual} for d in o.differences
        ]
    if o.stderr:
        out["stderr"] = o.stderr
    if o.request:
        out["request"] = o.request.rstrip("\n")
    return out


def report_json(report: RunReport) -> dict[str, Any]:
    counts = report.counts()
    return {
        "sut": {
            "command": report.sut.description,
            "name": report.sut.name,
            "version": report.sut.version,
            "protocol_version": report.sut.protocol_version,
            "profiles": list(report.sut.profiles),
            "capabilities": list(report.sut.capabilities),
        },
        "profile": report.profile,
        "level": report.level,
        "passed": report.ok,
        "ran": report.ran,
        "counts": {v.value: n for v, n in counts.items()},
        "seconds": round(report.seconds, 3),
        "exchanges": report.exchanges,
        "exchange_seconds": round(report.exchange_seconds, 3),
        "exchanges_per_second": round(report.exchanges_per_second, 1),
        "notes": list(report.notes) + ([report.nothing_ran()] if report.nothing_ran() else []),
        "outcomes": [outcome_json(o) for o in report.outcomes],
    }


def document(data: Any) -> str:
    """A JSON report's text: indented by two, non-ASCII characters as they are, one final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_document(path: Path, data: Any) -> None:
    """Write a JSON report as UTF-8, its folder made first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document(data), encoding="utf-8")


def render(report: RunReport) -> str:
    return document(report_json(report))
