"""Small ``ClusterState``s for the spec-core tests, and helpers to evaluate spec procedures on them.

``cluster(...)`` builds a state whose ZooKeeper view agrees with the controller's context unless told
otherwise: registered brokers = live brokers, ZK assignments = context assignments, partition-state znodes =
the leadership cache (``zk_leadership`` overrides individual znodes, ``None`` deletes one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from kcspec.model.evaluate import compile_expr
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Expr, Var
from kcspec.spec.requests import (
    LeaderAndIsrRequest,
    Request,
    StateChangeFailure,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    ClusterConfig,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
    ZkFault,
)
from kcspec.spec.work import Work

Leadership = tuple[int, Iterable[int]] | tuple[int, Iterable[int], int] | tuple[int, Iterable[int], int, int]
"""(leader, isr[, leader_epoch[, zk_version]]) with controller epoch = the controller's epoch."""


def tp(name: str) -> TopicPartition:
    """``"t-0"`` → ``TopicPartition("t", 0)``."""
    topic, _, part = name.rpartition("-")
    return TopicPartition(topic, int(part))


def pr(name: str, r: int) -> PartitionReplica:
    return PartitionReplica(tp(name), r)


def li(leadership: Leadership, controller_epoch: int) -> LeaderIsrAndControllerEpoch:
    leader, isr, *rest = leadership
    epoch = rest[0] if rest else 0
    version = rest[1] if len(rest) > 1 else 0
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, tuple(isr), version), controller_epoch)


def cluster(
    *,
    brokers: Iterable[int] = (1, 2, 3),
    shutting_down: Iterable[int] = (),
    assignments: Mapping[str, Iterable[int] | ReplicaAssignment] | None = None,
    leadership: Mapping[str, Leadership] | None = None,
    zk_leadership: Mapping[str, LeaderIsrAndControllerEpoch | None] | None = None,
    replica_states: Mapping[tuple[str, int], ReplicaState] | None = None,
    partition_states: Mapping[str, PartitionState] | None = None,
    offline_replicas: Iterable[tuple[str, int]] = (),
    queued: Iterable[str] = (),
    deletion_started: Iterable[str] = (),
    faults: Mapping[str, ZkFault] | None = None,
    controller_id: int = 1,
    epoch: int = 1,
    epoch_zk_version: int = 1,
    zk_epoch_zk_version: int | None = None,
    zk_controller_epoch: int | None = None,
    legacy_reassignments: Mapping[str, Iterable[int]] | None = None,
    config: ClusterConfig | None = None,
) -> ClusterState:
    """A consistent small cluster; see the module docstring."""
    assigns: dict[TopicPartition, ReplicaAssignment] = {}
    for name, a in (assignments or {}).items():
        assigns[tp(name)] = a if isinstance(a, ReplicaAssignment) else ReplicaAssignment(tuple(a))
    cache = {tp(n): li(v, epoch) for n, v in (leadership or {}).items()}
    zk_states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = dict(cache)
    for n, rec in (zk_leadership or {}).items():
        if rec is None:
            zk_states.pop(tp(n), None)
        else:
            zk_states[tp(n)] = rec
    live = {b: 100 + b for b in brokers}
    zk = ZkState(
        controller=controller_id,
        controller_epoch=epoch if zk_controller_epoch is None else zk_controller_epoch,
        controller_epoch_zk_version=epoch_zk_version if zk_epoch_zk_version is None else zk_epoch_zk_version,
        brokers=FMap(live),
        topics=frozenset(t.topic for t in assigns),
        assignments=FMap(assigns),
        partition_states=FMap(zk_states),
        delete_topics=frozenset(queued),
        faults=FMap({tp(n): f for n, f in (faults or {}).items()}),
        zxid=1000,
    )
    ctx = ControllerContext(
        controller_id=controller_id,
        epoch=epoch,
        epoch_zk_version=epoch_zk_version,
        live_brokers=FMap(live),
        shutting_down=frozenset(shutting_down),
        offline_replicas=frozenset(pr(n, r) for n, r in offline_replicas),
        all_topics=frozenset(t.topic for t in assigns),
        assignments=FMap(assigns),
        leadership=FMap(cache),
        legacy_reassignments=FMap({tp(n): tuple(v) for n, v in (legacy_reassignments or {}).items()}),
        replica_states=FMap({pr(n, r): st for (n, r), st in (replica_states or {}).items()}),
        partition_states=FMap({tp(n): st for n, st in (partition_states or {}).items()}),
        topics_to_be_deleted=frozenset(queued),
        topics_with_deletion_started=frozenset(deletion_started),
    )
    return ClusterState(zk=zk, controller=ctx, config=config or ClusterConfig())


def with_ctx(state: ClusterState, **changes: Any) -> ClusterState:
    return replace(state, controller=replace(state.controller, **changes))


def with_zk(state: ClusterState, **changes: Any) -> ClusterState:
    return replace(state, zk=replace(state.zk, **changes))


def run(expr: Expr, **values: Any) -> Any:
    """Evaluate a procedure whose free variables are passed by name."""
    return compile_expr(expr, tuple(values))(values)


def run_work(build: Any, state: ClusterState, *args: Any) -> Work:
    """Evaluate ``build(Var("w"), *args)`` on ``Work(state)``."""
    result = run(build(Var("w"), *args), w=Work(state))
    assert isinstance(result, Work), f"procedure evaluated to {type(result).__name__}, not Work"
    return result


def requests_of(work: Work, kind: type[Request]) -> dict[int, Request]:
    """The sent requests of one kind, keyed by recipient broker (fails if a broker got two)."""
    out: dict[int, Request] = {}
    for r in work.sent:
        if isinstance(r, kind):
            assert r.broker not in out, f"two {kind.__name__}s to broker {r.broker}: {out[r.broker]} and {r}"
            out[r.broker] = r
    return out


def lair(work: Work) -> dict[int, LeaderAndIsrRequest]:
    return {
        b: r for b, r in requests_of(work, LeaderAndIsrRequest).items() if isinstance(r, LeaderAndIsrRequest)
    }


def umr(work: Work) -> dict[int, UpdateMetadataRequest]:
    return {
        b: r
        for b, r in requests_of(work, UpdateMetadataRequest).items()
        if isinstance(r, UpdateMetadataRequest)
    }


def stop(work: Work) -> dict[int, StopReplicaRequest]:
    return {
        b: r for b, r in requests_of(work, StopReplicaRequest).items() if isinstance(r, StopReplicaRequest)
    }


def lair_partitions(work: Work) -> dict[int, dict[TopicPartition, Any]]:
    """broker → partition → LAIR partition state."""
    return {b: {ps.tp: ps for ps in r.partition_states} for b, r in lair(work).items()}


def failures_of(work: Work) -> set[tuple[str, int, str, str, str]]:
    """Failures as (partition, replica, from, target, reason value) for compact assertions."""
    return {_failure_key(f) for f in work.failures}


def _failure_key(f: StateChangeFailure) -> tuple[str, int, str, str, str]:
    return (str(f.tp), f.replica, f.from_state, f.target, f.reason.value)


def describe(work: Work) -> str:
    """A readable dump of a Work for assertion messages."""
    c = work.state.controller
    lines = [
        f"moved={work.moved}",
        f"replica_states={dict(c.replica_states)}",
        f"partition_states={dict(c.partition_states)}",
        f"leadership={dict(c.leadership)}",
        f"zk={dict(work.state.zk.partition_states)} faults={dict(work.state.zk.faults)}",
        f"failures={sorted(failures_of(work))}",
        f"sent={sorted(map(repr, work.sent))}",
    ]
    return "\n  ".join(lines)
