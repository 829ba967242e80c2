"""Benchmark: the floor of the explorer's speed — the reference controller's own cost per explored transition.

For each benchmark configuration of ``explore_rate.py``, the explorer's graph (same candidates, same
symmetry-reduced deduplication, same depth) is first collected by a breadth-first search that runs the
reference controller alone. Then only what the explorer needs from the reference controller is timed over
that graph: for every expanded state, load it and ask the guard of every candidate event; for every enabled
event, handle it (the post-state snapshot included) and load the state again for the next candidate.
Nothing of the spec, the invariants or the symmetry key is timed. The result bounds the explorer from
above while it runs the Python reference controller on every transition:
``distinct states / floor seconds``.

    .venv/bin/python benchmarks/ref_floor.py [--large-depth D] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from collections.abc import Hashable

import harness  # beside this script
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.symmetry import canonical_state
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState

CONFIGS = (
    dict(brokers=3, topics=1, partitions=1, rf=2, depth=3),
    dict(brokers=3, topics=1, partitions=1, rf=2, depth=2, faults=frozenset({"zk", "controller"})),
)

Graph = list[tuple[ClusterState, tuple[ControllerEvent, ...]]]


def collect(cfg: ExploreConfig) -> tuple[Graph, int, int]:
    """The expanded states with their candidate events, the distinct-state and the transition counts."""
    ref = ReferenceController(cfg.profile, trace=True)
    for ev in bootstrap(cfg):
        ref.handle(ev)
    state = ref.snapshot()

    def key(s: ClusterState) -> Hashable:
        return canonical_state(s, cfg.brokers) if cfg.symmetry else s

    seen = {key(state)}
    frontier: deque[tuple[ClusterState, int]] = deque([(state, 0)])
    graph: Graph = []
    transitions = 0
    while frontier:
        state, depth = frontier.popleft()
        if depth >= cfg.depth:
            continue
        evs = tuple(candidates(state, cfg))
        graph.append((state, evs))
        for ev in evs:
            ref.load(state)
            if not ref.enabled(ev):
                continue
            transitions += 1
            post = ref.handle(ev).state
            k = key(post)
            if k not in seen:
                seen.add(k)
                frontier.append((post, depth + 1))
    return graph, len(seen), transitions


def floor_seconds(profile: str, graph: Graph) -> float:
    """CPU seconds of the reference controller's part of the explorer over ``graph``."""
    ref = ReferenceController(profile, trace=True)
    start = time.process_time()
    for state, evs in graph:
        ref.load(state)
        for ev in evs:
            if not ref.enabled(ev):
                continue
            ref.state_change_log.clear()
            ref.controller_log.clear()
            ref.handle(ev)
            ref.load(state)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--large-depth", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="time each configuration N times, keep the fastest")
    args = ap.parse_args(argv)
    harness.print_header("Reference controller floor (CPU per explored transition)")
    print(
        "| profile | configuration | distinct states | transitions | floor CPU s | µs/transition | states/s bound |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    large = dict(brokers=4, topics=1, partitions=2, rf=3, depth=args.large_depth)
    for profile in ("kafka-2.8", "kafka-1.1"):
        for params in (*CONFIGS, large):
            cfg = ExploreConfig(profile=profile, **params)
            graph, distinct, transitions = collect(cfg)
            secs = min(floor_seconds(profile, graph) for _ in range(args.repeat))
            print(
                f"| {profile} | {cfg.describe().split(': ', 1)[1]} | {distinct} | {transitions} | {secs:.2f} | "
                f"{secs / transitions * 1e6:.0f} | {distinct / secs:.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
