"""The order test files are handed to the workers in: the longest first, from a recorded run's times.

``make test`` runs the suite on every core with ``--dist loadfile``: pytest-xdist gives each worker one file at a
time, in collection order, as it becomes free. In folder order the longest files (the bug zoo's campaigns, the
quality tier) came last, and one worker ran the last of them alone while the other core idled. Handing the files
out longest first (the classic longest-processing-time rule) leaves the short ones to fill the end. The tests
inside a file keep their order; only the order of the files changes, never which tests run.

The times are each file's summed test time in a recorded ``make test`` run (``file_seconds.json`` beside the
tests). They only order the files: a stale or missing entry costs some idle time at the end, never a result. A file
without an entry counts as ``UNKNOWN_SECONDS``. To record them again:

    .venv/bin/pytest ... --junitxml=run.xml        (or make test with --junitxml)
    .venv/bin/python -m tests.support.file_order run.xml
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from tests.support.paths import ROOT

SECONDS_FILE = ROOT / "tests" / "file_seconds.json"
UNKNOWN_SECONDS = 5.0
"""The time assumed for a file the recorded run did not have (a new file)."""


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


def load_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    """File (relative to the repository) → seconds; empty when the file is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


T = TypeVar("T", bound=_Item)


def longest_first(items: Sequence[T], seconds: dict[str, float]) -> list[T]:
    """``items`` grouped by file, the files in decreasing recorded time (ties and unknown files in their
    collection order), the items of a file in their order."""
    files: dict[str, list[T]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    order = sorted(enumerate(files), key=lambda p: (-seconds.get(p[1], UNKNOWN_SECONDS), p[0]))
    return [item for _, name in order for item in files[name]]


def file_of(classname: str) -> str | None:
    """The test file of a JUnit ``classname`` (``tests.x.test_y`` or ``tests.x.test_y.TestClass``)."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (ROOT / candidate).is_file():
            return candidate
    return None


def seconds_from_junit(path: Path) -> dict[str, float]:
    """Each test file's summed time in pytest's JUnit XML report."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ValueError(f"{path}: not a readable JUnit XML report ({exc})") from None
    totals: dict[str, float] = defaultdict(float)
    for case in root.iter("testcase"):
        name = file_of(case.get("classname", ""))
        if name is not None:
            totals[name] += float(case.get("time", "0") or 0)
    if not totals:
        raise ValueError(f"{path}: no test case of this repository's files")
    return {k: round(v, 1) for k, v in sorted(totals.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record each test file's time from a JUnit XML report.")
    parser.add_argument("report", type=Path, help="pytest's --junitxml report of a make test run")
    parser.add_argument("--out", type=Path, default=SECONDS_FILE)
    args = parser.parse_args(argv)
    try:
        files = seconds_from_junit(args.report)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    doc = {
        "about": "Each test file's summed time (s) in a recorded make test run: the order files are handed to the "
        "workers in, longest first (tests/support/file_order.py). Record again: python -m tests.support.file_order "
        "run.xml",
        "files": files,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{len(files)} files, {sum(files.values()):.0f} s, written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
