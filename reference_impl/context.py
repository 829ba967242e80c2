"""``ControllerContext``: the active controller's in-memory state and Kafka's helper methods (§3.1).

Mutable and dict-based so that it scales to millions of partitions. Besides Kafka's own fields it keeps a few
indexes that Kafka computes by scanning (the results are the same, only faster):

* ``replicas_by_broker`` — broker → the partitions whose assignment lists it (``replicasOnBrokers``);
* ``partitions_by_topic`` — topic → partitions (``partitionsForTopic``);
* ``leaders`` — leader id → partitions with leadership info naming it (``partitionsWithOfflineLeader``,
  ``partitionLeadersOnBroker``);
* ``new_or_offline`` — partitions in NewPartition or OfflinePartition (``triggerOnlinePartitionStateChange``).

The two assignment indexes are built lazily after a bulk ``load_assignments`` (a failover loads every
partition at once and may never need them); a few single-broker questions are answered by scanning meanwhile.

The two gauges Kafka 2.8.2 keeps here, ``offlinePartitionCount`` and ``preferredReplicaImbalanceCount`` (§3.1), are
counters updated where Kafka updates them (``put_partition_state(s)``, ``put_leadership(s)``,
``update_assignment``, ``queue_topic_deletion``, ``remove_topic``), never recomputed, except once when a context
is built from a snapshot (``recount_metrics``: Kafka builds its context event by event from ZooKeeper; a loaded
state arrives whole). ``queue_topic_deletion`` counts only topics not already queued: that is KAFKA-13572's fix
(3.3.0). Kafka 2.8.2 itself cleans an already queued topic's partitions again each time a ``TopicDeletion`` event
re-reads ``/admin/delete_topics`` — a double decrement that can make the gauge negative; the reference keeps the
gauge equal to its definition instead, and the 2.8.2 code is a mutant (``tests/quality/explore``).

Replica states are stored per broker (``replica_states[b][tp]``) to avoid one object per replica. The 1.1
topic-deletion sets, which Kafka keeps in ``TopicDeletionManager``, live here too (the snapshot folds them in
the same fields, as the canonical ``ClusterState`` does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import repeat
from types import MappingProxyType
from typing import TypeVar

from kcspec.spec.vocabulary import (
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

EMPTY_ASSIGNMENT = ReplicaAssignment(())
_NEW = PartitionState.NewPartition
_OFFLINE = PartitionState.OfflinePartition

_LAZY_SCANS = 4
"""How many single-broker scans of a bulk-loaded context are answered by scanning before the indexes are built."""


K = TypeVar("K")
V = TypeVar("V")


def copy_map(m: Mapping[K, V]) -> dict[K, V]:
    """``dict(m)``; a dict, or a larger map whose ``items()`` is a dict's view (``FMap``), is copied with the keys'
    stored hashes (C-level, no ``__hash__`` call per key), any other from its items."""
    if type(m) is dict:
        return m.copy()
    items = m.items()
    if len(items) > _SMALL_MAP:
        behind = getattr(items, "mapping", None)
        if type(behind) is MappingProxyType:
            return behind.copy()
    return dict(items)


_SMALL_MAP = 32
"""Up to this many entries a map is copied from its items (finding the dict behind them costs more)."""


def origin_replicas(fa: ReplicaAssignment) -> tuple[int, ...]:
    """``originReplicas = replicas − addingReplicas`` (§3.1)."""
    return tuple(r for r in fa.replicas if r not in fa.adding) if fa.adding else fa.replicas


def target_replicas(fa: ReplicaAssignment) -> tuple[int, ...]:
    """``targetReplicas = replicas − removingReplicas`` (§3.1)."""
    return tuple(r for r in fa.replicas if r not in fa.removing) if fa.removing else fa.replicas


def is_being_reassigned(fa: ReplicaAssignment) -> bool:
    return bool(fa.adding or fa.removing)


def reassign_to(fa: ReplicaAssignment, target: tuple[int, ...]) -> ReplicaAssignment:
    """``reassignTo(T)``: full = distinct(T ++ origin), adding = full − origin, removing = full − T (§3.1)."""
    origin = origin_replicas(fa)
    full = tuple(dict.fromkeys(target + origin))
    return ReplicaAssignment(
        full, tuple(r for r in full if r not in origin), tuple(r for r in full if r not in target)
    )


def has_preferred_leader(fa: ReplicaAssignment, li: LeaderIsrAndControllerEpoch) -> bool:
    """``hasPreferredLeader`` (§3.1, 2.6+): the leader is the preferred replica (head of the assignment); while the
    preferred replica is being added, until it is in the ISR. An empty assignment counts as balanced (Kafka would
    throw on ``replicas.head``)."""
    if not fa.replicas:
        return True
    preferred = fa.replicas[0]
    if fa.adding and preferred in fa.adding:
        return preferred not in li.leader_and_isr.isr
    return li.leader_and_isr.leader == preferred


def remove_replica(fa: ReplicaAssignment, replica: int) -> ReplicaAssignment:
    """``removeReplica(r)``: r leaves replicas, adding and removing (§4.7)."""
    return ReplicaAssignment(
        tuple(r for r in fa.replicas if r != replica),
        tuple(r for r in fa.adding if r != replica),
        tuple(r for r in fa.removing if r != replica),
    )


class ControllerContext:
    """§3.1 ``ControllerContext`` (2.8.2 layout; the 1.1 maps of the state machines folded in)."""

    def __init__(self) -> None:
        self.controller_id = -1
        self.epoch = 0
        self.epoch_zk_version = 0
        self.live_broker_epochs: dict[int, int] = {}
        self.shutting_down: set[int] = set()
        self._live: set[int] = set()
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}
        self.all_topics: set[str] = set()
        self.topic_ids: dict[str, int] = {}
        """``topicIds`` (2.8, KIP-516)."""
        self.assignments: dict[TopicPartition, ReplicaAssignment] = {}
        self._partitions_by_topic: dict[str, dict[TopicPartition, None]] = {}
        self._replicas_by_broker: dict[int, dict[TopicPartition, None]] = {}
        self._indexed = True
        """False after ``load_assignments`` until the two indexes above are first needed (then built)."""
        self._scans = 0
        self.leadership: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.leaders: dict[int, set[TopicPartition]] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.legacy_reassignments: dict[TopicPartition, tuple[int, ...]] = {}
        self.replica_states: dict[int, dict[TopicPartition, ReplicaState]] = {}
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.new_or_offline: dict[TopicPartition, None] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0

    def copy(self) -> ControllerContext:
        """An equal context sharing no mutable container with this one (maps, sets and the maps and sets inside
        them are copied; the records they hold are immutable and shared)."""
        c = ControllerContext.__new__(ControllerContext)
        c.controller_id = self.controller_id
        c.epoch = self.epoch
        c.epoch_zk_version = self.epoch_zk_version
        c.live_broker_epochs = self.live_broker_epochs.copy()
        c.shutting_down = self.shutting_down.copy()
        c._live = self._live.copy()
        c.replicas_on_offline_dirs = {b: tps.copy() for b, tps in self.replicas_on_offline_dirs.items()}
        c.all_topics = self.all_topics.copy()
        c.topic_ids = self.topic_ids.copy()
        c.assignments = self.assignments.copy()
        c._partitions_by_topic = {t: tps.copy() for t, tps in self._partitions_by_topic.items()}
        c._replicas_by_broker = {b: tps.copy() for b, tps in self._replicas_by_broker.items()}
        c._indexed = self._indexed
        c._scans = self._scans
        c.leadership = self.leadership.copy()
        c.leaders = {b: tps.copy() for b, tps in self.leaders.items()}
        c.partitions_being_reassigned = self.partitions_being_reassigned.copy()
        c.legacy_reassignments = self.legacy_reassignments.copy()
        c.replica_states = {b: states.copy() for b, states in self.replica_states.items()}
        c.partition_states = self.partition_states.copy()
        c.new_or_offline = self.new_or_offline.copy()
        c.topics_to_be_deleted = self.topics_to_be_deleted.copy()
        c.topics_with_deletion_started = self.topics_with_deletion_started.copy()
        c.topics_ineligible_for_deletion = self.topics_ineligible_for_deletion.copy()
        c.offline_partition_count = self.offline_partition_count
        c.preferred_replica_imbalance_count = self.preferred_replica_imbalance_count
        return c

    # ------------------------------------------------------------------------------------ brokers

    def _refresh_live(self) -> None:
        self._live = set(self.live_broker_epochs) - self.shutting_down

    def live_broker_ids(self) -> set[int]:
        """``liveBrokerIds`` = registered − shutting down (the returned set must not be modified)."""
        return self._live

    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self.live_broker_epochs)

    def add_live_brokers(self, epochs: dict[int, int]) -> None:
        self.live_broker_epochs.update(epochs)
        self._refresh_live()

    def remove_live_brokers(self, brokers: Iterable[int]) -> None:
        for b in brokers:
            self.live_broker_epochs.pop(b, None)
        self._refresh_live()

    def add_shutting_down(self, broker: int) -> None:
        self.shutting_down.add(broker)
        self._refresh_live()

    def remove_shutting_down(self, broker: int) -> bool:
        if broker in self.shutting_down:
            self.shutting_down.discard(broker)
            self._refresh_live()
            return True
        return False

    def is_replica_online(self, broker: int, tp: TopicPartition, include_shutting_down: bool = False) -> bool:
        """``isReplicaOnline`` (§3.1): live (or live-or-shutting-down) and not in an offline log dir."""
        if include_shutting_down:
            if broker not in self.live_broker_epochs:
                return False
        elif broker not in self._live:
            return False
        offline = self.replicas_on_offline_dirs.get(broker)
        return not (offline and tp in offline)

    # ------------------------------------------------------------------------------------ assignments

    @property
    def partitions_by_topic(self) -> dict[str, dict[TopicPartition, None]]:
        self._ensure_indexed()
        return self._partitions_by_topic

    @property
    def replicas_by_broker(self) -> dict[int, dict[TopicPartition, None]]:
        self._ensure_indexed()
        return self._replicas_by_broker

    def _ensure_indexed(self) -> None:
        """Build the per-topic and per-broker indexes of a bulk-loaded context, exactly as the sequence of
        ``update_assignment`` calls in assignment order would have (nothing changed the assignments since)."""
        if self._indexed:
            return
        self._indexed = True
        by_topic = self._partitions_by_topic
        by_broker = self._replicas_by_broker
        for tp, fa in self.assignments.items():
            topic_tps = by_topic.get(tp.topic)
            if topic_tps is None:
                topic_tps = by_topic[tp.topic] = {}
            topic_tps[tp] = None
            for r in fa.replicas:
                on = by_broker.get(r)
                if on is None:
                    on = by_broker[r] = {}
                on[tp] = None

    def load_assignments(self, assignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """``update_assignment`` for every partition of ``assignments``, in order (failover, snapshot load).

        On a context without assignments (nor leadership, so no imbalance to count) the indexes are built only when
        first needed."""
        if self.assignments or not self._indexed or self.leadership:
            for tp, fa in assignments.items():
                self.update_assignment(tp, fa)
            return
        self.assignments = copy_map(assignments)
        self._partitions_by_topic = {}
        self._replicas_by_broker = {}
        self._indexed = not self.assignments
        self._scans = 0

    def _scan_brokers(self, brokers: list[int]) -> dict[int, list[TopicPartition]] | None:
        """The partitions of a few brokers by scanning the assignments, while the indexes are not built."""
        if self._indexed or self._scans >= _LAZY_SCANS:
            return None
        self._scans += 1
        if len(brokers) == 1:
            b = brokers[0]
            return {b: [tp for tp, fa in self.assignments.items() if b in fa.replicas]}
        out: dict[int, list[TopicPartition]] = {b: [] for b in brokers}
        for tp, fa in self.assignments.items():
            for r in fa.replicas:
                hit = out.get(r)
                if hit is not None:
                    hit.append(tp)
        return out

    def assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        """``partitionFullReplicaAssignment``: the FA, or an empty one for unknown partitions."""
        return self.assignments.get(tp, EMPTY_ASSIGNMENT)

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        fa = self.assignments.get(tp)
        return fa.replicas if fa is not None else ()

    def update_assignment(self, tp: TopicPartition, fa: ReplicaAssignment) -> None:
        """``updatePartitionFullReplicaAssignment`` (keeps the per-broker and per-topic indexes)."""
        self._ensure_indexed()
        old = self.assignments.get(tp)
        li = self.leadership.get(tp)
        if li is not None and tp.topic not in self.topics_to_be_deleted:
            # ``updatePreferredReplicaImbalanceMetric(tp, previous, LI, Some(new), LI)``
            if old is not None and not has_preferred_leader(old, li):
                self.preferred_replica_imbalance_count -= 1
            if not has_preferred_leader(fa, li):
                self.preferred_replica_imbalance_count += 1
        if old is None:
            self._partitions_by_topic.setdefault(tp.topic, {})[tp] = None
            old_replicas: tuple[int, ...] = ()
        else:
            old_replicas = old.replicas
        self.assignments[tp] = fa
        if old_replicas != fa.replicas:
            by_broker = self._replicas_by_broker
            for r in old_replicas:
                if r not in fa.replicas:
                    on = by_broker.get(r)
                    if on is not None:
                        on.pop(tp, None)
            for r in fa.replicas:
                by_broker.setdefault(r, {})[tp] = None

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return list(self.partitions_by_topic.get(topic, ()))

    def all_partitions(self) -> Iterable[TopicPartition]:
        return self.assignments.keys()

    def partitions_on_broker(self, broker: int) -> list[TopicPartition]:
        scanned = self._scan_brokers([broker])
        if scanned is not None:
            return scanned[broker]
        return list(self.replicas_by_broker.get(broker, ()))

    def replicas_on_brokers(self, brokers: Iterable[int]) -> dict[int, list[TopicPartition]]:
        """``replicasOnBrokers`` grouped by broker (broker → partitions whose assignment lists it)."""
        wanted = sorted(set(brokers))
        scanned = self._scan_brokers(wanted) if wanted else None
        if scanned is not None:
            return scanned
        by_broker = self.replicas_by_broker
        return {b: list(by_broker.get(b, ())) for b in wanted}

    def replicas_for_partitions(self, tps: Iterable[TopicPartition]) -> dict[int, list[TopicPartition]]:
        """``replicasForPartition`` grouped by broker."""
        out: dict[int, list[TopicPartition]] = {}
        for tp in tps:
            for r in self.replicas(tp):
                out.setdefault(r, []).append(tp)
        return out

    def replicas_for_topic(self, topic: str) -> dict[int, list[TopicPartition]]:
        return self.replicas_for_partitions(self.partitions_by_topic.get(topic, ()))

    def remove_topic(self, topic: str) -> None:
        """``removeTopic`` (§3.1): queue/started sets, allTopics, topicIds, assignments, leadership; not partition
        states. The imbalance of a topic not queued for deletion is cleaned first (a queued one's was, when it was
        queued)."""
        if topic not in self.topics_to_be_deleted:
            self._clean_preferred_replica_imbalance(topic)
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.all_topics.discard(topic)
        self.topic_ids.pop(topic, None)
        self._ensure_indexed()
        for tp in self._partitions_by_topic.pop(topic, {}):
            fa = self.assignments.pop(tp)
            for r in fa.replicas:
                on = self._replicas_by_broker.get(r)
                if on is not None:
                    on.pop(tp, None)
            self.remove_leadership(tp)

    # ------------------------------------------------------------------------------------ leadership

    def put_leadership(self, tp: TopicPartition, li: LeaderIsrAndControllerEpoch) -> None:
        """``putPartitionLeadershipInfo`` (keeps the leader index and the imbalance gauge)."""
        old = self.leadership.get(tp)
        self._update_imbalance(tp, old, li)
        new_leader = li.leader_and_isr.leader
        if old is not None:
            old_leader = old.leader_and_isr.leader
            if old_leader != new_leader:
                self.leaders[old_leader].discard(tp)
                self.leaders.setdefault(new_leader, set()).add(tp)
        else:
            self.leaders.setdefault(new_leader, set()).add(tp)
        self.leadership[tp] = li

    def put_leaderships(self, records: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]) -> None:
        """``put_leadership`` for every record, in order."""
        leadership = self.leadership
        leaders = self.leaders
        olds: Iterable[LeaderIsrAndControllerEpoch | None] = (
            list(map(leadership.get, records)) if leadership else repeat(None)
        )
        if self.assignments:  # ``repeat(None)`` or a list: both can be zipped again below
            for (tp, li), old in zip(records.items(), olds, strict=False):
                self._update_imbalance(tp, old, li)
        leadership.update(records if type(records) is dict else copy_map(records))  # the keys' stored hashes
        gained: dict[int, list[TopicPartition]] = {}
        for (tp, li), old in zip(records.items(), olds, strict=False):
            new_leader = li.leader_and_isr.leader
            if old is not None:
                old_leader = old.leader_and_isr.leader
                if old_leader == new_leader:
                    continue
                leaders[old_leader].discard(tp)
            hit = gained.get(new_leader)
            if hit is None:
                gained[new_leader] = [tp]
            else:
                hit.append(tp)
        for leader, tps in gained.items():
            on = leaders.get(leader)
            if on is None:
                leaders[leader] = set(tps)
            else:
                on.update(tps)

    def _update_imbalance(
        self, tp: TopicPartition, old: LeaderIsrAndControllerEpoch | None, li: LeaderIsrAndControllerEpoch
    ) -> None:
        """``updatePreferredReplicaImbalanceMetric(tp, Some(FA), old, Some(FA), Some(li))`` of
        ``putPartitionLeadershipInfo``: FA is the partition's assignment, empty when unknown."""
        if tp.topic in self.topics_to_be_deleted:
            return
        fa = self.assignments.get(tp, EMPTY_ASSIGNMENT)
        if old is not None and not has_preferred_leader(fa, old):
            self.preferred_replica_imbalance_count -= 1
        if not has_preferred_leader(fa, li):
            self.preferred_replica_imbalance_count += 1

    def _clean_preferred_replica_imbalance(self, topic: str) -> None:
        """``cleanPreferredReplicaImbalanceMetric(topic)``: the topic's imbalanced partitions leave the gauge."""
        for tp in self.partitions_by_topic.get(topic, ()):
            li = self.leadership.get(tp)
            if li is not None and not has_preferred_leader(self.assignments[tp], li):
                self.preferred_replica_imbalance_count -= 1

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        """``queueTopicDeletion`` as fixed by KAFKA-13572 (see the module docstring): topics not yet queued are
        queued and their imbalance cleaned, once."""
        newly = set(topics) - self.topics_to_be_deleted
        self.topics_to_be_deleted.update(newly)
        for topic in sorted(newly):
            self._clean_preferred_replica_imbalance(topic)

    def recount_metrics(self) -> None:
        """Both gauges from scratch, as the bookkeeping would have them had the context been built event by event
        (a context loaded from a snapshot)."""
        started = self.topics_with_deletion_started
        self.offline_partition_count = sum(
            1 for tp, state in self.partition_states.items() if state is _OFFLINE and tp.topic not in started
        )
        deleting = self.topics_to_be_deleted
        self.preferred_replica_imbalance_count = sum(
            1
            for tp, li in self.leadership.items()
            if tp.topic not in deleting and not has_preferred_leader(self.assignment(tp), li)
        )

    def remove_leadership(self, tp: TopicPartition) -> None:
        old = self.leadership.pop(tp, None)
        if old is not None:
            self.leaders[old.leader_and_isr.leader].discard(tp)

    def partitions_with_leaders(self) -> list[TopicPartition]:
        """``partitionsWithLeaders``: cached partitions of topics not queued for deletion."""
        deleting = self.topics_to_be_deleted
        if not deleting:
            return list(self.leadership)
        return [tp for tp in self.leadership if tp.topic not in deleting]

    def partitions_with_offline_leader(self) -> list[TopicPartition]:
        """``partitionsWithOfflineLeader`` (§3.1): leader not online (−1, dead, shutting down, offline dir)."""
        deleting = self.topics_to_be_deleted
        out: list[TopicPartition] = []
        for leader, tps in self.leaders.items():
            if not tps:
                continue
            if leader not in self._live:
                out.extend(tps if not deleting else (tp for tp in tps if tp.topic not in deleting))
            else:
                offline = self.replicas_on_offline_dirs.get(leader)
                if offline:
                    out.extend(tp for tp in tps if tp in offline and tp.topic not in deleting)
        return sorted(out)  # ``TopicPartition``'s order (topic, then partition): the tuple's, compared in C

    def partition_leaders_on_broker(self, broker: int) -> set[TopicPartition]:
        """``partitionLeadersOnBroker`` (§3.1): led by ``broker``, |AR| > 1, topic not queued for deletion."""
        deleting = self.topics_to_be_deleted
        return {
            tp
            for tp in self.leaders.get(broker, ())
            if len(self.replicas(tp)) > 1 and tp.topic not in deleting
        }

    # ------------------------------------------------------------------------------------ states

    def replica_state(self, broker: int, tp: TopicPartition) -> ReplicaState:
        states = self.replica_states.get(broker)
        if states is None:
            return ReplicaState.NonExistentReplica
        return states.get(tp, ReplicaState.NonExistentReplica)

    def replicas_in_state(self, topic: str, state: ReplicaState) -> dict[int, list[TopicPartition]]:
        """``replicasInState(topic, state)`` grouped by broker, over the topic's assigned replicas."""
        out: dict[int, list[TopicPartition]] = {}
        for b, tps in self.replicas_for_topic(topic).items():
            states = self.replica_states.get(b, {})
            hit = [tp for tp in tps if states.get(tp, ReplicaState.NonExistentReplica) is state]
            if hit:
                out[b] = hit
        return out

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        """Vacuously true for a topic with no replicas; a missing state counts as NonExistentReplica."""
        for b, tps in self.replicas_for_topic(topic).items():
            states = self.replica_states.get(b, {})
            if any(states.get(tp, ReplicaState.NonExistentReplica) is not state for tp in tps):
                return False
        return True

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return bool(self.replicas_in_state(topic, state))

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.partition_states.get(tp, PartitionState.NonExistentPartition)

    def put_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        """``putPartitionState`` (keeps the New/Offline index and the offline-partition gauge)."""
        old = self.partition_states.get(tp)
        if (old is _OFFLINE) is not (state is _OFFLINE) and tp.topic not in self.topics_with_deletion_started:
            self.offline_partition_count += 1 if state is _OFFLINE else -1
        self.partition_states[tp] = state
        if state is _NEW or state is _OFFLINE:
            self.new_or_offline[tp] = None
        else:
            self.new_or_offline.pop(tp, None)

    def put_partition_states(self, tps: Iterable[TopicPartition], state: PartitionState) -> None:
        """``put_partition_state(tp, state)`` for every partition of ``tps``."""
        update = dict.fromkeys(tps, state)
        self._count_offline(update, state)
        self.partition_states.update(update)
        new_or_offline = self.new_or_offline
        if state is _NEW or state is _OFFLINE:
            new_or_offline.update(dict.fromkeys(update))
        elif len(update) < len(new_or_offline) // 4:
            for tp in update:
                new_or_offline.pop(tp, None)
        elif new_or_offline:
            remaining = set(new_or_offline)
            remaining.difference_update(set(update))
            if len(remaining) != len(new_or_offline):
                new_or_offline.clear()
                new_or_offline.update(dict.fromkeys(remaining))

    def _count_offline(self, tps: Iterable[TopicPartition], state: PartitionState) -> None:
        """``updatePartitionStateMetrics`` of ``putPartitionState(tp, state)`` for each of ``tps``, before the put:
        entering OfflinePartition +1, leaving it −1, unless the topic's deletion has started."""
        started = self.topics_with_deletion_started
        states = self.partition_states
        if state is _OFFLINE:
            changed = sum(1 for tp in tps if states.get(tp) is not _OFFLINE and tp.topic not in started)
            self.offline_partition_count += changed
        elif self.new_or_offline:  # no partition in New or Offline: none leaves Offline
            changed = sum(1 for tp in tps if states.get(tp) is _OFFLINE and tp.topic not in started)
            self.offline_partition_count -= changed

    def partitions_in_new_or_offline(self, topic: str | None = None) -> list[TopicPartition]:
        deleting = self.topics_to_be_deleted
        if not deleting and topic is None:
            return sorted(self.new_or_offline)
        return sorted(
            tp
            for tp in self.new_or_offline
            if tp.topic not in deleting and (topic is None or tp.topic == topic)
        )

    # ------------------------------------------------------------------------------------ deletion

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted
