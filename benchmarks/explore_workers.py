"""Benchmark: ``kcspec explore --workers`` from 1 to N processes, side by side with a plain CPU-bound calibration.

On a shared machine the speed-up two processes *can* get depends on what else runs, so every measurement of the
explorer is paired with the same measurement of a calibration job: a fixed amount of pure-Python arithmetic done by
one process, then split over N processes. The explorer's speed-up is wall(1 worker) / wall(N workers); the
calibration's is what the machine gave two independent CPU-bound processes at that moment; their ratio is the
explorer's parallel efficiency. CPU seconds (the coordinator's and its workers', which it joins) are printed too.

    .venv/bin/python benchmarks/explore_workers.py [--workers 2] [--depth 4] [--profile kafka-2.8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import time

import harness  # beside this script
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine

SPIN = 4_000_000


def _spin(n: int) -> int:
    acc = 0
    for i in range(n):
        acc = (acc + i * i) % 1_000_003
    return acc


def calibration(workers: int, total: int) -> tuple[float, float]:
    """Wall seconds of ``total`` spin iterations in one process, and split over ``workers`` processes."""
    ctx = multiprocessing.get_context("fork")
    start = time.perf_counter()
    p = ctx.Process(target=_spin, args=(total,))
    p.start()
    p.join()
    one = time.perf_counter() - start
    start = time.perf_counter()
    procs = [ctx.Process(target=_spin, args=(total // workers,)) for _ in range(workers)]
    for q in procs:
        q.start()
    for q in procs:
        q.join()
    return one, time.perf_counter() - start


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run(cfg: ExploreConfig, workers: int) -> tuple[int, int, float, float]:
    """Distinct states, transitions, wall seconds and CPU seconds (coordinator + workers) of one exploration."""
    cpu = _cpu()
    start = time.perf_counter()
    result = explore(cfg, workers=workers)
    wall = time.perf_counter() - start
    cpu = _cpu() - cpu
    if result.finding is not None:
        raise SystemExit(f"unexpected finding: {result.finding.message}")
    return result.stats.distinct_states, result.stats.transitions, wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--profile", default="kafka-2.8")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    cfg = ExploreConfig(profile=args.profile, brokers=args.brokers, depth=args.depth)
    SpecMachine(cfg.profile)
    InvariantChecker(cfg.profile)  # compiled once, before any fork
    harness.print_header(f"explore --workers 1 and {args.workers}; configuration: {cfg.describe()}")
    print(
        "| round | load avg | workers | states | transitions | wall s | CPU s | states/s | speed-up | "
        "calibration speed-up | efficiency |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        cal_one, cal_n = calibration(args.workers, SPIN)
        n1, t1, w1, c1 = run(cfg, 1)
        nn, tn, wn, cn = run(cfg, args.workers)
        if (n1, t1) != (nn, tn):
            raise SystemExit(f"counts differ: 1 worker {n1}/{t1}, {args.workers} workers {nn}/{tn}")
        cal = cal_one / cal_n
        speed = w1 / wn
        print(f"| {r} | {load:.1f} | 1 | {n1} | {t1} | {w1:.2f} | {c1:.2f} | {n1 / w1:.0f} | | | |")
        print(
            f"| {r} | {os.getloadavg()[0]:.1f} | {args.workers} | {nn} | {tn} | {wn:.2f} | {cn:.2f} | "
            f"{nn / wn:.0f} | {speed:.2f}× | {cal:.2f}× | {speed / cal:.0%} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
