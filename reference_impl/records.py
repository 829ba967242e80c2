"""Fast constructors for the value records the controller builds by the million (one per partition and event).

A frozen dataclass ``__init__`` sets every field through ``object.__setattr__``; at a million partitions that is
a visible share of a failover. The constructors here build the *same* objects (same class, same fields, so equal,
equally hashed and printed) directly: ``LeaderAndIsr``, ``LeaderIsrAndControllerEpoch`` and the request partition
states, tuple records (spec/vocabulary.py, spec/requests.py), as the tuple of their fields; the canonical state and
the requests by installing the field dictionary. The shapes are checked at import: the leadership records must be
tuple records (the controller's bulk loops unpack them); for any other record whose shape changed, the constructor
falls back to calling the class.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    ElectionAnswer,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    Request,
    StateChangeFailure,
    StepResult,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcspec.spec.state import ClusterState, ZkState
from kcspec.spec.state import ControllerContext as CanonicalContext
from kcspec.spec.vocabulary import ClusterConfig, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

_FIELDS: dict[type, tuple[str, ...]] = {
    LeaderAndIsr: ("leader", "leader_epoch", "isr", "zk_version"),
    LeaderIsrAndControllerEpoch: ("leader_and_isr", "controller_epoch"),
}

_PARTITION_STATE_FIELDS: dict[type, tuple[str, ...]] = {
    LeaderAndIsrPartitionState: (
        "tp",
        "controller_epoch",
        "leader",
        "leader_epoch",
        "isr",
        "zk_version",
        "replicas",
        "adding",
        "removing",
        "is_new",
    ),
    UpdateMetadataPartitionState: (
        "tp",
        "controller_epoch",
        "leader",
        "leader_epoch",
        "isr",
        "zk_version",
        "replicas",
        "offline_replicas",
    ),
    StopReplicaPartitionState: ("tp", "delete_partition", "leader_epoch"),
}


def is_plain_record(cls: type, names: tuple[str, ...]) -> bool:
    """A frozen dataclass with exactly ``names`` as init fields, an instance ``__dict__`` and no post-init hook."""
    if not dataclasses.is_dataclass(cls) or "__slots__" in vars(cls) or hasattr(cls, "__post_init__"):
        return False
    fields = dataclasses.fields(cls)
    return tuple(f.name for f in fields) == names and all(f.init for f in fields)


def _tuple_of_fields(cls: type, names: tuple[str, ...]) -> bool:
    """A dataclass that is the tuple of exactly its fields ``names`` in order (spec/requests.py's partition states)."""
    if not dataclasses.is_dataclass(cls) or not issubclass(cls, tuple) or hasattr(cls, "__post_init__"):
        return False
    return tuple(f.name for f in dataclasses.fields(cls)) == names


TUPLE_LEADERSHIP = all(_tuple_of_fields(cls, names) for cls, names in _FIELDS.items())
"""Whether the two leadership records are tuple records (spec/vocabulary.py): required (the bulk loops unpack them)."""

TUPLE_STATES = all(_tuple_of_fields(cls, names) for cls, names in _PARTITION_STATE_FIELDS.items())
"""Whether the request partition states are built as the tuple of their fields (else each function calls the class)."""

_new = object.__new__
_set = object.__setattr__
_tuple_new = tuple.__new__


if not TUPLE_LEADERSHIP:  # pragma: no cover - only when the leadership records change shape
    raise ImportError(
        "the reference controller reads LeaderAndIsr and LeaderIsrAndControllerEpoch by unpacking them in its bulk "
        "loops: they must be tuple records of their fields in order (spec/vocabulary.py)"
    )


def leader_and_isr(leader: int, leader_epoch: int, isr: tuple[int, ...], zk_version: int) -> LeaderAndIsr:
    made: LeaderAndIsr = _tuple_new(LeaderAndIsr, (leader, leader_epoch, isr, zk_version))
    return made


def leader_isr_and_epoch(leader_and_isr: LeaderAndIsr, controller_epoch: int) -> LeaderIsrAndControllerEpoch:
    made: LeaderIsrAndControllerEpoch = _tuple_new(
        LeaderIsrAndControllerEpoch, (leader_and_isr, controller_epoch)
    )
    return made


if TUPLE_STATES:

    def lair_partition_state(
        tp: TopicPartition,
        controller_epoch: int,
        leader: int,
        leader_epoch: int,
        isr: tuple[int, ...],
        zk_version: int,
        replicas: tuple[int, ...],
        adding: tuple[int, ...],
        removing: tuple[int, ...],
        is_new: bool,
    ) -> LeaderAndIsrPartitionState:
        made: LeaderAndIsrPartitionState = _tuple_new(
            LeaderAndIsrPartitionState,
            (tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, adding, removing, is_new),
        )
        return made

    def umr_partition_state(
        tp: TopicPartition,
        controller_epoch: int,
        leader: int,
        leader_epoch: int,
        isr: tuple[int, ...],
        zk_version: int,
        replicas: tuple[int, ...],
        offline_replicas: tuple[int, ...],
    ) -> UpdateMetadataPartitionState:
        made: UpdateMetadataPartitionState = _tuple_new(
            UpdateMetadataPartitionState,
            (tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, offline_replicas),
        )
        return made

    def stop_replica_partition_state(
        tp: TopicPartition, delete_partition: bool, leader_epoch: int
    ) -> StopReplicaPartitionState:
        made: StopReplicaPartitionState = _tuple_new(
            StopReplicaPartitionState, (tp, delete_partition, leader_epoch)
        )
        return made

else:  # pragma: no cover - only when the request partition states change shape
    lair_partition_state = LeaderAndIsrPartitionState
    umr_partition_state = UpdateMetadataPartitionState
    stop_replica_partition_state = StopReplicaPartitionState


# ------------------------------------------------------------------------------------- the canonical state
#
# Where speed bent the shape (not Kafka: the snapshot the checks compare): the explorer takes a snapshot of the
# reference controller on every transition, and the three frozen records of a snapshot (27 fields) cost about as
# much to construct through their ``__init__`` as the rest of the snapshot. They are built the same direct way.

_STATE_FIELDS: dict[type, tuple[str, ...]] = {
    ZkState: (
        "controller",
        "controller_epoch",
        "controller_epoch_zk_version",
        "brokers",
        "topics",
        "topic_ids",
        "assignments",
        "partition_states",
        "delete_topics",
        "reassign_partitions",
        "preferred_replica_election",
        "isr_change_notifications",
        "feature_znode",
        "feature_znode_zk_version",
        "faults",
        "zxid",
    ),
    CanonicalContext: (
        "controller_id",
        "epoch",
        "epoch_zk_version",
        "live_brokers",
        "shutting_down",
        "offline_replicas",
        "all_topics",
        "topic_ids",
        "assignments",
        "leadership",
        "partitions_being_reassigned",
        "legacy_reassignments",
        "replica_states",
        "partition_states",
        "topics_to_be_deleted",
        "topics_with_deletion_started",
        "topics_ineligible_for_deletion",
        "queued_elections",
    ),
    ClusterState: ("zk", "controller", "config"),
}

STATE_FAST = all(is_plain_record(cls, names) for cls, names in _STATE_FIELDS.items())
"""Whether ``zk_state``, ``canonical_context`` and ``cluster_state`` build directly (else they call the class)."""


def zk_state(**fields: Any) -> ZkState:
    """``ZkState(**fields)``; every field must be given."""
    if not STATE_FAST:  # pragma: no cover - only when the state records change shape
        return ZkState(**fields)
    o = _new(ZkState)
    _set(o, "__dict__", fields)
    return o


def canonical_context(**fields: Any) -> CanonicalContext:
    """``ControllerContext(**fields)`` (the canonical record of spec/state.py); every field must be given."""
    if not STATE_FAST:  # pragma: no cover - only when the state records change shape
        return CanonicalContext(**fields)
    o = _new(CanonicalContext)
    _set(o, "__dict__", fields)
    return o


def cluster_state(zk: ZkState, controller: CanonicalContext, config: ClusterConfig) -> ClusterState:
    if not STATE_FAST:  # pragma: no cover - only when the state records change shape
        return ClusterState(zk=zk, controller=controller, config=config)
    o = _new(ClusterState)
    _set(o, "__dict__", {"zk": zk, "controller": controller, "config": config})
    return o


# ------------------------------------------------------------------------------------- the requests sent

NO_TOPIC_IDS: FMap[str, int] = FMap()
"""The topic IDs of a request whose version has none (before IBP 2.8-IV1, and 1.1)."""

_REQUEST_FIELDS: dict[type, tuple[str, ...]] = {
    LeaderAndIsrRequest: ("broker", "controller_id", "controller_epoch", "partition_states", "topic_ids"),
    UpdateMetadataRequest: (
        "broker",
        "controller_id",
        "controller_epoch",
        "live_brokers",
        "partition_states",
        "topic_ids",
    ),
    StopReplicaRequest: ("broker", "controller_id", "controller_epoch", "partition_states"),
}
REQUEST_FAST = all(is_plain_record(cls, names) for cls, names in _REQUEST_FIELDS.items())
"""Whether the three request constructors below build directly (else they call the class)."""


def leader_and_isr_request(
    broker: int,
    controller_id: int,
    controller_epoch: int,
    partition_states: frozenset[LeaderAndIsrPartitionState],
    topic_ids: FMap[str, int] = NO_TOPIC_IDS,
) -> LeaderAndIsrRequest:
    if not REQUEST_FAST:  # pragma: no cover - only when the request records change shape
        return LeaderAndIsrRequest(broker, controller_id, controller_epoch, partition_states, topic_ids)
    o = _new(LeaderAndIsrRequest)
    _set(
        o,
        "__dict__",
        {
            "broker": broker,
            "controller_id": controller_id,
            "controller_epoch": controller_epoch,
            "partition_states": partition_states,
            "topic_ids": topic_ids,
        },
    )
    return o


def update_metadata_request(
    broker: int,
    controller_id: int,
    controller_epoch: int,
    live_brokers: frozenset[int],
    partition_states: frozenset[UpdateMetadataPartitionState],
    topic_ids: FMap[str, int] = NO_TOPIC_IDS,
) -> UpdateMetadataRequest:
    if not REQUEST_FAST:  # pragma: no cover - only when the request records change shape
        return UpdateMetadataRequest(
            broker, controller_id, controller_epoch, live_brokers, partition_states, topic_ids
        )
    o = _new(UpdateMetadataRequest)
    _set(
        o,
        "__dict__",
        {
            "broker": broker,
            "controller_id": controller_id,
            "controller_epoch": controller_epoch,
            "live_brokers": live_brokers,
            "partition_states": partition_states,
            "topic_ids": topic_ids,
        },
    )
    return o


def stop_replica_request(
    broker: int,
    controller_id: int,
    controller_epoch: int,
    partition_states: frozenset[StopReplicaPartitionState],
) -> StopReplicaRequest:
    if not REQUEST_FAST:  # pragma: no cover - only when the request records change shape
        return StopReplicaRequest(broker, controller_id, controller_epoch, partition_states)
    o = _new(StopReplicaRequest)
    _set(
        o,
        "__dict__",
        {
            "broker": broker,
            "controller_id": controller_id,
            "controller_epoch": controller_epoch,
            "partition_states": partition_states,
        },
    )
    return o


# ------------------------------------------------------------------------------------- a step's result

STEP_FAST = is_plain_record(StepResult, ("state", "requests", "failures", "answers"))
"""Whether ``step_result`` builds directly (else it calls the class)."""

_NO_ANSWERS: frozenset[ElectionAnswer] = frozenset()


def step_result(
    state: ClusterState,
    requests: frozenset[Request],
    failures: frozenset[StateChangeFailure],
    answers: frozenset[ElectionAnswer] = _NO_ANSWERS,
) -> StepResult:
    """``StepResult(state, requests, failures, answers)`` (one per event the explorer checks)."""
    if not STEP_FAST:  # pragma: no cover - only when the record changes shape
        return StepResult(state=state, requests=requests, failures=failures, answers=answers)
    o = _new(StepResult)
    _set(o, "__dict__", {"state": state, "requests": requests, "failures": failures, "answers": answers})
    return o
