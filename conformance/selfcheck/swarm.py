"""Swarm simulation: many seeded random walks of the reference controller, each checked step by step.

One walk (``run_walk``) drives the reference controller through the bootstrap and ``steps`` random events
(``kcspec.conformance.selfcheck.simulate``) and, on every step, checks refinement against the spec (same post-state,
requests, failures) and the §11 invariants. Its result is small and serialisable (counts, coverage, the
first violation with its seed and step), so a swarm can run on Spark executors: ``run_swarm`` maps seeds
to walks either locally or with a SparkContext, then aggregates coverage and keeps the shortest
counterexamples. A counterexample is replayed from its seed with ``replay_walk``.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kcspec.conformance.selfcheck.simulate import WalkConfig, bootstrap, random_event
from kcspec.spec.events import ControllerEvent


@dataclass(frozen=True)
class WalkResult:
    seed: int
    steps: int
    seconds: float
    replica_edges: tuple[tuple[str, str, int], ...]
    partition_edges: tuple[tuple[str, str, int], ...]
    events: tuple[tuple[str, int], ...]
    violation: str | None = None
    violation_step: int | None = None
    """1-based index of the random step (after the bootstrap) at which the violation happened."""


@dataclass
class SwarmReport:
    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    replica_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    partition_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    violations: list[WalkResult] = field(default_factory=list)
    walk_seconds: float = 0.0
    """The walks' own times added up (each measured where it ran): ``steps / walk_seconds`` is one core's rate."""

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def _events(
    cfg: WalkConfig,
    steps: int,
    seed: int,
    enabled: Callable[[ControllerEvent], bool],
    state: Callable[[], object],
) -> Iterable[ControllerEvent]:
    rng = random.Random(seed)
    done = attempts = 0
    while done < steps and attempts < steps * 50:
        attempts += 1
        ev = random_event(rng, state(), cfg)  # type: ignore[arg-type]
        if ev is None or not enabled(ev):
            continue
        done += 1
        yield ev


def run_walk(
    profile: str, brokers: int, topics: int, partitions: int, rf: int, steps: int, seed: int
) -> WalkResult:
    """One checked walk (top-level and picklable, so Spark executors can run it)."""
    from kcspec.conformance.selfcheck.crosscheck import diff_metrics, diff_results
    from kcspec.model.invariants_check import InvariantChecker
    from kcspec.model.kafka_log.reference_parser import parse_lines
    from kcspec.model.step import SpecMachine
    from kcspec.reference_impl import ReferenceController
    from kcspec.spec.state import ClusterState

    cfg = WalkConfig(profile, brokers, topics, partitions, rf)
    spec, checker = SpecMachine(profile), InvariantChecker(profile)
    ref = ReferenceController(profile, trace=True)
    state = ClusterState()
    replica: Counter[tuple[str, str]] = Counter()
    partition: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    start = time.perf_counter()
    violation: str | None = None
    at: int | None = None
    n = 0

    def step(ev: ControllerEvent) -> str | None:
        nonlocal state
        ref.state_change_log.clear()
        ref.controller_log.clear()
        expected = spec.step(state, ev)
        actual = ref.handle(ev)
        diffs = diff_results(expected, actual) or diff_metrics(profile, expected.state, ref.metrics())
        if diffs:
            return f"{ev.kind}: the reference controller differs from the spec: " + "; ".join(
                d.render() for d in diffs[:3]
            )
        bad = checker.check_state(expected.state) + checker.check_step(
            state, expected.state, expected.requests
        )
        if bad:
            return f"{ev.kind}: invariant violated: " + ", ".join(v.name for v in bad)
        for parsed in parse_lines("state-change.log", ref.state_change_log):
            if parsed.status == "record" and parsed.kind in ("replica_transition", "partition_transition"):
                edge = (str(parsed.fields.get("from_state")), str(parsed.fields.get("to_state")))
                (replica if parsed.kind == "replica_transition" else partition)[edge] += 1
        kinds[ev.kind] += 1
        state = expected.state
        return None

    for ev in bootstrap(cfg):
        violation = step(ev)
        if violation:
            at = 0
            break
    if violation is None:
        for ev in _events(cfg, steps, seed, lambda e: spec.enabled(state, e), lambda: state):
            n += 1
            violation = step(ev)
            if violation:
                at = n
                break
    return WalkResult(
        seed,
        n,
        time.perf_counter() - start,
        tuple((a, b, c) for (a, b), c in sorted(replica.items())),
        tuple((a, b, c) for (a, b), c in sorted(partition.items())),
        tuple(sorted(kinds.items())),
        violation,
        at,
    )


def replay_walk(
    profile: str, brokers: int, topics: int, partitions: int, rf: int, steps: int, seed: int
) -> list[ControllerEvent]:
    """The events of a walk, regenerated from its seed with the spec (bootstrap included)."""
    from kcspec.model.step import SpecMachine
    from kcspec.spec.state import ClusterState

    cfg = WalkConfig(profile, brokers, topics, partitions, rf)
    spec = SpecMachine(profile)
    state = ClusterState()
    out: list[ControllerEvent] = []
    for ev in bootstrap(cfg):
        state = spec.step(state, ev).state
        out.append(ev)
    holder = {"s": state}

    for ev in _events(cfg, steps, seed, lambda e: spec.enabled(holder["s"], e), lambda: holder["s"]):
        holder["s"] = spec.step(holder["s"], ev).state
        out.append(ev)
    return out


def aggregate(results: Iterable[WalkResult], seconds: float) -> SwarmReport:
    report = SwarmReport(seconds=seconds)
    for r in results:
        report.runs += 1
        report.steps += r.steps
        report.walk_seconds += r.seconds
        for a, b, c in r.replica_edges:
            report.replica_edges[(a, b)] += c
        for a, b, c in r.partition_edges:
            report.partition_edges[(a, b)] += c
        for k, c in r.events:
            report.events[k] += c
        if r.violation is not None:
            report.violations.append(r)
    report.violations.sort(key=lambda r: (r.violation_step or 0, r.seed))
    return report


def run_swarm(
    cfg: WalkConfig, runs: int, steps: int, seed: int, spark_master: str | None = None
) -> SwarmReport:
    """``runs`` walks with seeds ``seed .. seed+runs-1``, locally or on Spark (``spark_master``)."""
    seeds = list(range(seed, seed + runs))
    args = (cfg.profile, cfg.brokers, cfg.topics, cfg.partitions, cfg.rf, steps)
    start = time.perf_counter()
    if spark_master is None:
        results = [run_walk(*args, s) for s in seeds]
    else:
        from kcspec.model.spark.session import make_session

        # Executors run walks in Python workers: they must import kcspec. Locally that is this interpreter;
        # on a cluster, install kcspec on the executors (or set PYSPARK_PYTHON to an interpreter that has it).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = make_session(spark_master, app="kcspec-simulate")
        try:
            sc = spark.sparkContext
            results = (
                sc.parallelize(seeds, max(1, min(runs, sc.defaultParallelism * 4)))
                .map(lambda s: run_walk(*args, s))
                .collect()
            )
        finally:
            spark.stop()
    return aggregate(results, time.perf_counter() - start)
