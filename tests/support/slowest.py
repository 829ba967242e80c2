"""Where a test run's time went: the slowest tests and each tier's total, read from pytest's JUnit XML.

    .venv/bin/pytest ... --junitxml=run.xml
    .venv/bin/python -m tests.support.slowest run.xml [--top 20]

Prints a Markdown table (test, tier, seconds) of the ``--top`` slowest test cases and, per tier, the number of
tests and their summed time. The times are pytest's own (call plus set-up and tear-down of each test), so a
session fixture's cost is charged to the first test that uses it. Exit 2 with a message for a file that is not
pytest's JUnit XML.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

TIERS = ("unit", "integration", "quality", "slow")


def _tier(classname: str) -> str:
    parts = classname.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "tests" and parts[1] in TIERS else "other"


def cases(path: Path) -> list[tuple[str, str, float]]:
    """(test id, tier, seconds) of every test case in the report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise SystemExit(f"{path}: not a readable JUnit XML report ({e})") from None
    out = []
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            raise SystemExit(f"{path}: test case {classname}::{name} has no numeric time") from None
        out.append((f"{classname.replace('.', '/')}.py::{name}", _tier(classname), seconds))
    if not out:
        raise SystemExit(f"{path}: no test cases (not a pytest JUnit XML report?)")
    return out


def report(path: Path, top: int) -> str:
    found = cases(path)
    lines = [
        f"Slowest {top} of {len(found)} tests ({path.name}):",
        "",
        "| seconds | tier | test |",
        "|---:|---|---|",
    ]
    for test, tier, seconds in sorted(found, key=lambda c: -c[2])[:top]:
        lines.append(f"| {seconds:.1f} | {tier} | `{test}` |")
    totals: dict[str, list[float]] = defaultdict(list)
    for _, tier, seconds in found:
        totals[tier].append(seconds)
    lines += ["", "| tier | tests | seconds (summed over workers) |", "|---|---:|---:|"]
    for tier in (*TIERS, "other"):
        if tier in totals:
            lines.append(f"| {tier} | {len(totals[tier])} | {sum(totals[tier]):.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    try:
        print(report(args.report, args.top))
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
