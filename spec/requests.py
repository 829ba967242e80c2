"""The requests the controller sends, the pending request batch, and the result of one controller step.

Semantics §3.4. A step's requests are compared as a *set*: Kafka does not specify the order of
partitions within a batch, and the spec groups requests per recipient broker and per send. How a
profile splits a per-broker StopReplica into wire requests (1.1 sends each ``delete=true`` entry on
its own) is a wire detail that is not compared.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition


@dataclass(frozen=True)
class LeaderAndIsrPartitionState:
    """One partition state inside a LeaderAndIsr request (§3.4 ``addLeaderAndIsrRequestForBrokers``)."""

    tp: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    is_new: bool


@dataclass(frozen=True)
class UpdateMetadataPartitionState:
    """One partition state inside an UpdateMetadata request (§3.4 ``addUpdateMetadataRequestForBrokers``)."""

    tp: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True)
class StopReplicaPartitionState:
    """One partition inside a StopReplica request (§3.4 ``addStopReplicaRequestForBrokers``)."""

    tp: TopicPartition
    delete_partition: bool
    leader_epoch: int


@dataclass(frozen=True)
class LeaderAndIsrRequest:
    broker: int
    controller_id: int
    controller_epoch: int
    partition_states: frozenset[LeaderAndIsrPartitionState]


@dataclass(frozen=True)
class UpdateMetadataRequest:
    broker: int
    controller_id: int
    controller_epoch: int
    live_brokers: frozenset[int]
    partition_states: frozenset[UpdateMetadataPartitionState]


@dataclass(frozen=True)
class StopReplicaRequest:
    broker: int
    controller_id: int
    controller_epoch: int
    partition_states: frozenset[StopReplicaPartitionState]


Request = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest


@dataclass(frozen=True)
class RequestBatch:
    """``ControllerBrokerRequestBatch`` between ``newBatch`` and ``sendRequestsToBrokers`` (§3.4).

    LeaderAndIsr and StopReplica entries are keyed by (broker, partition) — a ``PartitionReplica`` whose
    ``replica`` is the recipient broker — so that a later entry overwrites an earlier one, with ``isNew``
    and ``deletePartition`` sticky. UpdateMetadata has one recipient set and one partition map.
    """

    leader_and_isr: FMap[PartitionReplica, LeaderAndIsrPartitionState] = field(default_factory=FMap)
    update_metadata_brokers: frozenset[int] = frozenset()
    update_metadata_partitions: FMap[TopicPartition, UpdateMetadataPartitionState] = field(
        default_factory=FMap
    )
    stop_replica: FMap[PartitionReplica, StopReplicaPartitionState] = field(default_factory=FMap)


class FailureReason(enum.Enum):
    """Why a state change of one element failed (the messages of §10.3)."""

    InvalidTransition = "invalid_transition"
    NewReplicaIsLeader = "new_replica_is_leader"
    LeaderAndIsrPathEmpty = "leader_and_isr_path_empty"
    WrittenByNewerController = "written_by_newer_controller"
    ZkError = "zk_error"
    NoAssignedReplicaAlive = "no_assigned_replica_alive"
    NodeExists = "node_exists"
    LeaderAndIsrMissing = "leader_and_isr_missing"
    NoEligibleLeader = "no_eligible_leader"


MACHINE_REPLICA = "replica"
MACHINE_PARTITION = "partition"


@dataclass(frozen=True)
class StateChangeFailure:
    """A failed or rejected state change of one element, as logged at ERROR (§2.3 step 4, §4, §5).

    ``replica`` is -1 for the partition machine. ``target`` is the target *as Kafka logs it* (e.g. a
    NewReplica failure for the leader is logged with target ``OfflineReplica``, §4.1).
    """

    machine: str
    tp: TopicPartition
    replica: int
    from_state: str
    target: str
    reason: FailureReason


@dataclass(frozen=True)
class StepResult:
    """What one controller step did: the post-state, the requests sent, and the per-element failures."""

    state: ClusterState
    requests: frozenset[Request]
    failures: frozenset[StateChangeFailure]
