"""Benchmark: wall-clock and CPU time of the proof suite (``kcspec prove``) per profile and in total.

Run: ``.venv/bin/python benchmarks/prove_time.py [--brokers N] [--induction]``; prints a Markdown table
(recorded in ``benchmarks/results/prove.md``). CPU seconds include the induction checks' worker processes;
the load average before and after is printed because the development machine is shared.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import harness  # beside this script
from harness import process_cpu_seconds as _cpu
from kcspec.model.z3.prove import DEFAULT_BROKERS, run_proofs
from kcspec.spec.profiles import PROFILES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brokers", type=int, default=DEFAULT_BROKERS)
    parser.add_argument("--induction", action="store_true")
    args = parser.parse_args()
    harness.print_header(f"Proof suite time: brokers 1..{args.brokers}, induction={args.induction}")
    rows = []
    load_before = harness.format_load()
    start, cpu_start = time.perf_counter(), _cpu()
    for name in PROFILES:
        t0, c0 = time.perf_counter(), _cpu()
        results = run_proofs(name, args.brokers, args.induction)
        counts = Counter(r.status for r in results)
        rows.append((name, time.perf_counter() - t0, _cpu() - c0, counts))
    total, cpu = time.perf_counter() - start, _cpu() - cpu_start
    print(
        f"brokers 1..{args.brokers}, induction={args.induction}, load {load_before} → {harness.format_load()}"
    )
    statuses = ("proved", "expected-counterexample", "counterexample", "skipped")
    table = [
        (name, f"{secs:.1f}", f"{cpu_secs:.1f}", *(c[k] for k in statuses))
        for name, secs, cpu_secs, c in rows
    ]
    table.append(("**total**", f"**{total:.1f}**", f"**{cpu:.1f}**", "", "", "", ""))
    columns = ("profile", "wall s", "CPU s", "proved", "expected cex", "cex", "skipped")
    print(harness.markdown_table(columns, table, "lrrrrrr"))


if __name__ == "__main__":
    main()
