"""Swarm simulation rate: checked random-walk steps per second on Spark with 1 and 2 local cores.

Usage::

    .venv/bin/python benchmarks/swarm_rate.py --runs 16 --steps 200 --masters 'local[1]' 'local[2]'

For each master, in a fresh process, the same swarm as ``kcspec simulate --spark --master M --runs N --steps S
--seed SEED`` (``conformance.selfcheck.swarm.run_swarm``: every walk checked step by step against the spec and the
invariants) runs after the Spark session has started, so the figure is the swarm job alone. Reported per
master: wall seconds, steps/s, steps/s per core, and the steps/s of one walk on its own (the sum of the walks'
own times: what a core does when it runs walks). The scaling ratio is steps/s with the most cores over steps/s
with the fewest. Every master runs the same seeds, so the steps are the same.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def cores(master: str) -> int:
    """The number of cores of a ``local[n]`` master (``local[*]``: this machine's)."""
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    return os.cpu_count() or 1 if inside == "*" else int(inside)


def measure(master: str, runs: int, steps: int, seed: int, topics: int, partitions: int) -> dict[str, object]:
    """One swarm on ``master`` (in this process): its figures as a dict."""
    from kcspec.conformance.selfcheck.simulate import WalkConfig
    from kcspec.conformance.selfcheck.swarm import run_swarm, run_walk
    from kcspec.model.spark.session import make_session

    cfg = WalkConfig(brokers=5, topics=topics, partitions=partitions, rf=3)
    spark = make_session(master, app="kcspec-simulate")  # started here: run_swarm reuses it, then stops it
    sc = spark.sparkContext
    warm = (cfg.profile, cfg.brokers, cfg.topics, cfg.partitions, cfg.rf, 1)
    sc.parallelize(range(sc.defaultParallelism), sc.defaultParallelism).map(
        lambda s: run_walk(*warm, s).steps
    ).collect()  # Python workers started and kcspec imported in each before the clock starts
    load = os.getloadavg()
    t0 = time.perf_counter()
    report = run_swarm(cfg, runs, steps, seed, master)
    wall = time.perf_counter() - t0
    return {
        "master": master,
        "cores": cores(master),
        "runs": report.runs,
        "steps": report.steps,
        "violations": len(report.violations),
        "wall_seconds": round(wall, 2),
        "steps_per_second": round(report.steps / wall, 1),
        "steps_per_second_per_core": round(report.steps / wall / cores(master), 1),
        "steps_per_walk_second": round(report.steps / report.walk_seconds, 1) if report.walk_seconds else 0.0,
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--topics", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure this master and print JSON
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.runs, args.steps, args.seed, args.topics, args.partitions)))
        return
    import harness  # beside this script (imported here: the --one processes do not need it)

    harness.print_header(f"swarm of {args.runs} walks × {args.steps} steps, seed {args.seed}")
    results = []
    for master in args.masters:
        cmd = [sys.executable, __file__, "--one", master]
        cmd += ["--runs", str(args.runs), "--steps", str(args.steps), "--seed", str(args.seed)]
        cmd += ["--topics", str(args.topics), "--partitions", str(args.partitions)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        results.append(r)
        print(json.dumps(r), flush=True)
    low = min(results, key=lambda r: int(str(r["cores"])))
    high = max(results, key=lambda r: int(str(r["cores"])))
    if low is not high:
        ratio = float(str(high["steps_per_second"])) / float(str(low["steps_per_second"]))
        print(
            f"scaling {low['master']} → {high['master']}: {ratio:.2f}× (linear: {high['cores']}/{low['cores']})"
        )


if __name__ == "__main__":
    main()
