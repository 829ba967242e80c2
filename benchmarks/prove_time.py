"""Benchmark: wall-clock time of the default proof suite (``kcspec prove``) per profile and in total.

Run: ``.venv/bin/python benchmarks/prove_time.py [--brokers N] [--induction]``; prints a Markdown table
(recorded in ``benchmarks/results/prove.md``).
"""

from __future__ import annotations

import argparse
import platform
import time
from collections import Counter

from kcspec.model.z3.prove import DEFAULT_BROKERS, run_proofs
from kcspec.spec.profiles import PROFILES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brokers", type=int, default=DEFAULT_BROKERS)
    parser.add_argument("--induction", action="store_true")
    args = parser.parse_args()
    rows = []
    start = time.perf_counter()
    for name in PROFILES:
        t0 = time.perf_counter()
        results = run_proofs(name, args.brokers, args.induction)
        counts = Counter(r.status for r in results)
        rows.append((name, time.perf_counter() - t0, counts))
    total = time.perf_counter() - start
    print(f"brokers 1..{args.brokers}, induction={args.induction}, Python {platform.python_version()}")
    print("| profile | seconds | proved | expected cex | cex | skipped |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, secs, c in rows:
        print(
            f"| {name} | {secs:.1f} | {c['proved']} | {c['expected-counterexample']} | "
            f"{c['counterexample']} | {c['skipped']} |"
        )
    print(f"| **total** | **{total:.1f}** | | | | |")


if __name__ == "__main__":
    main()
