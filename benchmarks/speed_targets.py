"""Benchmark: every one-core speed target of the faster-step work, each figure printed against its target.

One command runs the three benchmarks one after the other and prints (and writes, with ``--out``) one table:

* the reference controller's floor (``ref_floor.py``): its own CPU time per explored transition on each
  ``ref_floor.py`` configuration — target ≤ 100 µs (≥ 10,000 transitions/s);
* the explorer (``explore_rate.py`` configurations, refinement and invariants on every step): distinct states
  per CPU second — target ≥ 5,000;
* the reference controller at 1,000,000 partitions (``failover_1m.py``, run as its own process so its memory
  does not weigh on the others): the failover ≤ 10 s and one broker failure after it ≤ 3 s.

Every figure is CPU seconds of the measuring process (``time.process_time``), which is the one-core time on a
quiet machine and what a loaded machine inflates least; the wall time and the 1-minute load average are printed
beside it, so a run on a busy machine can be told apart. The header names the machine's calibration
(``calibration.py``: a fixed plain-Python workload's CPU time, with the interpreter and the CPU), since the shared
machines and interpreter builds differ by up to 3× in speed: figures of two runs compare only with it. A target
is "met" when the figure satisfies it on every configuration (the worst configuration is shown); the failover
figures are judged only at 1,000,000 partitions (``--partitions`` smaller is for a quick look). Exit status 0
when every target is met, 1 otherwise.

    .venv/bin/python benchmarks/speed_targets.py [--out FILE] [--repeat N] [--partitions N] [--skip-failover]
        [--smallest]

``--smallest`` runs one small configuration per profile (3 brokers, RF 2, depth 2) instead of the benchmark's: a
check that the benchmark runs (``run.py smoke``), not a figure to compare with the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (sibling scripts, found through the line above)
import ref_floor  # noqa: E402
from kcspec.conformance.selfcheck.explore.explorer import explore  # noqa: E402
from kcspec.model.explore_config import ExploreConfig  # noqa: E402
from kcspec.model.invariants_check import InvariantChecker  # noqa: E402
from kcspec.model.step import SpecMachine  # noqa: E402

PROFILES = ("kafka-2.8", "kafka-1.1")
FLOOR_TARGET_US = 100.0
EXPLORE_TARGET = 5000.0
FAILOVER_TARGET_S = 10.0
BROKER_FAILURE_TARGET_S = 3.0


@dataclass(frozen=True)
class Figure:
    """One measured figure of one configuration."""

    target: str
    configuration: str
    value: float
    unit: str
    met: bool
    wall: float
    cpu: float
    load: float


SMALLEST = dict(brokers=3, topics=1, partitions=1, rf=2, depth=2)
"""The one configuration per profile of ``--smallest`` (a smoke run)."""


def configs(smallest: bool = False) -> list[ExploreConfig]:
    """The explorer and floor configurations of the speed targets (``ref_floor.CONFIGS`` and a larger one), both
    profiles (``side_by_side.py`` runs the same ones); with ``smallest``, ``SMALLEST`` for each profile."""
    large = dict(brokers=4, topics=1, partitions=2, rf=3, depth=2)
    chosen = (SMALLEST,) if smallest else (*ref_floor.CONFIGS, large)
    return [ExploreConfig(profile=profile, **params) for profile in PROFILES for params in chosen]


def _name(cfg: ExploreConfig) -> str:
    return f"{cfg.profile}, {cfg.describe().split(': ', 1)[1]}"


def floor_figures(repeat: int, chosen: list[ExploreConfig]) -> list[Figure]:
    """The reference controller's CPU time per transition over each configuration's graph (best of ``repeat``)."""
    out = []
    for cfg in chosen:
        graph, _, transitions = ref_floor.collect(cfg)
        load = os.getloadavg()[0]
        wall = time.perf_counter()
        cpu = min(ref_floor.floor_seconds(cfg.profile, graph) for _ in range(repeat))
        wall = (time.perf_counter() - wall) / repeat
        us = cpu / transitions * 1e6
        out.append(
            Figure("reference floor", _name(cfg), us, "µs/transition", us <= FLOOR_TARGET_US, wall, cpu, load)
        )
        print(
            f"  floor    {_name(cfg)}: {us:.0f} µs/transition (CPU {cpu:.2f} s, load {load:.1f})", flush=True
        )
    return out


def explore_figures(repeat: int, chosen: list[ExploreConfig]) -> list[Figure]:
    """Distinct states per CPU second of the explorer on each configuration (best of ``repeat``)."""
    for profile in PROFILES:  # the spec's one-off compilation per process is not part of the rate
        SpecMachine(profile)
        InvariantChecker(profile)
    out = []
    for cfg in chosen:
        best: tuple[float, float, int] | None = None
        load = os.getloadavg()[0]
        for _ in range(repeat):
            wall = time.perf_counter()
            cpu = time.process_time()
            result = explore(cfg)
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - wall
            if result.finding is not None:
                raise SystemExit(f"explore found a violation on {_name(cfg)}: {result.finding.message}")
            if best is None or cpu < best[1]:
                best = (wall, cpu, result.stats.distinct_states)
        assert best is not None
        wall, cpu, states = best
        rate = states / cpu
        out.append(
            Figure("explorer", _name(cfg), rate, "states/CPU s", rate >= EXPLORE_TARGET, wall, cpu, load)
        )
        print(
            f"  explore  {_name(cfg)}: {states} states, {rate:.0f} states/CPU s (load {load:.1f})", flush=True
        )
    return out


def failover_figures(partitions: int) -> list[Figure]:
    """``failover_1m.py --partitions N`` in a process of its own; its failover and broker-failure steps."""
    with tempfile.TemporaryDirectory() as tmp:
        out_json = Path(tmp) / "failover.json"
        cmd = [
            sys.executable,
            str(HERE / "failover_1m.py"),
            "--partitions",
            str(partitions),
            "--json",
            str(out_json),
        ]
        print(f"  {' '.join(cmd[1:])}", flush=True)
        subprocess.run(cmd, check=True)
        steps = {r["step"]: r for r in json.loads(out_json.read_text())["results"]}
    name = f"kafka-2.8, {partitions:,} partitions, RF 3, 12 brokers"
    out = []
    for step, target_name, limit in (
        ("failover", "1M failover", FAILOVER_TARGET_S),
        ("broker failure", "1M broker failure", BROKER_FAILURE_TARGET_S),
    ):
        r = steps[step]
        cpu = float(r["cpu_seconds"])
        out.append(
            Figure(
                target_name,
                name,
                cpu,
                "CPU s",
                cpu <= limit,
                float(r["seconds"]),
                cpu,
                float(r["load_average_1m"]),
            )
        )
    return out


TARGETS = {
    "reference floor": f"≤ {FLOOR_TARGET_US:.0f} µs/transition (≥ 10,000 transitions/s)",
    "explorer": f"≥ {EXPLORE_TARGET:,.0f} distinct states/CPU s",
    "1M failover": f"≤ {FAILOVER_TARGET_S:.0f} s",
    "1M broker failure": f"≤ {BROKER_FAILURE_TARGET_S:.0f} s",
}


def _value(f: Figure) -> str:
    return f"{f.value:.2f} {f.unit}" if f.unit == "CPU s" else f"{f.value:,.0f} {f.unit}"


def render(figures: list[Figure], header: str) -> str:
    """The summary (worst configuration per target) and every figure, as Markdown."""
    lines = [header, "", "| target | figure (worst configuration) | goal | met |", "|---|---:|---|---|"]
    for target, goal in TARGETS.items():
        mine = [f for f in figures if f.target == target]
        if not mine:
            lines.append(f"| {target} | not run | {goal} | — |")
            continue
        worst = max(mine, key=lambda f: f.value) if goal.startswith("≤") else min(mine, key=lambda f: f.value)
        met = "yes" if all(f.met for f in mine) else "**no**"
        lines.append(f"| {target} | {_value(worst)} | {goal} | {met} |")
    lines += [
        "",
        "| target | configuration | figure | CPU s | wall s | load avg (1 min) | met |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f.target} | {f.configuration} | {_value(f)} | {f.cpu:.2f} | {f.wall:.2f} | "
            f"{f.load:.1f} | {'yes' if f.met else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="also write the table (Markdown) to this file")
    ap.add_argument("--repeat", type=int, default=3, help="time each configuration N times, keep the fastest")
    ap.add_argument("--partitions", type=int, default=1_000_000, help="the failover benchmark's cluster size")
    ap.add_argument("--skip-failover", action="store_true", help="leave out the 1M-partition benchmark")
    ap.add_argument(
        "--smallest", action="store_true", help="one small configuration per profile (a smoke run)"
    )
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.partitions < 1:
        ap.error("--repeat and --partitions must be at least 1")
    machine = harness.machine()
    harness.print_header("Speed targets", machine)
    chosen = configs(args.smallest)
    figures = floor_figures(args.repeat, chosen)
    figures += explore_figures(args.repeat, chosen)
    if not args.skip_failover:
        figures += failover_figures(args.partitions)
    header = (
        f"Speed targets, {machine.one_line()}, {harness.format_load()} at the end. Figures are CPU seconds of one "
        "process (one core); compare figures of different runs only with their calibrations."
    )
    table = render(figures, header)
    print()
    print(table, end="")
    if args.out:
        args.out.write_text(table)
        print(f"\nwritten to {args.out}")
    return 0 if all(f.met for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
