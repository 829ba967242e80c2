"""Readable scenario builders for the reference controller's tests.

``cluster(profile, brokers=..., controller=..., topics=...)`` starts the brokers, elects the controller and creates
the topics through events, so every test starts from a state the controller reached by itself. ``explain`` renders
a failing step (event, states before and after, requests, failures and the last log lines).
"""

from __future__ import annotations

from collections.abc import Iterable

from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import BrokerStartup, ControllerEvent, ControllerFailover, TopicCreation
from kcspec.spec.requests import (
    LeaderAndIsrRequest,
    Request,
    StepResult,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kcspec.spec.vocabulary import LeaderAndIsr, PartitionReplica, ReplicaState, TopicPartition

PROFILES = ("kafka-2.8", "kafka-1.1")


def tp(name: str) -> TopicPartition:
    """``tp("foo-0")``."""
    topic, _, part = name.rpartition("-")
    return TopicPartition(topic, int(part))


def pr(name: str, replica: int) -> PartitionReplica:
    return PartitionReplica(tp(name), replica)


def cluster(
    profile: str = "kafka-2.8",
    brokers: Iterable[int] = (1, 2, 3),
    controller: int | None = 1,
    topics: dict[str, tuple[tuple[int, ...], ...]] | None = None,
    *,
    trace: bool = False,
) -> ReferenceController:
    rc = ReferenceController(profile, trace=trace)
    for b in brokers:
        rc.handle(BrokerStartup(b))
    if controller is not None:
        rc.handle(ControllerFailover(controller))
    for topic, replicas in (topics or {}).items():
        rc.handle(TopicCreation(topic, replicas))
    return rc


def step(rc: ReferenceController, event: ControllerEvent) -> StepResult:
    """Handle ``event``; keeps the state before it for ``explain``."""
    rc.before = rc.snapshot()  # type: ignore[attr-defined]
    return rc.handle(event)


def explain(
    rc: ReferenceController, event: ControllerEvent | None = None, result: StepResult | None = None
) -> str:
    lines = [f"event: {event!r}"]
    before = getattr(rc, "before", None)
    if before is not None:
        lines.append(f"state before: {before.controller}")
    lines.append(f"state after: {rc.snapshot().controller}")
    lines.append(f"zk after: {rc.snapshot().zk}")
    if result is not None:
        lines.append(f"requests: {sorted(map(repr, result.requests))}")
        lines.append(f"failures: {sorted(map(repr, result.failures))}")
    lines.append("state-change.log tail:\n  " + "\n  ".join(rc.state_change_log[-10:]))
    lines.append("controller.log tail:\n  " + "\n  ".join(rc.controller_log[-10:]))
    return "\n".join(lines)


def leader_and_isr(rc: ReferenceController, name: str) -> LeaderAndIsr:
    """The partition's record in the simulated ZooKeeper."""
    return rc.zk.partition_states[tp(name)].leader_and_isr


def cached(rc: ReferenceController, name: str) -> LeaderAndIsr:
    return rc.kc.ctx.leadership[tp(name)].leader_and_isr


def replica_state(rc: ReferenceController, name: str, replica: int) -> ReplicaState:
    return rc.kc.ctx.replica_state(replica, tp(name))


def lair(requests: Iterable[Request], broker: int) -> list[LeaderAndIsrRequest]:
    return [r for r in requests if isinstance(r, LeaderAndIsrRequest) and r.broker == broker]


def umr(requests: Iterable[Request], broker: int) -> list[UpdateMetadataRequest]:
    return [r for r in requests if isinstance(r, UpdateMetadataRequest) and r.broker == broker]


def stop_replica(requests: Iterable[Request], broker: int) -> list[StopReplicaRequest]:
    return [r for r in requests if isinstance(r, StopReplicaRequest) and r.broker == broker]


def recipients(requests: Iterable[Request], kind: type) -> set[int]:
    return {r.broker for r in requests if isinstance(r, kind)}


def message(line: str) -> str:
    """A log line without its timestamp: ``LEVEL message (logger)``."""
    return line.split("] ", 1)[1]
