"""Benchmark: the explorer's distinct states per second, and the time of ``kcspec verify``.

Configurations: the default ones of ``kcspec verify`` (3 brokers, 1 partition, RF 2, depth 3; and depth 2 with
ZooKeeper and controller faults) and a larger one (4 brokers, 2 partitions, RF 3), both profiles. Target
(issue "formal checking"): ≥ 20,000 distinct states/s on one core; ``kcspec verify`` ≤ 5 minutes. Wall seconds
include waiting for the CPU on a shared machine; the CPU seconds of the process are the comparable figure (the
spec's one-off compilation per profile is measured apart, as the explorer's own clock leaves it out).

The TLA+ models of ``model/tla/state_counts.json`` (the explorer on the generated module's own state space, to
the fixed point, as ``kcspec tla crosscheck`` runs it) are measured too, and their counts checked.

    .venv/bin/python benchmarks/explore_rate.py [--large-depth D] [--skip-verify] [--skip-tla-models]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import harness  # beside this script
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine

CONFIGS = (
    dict(brokers=3, topics=1, partitions=1, rf=2, depth=3),
    dict(brokers=3, topics=1, partitions=1, rf=2, depth=2, faults=frozenset({"zk", "controller"})),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--large-depth", type=int, default=2)
    ap.add_argument("--skip-verify", action="store_true")
    ap.add_argument("--skip-tla-models", action="store_true")
    args = ap.parse_args(argv)
    harness.print_header("Explorer rate")
    print(
        "| profile | configuration | distinct states | transitions | seconds | states/s | CPU s | states/CPU s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    large = dict(brokers=4, topics=1, partitions=2, rf=3, depth=args.large_depth)
    compile_cpu: dict[str, float] = {}
    for profile in ("kafka-2.8", "kafka-1.1"):
        cpu = time.process_time()
        SpecMachine(profile)
        InvariantChecker(profile)
        compile_cpu[profile] = time.process_time() - cpu
    for profile in ("kafka-2.8", "kafka-1.1"):
        for params in (*CONFIGS, large):
            cfg = ExploreConfig(profile=profile, **params)
            cpu = time.process_time()
            result = explore(cfg)
            cpu = time.process_time() - cpu
            s = result.stats
            verdict = "" if result.finding is None else f" VIOLATION: {result.finding.message}"
            print(
                f"| {profile} | {cfg.describe().split(': ', 1)[1]} | {s.distinct_states} | {s.transitions} | "
                f"{s.seconds:.1f} | {s.states_per_second:.0f} | {cpu:.2f} | {s.distinct_states / cpu:.0f} |{verdict}",
                flush=True,
            )
    compiled = ", ".join(f"{p} {c:.1f}" for p, c in compile_cpu.items())
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}; compiling the spec, CPU s: {compiled}")
    if not args.skip_tla_models:
        _tla_models()
    if not args.skip_verify:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "kcspec", "verify", "--out", "/tmp/kcspec-bench-verify"],
            capture_output=True,
            text=True,
            check=False,
        )
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
        print(f"\nkcspec verify: {time.perf_counter() - start:.1f} s, exit {proc.returncode}: {last}")
    return 0


def _tla_models() -> None:
    from kcspec.conformance.selfcheck.explore.tla_model import check_count
    from kcspec.model.tla.manifest import load

    print(
        "\n| TLA+ model | profile | distinct states (manifest) | transitions | seconds | states/s | CPU s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for e in load():
        cpu = time.process_time()
        checked = check_count(e)
        cpu = time.process_time() - cpu
        s = checked.result.stats
        verdict = "" if checked.problem is None else f" MISMATCH: {checked.problem}"
        print(
            f"| {e.name} | {e.profile} | {s.distinct_states} ({e.distinct_states}) | {s.transitions} | "
            f"{s.seconds:.1f} | {s.states_per_second:.0f} | {cpu:.2f} |{verdict}",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
