"""Seeded random walks of a controller, for synthetic Kafka-format history and swarm simulation (§10).

``random_events`` samples one enabled event at a time — picking an event family first, then its
parameters — so that a walk over many partitions costs O(1) candidates per step rather than the
explorer's exhaustive enumeration. Every choice comes from one ``random.Random(seed)``: a walk is
reproducible from its seed. The event shapes (the bootstrap, topic names, the round-robin layout) are those of
``model/event_domains.py``, shared with the explorer and the TLA+ model.

``emit_logs`` routes the reference controller's ``state-change.log`` and ``controller.log`` lines to
the broker that was controller when each line was written (the ``[Controller id=<id> …]`` prefix),
as ``DIR/broker-<id>/state-change.log`` and ``DIR/broker-<id>/controller.log``, the way a real
cluster's logs are spread over brokers.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from kcspec.model import event_domains
from kcspec.model.files import write_atomically
from kcspec.spec.events import (
    ApiPartitionReassignment,
    AutoPreferredReplicaLeaderElection,
    BrokerBounce,
    BrokerChange,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerEvent,
    ControllerFailover,
    IsrChange,
    LogDirEventNotification,
    ReplicaLeaderElection,
    StopReplicaPartitionErrorsReceived,
    StopReplicaResponseReceived,
    TopicCreation,
    TopicDeletion,
    ZkPartitionReassignment,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, ReplicaState

LEGACY = "kafka-1.1"


@dataclass(frozen=True)
class WalkConfig:
    profile: str = "kafka-2.8"
    brokers: int = 5
    topics: int = 3
    partitions: int = 4
    rf: int = 3

    def validate(self) -> None:
        if self.brokers < 1:
            raise ValueError(f"--brokers must be at least 1, got {self.brokers}")
        if not 1 <= self.rf <= self.brokers:
            raise ValueError(f"--rf must be between 1 and --brokers ({self.brokers}), got {self.rf}")
        if self.topics < 1 or self.partitions < 1:
            raise ValueError("--topics and --partitions must be at least 1")


def bootstrap(cfg: WalkConfig) -> list[ControllerEvent]:
    """The explorer's bootstrap (``event_domains.bootstrap``) for the walk's cluster."""
    return list(
        event_domains.bootstrap(cfg.brokers, event_domains.topic_names(cfg.topics), partial(_assignment, cfg))
    )


def _assignment(cfg: WalkConfig, topic: int) -> tuple[tuple[int, ...], ...]:
    return event_domains.round_robin_assignment(cfg.brokers, cfg.rf, cfg.partitions, topic)


def random_event(rng: random.Random, s: ClusterState, cfg: WalkConfig) -> ControllerEvent | None:
    """One candidate event drawn at random (it may still be disabled; the caller checks)."""
    zk, c = s.zk, s.controller
    registered = sorted(zk.brokers)
    missing = [b for b in range(cfg.brokers) if b not in zk.brokers]
    family = rng.choice(
        (
            "fail",
            "start",
            "bounce",
            "shutdown",
            "failover",
            "isr",
            "isr",
            "isr",
            "preferred",
            "auto",
            "reassign",
            "delete",
            "create",
            "stopreplica",
        )
    )
    if family == "start" and missing:
        b = rng.choice(missing)
        if b == missing[0] and len(missing) > 1:
            # the lowest id drawn: every missing broker registers before the watch fires (no extra draw)
            return BrokerChange(new_broker_ids=tuple(missing))
        return BrokerStartup(b)
    if family == "fail" and registered and len(registered) > 1:
        return BrokerFailure(rng.choice(registered))
    if family == "bounce" and registered:
        b = rng.choice(registered)
        if b == c.controller_id:
            # the controller cannot bounce (its session is the controller's): a log-dir failure on it instead
            return LogDirEventNotification((b,))
        return BrokerBounce(b)
    if family == "shutdown" and registered:
        return ControlledShutdown(rng.choice(registered))
    if family == "failover" and registered:
        return ControllerFailover(rng.choice(registered))
    tps = sorted(zk.partition_states)
    if family == "isr" and tps:
        tp = rng.choice(tps)
        lai = zk.partition_states[tp].leader_and_isr
        fa = zk.assignments.get(tp)
        if lai.leader < 0 or fa is None:
            return None
        others = [r for r in fa.replicas if r != lai.leader and r in zk.brokers]
        return IsrChange(tp, (lai.leader, *sorted(rng.sample(others, rng.randint(0, len(others))))))
    if family == "preferred" and tps and c.controller_id >= 0 and not zk.preferred_replica_election:
        return ReplicaLeaderElection(
            frozenset({rng.choice(tps)}), ElectionType.PREFERRED, ElectionTrigger.ZkTriggered
        )
    if family == "auto" and c.controller_id >= 0:
        return AutoPreferredReplicaLeaderElection()
    if family == "reassign" and tps:
        tp = rng.choice(tps)
        target = tuple(rng.sample(range(cfg.brokers), cfg.rf))
        if cfg.profile != LEGACY and c.controller_id >= 0 and rng.random() < 0.5:
            return ApiPartitionReassignment(FMap({tp: target}))
        if not zk.reassign_partitions:
            return ZkPartitionReassignment(FMap({tp: target}))
        return None
    topics = sorted(zk.topics)
    if family == "delete" and topics and rng.random() < 0.3:
        return TopicDeletion((rng.choice(topics),))
    if family == "create":
        absent = [i for i in range(cfg.topics) if f"t{i}" not in topics]
        if absent:
            i = rng.choice(absent)
            return TopicCreation(f"t{i}", _assignment(cfg, i))
    if family == "stopreplica":
        started = [pr for pr, st in c.replica_states.items() if st is ReplicaState.ReplicaDeletionStarted]
        if started:
            pr = rng.choice(sorted(started))
            error = rng.random() < 0.1
            batch = sorted(x.tp for x in started if x.replica == pr.replica)
            if error and len(batch) > 1:
                # one StopReplica for all of the broker's partitions, only the drawn one in error (no extra draw)
                return StopReplicaPartitionErrorsReceived(pr.replica, tuple(batch), (pr.tp,))
            return StopReplicaResponseReceived(pr.replica, (pr.tp,), error=error)
    return None


class WalkTarget(Protocol):
    """What a walk needs of a controller: the reference controller, a bug-zoo mutant, or a protocol SUT."""

    def enabled(self, event: ControllerEvent) -> bool: ...

    def handle(self, event: ControllerEvent) -> object: ...

    def snapshot(self) -> ClusterState: ...


def walk(
    controller: WalkTarget,
    cfg: WalkConfig,
    steps: int,
    seed: int,
    on_step: Callable[[int, ControllerEvent], None] | None = None,
) -> Iterator[ControllerEvent]:
    """Drive ``controller`` (with ``enabled``/``handle``/``snapshot``) through the bootstrap then ``steps`` random events."""
    rng = random.Random(seed)
    ctl = controller
    for ev in bootstrap(cfg):
        ctl.handle(ev)
        yield ev
    done, attempts = 0, 0
    state = ctl.snapshot()
    while done < steps and attempts < steps * 50:
        attempts += 1
        candidate = random_event(rng, state, cfg)
        if candidate is None or not ctl.enabled(candidate):
            continue
        ev = candidate
        ctl.handle(ev)
        state = ctl.snapshot()
        done += 1
        if on_step is not None:
            on_step(done, ev)
        yield ev


_CONTROLLER_ID = re.compile(r"\[Controller id=(\d+)|controllerId=(\d+)|\[Topic Deletion Manager (\d+)")


def route_lines(lines: list[str], default: int) -> dict[int, list[str]]:
    """Group log lines by the controller broker named in their prefix; continuation lines follow their record."""
    out: dict[int, list[str]] = {}
    current = default
    for line in lines:
        m = _CONTROLLER_ID.search(line) if line.startswith("[") else None
        if m:
            current = int(next(g for g in m.groups() if g is not None))
        out.setdefault(current, []).append(line)
    return out


def emit_logs(
    state_change: list[str], controller: list[str], directory: Path, default_broker: int = 0
) -> list[Path]:
    """Write the lines as per-broker ``state-change.log`` and ``controller.log`` files; returns the paths."""
    written: list[Path] = []
    for name, lines in (("state-change.log", state_change), ("controller.log", controller)):
        for broker, broker_lines in sorted(route_lines(lines, default_broker).items()):
            path = directory / f"broker-{broker}" / name
            write_atomically(path, "\n".join(broker_lines) + "\n")  # a full disk leaves no truncated log
            written.append(path)
    return written
