"""A Hypothesis ``RuleBasedStateMachine`` driving the reference controller and the spec in lock step.

There is one rule per event kind (every controller event and environment action of
``kcspec.spec.events``); a rule's precondition is that the spec enables at least one event of its
kind in the current state, and the rule draws one of them. After every step: the reference
controller's ``StepResult`` must equal the spec's, its kept gauges the spec's metric definitions, and every §11
invariant must hold. A failure is
raised as an ``AssertionError`` whose message is a readable account of the step; Hypothesis shrinks the
run to a minimal event sequence, and the shrunk sequence is written as a replayable trace.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from kcspec.conformance.selfcheck.crosscheck import diff_metrics, diff_results
from kcspec.conformance.selfcheck.explore.explorer import ExploreStats, record_coverage
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import FAULT_KINDS, ExploreConfig
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController
from kcspec.spec import codec
from kcspec.spec.events import EVENT_TYPES, BrokerStartup, ControllerEvent, TopicDeletion
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep
from kcspec.spec.vocabulary import InterBrokerProtocol

IBP_DRAWS: tuple[InterBrokerProtocol, ...] = (
    InterBrokerProtocol.KAFKA_2_8_IV1,
    *(v for v in InterBrokerProtocol if v is not InterBrokerProtocol.KAFKA_2_8_IV1),
)
"""The IBPs a run draws from, the default first (what Hypothesis shrinks towards)."""


def replay_command(path: Path) -> str:
    """The command that replays a trace written by a failure: the spec served as a SUT against the reference
    controller, the two sides this test compares (a replay needs a SUT: ``--sut`` or ``--adapter``)."""
    return f"kcspec conformance replay {shlex.quote(str(path))} --sut 'kcspec serve-reference --engine spec'"


@dataclass
class Coverage:
    """What the generated runs exercised: table edges, invalid attempts, and event kinds."""

    stats: ExploreStats = field(default_factory=ExploreStats)
    steps: int = 0
    runs: int = 0

    def merge_event(self, kind: str) -> None:
        self.stats.events[kind] += 1


def default_config(profile: str) -> ExploreConfig:
    return ExploreConfig(
        profile=profile,
        brokers=4,
        topics=2,
        partitions=1,
        rf=3,
        depth=10**9,
        faults=frozenset(FAULT_KINDS),
        symmetry=False,
    )


DISRUPTIVE: tuple[str, ...] = (
    "BrokerFailure",
    "BrokerBounce",
    "ControlledShutdown",
    "ControllerFailover",
    "NewerControllerElected",
    "ControllerResignation",
    "ZkFaultInjection",
    "LeaderAndIsrResponseReceived",
    "TopicCreation",
)
"""Event kinds a run may leave out (swarm testing)."""


class ControllerMachine(RuleBasedStateMachine):
    """Subclass per profile with ``profile`` set (see ``machine_for``)."""

    profile: ClassVar[str] = "kafka-2.8"
    coverage: ClassVar[Coverage] = Coverage()
    trace_dir: ClassVar[Path | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.cfg = default_config(self.profile)
        self.spec = SpecMachine(self.profile)
        self.checker = InvariantChecker(self.profile)
        self.initial = ClusterState()
        self.state = self.initial
        self.ref = ReferenceController(self.profile, trace=True)
        self.steps: list[TraceStep] = []
        self.disabled: frozenset[str] = frozenset()
        type(self).coverage.runs += 1

    @initialize(
        up=st.sets(st.integers(min_value=1, max_value=3)),
        disabled=st.sets(st.sampled_from(DISRUPTIVE)),
        delete_early=st.booleans(),
        queue=st.integers(min_value=0, max_value=2),
        ibp=st.sampled_from(IBP_DRAWS),
    )
    def bootstrap_cluster(
        self, up: set[int], disabled: set[str], delete_early: bool, queue: int, ibp: InterBrokerProtocol
    ) -> None:
        """Broker 0 and the drawn brokers register, 0 becomes controller and the topics are created; the other
        brokers are left to the ``BrokerStartup`` rule — so some runs start with partitions that had no live
        replica at creation (they stay NewPartition until a replica's broker starts).

        Swarm testing: each run also leaves out a drawn set of disruptive event kinds, so that some runs are
        calm enough for multi-step processes (a topic deletion, a reassignment) to finish while others stay
        chaotic. ``queue`` is the run's bound on the controller's event queue (``max_queued_requests``, §7.12;
        kafka-2.8): with 0, admin elections never wait in it. ``ibp`` is the cluster's
        ``inter.broker.protocol.version`` (kafka-2.8: below 2.7-IV2 leaders notify ISR changes through ZooKeeper,
        below 2.7-IV0 failover disables feature versioning; 1.1 ignores it)."""
        self.disabled = frozenset(disabled)
        if queue or ibp is not InterBrokerProtocol.KAFKA_2_8_IV1:
            config = replace(self.initial.config, max_queued_requests=queue, inter_broker_protocol=ibp)
            self.initial = replace(self.initial, config=config)
            self.state = self.initial
            self.ref.load(self.state)
        for ev in bootstrap(self.cfg):
            if not isinstance(ev, BrokerStartup) or ev.broker_id == 0 or ev.broker_id in up:
                self.apply(ev)
        if delete_early:
            # the last topic is deleted at once — while its partitions may still be NewPartition (no live
            # replica yet), the only way to the NewPartition → OfflinePartition row in kafka-1.1 (§8)
            self.apply(TopicDeletion((self.cfg.topic_names[-1],)))

    def enabled_of(self, kind: str) -> list[ControllerEvent]:
        if kind in self.disabled:
            return []
        return [
            e for e in candidates(self.state, self.cfg) if e.kind == kind and self.spec.enabled(self.state, e)
        ]

    def apply(self, event: ControllerEvent) -> None:
        before = self.state
        expected = self.spec.step(before, event)
        ref_enabled = self.ref.enabled(event)
        if not ref_enabled:
            self.fail(event, "the reference controller does not accept an event the spec enables", [])
        self.ref.state_change_log.clear()
        self.ref.controller_log.clear()
        actual = self.ref.handle(event)
        self.steps.append(TraceStep(event, expected))
        differences = diff_results(expected, actual) or diff_metrics(
            self.profile, expected.state, self.ref.metrics()
        )
        if differences:
            self.fail(
                event,
                "the reference controller's step differs from the spec",
                [f"spec vs reference: {d.render()}" for d in differences[:40]],
            )
        bad = self.checker.check_state(expected.state) + self.checker.check_step(
            before, expected.state, expected.requests
        )
        if bad:
            self.fail(event, "invariant violated", [f"{v}" for v in bad])
        cov = type(self).coverage
        record_coverage(cov.stats, self.ref.state_change_log, expected)
        cov.merge_event(event.kind)
        cov.steps += 1
        self.state = expected.state

    def fail(self, event: ControllerEvent, message: str, details: list[str]) -> None:
        trace = Trace(self.profile, self.initial, tuple(self.steps), note=f"stateful test: {message}")
        where = ""
        if self.trace_dir is not None:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
            path = self.trace_dir / f"stateful-{self.profile}.trace.json"
            path.write_text(trace.to_json() + "\n", encoding="utf-8")
            where = f"\n(trace written to {path}; replay with: {replay_command(path)})"
        events = "\n".join(f"  {i:2d}. {codec.dumps(s.event)}" for i, s in enumerate(self.steps, start=1))
        raise AssertionError(
            f"{self.profile}: {message} at {event.kind}\nevents:\n{events}\n" + "\n".join(details) + where
        )

    @rule()
    def snapshots_stay_equal(self) -> None:
        """Always available (so a run whose drawn swarm disables every enabled event can still proceed): the
        reference controller's snapshot is still the spec's state."""
        self.states_agree()

    @invariant()
    def states_agree(self) -> None:
        if self.ref.snapshot() != self.state:
            self.fail(self.steps[-1].event if self.steps else ControllerEvent(), "snapshots diverged", [])


WEIGHTS: dict[str, int] = {
    "StopReplicaResponseReceived": 4,
    "ZkPartitionReassignment": 2,
    "ApiPartitionReassignment": 2,
    "TopicDeletion": 2,
    "IsrChange": 2,
    "NewerControllerElected": 2,
    "ControllerChange": 4,
    "LeaderAndIsrPartitionResultsReceived": 3,
}
"""Rules registered more than once, so that Hypothesis (which picks uniformly among enabled rules) gets far
enough into multi-step processes — a topic deletion completes only after every replica's StopReplica
response, a reassignment only after its ISR catches up, a replica comes back from an offline log directory only
while it is offline — to reach every row of both transition tables and every event kind."""


NOT_FUZZED: dict[str, str] = {}
"""Event kinds without a rule here, with the reason (none: every event kind of ``EVENT_TYPES`` has a rule, and a
kind the profile does not have is never enabled). The candidates come from the explorer with every fault family
(``FAULT_KINDS``), which includes the broker-response and request variants, several brokers in one
``BrokerChange`` and log-dir event notifications."""


def _make_rule(kind: str, copy: int) -> Any:
    @precondition(lambda self: bool(self.enabled_of(kind)))
    @rule(data=st.data())
    def step(self: ControllerMachine, data: st.DataObject) -> None:
        options = self.enabled_of(kind)
        event = data.draw(st.sampled_from(options), label=kind)
        self.apply(event)

    step.__name__ = f"event_{kind}" if copy == 0 else f"event_{kind}_{copy}"
    return step


for _cls in EVENT_TYPES:
    if _cls.kind in NOT_FUZZED:
        continue
    for _copy in range(WEIGHTS.get(_cls.kind, 1)):
        _rule = _make_rule(_cls.kind, _copy)
        setattr(ControllerMachine, _rule.__name__, _rule)


def machine_for(profile: str, trace_dir: Path | None = None) -> type[ControllerMachine]:
    """A fresh machine class for ``profile`` with its own coverage counters."""
    name = "ControllerMachine_" + profile.replace("-", "_").replace(".", "_")
    return type(
        name, (ControllerMachine,), {"profile": profile, "coverage": Coverage(), "trace_dir": trace_dir}
    )


UNREACHABLE: dict[str, dict[tuple[str, str], str]] = {
    "kafka-1.1": {
        ("partition", "NewPartition→OfflinePartition"): (
            "a NewPartition has no leadership info, so partitionsWithOfflineLeader never picks it (§3.1); the only "
            "other way is completeDeleteTopic, but deleting a never-led partition hangs in 1.1: OfflineReplica skips "
            "replicas of partitions without leadership info (§4.3 step 5, KAFKA-6650), so they never reach "
            "ReplicaDeletionStarted"
        ),
    },
}
"""Table rows a profile cannot reach, with the reason (the coverage requirement excludes them)."""


def coverage_gaps(profile: str, coverage: Coverage) -> dict[str, list[str]]:
    """Rows of the transition tables and event kinds that the runs never exercised."""
    from kcspec.spec.profiles import get_profile

    prof = get_profile(profile)
    gaps: dict[str, list[str]] = {"replica": [], "partition": [], "events": []}
    for machine, table, seen in (
        ("replica", prof.replica_valid_previous, coverage.stats.replica_edges),
        ("partition", prof.partition_valid_previous, coverage.stats.partition_edges),
    ):
        for target, prevs in table.items():
            for prev in prevs:
                row = f"{prev.name}→{target.name}"
                if seen.get((prev.name, target.name), 0) == 0 and (machine, row) not in UNREACHABLE.get(
                    profile, {}
                ):
                    gaps[machine].append(row)
    from kcspec.spec.actions import build_actions

    kinds = set(build_actions(prof)) - set(
        NOT_FUZZED
    )  # the profile's kinds (1.1: no API reassignment, no AlterIsr)
    gaps["events"] = sorted(k for k in kinds if coverage.stats.events.get(k, 0) == 0)
    return gaps


__all__ = ["NOT_FUZZED", "ControllerMachine", "Coverage", "coverage_gaps", "machine_for"]
