"""The requests the controller sends, the pending request batch, and the result of one controller step.

Semantics §3.4. A step's requests are compared as a *set*: Kafka does not specify the order of
partitions within a batch, and the spec groups requests per recipient broker and per send. How a
profile splits a per-broker StopReplica into wire requests (1.1 sends each ``delete=true`` entry on
its own) is a wire detail that is not compared.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ApiError,
    PartitionReplica,
    ReplicaAssignment,
    TopicPartition,
    _tuple_record,
)

_tuple_new = tuple.__new__


# The three partition states below are tuple subclasses (``_tuple_record``, as ``TopicPartition``): a request
# carries one per partition and is compared as a set of them, so at a million partitions they are built and hashed by
# the million. As the tuple of their fields in order, construction, hash, equality and ordering are ``tuple``'s C code;
# the dataclass's hash (``hash`` of the same tuple of fields) was the same value, so sets keep their order. Equality is
# the tuple's: a state equals another with the same fields (the three have different lengths, so never one of another
# kind). They are frozen dataclasses as well, so generic record code reads their fields as before.


@_tuple_record
class LeaderAndIsrPartitionState(
    tuple[
        TopicPartition,
        int,
        int,
        int,
        tuple[int, ...],
        int,
        tuple[int, ...],
        tuple[int, ...],
        tuple[int, ...],
        bool,
    ]
):
    """One partition state inside a LeaderAndIsr request (§3.4 ``addLeaderAndIsrRequestForBrokers``)."""

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
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

    def __new__(
        cls,
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
        return _tuple_new(
            cls,
            (tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, adding, removing, is_new),
        )

    def __reduce__(self) -> tuple[type[LeaderAndIsrPartitionState], tuple[Any, ...]]:
        return LeaderAndIsrPartitionState, tuple(self)


@_tuple_record
class UpdateMetadataPartitionState(
    tuple[TopicPartition, int, int, int, tuple[int, ...], int, tuple[int, ...], tuple[int, ...]]
):
    """One partition state inside an UpdateMetadata request (§3.4 ``addUpdateMetadataRequestForBrokers``)."""

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    tp: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...]

    def __new__(
        cls,
        tp: TopicPartition,
        controller_epoch: int,
        leader: int,
        leader_epoch: int,
        isr: tuple[int, ...],
        zk_version: int,
        replicas: tuple[int, ...],
        offline_replicas: tuple[int, ...],
    ) -> UpdateMetadataPartitionState:
        return _tuple_new(
            cls, (tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, offline_replicas)
        )

    def __reduce__(self) -> tuple[type[UpdateMetadataPartitionState], tuple[Any, ...]]:
        return UpdateMetadataPartitionState, tuple(self)


@_tuple_record
class StopReplicaPartitionState(tuple[TopicPartition, bool, int]):
    """One partition inside a StopReplica request (§3.4 ``addStopReplicaRequestForBrokers``)."""

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    tp: TopicPartition
    delete_partition: bool
    leader_epoch: int

    def __new__(
        cls, tp: TopicPartition, delete_partition: bool, leader_epoch: int
    ) -> StopReplicaPartitionState:
        return _tuple_new(cls, (tp, delete_partition, leader_epoch))

    def __reduce__(self) -> tuple[type[StopReplicaPartitionState], tuple[Any, ...]]:
        return StopReplicaPartitionState, tuple(self)


def _make_lair(*fields: Any) -> LeaderAndIsrPartitionState:
    made: LeaderAndIsrPartitionState = _tuple_new(LeaderAndIsrPartitionState, fields)
    return made


def _make_umr(*fields: Any) -> UpdateMetadataPartitionState:
    made: UpdateMetadataPartitionState = _tuple_new(UpdateMetadataPartitionState, fields)
    return made


def _make_stop(*fields: Any) -> StopReplicaPartitionState:
    made: StopReplicaPartitionState = _tuple_new(StopReplicaPartitionState, fields)
    return made


# The fast constructor of each class, for ``model/fastrec.py``: a function of every field in declaration order.
LeaderAndIsrPartitionState._fields_maker = staticmethod(_make_lair)  # type: ignore[attr-defined]
UpdateMetadataPartitionState._fields_maker = staticmethod(_make_umr)  # type: ignore[attr-defined]
StopReplicaPartitionState._fields_maker = staticmethod(_make_stop)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class LeaderAndIsrRequest:
    broker: int
    controller_id: int
    controller_epoch: int
    partition_states: frozenset[LeaderAndIsrPartitionState]
    topic_ids: FMap[str, int] = field(default_factory=FMap)
    """LeaderAndIsr v5 (2.8, IBP ≥ 2.8-IV1, KIP-516): the ID of every topic of ``partition_states``,
    ``controllerContext.topicIds.getOrElse(topic, Uuid.ZERO_UUID)`` (0 = the zero UUID,
    ``ControllerChannelManager.sendRequestsToBrokers``); empty when the request version has no topic IDs."""


@dataclass(frozen=True)
class UpdateMetadataRequest:
    broker: int
    controller_id: int
    controller_epoch: int
    live_brokers: frozenset[int]
    partition_states: frozenset[UpdateMetadataPartitionState]
    topic_ids: FMap[str, int] = field(default_factory=FMap)
    """UpdateMetadata v7 (2.8, IBP ≥ 2.8-IV1, KIP-516): each topic state's ``topicId`` for every topic of
    ``partition_states`` (0 = the zero UUID); empty when the request version has no topic IDs."""


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
class ControllerMetrics:
    """The controller's gauges that its state determines (§3.1; ``kafka.controller:type=KafkaController``).

    Derived values, not state: the spec defines each from a ``ClusterState`` (``spec/metrics.py``); a controller
    reports the values it keeps (Kafka 2.8.2 keeps both incrementally in ``ControllerContext``)."""

    offline_partition_count: int
    """``OfflinePartitionsCount``."""
    preferred_replica_imbalance_count: int
    """``PreferredReplicaImbalanceCount``."""


@dataclass(frozen=True)
class ElectionAnswer:
    """What the callback of a queued request answers for one requested partition (§7.7.1, §7.9, §7.12), or for a
    whole request (``WHOLE_REQUEST``: a controlled shutdown's answer, §7.10, or a reassignment's top-level error).

    ``request`` is the request's place in the event queue when it is answered (0: the head; a preemption answers
    every queued request, numbered from the head). ``leader`` is the partition's leader after a successful
    election (``error`` NONE), -1 otherwise. Output of a step, like its requests: not state."""

    request: int
    tp: TopicPartition
    error: ApiError
    leader: int = NO_LEADER
    exception: str = ""
    """The exception a ``Failure`` answer carries (``ControllerMovedException``…), "" otherwise."""
    assignment: ReplicaAssignment = dataclasses.field(default_factory=lambda: ReplicaAssignment(()))
    """A ``ListPartitionReassignments`` answer's ongoing reassignment of ``tp``: its full replica assignment
    (``controllerContext.partitionFullReplicaAssignment``: replicas, adding, removing); empty otherwise."""


WHOLE_REQUEST = TopicPartition("", -1)
"""The ``tp`` of an answer about a whole request, not one partition: a queued ``ControlledShutdown``'s callback
(§7.10) gets ``Success(partitions still led)`` — one answer with ``tp`` WHOLE_REQUEST and error NONE, and one per
partition still led (error NONE, ``leader`` the shutting-down broker) — or ``Failure(e)``: one answer with ``tp``
WHOLE_REQUEST, ``exception`` e's class name and ``error`` NOT_CONTROLLER for ControllerMovedException,
UNKNOWN_SERVER_ERROR otherwise (decision: the answer keeps one shape for every kind; the WHOLE_REQUEST answer
tells an empty ``Success`` from no answer). A queued ``ApiPartitionReassignment``'s top-level error
(``Right(ApiError(NOT_CONTROLLER))``, §7.7.1) is one answer with ``tp`` WHOLE_REQUEST and no exception, and so is
a queued ``ListPartitionReassignments``'; its ``Left(reassignments)`` is one answer with ``tp`` WHOLE_REQUEST and
error NONE (an empty map told from no answer) and one per partition listed (error NONE, its ``assignment``)."""


@dataclass(frozen=True)
class StepResult:
    """What one controller step did: the post-state, the requests sent, the per-element failures and the answers
    of the callbacks it called (§7.9, §7.12; empty unless requests were queued)."""

    state: ClusterState
    requests: frozenset[Request]
    failures: frozenset[StateChangeFailure]
    answers: frozenset[ElectionAnswer] = frozenset()
