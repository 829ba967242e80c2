"""Differential testing through the subprocess path: sequences/s, and the time default settings take to catch
the deliberately buggy examples.

Usage: .venv/bin/python benchmarks/differential_rate.py [--sequences 300] [--no-catch]

1. sequences/s: ``run_differential`` against ``kcspec serve-reference`` (the reference controller behind the
   subprocess protocol, so no divergence: the figure is the search itself, not shrinking) for ``--sequences``
   sequences, seed 0;
2. time to catch: ``kcspec conformance run --sut CMD --level controller`` with default settings (vectors, then
   300 differential sequences) against the deliberately buggy example and each session mutant of the bug zoo
   (``conformance/examples/mutant_controller.py NAME``): wall time, exit code, and which part caught it.

The load average (before and after) and the CPU seconds of this process and of its finished children are
printed with the figures: on a shared machine, wall-clock rates mean little without them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kcspec.conformance import differential
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.selfcheck.bugzoo.session_mutants import BY_NAME
from kcspec.conformance.verdicts import Verdict
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
KCSPEC = str(Path(sys.executable).with_name("kcspec"))


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def _cpu() -> str:
    t = os.times()
    return f"CPU {t.user + t.system:.1f} s here + {t.children_user + t.children_system:.1f} s in finished children"


def rate(sequences: int) -> None:
    print(f"## sequences/s through the subprocess path ({_load()})")
    adapter = SubprocessAdapter([KCSPEC, "serve-reference"], timeout=30.0)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        outcomes, notes = differential.run_differential(
            adapter,
            profile="kafka-2.8",
            examples=sequences,
            seed=0,
            trace_dir=Path(tmp),
            console=Console(file=io.StringIO()),
        )
        wall = time.perf_counter() - started
    verdicts = [o.verdict.value for o in outcomes]
    print(
        f"- {sequences} sequences against `kcspec serve-reference`: {wall:.1f} s wall, "
        f"{sequences / wall:.1f} sequences/s; verdicts {verdicts}"
    )
    print(f"- {notes[0]}")
    print(f"- {_cpu()}; {_load()}")


def catch() -> None:
    print(f"\n## default settings against the buggy examples ({_load()})")
    suts = {"buggy_controller.py": f"{sys.executable} {ROOT / 'conformance/examples/buggy_controller.py'}"}
    for name in BY_NAME:
        suts[name] = f"{sys.executable} {ROOT / 'conformance/examples/mutant_controller.py'} {name}"
    print(
        "| SUT | exit | wall s | CPU s (children) | caught by | distinct differential divergences | load after |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, cmd in suts.items():
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "r.json"
            before = os.times()
            started = time.perf_counter()
            result = subprocess.run(
                [KCSPEC, "conformance", "run", "--sut", cmd, "--level", "controller", "--json", str(report)],
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            wall = time.perf_counter() - started
            after = os.times()
            cpu = after.children_user + after.children_system - before.children_user - before.children_system
            data = json.loads(report.read_text()) if report.exists() else {"outcomes": []}
        bad = [o for o in data["outcomes"] if o["verdict"] in (Verdict.failed.value, Verdict.errored.value)]
        diff = [o for o in bad if ".differential." in o["id"]]
        parts = sorted({"differential" if ".differential." in o["id"] else "vectors" for o in bad})
        one = os.getloadavg()[0]
        print(
            f"| {label} | {result.returncode} | {wall:.1f} | {cpu:.1f} | {' + '.join(parts) or 'nothing'} | "
            f"{len(diff)} | {one:.2f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sequences", type=int, default=300)
    parser.add_argument("--no-catch", action="store_true")
    args = parser.parse_args()
    rate(args.sequences)
    if not args.no_catch:
        catch()
    print(f"\n{_cpu()}; {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
