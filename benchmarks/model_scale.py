"""Benchmark: what one state of a bounded TLA+ model costs the explorer, for estimating models too large to run here.

For each model (``--models``: brokers/partitions/RF, kafka-2.8, bounds ``--bounds``), one process explores the
first ``--states`` states and prints: the action instances of the module's ``Next`` (the candidates tried in every
state), the sizes of the first levels, transitions per expanded state and CPU per expanded state.

    .venv/bin/python benchmarks/model_scale.py [--models 2/1/2,3/2/3] [--bounds 2,3,4,4] [--states 2500]
"""

from __future__ import annotations

import argparse
import time

from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_events, model_space
from kcspec.model.tla.config import ModelConfig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="2/1/2,3/2/3", help="brokers/partitions/RF, comma-separated")
    ap.add_argument("--bounds", default="2,3,4,4", help="controller epoch, leader epoch, zxid, znode version")
    ap.add_argument("--states", type=int, default=2500)
    ap.add_argument("--profile", default="kafka-2.8")
    args = ap.parse_args(argv)
    ce, le, zxid, zkv = (int(x) for x in args.bounds.split(","))
    for model in args.models.split(","):
        brokers, partitions, rf = (int(x) for x in model.split("/"))
        config = ModelConfig(brokers, 1, partitions, rf, ce, le, zxid, zkv)
        cpu = time.process_time()
        result = search(model_space(args.profile, config, max_states=args.states))
        cpu = time.process_time() - cpu
        s = result.stats
        expanded = sum(s.level_sizes[: s.level]) + s.level_expanded
        print(
            f"{config.describe()}: {len(model_events(args.profile, config)):,} action instances; levels "
            f"{s.level_sizes}; {s.transitions / expanded:.0f} transitions and {cpu / expanded * 1000:.0f} CPU ms "
            f"per expanded state ({expanded:,} expanded, {s.distinct_states:,} states, {cpu:.1f} CPU s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
