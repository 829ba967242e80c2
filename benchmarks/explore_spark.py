"""Benchmark: ``kcspec explore --spark`` — distinct states per second on one Spark master, and what a level costs.

One run per master (a process holds one Spark context), e.g. ``local[1]`` then ``local[2]``:

    .venv/bin/python benchmarks/explore_spark.py --master 'local[1]'
    .venv/bin/python benchmarks/explore_spark.py --master 'local[2]'

For each configuration: distinct states, levels, wall seconds of the search (the session already started),
states/s, and the CPU seconds of the whole process tree (driver, JVM, Python workers — read from /proc, Linux
only), with the load average before and after; then every level's new states, successors and wall seconds, and
Spark's floor: the wall seconds of a level's job shape (a two-stage shuffle job through Python workers) on a
handful of records, the per-level cost no amount of cores removes. The one-process explorer's figures on the same
configuration are printed for comparison (``--skip-one`` leaves them out).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import harness  # beside this script
from kcspec.conformance.selfcheck.explore.explorer import search, space_of
from kcspec.conformance.selfcheck.explore.spark_explore import spark_search, start_session
from kcspec.model.explore_config import ExploreConfig

CONFIGS = (
    ExploreConfig("kafka-2.8", brokers=3, topics=1, partitions=1, rf=2, depth=3),
    ExploreConfig("kafka-2.8", brokers=3, topics=1, partitions=1, rf=2, depth=4),
)


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of ``root`` and every live descendant (``/proc/<pid>/stat``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        pid, ppid = int(entry.name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12])) / ticks
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


def floor_seconds(spark: Any, repeat: int = 3) -> float:
    """The least wall time of a level-shaped job (Python map, shuffle by key, Python reduce + map) on 100 records."""
    sc = spark.sparkContext
    parts = sc.defaultParallelism
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        rdd = sc.parallelize([(i, i) for i in range(100)], parts).map(lambda kv: (kv[0] % 50, kv[1]))
        rdd.reduceByKey(min, parts).mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument(
        "--skip-one", action="store_true", help="do not run the one-process explorer for comparison"
    )
    ap.add_argument("--depth", type=int, help="only kafka-2.8, 3 brokers, RF 2 at this depth (a smoke run)")
    args = ap.parse_args(argv)
    harness.print_header(f"explore --spark on {args.master}")
    print(f"load average before: {os.getloadavg()}")
    t = time.perf_counter()
    spark = start_session(args.master)
    print(
        f"session {args.master}: {time.perf_counter() - t:.1f} s, {spark.sparkContext.defaultParallelism} cores"
    )
    warm = spark_search(space_of(ExploreConfig("kafka-2.8", brokers=3, rf=2, depth=1)), spark)
    print(f"warm-up (Python workers compile the spec): {warm.result.stats.seconds:.1f} s")
    print(f"Spark's floor per level: {floor_seconds(spark):.2f} s")
    chosen = (
        CONFIGS if args.depth is None else (ExploreConfig("kafka-2.8", brokers=3, rf=2, depth=args.depth),)
    )
    for cfg in chosen:
        cpu0, t0 = tree_cpu_seconds(os.getpid()), time.perf_counter()
        run = spark_search(space_of(cfg), spark)
        wall, cpu = time.perf_counter() - t0, tree_cpu_seconds(os.getpid()) - cpu0
        s = run.result.stats
        assert run.result.finding is None, run.result.finding
        print(
            f"{cfg.describe()}: {s.distinct_states} states, {s.transitions} transitions, {len(run.levels)} levels, "
            f"{wall:.1f} s wall, {s.distinct_states / wall:.0f} states/s, {cpu:.1f} CPU s "
            f"({s.distinct_states / cpu:.0f} states/CPU s); load {os.getloadavg()}"
        )
        for level in run.levels:
            print(
                f"   depth {level.depth}: {level.new} new, {level.successors} successors, {level.seconds:.2f} s"
            )
        if not args.skip_one:
            c0 = time.process_time()
            one = search(space_of(cfg))
            print(
                f"   one process: {one.stats.distinct_states} states, {one.stats.seconds:.1f} s wall, "
                f"{time.process_time() - c0:.1f} CPU s"
            )
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
