"""Controller events and environment actions: the inputs of a controller step.

Each event couples what happens in the cluster (a ZooKeeper change, a broker request, an admin
request) with the controller event Kafka enqueues for it (§7, §8). Names follow Kafka's event
classes where one exists. Events are frozen dataclasses; ``kind`` is the name used in the canonical
JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import (
    ElectionTrigger,
    ElectionType,
    TopicPartition,
    ZkFault,
)


@dataclass(frozen=True)
class ControllerEvent:
    """Base class of every event."""

    kind: ClassVar[str] = ""
    section: ClassVar[str] = ""
    exercises: ClassVar[tuple[str, ...]] = ()
    """Further sections every handling of this event goes through (e.g. failover runs both machines' startup)."""


@dataclass(frozen=True)
class ControllerFailover(ControllerEvent):
    """The active controller (if any) resigns and ``broker_id`` wins the election and fails over (§7.1, §7.12)."""

    kind: ClassVar[str] = "ControllerFailover"
    section: ClassVar[str] = "§7.1"
    exercises: ClassVar[tuple[str, ...]] = ("§4.8", "§5.4", "§7.12")
    broker_id: int


@dataclass(frozen=True)
class ControllerResignation(ControllerEvent):
    """The active controller's ZooKeeper session expires: it resigns and ``/controller`` is deleted (§7.12 ``Expire``)."""

    kind: ClassVar[str] = "ControllerResignation"
    section: ClassVar[str] = "§7.12"


@dataclass(frozen=True)
class NewerControllerElected(ControllerEvent):
    """Another broker wins the election behind the active controller's back (§9 zombie window).

    ``/controller`` names ``broker_id`` and ``/controller_epoch`` is incremented; the active controller
    has not noticed and keeps acting with its old epoch until it handles ``ControllerChange`` — its
    writes then fail with ControllerMovedException (2.8) or go through (1.1).
    """

    kind: ClassVar[str] = "NewerControllerElected"
    section: ClassVar[str] = "§9"
    broker_id: int


@dataclass(frozen=True)
class ControllerChange(ControllerEvent):
    """``ControllerChange``: the active controller sees that ``/controller`` no longer names it and resigns (§7.12)."""

    kind: ClassVar[str] = "ControllerChange"
    section: ClassVar[str] = "§7.12"


@dataclass(frozen=True)
class ZombieControllerWrite(ControllerEvent):
    """A deposed controller (epoch ``controller_epoch``) writes a partition-state znode (§3.3, §9, KAFKA-6082).

    2.8 fences the write with the ``/controller_epoch`` version check, so it fails; 1.1 lets it through.
    """

    kind: ClassVar[str] = "ZombieControllerWrite"
    section: ClassVar[str] = "§9"
    tp: TopicPartition
    leader: int
    isr: tuple[int, ...]
    controller_epoch: int


@dataclass(frozen=True)
class BrokerStartup(ControllerEvent):
    """A broker registers in ``/brokers/ids`` and the controller handles ``BrokerChange`` (§7.2, §7.3)."""

    kind: ClassVar[str] = "BrokerStartup"
    section: ClassVar[str] = "§7.3"
    broker_id: int


@dataclass(frozen=True)
class BrokerFailure(ControllerEvent):
    """A broker's registration disappears and the controller handles ``BrokerChange`` (§7.2, §7.4)."""

    kind: ClassVar[str] = "BrokerFailure"
    section: ClassVar[str] = "§7.4"
    broker_id: int


@dataclass(frozen=True)
class BrokerBounce(ControllerEvent):
    """A broker re-registers with a new epoch between two watch firings (§7.2, KAFKA-7235; invisible in 1.1)."""

    kind: ClassVar[str] = "BrokerBounce"
    section: ClassVar[str] = "§7.2"
    broker_id: int


@dataclass(frozen=True)
class ControlledShutdown(ControllerEvent):
    """``ControlledShutdown(id, brokerEpoch)`` (§7.10); ``broker_epoch`` -1 means unknown (no staleness check)."""

    kind: ClassVar[str] = "ControlledShutdown"
    section: ClassVar[str] = "§7.10"
    broker_id: int
    broker_epoch: int = -1


@dataclass(frozen=True)
class TopicCreation(ControllerEvent):
    """A topic znode is created with ``replicas[i]`` the assignment of partition i; ``TopicChange`` (§7.6)."""

    kind: ClassVar[str] = "TopicCreation"
    section: ClassVar[str] = "§7.6"
    topic: str
    replicas: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class PartitionExpansion(ControllerEvent):
    """The topic znode is rewritten with more partitions; ``PartitionModifications`` (§7.6).

    ``replicas`` is the complete new assignment (existing partitions first, as the admin tools write it).
    """

    kind: ClassVar[str] = "PartitionExpansion"
    section: ClassVar[str] = "§7.6"
    topic: str
    replicas: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class TopicDeletion(ControllerEvent):
    """``/admin/delete_topics/<t>`` znodes are created; ``TopicDeletion`` (§8)."""

    kind: ClassVar[str] = "TopicDeletion"
    section: ClassVar[str] = "§8"
    topics: tuple[str, ...]


@dataclass(frozen=True)
class StopReplicaResponseReceived(ControllerEvent):
    """Broker ``broker_id`` answers the StopReplica(delete=true) it got for ``partitions`` (§8).

    ``error`` true means the request failed for all of them (``TopicDeletionStopReplicaResponseReceived``).
    """

    kind: ClassVar[str] = "StopReplicaResponseReceived"
    section: ClassVar[str] = "§8"
    broker_id: int
    partitions: tuple[TopicPartition, ...]
    error: bool = False


@dataclass(frozen=True)
class ApiPartitionReassignment(ControllerEvent):
    """``AlterPartitionReassignments``: partition → target replicas, or ``None`` to cancel (§7.7.1; 2.8 only)."""

    kind: ClassVar[str] = "ApiPartitionReassignment"
    section: ClassVar[str] = "§7.7"
    targets: FMap[TopicPartition, tuple[int, ...] | None] = field(default_factory=FMap)


@dataclass(frozen=True)
class ZkPartitionReassignment(ControllerEvent):
    """``/admin/reassign_partitions`` is created with ``targets`` (§7.7.1 ZK path; §7.8 ``PartitionReassignment`` in 1.1)."""

    kind: ClassVar[str] = "ZkPartitionReassignment"
    section: ClassVar[str] = "§7.7"
    targets: FMap[TopicPartition, tuple[int, ...]] = field(default_factory=FMap)


@dataclass(frozen=True)
class ReplicaLeaderElection(ControllerEvent):
    """A preferred or unclean election for ``partitions`` (§7.9); the ZK trigger writes ``/admin/preferred_replica_election``."""

    kind: ClassVar[str] = "ReplicaLeaderElection"
    section: ClassVar[str] = "§7.9"
    partitions: frozenset[TopicPartition]
    election_type: ElectionType = ElectionType.PREFERRED
    trigger: ElectionTrigger = ElectionTrigger.ZkTriggered


@dataclass(frozen=True)
class AutoPreferredReplicaLeaderElection(ControllerEvent):
    """The scheduled auto-rebalance check (§7.9)."""

    kind: ClassVar[str] = "AutoPreferredReplicaLeaderElection"
    section: ClassVar[str] = "§7.9"


@dataclass(frozen=True)
class IsrChange(ControllerEvent):
    """The leader of ``tp`` changes its ISR to ``isr`` (§7.11).

    2.8 with IBP ≥ 2.7-IV2: an ``AlterIsrReceived`` from the leader carrying its current leader epoch and zk version.
    1.1, and 2.8 with an older IBP: the leader writes the znode and creates an ISR-change notification; the
    controller handles ``IsrChangeNotification`` and, for a partition being reassigned,
    ``PartitionReassignmentIsrChange``.
    """

    kind: ClassVar[str] = "IsrChange"
    section: ClassVar[str] = "§7.11"
    tp: TopicPartition
    isr: tuple[int, ...]


@dataclass(frozen=True)
class LeaderAndIsrResponseReceived(ControllerEvent):
    """Broker ``broker_id`` answers a LeaderAndIsr with KAFKA_STORAGE_ERROR for ``storage_errors`` (§7.5)."""

    kind: ClassVar[str] = "LeaderAndIsrResponseReceived"
    section: ClassVar[str] = "§7.5"
    broker_id: int
    storage_errors: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class UncleanLeaderElectionEnable(ControllerEvent):
    """``unclean.leader.election.enable`` set to true for ``topic`` ("" = the broker default) (§6; no re-trigger in 1.1)."""

    kind: ClassVar[str] = "UncleanLeaderElectionEnable"
    section: ClassVar[str] = "§6"
    topic: str = ""


@dataclass(frozen=True)
class ZkFaultInjection(ControllerEvent):
    """Arm a one-shot fault on the partition-state znode of ``tp`` (§3.3)."""

    kind: ClassVar[str] = "ZkFaultInjection"
    section: ClassVar[str] = "§3.3"
    tp: TopicPartition
    fault: ZkFault


@dataclass(frozen=True)
class StopReplicaPartitionErrorsReceived(ControllerEvent):
    """Broker ``broker_id`` answers the StopReplica(delete=true) it got for ``partitions`` with no request-level
    error but a per-partition error (e.g. KAFKA_STORAGE_ERROR) for ``partition_errors`` (§8).

    ``TopicDeletionStopReplicaResponseReceived`` with some partitions in error: their replicas' deletion fails
    (``failReplicaDeletion``), the other partitions' completes (``completeReplicaDeletion``).
    """

    kind: ClassVar[str] = "StopReplicaPartitionErrorsReceived"
    section: ClassVar[str] = "§8"
    broker_id: int
    partitions: tuple[TopicPartition, ...]
    partition_errors: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class StopReplicaResponseWithoutDeletionReceived(ControllerEvent):
    """Broker ``broker_id`` answers a StopReplica that asked **no** deletion (``deletePartition=false``) for
    ``partitions``, while their replicas are in ReplicaDeletionStarted (§3.4, §8).

    This happens on every deletion retry: ``onPartitionDeletion`` moves the replicas to OfflineReplica in one
    ``handleStateChanges`` call (its batch sends StopReplica(delete=false)) and to ReplicaDeletionStarted in the
    next (StopReplica(delete=true)), so the first response can arrive after the replicas are Started. Kafka
    2.8.2's response callback keeps only partitions whose request asked ``deletePartition=true`` (§3.4, the fix of
    KAFKA-9946) and 1.1.1 registers no callback for delete=false entries: the response changes nothing. A
    controller that counts it completes (or, with ``error``, fails) a deletion the broker never performed.
    """

    kind: ClassVar[str] = "StopReplicaResponseWithoutDeletionReceived"
    section: ClassVar[str] = "§8"
    exercises: ClassVar[tuple[str, ...]] = ("§3.4",)
    broker_id: int
    partitions: tuple[TopicPartition, ...]
    error: bool = False


@dataclass(frozen=True)
class LeaderAndIsrPartitionResultsReceived(ControllerEvent):
    """Broker ``broker_id`` answers a LeaderAndIsr with NONE for ``online`` and KAFKA_STORAGE_ERROR for
    ``storage_errors`` (§7.5).

    ``LeaderAndIsrResponseReceived`` with partitions answered without error: they leave the broker's offline
    replicas (``replicasOnOfflineDirs``), the ones in error join them.
    """

    kind: ClassVar[str] = "LeaderAndIsrPartitionResultsReceived"
    section: ClassVar[str] = "§7.5"
    broker_id: int
    online: tuple[TopicPartition, ...]
    storage_errors: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class StaleAlterIsrReceived(ControllerEvent):
    """An ``AlterIsr`` from ``broker_id`` proposing ``isr`` for ``tp`` with an outdated broker epoch, leader epoch or
    zk version (§7.11; kafka-2.8 only): a delayed or repeated request.

    ``AlterIsrReceived(broker_id, broker_epoch, {tp: (broker_id, leader_epoch, isr, zk_version)})``; the controller
    answers STALE_BROKER_EPOCH, FENCED_LEADER_EPOCH or INVALID_UPDATE_VERSION. ``IsrChange`` is the leader's
    up-to-date request.
    """

    kind: ClassVar[str] = "StaleAlterIsrReceived"
    section: ClassVar[str] = "§7.11"
    broker_id: int
    broker_epoch: int
    tp: TopicPartition
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


@dataclass(frozen=True)
class BrokerChange(ControllerEvent):
    """Several brokers change in ``/brokers/ids`` before the controller's watch fires, and one ``BrokerChange``
    handles them all (§7.2): ``new_broker_ids`` register, ``bounced_broker_ids`` re-register with a new epoch,
    ``dead_broker_ids`` disappear.

    Kafka's ``processBrokerChange`` calls ``onBrokerStartup`` and ``onBrokerFailure`` once for each group, with the
    group's ids sorted, so several brokers are handled in one call (one request batch, one round of elections) —
    which consecutive ``BrokerStartup`` / ``BrokerFailure`` / ``BrokerBounce`` events do not express.
    """

    kind: ClassVar[str] = "BrokerChange"
    section: ClassVar[str] = "§7.2"
    exercises: ClassVar[tuple[str, ...]] = ("§7.3", "§7.4")
    new_broker_ids: tuple[int, ...] = ()
    dead_broker_ids: tuple[int, ...] = ()
    bounced_broker_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class LogDirEventNotification(ControllerEvent):
    """Brokers ``broker_ids`` report a failed log directory through ``/log_dir_event_notification`` (§7.5).

    ``processLogDirEventNotification``: ``onBrokerLogDirFailure(broker_ids)`` moves every replica hosted by those
    brokers to OnlineReplica, which sends them a LeaderAndIsr; their responses (``LeaderAndIsrResponseReceived``,
    ``LeaderAndIsrPartitionResultsReceived``) then name the replicas on the failed directories.
    """

    kind: ClassVar[str] = "LogDirEventNotification"
    section: ClassVar[str] = "§7.5"
    exercises: ClassVar[tuple[str, ...]] = ("§4.2",)
    broker_ids: tuple[int, ...]


@dataclass(frozen=True)
class ReplicaLeaderElectionQueued(ControllerEvent):
    """An admin client's ``ElectLeaders`` request arrives while the controller's event thread is busy: its
    ``ReplicaLeaderElection(partitions, election_type, AdminClientTriggered, callback)`` waits in the event queue
    (``ControllerEventManager.put``, §7.9, §7.12; kafka-2.8 only, KIP-460). At most
    ``config.max_queued_requests`` wait (a model bound, 0 by default: then this event never happens)."""

    kind: ClassVar[str] = "ReplicaLeaderElectionQueued"
    section: ClassVar[str] = "§7.9"
    exercises: ClassVar[tuple[str, ...]] = ("§7.12",)
    partitions: frozenset[TopicPartition]
    election_type: ElectionType = ElectionType.PREFERRED


@dataclass(frozen=True)
class ControlledShutdownQueued(ControllerEvent):
    """A broker's ``ControlledShutdown`` request arrives while the controller's event thread is busy: its
    ``ControlledShutdown(broker_id, broker_epoch, callback)`` waits in the event queue behind the requests already
    there (``ControllerEventManager.put``, §7.10, §7.12; kafka-2.8 only, with the queue). ``broker_epoch`` -1
    means unknown (no staleness check)."""

    kind: ClassVar[str] = "ControlledShutdownQueued"
    section: ClassVar[str] = "§7.10"
    exercises: ClassVar[tuple[str, ...]] = ("§7.12",)
    broker_id: int
    broker_epoch: int = -1


@dataclass(frozen=True)
class ApiPartitionReassignmentQueued(ControllerEvent):
    """An admin client's ``AlterPartitionReassignments`` request arrives while the controller's event thread is busy:
    its ``ApiPartitionReassignment(targets, callback)`` waits in the event queue behind the requests already there
    (``ControllerEventManager.put``, §7.7.1, §7.12; kafka-2.8 only). ``None`` cancels a partition's reassignment."""

    kind: ClassVar[str] = "ApiPartitionReassignmentQueued"
    section: ClassVar[str] = "§7.7"
    exercises: ClassVar[tuple[str, ...]] = ("§7.12",)
    targets: FMap[TopicPartition, tuple[int, ...] | None] = field(default_factory=FMap)


@dataclass(frozen=True)
class ListPartitionReassignmentsQueued(ControllerEvent):
    """An admin client's ``ListPartitionReassignments`` request arrives while the controller's event thread is busy:
    its ``ListPartitionReassignments(partitionsOpt, callback)`` waits in the event queue behind the requests already
    there (``ControllerEventManager.put``, §7.7.1, §7.12; kafka-2.8 only). ``partitions`` are the partitions asked
    about; none stands for Kafka's ``None`` (list every partition being reassigned).

    Decision: ``Some(∅)`` (a request naming no partition, answered an empty map) is not told apart from ``None``;
    the admin client sends ``None`` when it is given no partition."""

    kind: ClassVar[str] = "ListPartitionReassignmentsQueued"
    section: ClassVar[str] = "§7.7"
    exercises: ClassVar[tuple[str, ...]] = ("§7.12",)
    partitions: frozenset[TopicPartition] = frozenset()


@dataclass(frozen=True)
class QueuedEventProcessed(ControllerEvent):
    """The controller's event thread takes the oldest queued request and processes it: the admin election's
    ``processReplicaLeaderElection`` (§7.9), whose callback answers each requested partition, or the controlled
    shutdown's ``processControlledShutdown`` (§7.10), whose callback answers the partitions still led, or the reassignment's
    ``processApiPartitionReassignment`` (§7.7.1), whose callback answers each partition, or the listing's
    ``processListPartitionReassignments`` (§7.7.1), whose callback answers the ongoing reassignments asked about."""

    kind: ClassVar[str] = "QueuedEventProcessed"
    section: ClassVar[str] = "§7.9"
    exercises: ClassVar[tuple[str, ...]] = ("§7.12",)


EVENT_TYPES: tuple[type[ControllerEvent], ...] = (
    ControllerFailover,
    ControllerResignation,
    NewerControllerElected,
    ControllerChange,
    ZombieControllerWrite,
    BrokerStartup,
    BrokerFailure,
    BrokerBounce,
    ControlledShutdown,
    TopicCreation,
    PartitionExpansion,
    TopicDeletion,
    StopReplicaResponseReceived,
    ApiPartitionReassignment,
    ZkPartitionReassignment,
    ReplicaLeaderElection,
    AutoPreferredReplicaLeaderElection,
    IsrChange,
    LeaderAndIsrResponseReceived,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    StopReplicaPartitionErrorsReceived,
    LeaderAndIsrPartitionResultsReceived,
    StaleAlterIsrReceived,
    BrokerChange,
    LogDirEventNotification,
    StopReplicaResponseWithoutDeletionReceived,
    ReplicaLeaderElectionQueued,
    ControlledShutdownQueued,
    ApiPartitionReassignmentQueued,
    ListPartitionReassignmentsQueued,
    QueuedEventProcessed,
)
"""Every event type, in a fixed order (used by the codec, generators and coverage reports)."""

EVENTS_BY_KIND: dict[str, type[ControllerEvent]] = {cls.kind: cls for cls in EVENT_TYPES}
