"""Benchmark: wall-clock and CPU time of the proof suite (``kcspec prove``) per profile and in total.

Run: ``.venv/bin/python benchmarks/prove_time.py [--brokers N] [--induction]``; prints a Markdown table
(recorded in ``benchmarks/results/prove.md``). CPU seconds include the induction checks' worker processes;
the load average before and after is printed because the development machine is shared.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from collections import Counter

from kcspec.model.z3.prove import DEFAULT_BROKERS, run_proofs
from kcspec.spec.profiles import PROFILES


def _cpu() -> float:
    """User + system CPU seconds of this process and of its finished children (the worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brokers", type=int, default=DEFAULT_BROKERS)
    parser.add_argument("--induction", action="store_true")
    args = parser.parse_args()
    rows = []
    load_before = os.getloadavg()
    start, cpu_start = time.perf_counter(), _cpu()
    for name in PROFILES:
        t0, c0 = time.perf_counter(), _cpu()
        results = run_proofs(name, args.brokers, args.induction)
        counts = Counter(r.status for r in results)
        rows.append((name, time.perf_counter() - t0, _cpu() - c0, counts))
    total, cpu = time.perf_counter() - start, _cpu() - cpu_start
    load = " ".join(f"{x:.2f}" for x in load_before) + " → " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"brokers 1..{args.brokers}, induction={args.induction}, Python {platform.python_version()}, load {load}"
    )
    print("| profile | wall s | CPU s | proved | expected cex | cex | skipped |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, secs, cpu_secs, c in rows:
        print(
            f"| {name} | {secs:.1f} | {cpu_secs:.1f} | {c['proved']} | {c['expected-counterexample']} | "
            f"{c['counterexample']} | {c['skipped']} |"
        )
    print(f"| **total** | **{total:.1f}** | **{cpu:.1f}** | | | | |")


if __name__ == "__main__":
    main()
