"""``ControllerBrokerRequestBatch``: the pending LeaderAndIsr / UpdateMetadata / StopReplica requests (§3.4).

* LeaderAndIsr entries are keyed by (broker, partition); a later entry overwrites an earlier one and ``isNew``
  is sticky. Every LeaderAndIsr entry also adds the partition to the UpdateMetadata for all live-or-shutting-down
  brokers.
* UpdateMetadata partition states are computed when the partition is added, from the leadership cache:
  ``duringDelete`` (leader −2, epoch 0, zk version 0) for topics queued for deletion; offline replicas are the
  assigned replicas that are not online; a partition without leadership is skipped with an INFO line. 2.8: an
  empty partition set means "no partition states"; 1.1: it means *all* cached partitions, and every UpdateMetadata
  also carries every partition of every topic queued for deletion.
* StopReplica: ``deletePartition`` sticky; the leader epoch (2.6+, KIP-570) is −2 for topics queued for
  deletion, else the cached leader epoch, else −1 (1.1: −1, no such field).
* ``send`` emits, in order, one LeaderAndIsr, one UpdateMetadata and one StopReplica request per recipient
  broker; brokers not live-or-shutting-down are dropped (2.8 silently; 1.1 with a WARN line from the channel
  manager).

Liveness (live brokers, shutting down brokers, offline dirs) never changes between ``new_batch`` and ``send``;
partition states are therefore cached per batch and reused when the same cached records are added again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from operator import attrgetter

from kcspec.reference_impl.context import EMPTY_ASSIGNMENT, ControllerContext
from kcspec.reference_impl.errors import IllegalStateException
from kcspec.reference_impl.logs import (
    ControllerLog,
    Logger,
    bool_text,
    java_int_list,
    mk_int_string,
    mk_string,
    scala_int_set,
)
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.records import (
    NO_TOPIC_IDS,
    TUPLE_STATES,
    lair_partition_state,
    leader_and_isr_request,
    stop_replica_partition_state,
    stop_replica_request,
    umr_partition_state,
    update_metadata_request,
)
from kcspec.reference_impl.state_change_logger import StateChangeLogger
from kcspec.reference_impl.version import KAFKA_2_4, KAFKA_2_6, KafkaVersion, requests_carry_topic_ids
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    Request,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kcspec.spec.vocabulary import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    ClusterConfig,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)


class ControllerBrokerRequestBatch:
    """One request batch (each state machine owns one, ``KafkaController`` a third, §2.3 step 2)."""

    def __init__(
        self,
        ctx: ControllerContext,
        version: KafkaVersion,
        log: ControllerLog,
        sent: list[Request],
        state_change_logger: StateChangeLogger,
        config: ClusterConfig | None = None,
    ) -> None:
        self.ctx = ctx
        self.version = version
        self.config = config if config is not None else ClusterConfig()
        """The broker's config: its ``inter_broker_protocol`` decides whether requests carry topic IDs."""
        self.log = log
        self.sent = sent
        self.kip455 = version >= KAFKA_2_4
        """2.4+: adding/removing replicas in LAIR, an empty UMR set means no partitions (§3.4)."""
        self.kip570 = version >= KAFKA_2_6
        """2.6+: StopReplica leader epoch and per-broker request summaries."""
        self.state_change_logger = state_change_logger
        self.controller_log = Logger(log, log.controller, "kafka.controller.ControllerBrokerRequestBatch", "")
        self.channel_log = Logger(
            log,
            log.controller,
            "kafka.controller.ControllerChannelManager",
            f"[Channel manager on controller {ctx.controller_id}]: ",
        )
        self._lair: dict[
            TopicPartition,
            dict[int, LeaderAndIsrPartitionState] | tuple[tuple[int, ...], LeaderAndIsrPartitionState],
        ] = {}
        """LeaderAndIsr entries, partition first: partition → recipient broker → partition state, or, while a
        partition has had one ``add_leader_and_isr`` only, (its recipients, their shared state)."""
        self._lair_groups: dict[tuple[int, ...], list[LeaderAndIsrPartitionState]] = {}
        """The first entry of each partition, grouped by its recipients (one shared state for all of them)."""
        self._lair_changed: list[tuple[TopicPartition, tuple[int, ...], int]] = []
        """Partitions whose entry changed after it was grouped: (partition, recipients before the change,
        number of partitions in ``_lair`` at that time)."""
        self._lair_late: list[tuple[int, TopicPartition, int]] = []
        """(broker, partition, number of partitions in ``_lair`` at that time) for recipients added later."""
        self._lair_cache: dict[
            TopicPartition,
            tuple[LeaderIsrAndControllerEpoch, ReplicaAssignment, bool, LeaderAndIsrPartitionState],
        ] = {}
        self.update_metadata_brokers: set[int] = set()
        self._umr: dict[
            TopicPartition,
            tuple[LeaderIsrAndControllerEpoch, ReplicaAssignment | None, bool, UpdateMetadataPartitionState],
        ] = {}
        """UpdateMetadata partition states with the records they were computed from."""
        self.stop_replica: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self._all_live_added = False
        self._rendered: dict[LeaderAndIsrPartitionState, str] = {}
        """TRACE renderings of LeaderAndIsr partition states (bounded: at most ``_RENDERED_MAX``). Where speed bent
        the shape (Kafka renders each state in each line): the explorer sends the same states again and again."""

    # ------------------------------------------------------------------------------------ views

    @property
    def leader_and_isr(self) -> dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]]:
        """The pending LeaderAndIsr entries per recipient broker, brokers and each broker's partitions in the
        order their first entry was added (as a per-broker map filled call by call would hold them)."""
        if not self._lair_changed and not self._lair_late:
            # every partition has had one entry: its recipients in order, partitions in the order added
            plain: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
            for tp, entry in self._lair.items():
                if isinstance(entry, tuple):
                    recipients, state = entry
                    for broker in recipients:
                        on = plain.get(broker)
                        if on is None:
                            plain[broker] = {tp: state}
                        else:
                            on[tp] = state
                else:
                    for broker, state in entry.items():
                        plain.setdefault(broker, {})[tp] = state
            return plain
        first: dict[TopicPartition, tuple[int, ...]] = {}
        for tp, brokers, _ in self._lair_changed:
            first.setdefault(tp, brokers)
        added: list[tuple[tuple[int, int, int], int, TopicPartition]] = []
        for position, tp in enumerate(self._lair):
            created = first.get(tp)
            if created is None:
                created = tuple(self._lair_states(tp))
            added.extend(((position, 1, k), broker, tp) for k, broker in enumerate(created))
        added.extend(((marker, 0, k), broker, tp) for k, (broker, tp, marker) in enumerate(self._lair_late))
        added.sort(key=lambda item: item[0])
        out: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        for _, broker, tp in added:
            out.setdefault(broker, {})[tp] = self._lair_states(tp)[broker]
        return out

    @property
    def update_metadata(self) -> dict[TopicPartition, UpdateMetadataPartitionState]:
        """The pending UpdateMetadata partition states, in the order the partitions were added."""
        return {tp: entry[3] for tp, entry in self._umr.items()}

    # ------------------------------------------------------------------------------------ lifecycle

    def is_empty(self) -> bool:
        return not (self._lair or self.update_metadata_brokers or self._umr or self.stop_replica)

    def new_batch(self) -> None:
        if not self.is_empty():
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some LeaderAndIsr state changes {self.leader_and_isr} might be lost "
            )

    def clear(self) -> None:
        self._all_live_added = False
        if not (
            self._lair
            or self._lair_groups
            or self._lair_changed
            or self._lair_late
            or self._lair_cache
            or self.update_metadata_brokers
            or self._umr
            or self.stop_replica
        ):
            return  # already empty (a batch adopted with its incarnation, most of the time): nothing to replace
        self._lair = {}
        self._lair_groups = {}
        self._lair_changed = []
        self._lair_late = []
        self._lair_cache = {}
        self.update_metadata_brokers = set()
        self._umr = {}
        self.stop_replica = {}

    # ------------------------------------------------------------------------------------ adding

    def _lair_state(
        self, tp: TopicPartition, li: LeaderIsrAndControllerEpoch, fa: ReplicaAssignment, new: bool
    ) -> LeaderAndIsrPartitionState:
        hit = self._lair_cache.get(tp)
        if hit is not None and hit[0] is li and hit[1] is fa and hit[2] == new:
            return hit[3]
        lai = li.leader_and_isr
        if self.kip455:
            adding, removing = fa.adding, fa.removing
        else:
            adding, removing = (), ()
        state = lair_partition_state(
            tp,
            li.controller_epoch,
            lai.leader,
            lai.leader_epoch,
            lai.isr,
            lai.zk_version,
            fa.replicas,
            adding,
            removing,
            new,
        )
        self._lair_cache[tp] = (li, fa, new, state)
        return state

    def _lair_states(self, tp: TopicPartition) -> dict[int, LeaderAndIsrPartitionState]:
        """The LeaderAndIsr entries of ``tp`` by recipient (stored as such from now on)."""
        entry = self._lair[tp]
        if isinstance(entry, tuple):
            entry = self._lair[tp] = dict.fromkeys(entry[0], entry[1])
        return entry

    def add_leader_and_isr(
        self,
        brokers: Iterable[int],
        tp: TopicPartition,
        li: LeaderIsrAndControllerEpoch,
        fa: ReplicaAssignment,
        is_new: bool,
    ) -> None:
        """``addLeaderAndIsrRequestForBrokers`` (+ the implicit UpdateMetadata for ``tp``)."""
        recipients = _recipients(brokers)
        if recipients:
            lai = li.leader_and_isr
            state = lair_partition_state(
                tp,
                li.controller_epoch,
                lai.leader,
                lai.leader_epoch,
                lai.isr,
                lai.zk_version,
                fa.replicas,
                fa.adding if self.kip455 else (),
                fa.removing if self.kip455 else (),
                is_new,
            )
            entry = (recipients, state)
            if self._lair.setdefault(tp, entry) is entry:
                group = self._lair_groups.get(recipients)
                if group is None:
                    self._lair_groups[recipients] = [state]
                else:
                    group.append(state)
            else:
                self._merge_lair(recipients, tp, li, fa, is_new)
        self._add_update_metadata_for_live_brokers(tp)

    def _merge_lair(
        self,
        recipients: tuple[int, ...],
        tp: TopicPartition,
        li: LeaderIsrAndControllerEpoch,
        fa: ReplicaAssignment,
        is_new: bool,
    ) -> None:
        """A further LeaderAndIsr entry for a partition already in the batch: per recipient, ``isNew`` sticky."""
        lair = self._lair
        states = self._lair_states(tp)
        self._lair_changed.append((tp, tuple(states), len(lair)))
        for broker in recipients:
            previous = states.get(broker)
            if previous is None:
                self._lair_late.append((broker, tp, len(lair)))
            states[broker] = self._lair_state(
                tp, li, fa, is_new or (previous is not None and previous.is_new)
            )

    @mirrors("addLeaderAndIsrRequestForBrokers")
    def add_leader_and_isr_for_partitions(
        self,
        entries: Sequence[
            tuple[Iterable[int], TopicPartition, LeaderIsrAndControllerEpoch, ReplicaAssignment]
        ],
        is_new: bool,
        *,
        cached: bool = False,
    ) -> None:
        """``add_leader_and_isr(brokers, tp, li, fa, is_new)`` for each entry in order, in one loop.

        ``cached``: the caller has just stored every entry's ``li`` in the leadership cache and took ``fa`` from
        the context's assignments (or ``EMPTY_ASSIGNMENT`` for none), so the UpdateMetadata entry is computed from
        them without looking them up again. When ``add_leader_and_isr`` or the UpdateMetadata methods it calls
        have been replaced (on the class or the instance), each entry goes through them instead."""
        cls = type(self)
        if (
            not self.kip455
            or cls.add_leader_and_isr is not _ADD_LEADER_AND_ISR
            or cls._add_update_metadata_for_live_brokers is not _ADD_UPDATE_METADATA_FOR_LIVE_BROKERS
            or cls._add_partition_metadata is not _ADD_PARTITION_METADATA
            or not _NO_INSTANCE_HOOKS.isdisjoint(vars(self))
            or not _TUPLE_RECORDS
        ):
            for brokers, tp, li, fa in entries:
                self.add_leader_and_isr(brokers, tp, li, fa, is_new)
            return
        if not entries:
            return
        ctx = self.ctx
        if not self._all_live_added:
            self.update_metadata_brokers.update(b for b in ctx.live_broker_epochs if b >= 0)
            self._all_live_added = True
        lair = self._lair
        groups = self._lair_groups
        umr = self._umr
        leadership = ctx.leadership
        assignments = ctx.assignments
        deleting = ctx.topics_to_be_deleted
        live = ctx.live_broker_ids()
        offline_dirs = ctx.replicas_on_offline_dirs
        offline_by_replicas: dict[tuple[int, ...], tuple[int, ...]] = {}
        known_recipients = _RECIPIENTS
        # consecutive entries mostly share their broker tuple and recipients (the very same objects): the last
        # ones are remembered by identity, the broker tuple with its cleaned recipients, those with their group
        last_brokers: object = None
        recipients: tuple[int, ...] = ()
        group_of: tuple[int, ...] | None = None
        group: list[LeaderAndIsrPartitionState] = []
        # Where speed bent the shape: the records are tuple records (``_TUPLE_RECORDS``), read by unpacking and the
        # partition states built as the tuple of their fields (``records.lair_partition_state`` and
        # ``umr_partition_state`` inlined), at a million entries a visible share of a failover
        new = _tuple_new
        for brokers, tp, li, fa in entries:
            lai, controller_epoch = li
            leader, leader_epoch, isr, zk_version = lai
            if brokers is not last_brokers:
                if type(brokers) is tuple:
                    last_brokers = brokers
                    found = known_recipients.get(brokers)
                else:  # another kind of collection: not remembered (it might change)
                    last_brokers = found = None
                recipients = found if found is not None else _recipients(brokers)
            if recipients:
                state: LeaderAndIsrPartitionState = new(
                    _LAIR_STATE,
                    (
                        tp,
                        controller_epoch,
                        leader,
                        leader_epoch,
                        isr,
                        zk_version,
                        fa.replicas,
                        fa.adding,
                        fa.removing,
                        is_new,
                    ),
                )
                entry = (recipients, state)
                if lair.setdefault(tp, entry) is entry:
                    if recipients is not group_of:
                        group_of = recipients
                        known = groups.get(recipients)
                        if known is None:
                            known = groups[recipients] = []
                        group = known
                    group.append(state)
                else:
                    self._merge_lair(recipients, tp, li, fa, is_new)
            # the implicit UpdateMetadata entry, as ``_add_partition_metadata`` computes it
            being_deleted = bool(deleting) and tp.topic in deleting
            current = li if cached else leadership.get(tp)
            if current is None or offline_dirs or being_deleted:
                self._add_partition_metadata(tp, being_deleted)
                continue
            assigned: ReplicaAssignment | None = (
                fa if cached and fa is not EMPTY_ASSIGNMENT else assignments.get(tp)
            )
            replicas = assigned.replicas if assigned is not None else ()
            offline = offline_by_replicas.get(replicas)  # ``_offline_replicas``, inlined
            if offline is None:
                offline = offline_by_replicas[replicas] = (
                    () if live.issuperset(replicas) else tuple(r for r in replicas if r not in live)
                )
            if current is not li:
                lai, controller_epoch = current
                leader, leader_epoch, isr, zk_version = lai
            umr_state: UpdateMetadataPartitionState = new(
                _UMR_STATE, (tp, controller_epoch, leader, leader_epoch, isr, zk_version, replicas, offline)
            )
            umr_entry = (current, assigned, False, umr_state)
            previous = umr.setdefault(tp, umr_entry)
            if previous is not umr_entry and not (
                previous[0] is current and previous[1] is assigned and previous[2] is False
            ):
                umr[tp] = umr_entry

    def _add_update_metadata_for_live_brokers(self, tp: TopicPartition) -> None:
        """The implicit ``addUpdateMetadataRequestForBrokers(liveOrShuttingDownBrokerIds, Set(tp))`` of a LAIR."""
        if not self._all_live_added:
            self.update_metadata_brokers.update(b for b in self.ctx.live_broker_epochs if b >= 0)
            self._all_live_added = True
        if self.kip455:
            self._add_partition_metadata(tp, tp.topic in self.ctx.topics_to_be_deleted)
        else:
            self.add_update_metadata((), (tp,))

    @mirrors("addUpdateMetadataRequestForBrokers")
    def add_update_metadata(self, brokers: Iterable[int], partitions: Iterable[TopicPartition]) -> None:
        """``addUpdateMetadataRequestForBrokers`` (§3.4), with the profile's meaning of an empty set."""
        ctx = self.ctx
        self.update_metadata_brokers.update(b for b in brokers if b >= 0)
        deleting = ctx.topics_to_be_deleted
        if self.kip455:
            for tp in partitions:
                self._add_partition_metadata(tp, tp.topic in deleting)
            return
        given = list(partitions)
        if not given:
            given = list(ctx.leadership)
        if deleting:
            for tp in given:
                if tp.topic not in deleting:
                    self._add_partition_metadata(tp, False)
            for topic in sorted(deleting):
                for tp in ctx.partitions_for_topic(topic):
                    self._add_partition_metadata(tp, True)
        else:
            for tp in given:
                self._add_partition_metadata(tp, False)

    def _add_partition_metadata(self, tp: TopicPartition, being_deleted: bool) -> None:
        ctx = self.ctx
        li = ctx.leadership.get(tp)
        if li is None:
            self.controller_log.info(
                f"Leader not yet assigned for partition {tp}. Skip sending UpdateMetadataRequest."
            )
            return
        fa = ctx.assignments.get(tp)
        replicas = fa.replicas if fa is not None else ()
        offline_dirs = ctx.replicas_on_offline_dirs
        if offline_dirs:
            offline = tuple(r for r in replicas if not ctx.is_replica_online(r, tp))
        else:
            live = ctx.live_broker_ids()
            offline = () if live.issuperset(replicas) else tuple(r for r in replicas if r not in live)
        lai = li.leader_and_isr
        if being_deleted:
            state = umr_partition_state(
                tp, li.controller_epoch, LEADER_DURING_DELETE, 0, lai.isr, 0, replicas, offline
            )
        else:
            state = umr_partition_state(
                tp,
                li.controller_epoch,
                lai.leader,
                lai.leader_epoch,
                lai.isr,
                lai.zk_version,
                replicas,
                offline,
            )
        entry = (li, fa, being_deleted, state)
        umr = self._umr
        previous = umr.setdefault(tp, entry)
        if previous is not entry and not (
            previous[0] is li and previous[1] is fa and previous[2] == being_deleted
        ):
            umr[tp] = entry

    def add_stop_replica(self, brokers: Iterable[int], tp: TopicPartition, delete: bool) -> None:
        """``addStopReplicaRequestForBrokers`` (§3.4)."""
        ctx = self.ctx
        if self.kip570:
            if ctx.is_topic_queued_up_for_deletion(tp.topic):
                epoch = EPOCH_DURING_DELETE
            else:
                li = ctx.leadership.get(tp)
                epoch = li.leader_and_isr.leader_epoch if li is not None else NO_EPOCH
        else:
            epoch = NO_EPOCH
        stop_replica = self.stop_replica
        for broker in brokers:
            if broker < 0:
                continue
            per_broker = stop_replica.get(broker)
            if per_broker is None:
                per_broker = stop_replica[broker] = {}
            state = stop_replica_partition_state(tp, delete, epoch)
            previous = per_broker.setdefault(tp, state)
            if previous is not state:
                per_broker[tp] = stop_replica_partition_state(tp, previous.delete_partition or delete, epoch)

    @mirrors("addStopReplicaRequestForBrokers")
    def add_stop_replica_for_partitions(
        self, brokers: Iterable[int], partitions: Sequence[TopicPartition], delete: bool
    ) -> None:
        """``add_stop_replica(brokers, tp, delete)`` for each partition in order, in one loop (through
        ``add_stop_replica`` itself when it has been replaced)."""
        if type(self).add_stop_replica is not _ADD_STOP_REPLICA or "add_stop_replica" in vars(self):
            for tp in partitions:
                self.add_stop_replica(brokers, tp, delete)
            return
        if not partitions:
            return
        ctx = self.ctx
        targets: list[dict[TopicPartition, StopReplicaPartitionState]] = []
        for broker in brokers:
            if broker >= 0:
                per_broker = self.stop_replica.get(broker)
                if per_broker is None:
                    per_broker = self.stop_replica[broker] = {}
                targets.append(per_broker)
        if not targets:
            return
        deleting = ctx.topics_to_be_deleted
        leadership = ctx.leadership
        kip570 = self.kip570
        # one broker with no StopReplica entry yet (a replica machine batch): no entry to merge with; a partition
        # given twice gets an equal entry twice, as ``setdefault`` and the merge below would give it
        fresh = targets[0] if len(targets) == 1 and not targets[0] else None
        for tp in partitions:
            if not kip570:
                epoch = NO_EPOCH
            elif deleting and tp.topic in deleting:
                epoch = EPOCH_DURING_DELETE
            else:
                li = leadership.get(tp)
                epoch = li.leader_and_isr.leader_epoch if li is not None else NO_EPOCH
            if fresh is not None:
                fresh[tp] = stop_replica_partition_state(tp, delete, epoch)
                continue
            for per_broker in targets:
                state = stop_replica_partition_state(tp, delete, epoch)
                previous = per_broker.setdefault(tp, state)
                if previous is not state:
                    per_broker[tp] = stop_replica_partition_state(
                        tp, previous.delete_partition or delete, epoch
                    )

    # ------------------------------------------------------------------------------------ sending

    def _lair_by_broker(self) -> dict[int, tuple[list[set[LeaderAndIsrPartitionState]], int]]:
        """Each recipient's LeaderAndIsr partition states and how many of them make it the leader.

        Every partition's first entry sits in the group of its recipients, so each state is hashed once (for
        its group's set) and a broker's set is the union of its groups' sets; entries changed afterwards are
        taken from ``_lair`` one by one."""
        changed = {tp for tp, _, _ in self._lair_changed}
        sets: dict[int, list[set[LeaderAndIsrPartitionState]]] = {}
        leaders: dict[int, int] = {}
        for recipients, group in self._lair_groups.items():
            if changed:
                group = [st for st in group if st.tp not in changed]
            members = set(group)
            counts: dict[int, int]
            if len(group) > _SMALL_GROUP:
                counts = Counter(map(_LEADER, group))
            else:  # counted without building a ``Counter`` (most batches of a small cluster)
                counts = {}
                for st in group:
                    counts[st.leader] = counts.get(st.leader, 0) + 1
            for broker in recipients:
                sets.setdefault(broker, []).append(members)
                leaders[broker] = leaders.get(broker, 0) + counts.get(broker, 0)
        if changed:
            for tp in changed:
                for broker, st in self._lair_states(tp).items():
                    sets.setdefault(broker, []).append({st})
                    if st.leader == broker:
                        leaders[broker] = leaders.get(broker, 0) + 1
        return {broker: (parts, leaders.get(broker, 0)) for broker, parts in sets.items()}

    @mirrors("sendRequestsToBrokers")
    def send(self, controller_epoch: int) -> None:
        """``sendRequestsToBrokers``: LeaderAndIsr, then UpdateMetadata, then StopReplica; then clear."""
        if not (self._lair or self.update_metadata_brokers or self.stop_replica):
            # nothing to send (about a third of the calls while exploring): what the loops below would do
            # for an empty batch, without building the per-broker views and the state-change logger
            self.clear()
            return
        ctx = self.ctx
        targets = ctx.live_broker_epochs
        cid = ctx.controller_id
        modern = self.kip455
        carry_ids = requests_carry_topic_ids(self.version, self.config)
        log = self.state_change_logger.with_controller_epoch(controller_epoch)
        trace = self.log.trace_enabled
        ordered: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        by_broker: dict[int, tuple[list[set[LeaderAndIsrPartitionState]], int]] = {}
        if self._lair:
            if trace:
                # the per-broker entries the TRACE lines need hold each broker's states: its request is built
                # from them (the set ``_lair_by_broker``'s union makes), its leaders counted with the lines
                ordered = self.leader_and_isr
            else:
                by_broker = self._lair_by_broker()
        rendered = self._rendered
        for broker in sorted(ordered if trace else by_broker):
            if broker not in targets and modern:
                continue
            if trace:
                on_broker = ordered[broker]
                states_set = frozenset(on_broker.values())
            else:
                parts, leaders = by_broker[broker]
                states_set = frozenset().union(*parts)
            request = leader_and_isr_request(
                broker,
                cid,
                controller_epoch,
                states_set,
                self._topic_ids(st.tp.topic for st in states_set) if carry_ids else NO_TOPIC_IDS,
            )
            if broker not in targets:
                self._warn_dropped(self._render_lair(request), broker)
                continue
            if trace:
                leaders = 0
                lines = []
                for tp, st in on_broker.items():
                    if st.leader == broker:
                        kind = "become-leader"
                        leaders += 1
                    else:
                        kind = "become-follower"
                    text = rendered.get(
                        st
                    )  # a state shared by its recipients, or sent before, is rendered once
                    if text is None:
                        text = self._render_lair_state(st)
                        if len(rendered) < _RENDERED_MAX:
                            rendered[st] = text
                    lines.append(
                        f"Sending {kind} LeaderAndIsr request {text} to broker {broker} for partition {tp}"
                    )
                log.write_all("TRACE", lines)
            if modern:
                log.info(
                    f"Sending LeaderAndIsr request to broker {broker} with {leaders} become-leader "
                    f"and {len(states_set) - leaders} become-follower partitions"
                )
            self.sent.append(request)
        if self.update_metadata_brokers:
            umr = self._umr
            partition_states = frozenset([entry[3] for entry in umr.values()])
            umr_topic_ids = self._topic_ids(tp.topic for tp in umr) if carry_ids else NO_TOPIC_IDS
            live = frozenset(targets)
            if modern:
                log.info(
                    f"Sending UpdateMetadata request to brokers {scala_int_set(self.update_metadata_brokers)} "
                    f"for {len(umr)} partitions"
                )
            elif trace:
                for tp, entry in umr.items():
                    log.trace(
                        f"Sending UpdateMetadata request {self._render_umr_state(entry[3])} to brokers "
                        f"{scala_int_set(self.update_metadata_brokers)} for partition {tp}"
                    )
            for broker in sorted(self.update_metadata_brokers):
                request_umr = update_metadata_request(
                    broker, cid, controller_epoch, live, partition_states, umr_topic_ids
                )
                if broker not in targets:
                    if not modern:
                        self._warn_dropped(
                            f"(type: UpdateMetadataRequest=, controllerId={cid}, controllerEpoch={controller_epoch}, "
                            f"partitionStates={len(partition_states)})",
                            broker,
                        )
                    continue
                self.sent.append(request_umr)
        for broker in sorted(self.stop_replica):
            sr_states = self.stop_replica[broker]
            if broker not in targets:
                if not modern:
                    self._warn_dropped(
                        f"(type=StopReplicaRequest, controllerId={cid}, controllerEpoch={controller_epoch}, "
                        f"partitions={mk_string(sr_states)})",
                        broker,
                    )
                continue
            request_sr = stop_replica_request(broker, cid, controller_epoch, frozenset(sr_states.values()))
            if trace:
                for tp, sr in sr_states.items():
                    log.trace(
                        f"Sending StopReplica request StopReplicaPartitionState(partitionIndex={tp.partition}, "
                        f"leaderEpoch={sr.leader_epoch}, deletePartition={bool_text(sr.delete_partition)}) "
                        f"to broker {broker} for partition {tp}"
                    )
            if self.kip570:
                log.info(f"Sending StopReplica request for {len(sr_states)} replicas to broker {broker}")
            self.sent.append(request_sr)
        self.clear()

    def _topic_ids(self, topics: Iterable[str]) -> FMap[str, int]:
        """``topicIds`` of a LeaderAndIsr v5 / UpdateMetadata v7: each topic's ID, ``Uuid.ZERO_UUID`` (0) if none."""
        ids = self.ctx.topic_ids
        return FMap({topic: ids.get(topic, 0) for topic in set(topics)})

    def _warn_dropped(self, rendered: str, broker: int) -> None:
        self.channel_log.warn(f"Not sending request {rendered} to broker {broker}, since it is offline.")

    def _render_lair_state(self, st: LeaderAndIsrPartitionState) -> str:
        if self.kip455:
            return (
                f"LeaderAndIsrPartitionState(topicName='{st.tp.topic}', partitionIndex={st.tp.partition}, "
                f"controllerEpoch={st.controller_epoch}, leader={st.leader}, leaderEpoch={st.leader_epoch}, "
                f"isr={java_int_list(st.isr)}, zkVersion={st.zk_version}, replicas={java_int_list(st.replicas)}, "
                f"addingReplicas={java_int_list(st.adding)}, removingReplicas={java_int_list(st.removing)}, "
                f"isNew={bool_text(st.is_new)})"
            )
        return (
            f"PartitionState(controllerEpoch={st.controller_epoch}, leader={st.leader}, "
            f"leaderEpoch={st.leader_epoch}, isr={mk_int_string(st.isr)}, zkVersion={st.zk_version}, "
            f"replicas={mk_int_string(st.replicas)}, isNew={bool_text(st.is_new)})"
        )

    def _render_umr_state(self, st: UpdateMetadataPartitionState) -> str:
        return (
            f"PartitionState(controllerEpoch={st.controller_epoch}, leader={st.leader}, "
            f"leaderEpoch={st.leader_epoch}, isr={mk_int_string(st.isr)}, zkVersion={st.zk_version}, "
            f"replicas={mk_int_string(st.replicas)}, offlineReplicas={mk_int_string(st.offline_replicas)})"
        )

    def _render_lair(self, request: LeaderAndIsrRequest) -> str:
        states = ", ".join(
            f"{st.tp}={self._render_lair_state(st)}"
            for st in sorted(request.partition_states, key=lambda s: s.tp)
        )
        return (
            f"(type=LeaderAndIsRequest, controllerId={request.controller_id}, "
            f"controllerEpoch={request.controller_epoch}, partitionStates={{{states}}})"
        )


_ADD_LEADER_AND_ISR = ControllerBrokerRequestBatch.add_leader_and_isr
_ADD_UPDATE_METADATA_FOR_LIVE_BROKERS = ControllerBrokerRequestBatch._add_update_metadata_for_live_brokers
_ADD_PARTITION_METADATA = ControllerBrokerRequestBatch._add_partition_metadata
_ADD_STOP_REPLICA = ControllerBrokerRequestBatch.add_stop_replica
_NO_INSTANCE_HOOKS = frozenset(
    {"add_leader_and_isr", "_add_update_metadata_for_live_brokers", "_add_partition_metadata"}
)
"""The methods as defined here, to tell when one has been replaced (then the bulk path is not taken)."""

_RENDERED_MAX = 4096
_TUPLE_RECORDS = TUPLE_STATES
"""The partition states are tuple records (spec/requests.py; the leadership records always are, ``records``): the bulk
path builds them as tuples (else every entry goes through ``add_leader_and_isr``)."""
_tuple_new = tuple.__new__
_LAIR_STATE = LeaderAndIsrPartitionState
_UMR_STATE = UpdateMetadataPartitionState

_LEADER = attrgetter("leader")
_SMALL_GROUP = 16
"""Up to this many states, a group's leaders are counted in a plain loop (a ``Counter`` costs more to build)."""
_RECIPIENTS: dict[tuple[int, ...], tuple[int, ...]] = {}
_RECIPIENTS_MAX = 4096


def _recipients(brokers: Iterable[int]) -> tuple[int, ...]:
    """The brokers of a LeaderAndIsr entry: negative ids dropped, duplicates once, first-seen order."""
    given = brokers if isinstance(brokers, tuple) else tuple(brokers)
    cleaned = _RECIPIENTS.get(given)
    if cleaned is None:
        cleaned = tuple(dict.fromkeys(b for b in given if b >= 0))
        if len(_RECIPIENTS) < _RECIPIENTS_MAX:
            _RECIPIENTS[given] = cleaned
    return cleaned
