"""Benchmark helper: how fast this machine and interpreter run plain Python, so that figures of different days compare.

The speed targets are absolute (CPU seconds of one core), but the shared machines differ from day to day: the
figures ``speed_targets.md`` recorded on 2026-11-25 were 1.8–3.0× lower than the same benchmarks gave on
2026-11-27 on a tree whose changes in between touched neither the one-process explorer nor the reference
controller. The interpreter matters as much: a default ``pyenv`` build (no profile-guided optimisation) ran the
explorer and this workload 1.3–1.6× slower than Debian's optimised ``python3.11`` on the same machine. A figure
is only comparable with the calibration printed beside it.

The workload is fixed and deterministic, and does what the explorer and the reference controller do most: build
frozen records and small dicts, hash tuples and frozensets, read attributes, loop over a few items. Its figure is
the best CPU time of ``repeat`` runs (lower is faster).

    .venv/bin/python benchmarks/calibration.py [--repeat N]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class _Record:
    topic: str
    partition: int
    leader: int
    isr: tuple[int, ...]


def _workload(rounds: int = 60_000) -> int:
    """A fixed mix of record building, hashing, dict and set work; returns a checksum (so nothing is optimised
    away and a changed workload is noticed)."""
    topics = [f"topic-{i}" for i in range(8)]
    table: dict[tuple[str, int], _Record] = {}
    total = 0
    for i in range(rounds):
        topic = topics[i % 8]
        p = i % 64
        isr = tuple(sorted({(i + k) % 5 for k in range(3)}))
        rec = _Record(topic, p, isr[0], isr)
        old = table.get((topic, p))
        if old is None or old.isr != rec.isr:
            table[(topic, p)] = rec
        live = frozenset(b for b in range(5) if b != i % 5)
        total += sum(1 for b in rec.isr if b in live) + (hash((rec.topic, rec.partition, rec.leader)) & 7)
    return total + len(table)


def cpu_model() -> str:
    """The CPU's model name (Linux), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def calibrate(repeat: int = 5) -> float:
    """The best CPU seconds of ``repeat`` runs of the fixed workload."""
    best = float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        _workload()
        best = min(best, time.process_time() - cpu)
    return best


def describe(seconds: float) -> str:
    """One line naming the calibration figure, the interpreter and the CPU."""
    return (
        f"calibration {seconds:.3f} CPU s (benchmarks/calibration.py, lower is faster; {sys.executable}, "
        f"{platform.python_implementation()} {platform.python_version()}, {cpu_model()})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    print(describe(calibrate(args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
