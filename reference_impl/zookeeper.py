"""A simulated ZooKeeper holding the znodes the controller reads and writes (§3.3, §7, §9).

It is the mutable twin of ``ZkState``: ``/controller``, ``/controller_epoch`` (value and stat version),
``/brokers/ids``, the topic znodes (``topics``, which exist apart from their partitions: a topic znode may hold
no partition) and their assignments, partition-state znodes (their version is the ``zk_version`` of the stored
``LeaderAndIsr``), the admin znodes, pending ISR-change notifications and injected one-shot faults.

Controller writes are fenced in 2.8 (KAFKA-6082): every write is a ``multi`` with a ``CheckOp`` on the
``/controller_epoch`` version; when it fails ``ControllerMovedException`` is raised, nothing is written and no
fault is consumed. A write of an empty map is not sent to ZooKeeper at all (so it is not fenced either). 1.1 has
no fencing. Faults (docs/contracts.md): ``BADVERSION`` fails the next conditional ``setData`` of that znode
(the partition is returned for retry; a mismatching expected version is a BADVERSION too); ``CONNECTIONLOSS``
makes the next *read* of that znode throw — a read of several znodes throws if any of them has one armed and
consumes every ``CONNECTIONLOSS`` armed on the znodes it read; a ``CONNECTIONLOSS`` armed on the path of a state
znode still to be created makes its ``createTopicPartitionStatesRaw`` call throw the same way (BADVERSION is ignored
by creations). Deleting a topic deletes
its partition-state znodes together with any fault armed on them (decision: the fault belongs to the znode).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kcspec.reference_impl.context import copy_map
from kcspec.reference_impl.errors import ControllerMovedException, KeeperException
from kcspec.reference_impl.records import zk_state
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ZkState
from kcspec.spec.vocabulary import (
    FeatureZNodeStatus,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
    ZkFault,
)

_tuple_new = tuple.__new__
UNKNOWN_VERSION = -1
"""``ZkVersion.UnknownVersion``: the version ``getDataAndVersion`` reports for an absent znode."""
_LEADER_AND_ISR = LeaderAndIsr
_LEADER_ISR_AND_EPOCH = LeaderIsrAndControllerEpoch


def state_path(tp: TopicPartition) -> str:
    return f"/brokers/topics/{tp.topic}/partitions/{tp.partition}/state"


class SimulatedZooKeeper:
    """The ZooKeeper data tree, reduced to what the controller sees."""

    def __init__(self, state: ZkState, *, fencing: bool) -> None:
        # maps are copied with their keys' stored hashes (``copy_map``; ``dict(fmap)`` would go key by key)
        self.fencing = fencing
        self.controller = state.controller
        self.controller_epoch = state.controller_epoch
        self.controller_epoch_zk_version = state.controller_epoch_zk_version
        self.brokers: dict[int, int] = copy_map(state.brokers)
        self.topics: set[str] = set(state.topics)
        """The children of ``/brokers/topics``; ``partitions_by_topic`` indexes their partition maps."""
        self.topic_ids: dict[str, int] = copy_map(state.topic_ids)
        """The ``topic_id`` of the topic znodes that have one (KIP-516)."""
        self.assignments: dict[TopicPartition, ReplicaAssignment] = copy_map(state.assignments)
        self.partitions_by_topic: dict[str, list[TopicPartition]] = {}
        for tp in self.assignments:
            self.partitions_by_topic.setdefault(tp.topic, []).append(tp)
        self.partition_states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = copy_map(
            state.partition_states
        )
        self.delete_topics: set[str] = set(state.delete_topics)
        self.deleted_topic_configs: set[str] = set()
        """Topics whose ``/config/topics/<t>`` znode ``delete_topic`` removed (read and cleared by the caller)."""
        self.reassign_partitions: dict[TopicPartition, tuple[int, ...]] = copy_map(state.reassign_partitions)
        self.preferred_replica_election: set[TopicPartition] = set(state.preferred_replica_election)
        self.isr_change_notifications: set[TopicPartition] = set(state.isr_change_notifications)
        self.feature_status: FeatureZNodeStatus | None = (
            None if state.feature_znode is FeatureZNodeStatus.Absent else state.feature_znode
        )
        """``/feature`` (KIP-584): its status, ``None`` while the znode is absent (its features are always empty)."""
        self.feature_version = state.feature_znode_zk_version
        """Its stat version (kept as given while absent, so that an absent znode's state is reported unchanged)."""
        self.faults: dict[TopicPartition, ZkFault] = copy_map(state.faults)
        self.zxid = state.zxid

    def copy(self) -> SimulatedZooKeeper:
        """An equal tree sharing no mutable container with this one (maps and sets copied C-level with their keys'
        stored hashes, the per-topic partition lists copied; the records they hold are immutable and shared)."""
        c = SimulatedZooKeeper.__new__(type(self))
        c.fencing = self.fencing
        c.controller = self.controller
        c.controller_epoch = self.controller_epoch
        c.controller_epoch_zk_version = self.controller_epoch_zk_version
        c.brokers = self.brokers.copy()
        c.topics = self.topics.copy()
        c.topic_ids = self.topic_ids.copy()
        c.assignments = self.assignments.copy()
        c.partitions_by_topic = {topic: tps.copy() for topic, tps in self.partitions_by_topic.items()}
        c.partition_states = self.partition_states.copy()
        c.delete_topics = self.delete_topics.copy()
        c.deleted_topic_configs = self.deleted_topic_configs.copy()
        c.reassign_partitions = self.reassign_partitions.copy()
        c.preferred_replica_election = self.preferred_replica_election.copy()
        c.isr_change_notifications = self.isr_change_notifications.copy()
        c.feature_status = self.feature_status
        c.feature_version = self.feature_version
        c.faults = self.faults.copy()
        c.zxid = self.zxid
        return c

    def snapshot(self) -> ZkState:
        return zk_state(
            controller=self.controller,
            controller_epoch=self.controller_epoch,
            controller_epoch_zk_version=self.controller_epoch_zk_version,
            brokers=FMap(self.brokers),
            topics=frozenset(self.topics),
            topic_ids=FMap(self.topic_ids),
            assignments=FMap(self.assignments),
            partition_states=FMap(self.partition_states),
            delete_topics=frozenset(self.delete_topics),
            reassign_partitions=FMap(self.reassign_partitions),
            preferred_replica_election=frozenset(self.preferred_replica_election),
            isr_change_notifications=frozenset(self.isr_change_notifications),
            feature_znode=FeatureZNodeStatus.Absent if self.feature_status is None else self.feature_status,
            feature_znode_zk_version=self.feature_version,
            faults=FMap(self.faults),
            zxid=self.zxid,
        )

    # ------------------------------------------------------------------------------------------ fencing

    def check_controller_epoch(self, expected_zk_version: int) -> None:
        """The ``CheckOp(/controller_epoch, expected)`` of every fenced write (2.8 only)."""
        if self.fencing and expected_zk_version != self.controller_epoch_zk_version:
            raise ControllerMovedException(
                f"Controller epoch zkVersion check fails. Expected zkVersion = {expected_zk_version}"
            )

    # ------------------------------------------------------------------------------------------ reads

    def topic_partitions(self, topic: str) -> list[TopicPartition]:
        return list(self.partitions_by_topic.get(topic, ()))

    def get_topic_partition_states(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """``getTopicPartitionStates``: existing znodes only; throws on an armed CONNECTIONLOSS (consuming them)."""
        tps = list(partitions)
        self._consume_connection_loss(tps)
        states = self.partition_states
        if not states:
            return {}
        found = dict(zip(tps, map(states.get, tps), strict=True))
        if None in found.values():
            return {tp: st for tp, st in found.items() if st is not None}
        return found  # type: ignore[return-value]

    def read_topic_partition_states(
        self, partitions: Sequence[TopicPartition]
    ) -> list[LeaderIsrAndControllerEpoch | None]:
        """``get_topic_partition_states`` as a list in the order of ``partitions`` (``None``: no znode).

        Where speed bent the shape: Kafka's ``getTopicPartitionStates`` returns a map that its callers then walk
        in their own order; reading into a list in that order saves building and probing the map (two hashed
        lookups per partition, at 250,000 partitions a broker failure). Same faults, same exception."""
        self._consume_connection_loss(partitions)
        return list(map(self.partition_states.get, partitions))

    def _consume_connection_loss(self, tps: Sequence[TopicPartition]) -> None:
        """Throw (and consume every one of them) if a CONNECTIONLOSS is armed on a znode of ``tps``."""
        faults = self.faults
        if faults:
            lost = [tp for tp in tps if faults.get(tp) is ZkFault.CONNECTIONLOSS]
            if lost:
                for tp in lost:
                    del faults[tp]
                raise KeeperException("CONNECTIONLOSS", state_path(lost[0]))

    # ------------------------------------------------------------------------------------------ writes

    def update_leader_and_isr(
        self,
        updates: Mapping[TopicPartition, LeaderAndIsr],
        controller_epoch: int,
        expected_zk_version: int,
        written_records: dict[TopicPartition, LeaderIsrAndControllerEpoch] | None = None,
    ) -> tuple[dict[TopicPartition, LeaderAndIsr | KeeperException], list[TopicPartition]]:
        """``updateLeaderAndIsr`` (§3.3): conditional sets; returns (finished, partitions to retry).

        ``written_records``, when given, receives each written znode's record (in the order written): the caller
        caches that very object (``LeaderIsrAndControllerEpoch(finished leaderAndIsr, controller epoch)``, equal to
        what Kafka builds again for ``partitionLeadershipInfo``) instead of building its twin."""
        finished: dict[TopicPartition, LeaderAndIsr | KeeperException] = {}
        retry: list[TopicPartition] = []
        if not updates:
            return finished, retry
        self.check_controller_epoch(expected_zk_version)
        states = self.partition_states
        faults = self.faults
        new = _tuple_new
        for tp, lai in updates.items():
            current = states.get(tp)
            if current is None:
                finished[tp] = KeeperException("NONODE", state_path(tp))
                continue
            if faults and faults.get(tp) is ZkFault.BADVERSION:
                del faults[tp]
                retry.append(tp)
                continue
            # the records are tuple records (``records.TUPLE_LEADERSHIP``): read by unpacking, built as tuples
            leader, leader_epoch, isr, zk_version = lai
            if current.leader_and_isr.zk_version != zk_version:
                retry.append(tp)
                continue
            written: LeaderAndIsr = new(_LEADER_AND_ISR, (leader, leader_epoch, isr, zk_version + 1))
            record = states[tp] = new(_LEADER_ISR_AND_EPOCH, (written, controller_epoch))
            finished[tp] = written
            if written_records is not None:
                written_records[tp] = record
        return finished, retry

    def create_topic_partition_states(
        self, records: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], expected_zk_version: int
    ) -> dict[TopicPartition, str]:
        """``createTopicPartitionStatesRaw``: result code per partition (``OK`` or ``NODEEXISTS``). A CONNECTIONLOSS
        armed on the path of one of them throws ``KeeperException`` before the call reaches ZooKeeper (no CheckOp
        evaluated, nothing created), consuming every CONNECTIONLOSS armed on the call's paths."""
        codes: dict[TopicPartition, str] = {}
        if not records:
            return codes
        self._consume_connection_loss(list(records))
        self.check_controller_epoch(expected_zk_version)
        states = self.partition_states
        if not states or not any(map(states.__contains__, records)):
            states.update(records)
            return dict.fromkeys(records, "OK")
        for tp, record in records.items():
            if tp in states:
                codes[tp] = "NODEEXISTS"
            else:
                states[tp] = record
                codes[tp] = "OK"
        return codes

    def set_topic_assignment(
        self,
        topic: str,
        topic_id: int | None,
        assignment: Mapping[TopicPartition, ReplicaAssignment],
        expected_zk_version: int,
    ) -> str:
        """``setTopicAssignmentRaw(topic, topicId, assignment)``: replace the whole topic znode's data (its topic ID
        too: none when ``topic_id`` is ``None``); ``NONODE`` if the topic znode does not exist (a topic znode without
        partitions exists)."""
        self.check_controller_epoch(expected_zk_version)
        if topic not in self.topics:
            return "NONODE"
        if topic_id is None:
            self.topic_ids.pop(topic, None)
        else:
            self.topic_ids[topic] = topic_id
        for tp in self.partitions_by_topic.pop(topic, ()):
            del self.assignments[tp]
        for tp, fa in assignment.items():
            self.add_assignment(tp, fa)
        return "OK"

    def create_topic(
        self, topic: str, assignment: Mapping[TopicPartition, ReplicaAssignment], with_topic_id: bool
    ) -> None:
        """``createTopicAssignment(topic, topicId, assignment)`` (by the admin client, not the controller): the topic
        znode with its partitions, and a fresh topic ID if ``with_topic_id``."""
        self.topics.add(topic)
        if with_topic_id:
            self.topic_ids[topic] = self.new_topic_id()
        for tp, fa in assignment.items():
            self.add_assignment(tp, fa)

    def new_topic_id(self) -> int:
        """``Uuid.randomUuid()`` in the model: the least positive integer no topic znode holds (the decision is
        written in ``spec/state.py``, ``ZkState.topic_ids``)."""
        used = set(self.topic_ids.values())
        candidate = 1
        while candidate in used:
            candidate += 1
        return candidate

    def set_topic_ids(self, topics: Iterable[str], expected_zk_version: int) -> dict[str, int]:
        """``setTopicIds``: a fresh ID written into each topic znode of ``topics`` (none has one), in the given
        order; fenced (ControllerMovedException, nothing written). Returns topic → new ID."""
        names = list(topics)
        if not names:
            return {}
        self.check_controller_epoch(expected_zk_version)
        written: dict[str, int] = {}
        for topic in names:
            written[topic] = self.topic_ids[topic] = self.new_topic_id()
        return written

    def add_assignment(self, tp: TopicPartition, fa: ReplicaAssignment) -> None:
        if tp not in self.assignments:
            self.partitions_by_topic.setdefault(tp.topic, []).append(tp)
        self.assignments[tp] = fa

    def delete_topic(self, topic: str, expected_zk_version: int) -> None:
        """``deleteTopic``: ``/brokers/topics/<t>`` (assignments, partition states), configs, the deletion znode."""
        self.check_controller_epoch(expected_zk_version)
        self.topics.discard(topic)
        self.topic_ids.pop(topic, None)
        for tp in self.partitions_by_topic.pop(topic, ()):
            del self.assignments[tp]
            self.partition_states.pop(tp, None)
            self.faults.pop(tp, None)
        self.delete_topics.discard(topic)
        self.deleted_topic_configs.add(topic)

    def delete_topic_deletions(self, topics: Iterable[str], expected_zk_version: int) -> None:
        self.check_controller_epoch(expected_zk_version)
        self.delete_topics.difference_update(topics)

    def delete_preferred_replica_election(self, expected_zk_version: int) -> None:
        self.check_controller_epoch(expected_zk_version)
        self.preferred_replica_election.clear()

    def delete_partition_reassignment(self, expected_zk_version: int) -> None:
        self.check_controller_epoch(expected_zk_version)
        self.reassign_partitions.clear()

    def set_partition_reassignment(
        self, reassignment: Mapping[TopicPartition, tuple[int, ...]], expected_zk_version: int
    ) -> None:
        self.check_controller_epoch(expected_zk_version)
        self.reassign_partitions = dict(reassignment)

    def delete_isr_change_notifications(self, expected_zk_version: int) -> None:
        self.check_controller_epoch(expected_zk_version)
        self.isr_change_notifications.clear()

    def get_feature_znode(self) -> tuple[FeatureZNodeStatus | None, int]:
        """``getDataAndVersion(FeatureZNode.path)``: the status (``None``: absent) and the version (absent:
        ``ZkVersion.UnknownVersion``)."""
        return self.feature_status, UNKNOWN_VERSION if self.feature_status is None else self.feature_version

    def create_feature_znode(self, status: FeatureZNodeStatus) -> int:
        """``createFeatureZNode``: a plain create, not fenced by the controller epoch; returns its version (0)."""
        self.feature_status = status
        self.feature_version = 0
        return self.feature_version

    def update_feature_znode(self, status: FeatureZNodeStatus) -> int:
        """``updateFeatureZNode``: setData with ``MatchAnyVersion``, not fenced; returns the new version."""
        self.feature_status = status
        self.feature_version += 1
        return self.feature_version

    def delete_controller(self, expected_zk_version: int | None) -> None:
        """Delete ``/controller`` (2.8: fenced by the epoch zk version; 1.1 unconditionally, ``None``)."""
        if expected_zk_version is not None:
            self.check_controller_epoch(expected_zk_version)
        self.controller = -1

    def partitions_of(self, topics: Sequence[str]) -> list[TopicPartition]:
        out: list[TopicPartition] = []
        for t in topics:
            out.extend(self.partitions_by_topic.get(t, ()))
        return out
