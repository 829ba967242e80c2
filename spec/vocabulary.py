"""The controller's vocabulary: state enums and the value records they talk about.

Names and numeric codes are Kafka's (semantics §2, §3.1, §3.2). The reference controller may import
this module (it is vocabulary, not rules; DESIGN.md rule 2). Every record is a frozen dataclass so it
can be a map key, a set member and a value of the spec's expression language; the two hottest keys,
``TopicPartition`` and ``PartitionReplica``, and the two records held per partition, ``LeaderAndIsr`` and
``LeaderIsrAndControllerEpoch``, are tuple subclasses as well (their docstrings say why).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from kcspec.spec.fmap import FMap

_R = TypeVar("_R", bound=tuple[object, ...])

NO_LEADER = -1
"""``LeaderAndIsr.NoLeader`` (§3.2)."""
LEADER_DURING_DELETE = -2
"""``LeaderAndIsr.LeaderDuringDelete``: leader sent in UpdateMetadata for topics queued for deletion (§3.4)."""
EPOCH_DURING_DELETE = -2
"""``LeaderAndIsr.EpochDuringDelete``: StopReplica leader epoch for topics queued for deletion (§3.4)."""
NO_EPOCH = -1
"""``LeaderAndIsr.NoEpoch``: StopReplica leader epoch when the partition has no leadership info (§3.4)."""
INITIAL_LEADER_EPOCH = 0
INITIAL_ZK_VERSION = 0
UNKNOWN_BROKER_EPOCH = -1
"""Broker epoch sent by brokers that do not know theirs (§7.10 step 2)."""


class ReplicaState(enum.Enum):
    """``ReplicaState`` with Kafka's byte codes 1–7 (§2.1)."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    @property
    def code(self) -> int:
        return self.value


class PartitionState(enum.Enum):
    """``PartitionState`` with Kafka's byte codes 0–3 (§2.2)."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    @property
    def code(self) -> int:
        return self.value


class ElectionStrategy(enum.Enum):
    """The four partition-leader election strategies (§6). ``Offline`` carries ``allowUnclean`` separately."""

    OfflinePartitionLeaderElectionStrategy = "offline"
    ReassignPartitionLeaderElectionStrategy = "reassign"
    PreferredReplicaPartitionLeaderElectionStrategy = "preferred"
    ControlledShutdownPartitionLeaderElectionStrategy = "controlled_shutdown"


class ElectionType(enum.Enum):
    """``ElectionType`` of a replica leader election (§7.9)."""

    PREFERRED = "PREFERRED"
    UNCLEAN = "UNCLEAN"


class ElectionTrigger(enum.Enum):
    """Who asked for a replica leader election (§7.9)."""

    ZkTriggered = "ZkTriggered"
    AdminClientTriggered = "AdminClientTriggered"
    AutoTriggered = "AutoTriggered"


class ApiError(enum.Enum):
    """The error code a controller callback answers an admin client with (``Errors``; §7.9 results, §7.12
    preemption). ``NONE`` is a success (the partition's new leader is answered with it)."""

    NONE = "NONE"
    NOT_CONTROLLER = "NOT_CONTROLLER"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
    INVALID_TOPIC_EXCEPTION = "INVALID_TOPIC_EXCEPTION"
    ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"
    PREFERRED_LEADER_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
    ELIGIBLE_LEADERS_NOT_AVAILABLE = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    INVALID_REPLICA_ASSIGNMENT = "INVALID_REPLICA_ASSIGNMENT"
    NO_REASSIGNMENT_IN_PROGRESS = "NO_REASSIGNMENT_IN_PROGRESS"


class QueuedKind(enum.Enum):
    """Which request a ``QueuedElection`` record of the controller's event queue is (§7.9, §7.10, §7.12)."""

    ReplicaLeaderElection = "ReplicaLeaderElection"
    ControlledShutdown = "ControlledShutdown"
    ApiPartitionReassignment = "ApiPartitionReassignment"
    ListPartitionReassignments = "ListPartitionReassignments"


@dataclass(frozen=True)
class QueuedElection:
    """A request with a callback waiting in the controller's event queue (``ControllerEventManager``, §7.9, §7.10,
    §7.12): an admin client's ``ReplicaLeaderElection(partitions, type, AdminClientTriggered, callback)`` or (kind
    ``ControlledShutdown``) a broker's ``ControlledShutdown(broker_id, broker_epoch, callback)``, or (kind
    ``ApiPartitionReassignment``) an admin client's ``ApiPartitionReassignment(reassignments, callback)`` (§7.7.1),
    its targets split in two: the target lists (``targets``) and the partitions whose reassignment is cancelled
    (``cancels``, Kafka's ``None``), so that the record holds no optional value, or (kind
    ``ListPartitionReassignments``) an admin client's ``ListPartitionReassignments(partitionsOpt, callback)``
    (§7.7.1), its ``partitions`` the asked ones, none for Kafka's ``None`` (every partition being reassigned).

    Decision: one record shape for every kind, with the union of the kinds' fields (a field another kind does not
    use keeps its default): the queue is a TLA+ sequence folded over, which every backend handles for one shape.
    The name stays the one the queue had when it held elections only."""

    partitions: frozenset[TopicPartition]
    election_type: ElectionType = ElectionType.PREFERRED
    kind: QueuedKind = QueuedKind.ReplicaLeaderElection
    broker_id: int = -1
    broker_epoch: int = -1
    targets: FMap[TopicPartition, tuple[int, ...]] = dataclasses.field(default_factory=FMap)
    cancels: frozenset[TopicPartition] = frozenset()


class InterBrokerProtocol(enum.Enum):
    """``inter.broker.protocol.version`` values the 2.8 controller's checks tell apart (``ApiVersion``), oldest first.

    Only the checks the model has are told apart: ``isFeatureVersioningSupported`` (≥ 2.7-IV0, KIP-584: failover
    takes ``enableFeatureVersioning``, else ``disableFeatureVersioning``), ``isAlterIsrSupported`` (≥ 2.7-IV2,
    KIP-497: leaders send ISR changes as AlterIsr, else they write the state znode and an ISR-change notification,
    §7.11), ``usesTopicId`` (≥ 2.8-IV0, KIP-516: topic IDs created and written to the topic znodes) and the request
    versions that carry topic IDs (LeaderAndIsr v5, UpdateMetadata v7: ≥ 2.8-IV1). The ``kafka-1.1`` profile has
    no IBP check of these: it ignores the setting.

    Decision: one value per class of behaviour, named after the value Kafka's tests use for it. 2.6-IV0 stands for
    every value below 2.7-IV0 (Kafka's ``...WhenFeatureVersioningIsDisabled...`` tests use it); 2.7-IV1 is not
    offered, the controller treats it as 2.7-IV0 (its change, the Fetch version for KIP-595, is not the
    controller's). Values below 2.6-IV0 change request versions (StopReplica v3 is ≥ 2.6-IV0, §3.4) that the model
    does not tell apart, so they are not offered either. The order of the members is the versions' order
    (``ibp_at_least`` in ``spec/actions/common.py`` compares by it).
    """

    KAFKA_2_6_IV0 = "2.6-IV0"
    KAFKA_2_7_IV0 = "2.7-IV0"
    KAFKA_2_7_IV2 = "2.7-IV2"
    KAFKA_2_8_IV0 = "2.8-IV0"
    KAFKA_2_8_IV1 = "2.8-IV1"


class FeatureZNodeStatus(enum.Enum):
    """The ``/feature`` znode (KIP-584, ``FeatureZNode``) as ZooKeeper state: ``Absent``, or present with Kafka's
    ``FeatureZNodeStatus`` (``Disabled``/``Enabled``).

    The znode's other field, the finalized features, is not modelled: Kafka 2.8.2 defines no feature
    (``BrokerFeatures.defaultSupportedFeatures`` is empty), so the features the controller writes —
    ``defaultFinalizedFeatures`` when it creates the znode, ``emptyFinalizedFeatures`` when it clears them — are
    always empty, and ``Enabled`` keeps an existing (empty) set. ``Absent`` is the model's own value (Kafka reads the
    znode's version as ``ZkVersion.UnknownVersion``), as ``controller = -1`` stands for an absent ``/controller``.
    """

    Absent = "Absent"
    Disabled = "Disabled"
    Enabled = "Enabled"


class ZkFault(enum.Enum):
    """One-shot faults the simulated ZooKeeper can inject into the next write of a partition-state znode (§3.3)."""

    BADVERSION = "BADVERSION"
    """The next conditional set fails with BADVERSION, as if a broker wrote in between: the controller re-reads and retries."""
    CONNECTIONLOSS = "CONNECTIONLOSS"
    """The next read of the znode throws: every partition of that call fails with ``Left(e)``."""


_tuple_new = tuple.__new__


def _tuple_record(cls: type[_R]) -> type[_R]:
    """Declare a tuple subclass, whose items are its annotated fields in order, a frozen dataclass.

    The decorator adds what generic record code reads (``dataclasses.fields``, ``is_dataclass``, ``replace``,
    ``asdict``; ``eq`` and ``order`` for the TLA+ orderings), the ``repr`` and the frozen ``__setattr__``. The
    ``__eq__``, ``__hash__`` and comparisons it generates (field by field, as the tuple's) are removed again, so
    that the tuple's C ones apply. Each field is read by a C accessor of its item.
    """
    made = dataclass(frozen=True, init=False, eq=True, order=True)(cls)
    for name in ("__eq__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__"):
        delattr(made, name)
    for i, f in enumerate(dataclasses.fields(cast(Any, made))):
        setattr(made, f.name, property(itemgetter(i), doc=f"item {i}: the ``{f.name}`` field"))
    return made


@_tuple_record
class TopicPartition(tuple[str, int]):
    """A partition, rendered ``<topic>-<partition>`` in logs (§10.2).

    Why a tuple: partitions are the keys of most maps and sets of the data model, hashed on every lookup and
    compared whenever two equal partitions built apart meet in one. As the tuple ``(topic, partition)``, hash,
    equality and ordering are ``tuple``'s C code; the dataclass's hash (``hash((topic, partition))``) was the
    same value, so sets and maps keep their order, and the ordering is the dataclass's (by field).

    Equality is the tuple's: a ``TopicPartition`` equals another with the same fields, and also the plain
    tuple ``(topic, partition)`` (nothing mixes the two in one map or set). Code that dispatches on
    ``isinstance(x, tuple)`` meets partitions too, so it tests the records first or plain tuples with
    ``type(x) is tuple``; JSON encoders must encode records before the ``json`` module sees them (it writes
    any tuple as a list). It is a frozen dataclass as well (``_tuple_record``), so generic record code (codec,
    TLA+, Z3, ITF) reads its fields as before.
    """

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    topic: str
    partition: int

    def __new__(cls, topic: str, partition: int) -> TopicPartition:
        return _tuple_new(cls, (topic, partition))

    def __reduce__(self) -> tuple[type[TopicPartition], tuple[str, int]]:
        return TopicPartition, (self[0], self[1])

    def __str__(self) -> str:
        return f"{self[0]}-{self[1]}"


@_tuple_record
class PartitionReplica(tuple[TopicPartition, int]):
    """``PartitionAndReplica``: replica ``replica`` (a broker id) of partition ``tp`` (§4).

    The tuple ``(tp, replica)``, for the reasons given at ``TopicPartition`` (hash, equality and ordering are the
    tuple's; equal also to the plain tuple ``(tp, replica)``).
    """

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    tp: TopicPartition
    replica: int

    def __new__(cls, tp: TopicPartition, replica: int) -> PartitionReplica:
        return _tuple_new(cls, (tp, replica))

    def __reduce__(self) -> tuple[type[PartitionReplica], tuple[TopicPartition, int]]:
        return PartitionReplica, (self[0], self[1])

    def __str__(self) -> str:
        tp = self[0]
        return f"[Topic={tp[0]},Partition={tp[1]},Replica={self[1]}]"


def make_topic_partition(topic: str, partition: int) -> TopicPartition:
    """``TopicPartition(topic, partition)`` built directly as the tuple (no ``__new__`` call); for generated code
    and hot loops."""
    made: TopicPartition = _tuple_new(TopicPartition, (topic, partition))
    return made


def make_partition_replica(tp: TopicPartition, replica: int) -> PartitionReplica:
    """``PartitionReplica(tp, replica)``, built as ``make_topic_partition`` builds a partition."""
    made: PartitionReplica = _tuple_new(PartitionReplica, (tp, replica))
    return made


# The fast constructor of each class, for ``model/fastrec.py``: a function of every field in declaration order.
TopicPartition._fields_maker = staticmethod(make_topic_partition)  # type: ignore[attr-defined]
PartitionReplica._fields_maker = staticmethod(make_partition_replica)  # type: ignore[attr-defined]


@_tuple_record
class LeaderAndIsr(tuple[int, int, tuple[int, ...], int]):
    """``LeaderAndIsr`` (§3.2): leader, leader epoch, ordered ISR and the state znode's version.

    A tuple record (``_tuple_record``, as ``TopicPartition``): every partition's znode and cached leadership holds
    one, so a failover or a broker failure at a million partitions builds them by the million. As the tuple of its
    fields it is built, hashed and compared by ``tuple``'s C code; the dataclass's hash (of the same tuple of fields)
    was the same value. Equal also to the plain tuple of its fields (nothing mixes the two)."""

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int

    def __new__(cls, leader: int, leader_epoch: int, isr: tuple[int, ...], zk_version: int) -> LeaderAndIsr:
        return _tuple_new(cls, (leader, leader_epoch, isr, zk_version))

    def __reduce__(self) -> tuple[type[LeaderAndIsr], tuple[int, int, tuple[int, ...], int]]:
        return LeaderAndIsr, (self[0], self[1], self[2], self[3])


@_tuple_record
class LeaderIsrAndControllerEpoch(tuple[LeaderAndIsr, int]):
    """``LeaderIsrAndControllerEpoch`` (§3.2): a ``LeaderAndIsr`` and the epoch of the controller that decided it.

    It is both the content of a partition-state znode (the zk version being the znode's stat version) and the
    value cached in ``partitionLeadershipInfo``. A tuple record, as ``LeaderAndIsr`` (same reasons).
    """

    __slots__ = ()
    if TYPE_CHECKING:  # set by ``_tuple_record``; declared for the type checker's dataclass protocol
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    leader_and_isr: LeaderAndIsr
    controller_epoch: int

    def __new__(cls, leader_and_isr: LeaderAndIsr, controller_epoch: int) -> LeaderIsrAndControllerEpoch:
        return _tuple_new(cls, (leader_and_isr, controller_epoch))

    def __reduce__(self) -> tuple[type[LeaderIsrAndControllerEpoch], tuple[LeaderAndIsr, int]]:
        return LeaderIsrAndControllerEpoch, (self[0], self[1])


def make_leader_and_isr(
    leader: int, leader_epoch: int, isr: tuple[int, ...], zk_version: int
) -> LeaderAndIsr:
    """``LeaderAndIsr(...)`` built directly as the tuple (as ``make_topic_partition``)."""
    made: LeaderAndIsr = _tuple_new(LeaderAndIsr, (leader, leader_epoch, isr, zk_version))
    return made


def make_leader_isr_and_epoch(
    leader_and_isr: LeaderAndIsr, controller_epoch: int
) -> LeaderIsrAndControllerEpoch:
    """``LeaderIsrAndControllerEpoch(...)`` built directly as the tuple (as ``make_topic_partition``)."""
    made: LeaderIsrAndControllerEpoch = _tuple_new(
        LeaderIsrAndControllerEpoch, (leader_and_isr, controller_epoch)
    )
    return made


LeaderAndIsr._fields_maker = staticmethod(make_leader_and_isr)  # type: ignore[attr-defined]
LeaderIsrAndControllerEpoch._fields_maker = staticmethod(make_leader_isr_and_epoch)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ReplicaAssignment:
    """``ReplicaAssignment(replicas, addingReplicas, removingReplicas)`` (§3.1, 2.4+). In 1.1 adding/removing are empty."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClusterConfig:
    """Broker/topic configuration the controller consults (§6 unclean rule, §7.9 auto rebalance, §8)."""

    delete_topic_enable: bool = True
    unclean_leader_election_enable: bool = False
    """The controller broker's default ``unclean.leader.election.enable``."""
    unclean_topics: frozenset[str] = frozenset()
    """Topics whose ``unclean.leader.election.enable`` override is true."""
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    inter_broker_protocol: InterBrokerProtocol = InterBrokerProtocol.KAFKA_2_8_IV1
    """``inter.broker.protocol.version`` of the cluster (2.8.2's default, the latest: 2.8-IV1); read by the
    ``kafka-2.8`` profile only."""
    max_queued_requests: int = 0
    """A model bound, not a Kafka setting: how many requests with a callback (admin elections, controlled shutdowns,
    API reassignments) may wait in the controller's event queue while its event thread is busy. 0, the default,
    means none ever waits: every event arrives on an empty queue and is processed at once, as before the queue was
    modelled, so every model without the bound keeps its states."""


__all__ = [
    "EMPTY_MAP",
    "EPOCH_DURING_DELETE",
    "INITIAL_LEADER_EPOCH",
    "INITIAL_ZK_VERSION",
    "LEADER_DURING_DELETE",
    "NO_EPOCH",
    "NO_LEADER",
    "UNKNOWN_BROKER_EPOCH",
    "ApiError",
    "ClusterConfig",
    "ElectionStrategy",
    "ElectionTrigger",
    "ElectionType",
    "FMap",
    "FeatureZNodeStatus",
    "InterBrokerProtocol",
    "LeaderAndIsr",
    "LeaderIsrAndControllerEpoch",
    "PartitionReplica",
    "PartitionState",
    "QueuedElection",
    "QueuedKind",
    "ReplicaAssignment",
    "ReplicaState",
    "TopicPartition",
    "ZkFault",
]

EMPTY_MAP: FMap[object, object] = FMap()


@dataclass(frozen=True)
class LeaderElection:
    """Which strategy an OnlinePartition transition uses (§5.2b, §6); ``allow_unclean`` only for the Offline strategy."""

    strategy: ElectionStrategy
    allow_unclean: bool = False


@dataclass(frozen=True)
class ElectionInput:
    """Everything one election strategy looks at for one partition (§6).

    ``online`` is {r : isReplicaOnline(r, p)} (live, not shutting down, not in an offline dir);
    ``online_or_shutting_down`` is {r : isReplicaOnline(r, p, includeShuttingDownBrokers = true)}.
    ``target_replicas`` is TRS (2.8) or RAR (1.1) for the Reassign strategy. ``unclean_enabled`` is
    the effective ``unclean.leader.election.enable`` of the topic; ``allow_unclean`` the admin override.
    """

    assignment: tuple[int, ...]
    target_replicas: tuple[int, ...]
    leader_and_isr: LeaderAndIsr
    online: frozenset[int]
    online_or_shutting_down: frozenset[int]
    shutting_down: frozenset[int]
    allow_unclean: bool = False
    unclean_enabled: bool = False


@dataclass(frozen=True)
class ElectionResult:
    """The outcome of one strategy: ``leader`` -1 means "no electable leader" (§6)."""

    leader: int
    isr: tuple[int, ...]
    recipients: tuple[int, ...]
    unclean: bool = False
