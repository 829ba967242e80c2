"""Benchmark: the 2-broker, RF 2 TLA+ model of each profile explored to the fixed point, with ``--workers``.

The explorer's TLA+-model mode (``conformance/selfcheck/explore/tla_model.py``: the generated module's ``Init``, every action
of its ``Next`` with every parameter value, the module's ``StateConstraint``) on the reference controller, with
refinement and invariants on every step, on ``--workers`` processes. Prints, per profile: distinct states,
transitions, depth, wall seconds, the CPU seconds of the process and its workers, and the load average.

    .venv/bin/python benchmarks/two_broker_fixed_point.py --workers 2 [--bounds CE,LE,ZXID,ZKV] [--max-states N]
        [--model BROKERS/PARTITIONS/RF] [--checkpoint DIR [--resume]] [--merge-budget MIB]

``--bounds`` are the model's bounds (controller epoch, leader epoch, zxid, znode version); the default is the
model ``kcspec tla crosscheck`` checks by default (``CROSSCHECK_DEFAULT``, 1,1,3,0). ``--model`` explores another
shape than 2 brokers, 1 partition, RF 2 (one topic), for models larger than the default. With ``--checkpoint DIR`` (one
profile) the end of every level is checkpointed in DIR; ``--resume`` continues from it. Each progress line gives the
resident memory of the process and its workers (``/proc``), so the memory per visited state can be read off.
``--merge-budget`` sets the memory a worker's merge holds before it sorts the level in runs on disk
(``merge.MERGE_BUDGET``, 256 MiB), to measure the merge in runs on a model whose levels would fit.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
from pathlib import Path

import harness  # beside this script
from kcspec.conformance.selfcheck.explore import merge
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.stats import ExploreStats
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.config import CROSSCHECK_DEFAULT, ModelConfig

DEFAULT_BOUNDS = (
    CROSSCHECK_DEFAULT.max_controller_epoch,
    CROSSCHECK_DEFAULT.max_leader_epoch,
    CROSSCHECK_DEFAULT.max_zxid,
    CROSSCHECK_DEFAULT.max_zk_version,
)
"""Controller epoch, leader epoch, zxid and znode-version bounds of the 2-broker crosscheck model."""


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)  # worker processes that have ended
    return own.ru_utime + own.ru_stime + done.ru_utime + done.ru_stime


def resident_mib() -> float:
    """The resident memory of this process and its live children (the workers), in MiB."""
    total = 0
    for pid in [os.getpid(), *(p.pid for p in multiprocessing.active_children())]:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--bounds", default=",".join(str(b) for b in DEFAULT_BOUNDS))
    ap.add_argument(
        "--model", default="2/1/2", help="brokers/partitions/RF of the model (one topic; default 2/1/2)"
    )
    ap.add_argument("--profiles", default="kafka-2.8,kafka-1.1")
    ap.add_argument("--max-states", type=int, default=5_000_000)
    ap.add_argument("--checkpoint", type=Path, default=None, help="checkpoint every level in this folder")
    ap.add_argument("--resume", action="store_true", help="continue the checkpoint of --checkpoint")
    ap.add_argument(
        "--merge-budget",
        type=float,
        default=None,
        help="a worker's merge memory in MiB before it sorts in runs",
    )
    args = ap.parse_args(argv)
    if args.merge_budget is not None:
        merge.MERGE_BUDGET = int(args.merge_budget * (1 << 20))  # read by each merge of the (forked) workers
    if args.checkpoint is not None and "," in args.profiles:
        ap.error("--checkpoint explores one profile: give --profiles one name")
    try:
        ce, le, zxid, zkv = (int(x) for x in args.bounds.split(","))
    except ValueError:
        ap.error(f"--bounds {args.bounds!r}: expected four integers CE,LE,ZXID,ZKV")
    try:
        brokers, partitions, rf = (int(x) for x in args.model.split("/"))
        config = ModelConfig(brokers, 1, partitions, rf, ce, le, zxid, zkv)
    except ValueError as exc:
        ap.error(
            f"--model {args.model!r} with --bounds {args.bounds!r}: {exc} (expected BROKERS/PARTITIONS/RF)"
        )
    harness.print_header(
        f"{brokers}-broker TLA+ model to the fixed point: {config.describe()}, {args.workers} workers"
    )
    for profile in args.profiles.split(","):
        load0, cpu0, t0 = os.getloadavg(), cpu_seconds(), time.perf_counter()
        shown = [0.0, -1.0]

        def progress(
            stats: ExploreStats, t0: float = t0, cpu0: float = cpu0, shown: list[float] = shown
        ) -> None:
            # a line every 30 s and at every new depth (with --workers: each level's end, so the lines give the
            # levels' sizes, which tell how fast a model too large to finish is still growing)
            if time.perf_counter() - shown[0] >= 60 or len(stats.level_sizes) != shown[1]:
                shown[0], shown[1] = time.perf_counter(), len(stats.level_sizes)
                print(
                    f"  {stats.distinct_states:,} states, {stats.transitions:,} transitions, depth "
                    f"{stats.depth_reached}, {time.perf_counter() - t0:.0f} s, {cpu_seconds() - cpu0:.0f} CPU s "
                    f"(ended workers only), load {os.getloadavg()[0]:.1f}; level {stats.level}: "
                    f"{stats.level_expanded:,} expanded; levels {stats.level_sizes}; "
                    f"{resident_mib():.0f} MiB resident",
                    flush=True,
                )

        result = search(
            model_space(profile, config, args.max_states),
            progress,
            workers=args.workers,
            checkpoint=args.checkpoint,
            resume=args.resume,
        )
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        s = result.stats
        verdict = (
            f"VIOLATION {result.finding.kind}: {result.finding.message}"
            if result.finding is not None
            else "stopped at --max-states"
            if s.truncated
            else "fixed point, no violation"
        )
        print(
            f"{profile} {config.describe()}: {verdict}; {s.distinct_states:,} distinct states, "
            f"{s.transitions:,} transitions, depth {s.depth_reached}, {args.workers} workers, {wall:.1f} s wall, "
            f"{cpu:.1f} CPU s, {s.distinct_states / wall:.0f} states/s; load {load0} -> {os.getloadavg()}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
