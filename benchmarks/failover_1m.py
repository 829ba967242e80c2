"""Benchmark: the reference controller on a cluster of 1,000,000 partitions (RF 3, 12 brokers).

Steps, each timed (wall clock, and the process's CPU time, which a loaded machine inflates less) with the
process's peak resident memory after it and the 1-minute load average before it:
1. build — the ``ClusterState`` (12 registered brokers, the topic assignments in ZooKeeper, no partition-state
   znodes) and the reference controller loaded with it (its ``ControllerContext`` and simulated ZooKeeper);
2. failover — ``ControllerFailover(0)``: ``onControllerFailover`` initialises every replica and partition state
   and elects a leader for every partition (each is NewPartition, so every partition gets its state znode,
   a LeaderAndIsr and an UpdateMetadata entry);
3. broker failure — ``BrokerFailure(5)``: the ~83,000 partitions it leads are re-elected and it is removed from
   the ISR of the ~250,000 partitions it hosts.

Targets (issue "foundation"): failover ≤ 10 s and ≤ 4 GiB; single-broker failure ≤ 3 s. Requests and log lines
are produced exactly as for a small cluster (they are part of the work).

    .venv/bin/python benchmarks/failover_1m.py [--partitions N] [--brokers B] [--rf R] [--profile P]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import harness  # beside this script
from harness import peak_rss_mib
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import BrokerFailure, ControllerFailover
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ZkState
from kcspec.spec.vocabulary import ReplicaAssignment, TopicPartition

PARTITIONS_PER_TOPIC = 1000
T = TypeVar("T")


def build_state(partitions: int, brokers: int, rf: int) -> ClusterState:
    assignments: dict[TopicPartition, ReplicaAssignment] = {}
    for i in range(partitions):
        topic, p = divmod(i, PARTITIONS_PER_TOPIC)
        start = i % brokers
        replicas = tuple((start + k) % brokers for k in range(rf))
        assignments[TopicPartition(f"topic-{topic}", p)] = ReplicaAssignment(replicas)
    zk = ZkState(
        brokers=FMap({b: 10 + b for b in range(brokers)}),
        topics=frozenset(tp.topic for tp in assignments),
        assignments=FMap(assignments),
        zxid=100,
    )
    return ClusterState(zk=zk)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--brokers", type=int, default=12)
    ap.add_argument("--rf", type=int, default=3)
    ap.add_argument("--profile", default="kafka-2.8")
    ap.add_argument("--failed-broker", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)
    if not 1 <= args.rf <= args.brokers or args.partitions < 1 or not 0 <= args.failed_broker < args.brokers:
        ap.error("need 1 ≤ --rf ≤ --brokers, --partitions ≥ 1 and 0 ≤ --failed-broker < --brokers")

    results: list[dict[str, object]] = []

    def step(name: str, fn: Callable[[], T]) -> T:
        gc.collect()
        load = os.getloadavg()[0]
        start = time.perf_counter()
        cpu_start = time.process_time()
        out = fn()
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        results.append(
            {
                "step": name,
                "seconds": round(seconds, 2),
                "cpu_seconds": round(cpu, 2),
                "peak_rss_mib": round(peak_rss_mib()),
                "load_average_1m": round(load, 2),
            }
        )
        print(
            f"{name:<16} {seconds:8.2f} s  (CPU {cpu:7.2f} s)   peak RSS {peak_rss_mib():8.0f} MiB   "
            f"load average {load:5.2f}",
            flush=True,
        )
        return out

    harness.print_header(
        f"{args.partitions:,} partitions, RF {args.rf}, {args.brokers} brokers, {args.profile}"
    )
    state = step("build state", lambda: build_state(args.partitions, args.brokers, args.rf))
    ctl = step("load context", partial(ReferenceController, args.profile, state))
    del state
    requests, _ = step("failover", lambda: ctl.run(ControllerFailover(0)))
    n_states = sum(len(r.partition_states) for r in requests)
    print(
        f"  failover sent {len(requests)} requests carrying {n_states:,} partition states; "
        f"{len(ctl.state_change_log):,} state-change log lines"
    )
    del requests
    requests, _ = step("broker failure", lambda: ctl.run(BrokerFailure(args.failed_broker)))
    n_states = sum(len(r.partition_states) for r in requests)
    print(f"  broker failure sent {len(requests)} requests carrying {n_states:,} partition states")
    if args.json:
        args.json.write_text(
            json.dumps({"args": vars(args) | {"json": str(args.json)}, "results": results}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
