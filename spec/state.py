"""``ClusterState``: the whole controller-visible state, the canonical data model of kcspec.

It has three parts (DESIGN.md "One canonical data model"):
* ``zk`` — the simulated ZooKeeper as the controller sees it (§3.3, §7, §9): controller znodes,
  registered brokers with their epochs, topic assignments, partition-state znodes with their versions,
  admin znodes, and one-shot injected faults;
* ``controller`` — the active controller's in-memory ``ControllerContext`` (§3.1), including the
  replica and partition states of the two state machines and the topic-deletion bookkeeping (§8);
* ``config`` — the configuration the controller consults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import (
    ClusterConfig,
    FeatureZNodeStatus,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    QueuedElection,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
    ZkFault,
)

NO_CONTROLLER = -1


@dataclass(frozen=True)
class ZkState:
    """The ZooKeeper data tree, reduced to what the controller reads and writes."""

    controller: int = NO_CONTROLLER
    """``/controller``: the broker id registered as controller, -1 when the znode is absent."""
    controller_epoch: int = 0
    """``/controller_epoch`` value (0 before any controller was elected)."""
    controller_epoch_zk_version: int = 0
    """Stat version of ``/controller_epoch``; 2.8 fences every controller write on it (§3.3, §9)."""
    brokers: FMap[int, int] = field(default_factory=FMap)
    """``/brokers/ids``: registered broker id → broker epoch (the registration's czxid)."""
    topics: frozenset[str] = frozenset()
    """Children of ``/brokers/topics``: the topic znodes. A topic znode is state of its own, apart from its
    partitions: its data (the partition map) is the entries of ``assignments`` for its partitions, and it may have
    none — KAFKA-6612's restore writes back only the partitions that have a state znode (§7.6,
    ``KafkaController.processPartitionModifications``, ``restorePartitionReplicaAssignment``), and the topic
    still exists (``getAllTopicsInCluster`` lists it) until ``completeDeleteTopic`` deletes the znode (§8)."""
    topic_ids: FMap[str, int] = field(default_factory=FMap)
    """The ``topic_id`` field of the topic znodes (KIP-516, version 3 of their JSON); a topic without one has no
    entry (created under an IBP before 2.8, or by 1.1). Decision (Kafka draws a random UUID): an ID is a small
    positive integer, the least one no topic znode holds (``spec/actions/topic_ids.py``), so that exploration stays
    finite and every run reproducible; IDs are distinct among existing topics, as the controller's
    ``topicIds``/``topicNames`` maps need, but a topic created again may get the ID its deleted predecessor had."""
    assignments: FMap[TopicPartition, ReplicaAssignment] = field(default_factory=FMap)
    """The data of the topic znodes ``/brokers/topics/<t>``: the full assignment of every partition of every
    topic; every partition's topic is in ``topics``."""
    partition_states: FMap[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=FMap)
    """``/brokers/topics/<t>/partitions/<p>/state``; the zk version lives in the LeaderAndIsr."""
    delete_topics: frozenset[str] = frozenset()
    """Children of ``/admin/delete_topics``."""
    reassign_partitions: FMap[TopicPartition, tuple[int, ...]] = field(default_factory=FMap)
    """``/admin/reassign_partitions``; empty means the znode is absent."""
    preferred_replica_election: frozenset[TopicPartition] = frozenset()
    """``/admin/preferred_replica_election``; empty means the znode is absent."""
    isr_change_notifications: frozenset[TopicPartition] = frozenset()
    """Partitions named by pending ``/isr_change_notification`` znodes (1.1 and IBP < 2.7)."""
    feature_znode: FeatureZNodeStatus = FeatureZNodeStatus.Absent
    """``/feature`` (KIP-584, 2.7+): absent, or its status (its finalized features are always empty in 2.8.2:
    ``FeatureZNodeStatus``). Set up by every 2.8 failover (§7.1 step 1, ``spec/actions/features.py``); 1.1 has no
    such znode and never writes it."""
    feature_znode_zk_version: int = 0
    """Stat version of ``/feature``: 0 when created, +1 per update (``updateFeatureZNode``); 0 while absent."""
    faults: FMap[TopicPartition, ZkFault] = field(default_factory=FMap)
    """One-shot faults armed on partition-state znodes."""
    zxid: int = 1
    """The next ZooKeeper transaction id; a broker registration's czxid (its broker epoch) is taken from it."""


@dataclass(frozen=True)
class ControllerContext:
    """The active controller's in-memory state (§3.1 ``ControllerContext``; 1.1 state-machine maps folded in)."""

    controller_id: int = NO_CONTROLLER
    """The broker acting as controller; -1 when no controller is active (context reset, §7.12)."""
    epoch: int = 0
    epoch_zk_version: int = 0
    live_brokers: FMap[int, int] = field(default_factory=FMap)
    """``liveBrokerEpochs``: every registered broker (including shutting-down ones) → broker epoch."""
    shutting_down: frozenset[int] = frozenset()
    """``shuttingDownBrokerIds``."""
    offline_replicas: frozenset[PartitionReplica] = frozenset()
    """``replicasOnOfflineDirs`` flattened to (partition, broker) pairs."""
    all_topics: frozenset[str] = frozenset()
    topic_ids: FMap[str, int] = field(default_factory=FMap)
    """``topicIds`` (2.8, KIP-516): topic → ID, as read from (or written to) the topic znodes."""
    assignments: FMap[TopicPartition, ReplicaAssignment] = field(default_factory=FMap)
    """``partitionAssignments`` (FA); in 1.1 adding/removing are always empty."""
    leadership: FMap[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=FMap)
    """``partitionLeadershipInfo`` (LI)."""
    partitions_being_reassigned: frozenset[TopicPartition] = frozenset()
    """2.8 ``partitionsBeingReassigned``."""
    legacy_reassignments: FMap[TopicPartition, tuple[int, ...]] = field(default_factory=FMap)
    """[1.1] ``partitionsBeingReassigned``: partition → RAR (new replicas)."""
    replica_states: FMap[PartitionReplica, ReplicaState] = field(default_factory=FMap)
    partition_states: FMap[TopicPartition, PartitionState] = field(default_factory=FMap)
    topics_to_be_deleted: frozenset[str] = frozenset()
    topics_with_deletion_started: frozenset[str] = frozenset()
    topics_ineligible_for_deletion: frozenset[str] = frozenset()
    queued_elections: tuple[QueuedElection, ...] = ()
    """The requests with a callback waiting in the controller's event queue behind the event being processed
    (``ControllerEventManager.queue``, §7.9, §7.12), oldest first; at most ``config.max_queued_requests``.

    Kafka keeps the queue in the event manager, beside the context; here it is cleared with the context, and every
    resignation answers what it held (``spec/actions/event_queue.py``). Empty whenever no controller is active."""


@dataclass(frozen=True)
class ClusterState:
    """The whole controller-visible state of a cluster."""

    zk: ZkState = field(default_factory=ZkState)
    controller: ControllerContext = field(default_factory=ControllerContext)
    config: ClusterConfig = field(default_factory=ClusterConfig)
