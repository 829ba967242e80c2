"""``KafkaController``: the controller-side handling of every event (§7.1–§7.12), in Kafka's structure.

One ``KafkaController`` instance is one controller incarnation: it owns a fresh ``ControllerContext``, the
two state machines (each with its own request batch), its own request batch, the ``TopicDeletionManager`` and the
reassignment logic. Resignation (§7.12) discards the incarnation; the ``ReferenceController`` then holds an
inactive one (``controller_id = -1``).

Decisions where the semantics document is silent (besides those in the other modules):
* ``ControllerMovedException`` raised while handling any event — including controlled shutdown, whose ``Try``
  would swallow it in Kafka — makes the controller resign (§7 preamble, docs/contracts.md).
* Partitions and brokers are processed in ascending order wherever Kafka iterates a hash map or set.
* 2.8 AlterIsr: the cache is refreshed with the written record and the current controller epoch (§7.11 "cache
  refreshed from ZK"); the idempotent case (``Right(current)``) also triggers ``maybeCompleteReassignment``.
* 1.1 BrokerChange only adds new and removes dead brokers in ``live_brokers``; the epochs of the others are
  left as they were (a 1.1 bounce is invisible).
* Topics with offline replicas (failover step 5) are computed only for the topics queued for deletion, since
  only their intersection with those is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kcspec.reference_impl.context import (
    ControllerContext,
    is_being_reassigned,
    origin_replicas,
    reassign_to,
    target_replicas,
)
from kcspec.reference_impl.errors import (
    BrokerNotAvailableException,
    ControllerMovedException,
    IllegalStateException,
    KafkaThrowable,
    KeeperException,
    NoSuchElementException,
    StaleBrokerEpochException,
    StateChangeFailedException,
)
from kcspec.reference_impl.logs import ControllerLog, Logger, mk_string, render_assignment, scala_set
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.partition_state_machine import (
    OFFLINE_CLEAN,
    ElectionResults,
    ZkPartitionStateMachine,
)
from kcspec.reference_impl.reassignment import Reassignment
from kcspec.reference_impl.replica_state_machine import ZkReplicaStateMachine
from kcspec.reference_impl.request_batch import ControllerBrokerRequestBatch
from kcspec.reference_impl.state_change_logger import StateChangeLogger
from kcspec.reference_impl.topic_deletion import TopicDeletionManager
from kcspec.reference_impl.version import (
    KAFKA_2_1,
    KAFKA_2_2,
    KAFKA_2_4,
    KAFKA_2_6,
    KAFKA_2_7,
    KAFKA_2_8,
    KafkaVersion,
    is_feature_versioning_supported,
    uses_topic_id,
)
from kcspec.reference_impl.zookeeper import UNKNOWN_VERSION, SimulatedZooKeeper
from kcspec.spec.requests import Request, StateChangeFailure
from kcspec.spec.vocabulary import (
    NO_LEADER,
    UNKNOWN_BROKER_EPOCH,
    ApiError,
    ClusterConfig,
    ElectionStrategy,
    ElectionTrigger,
    ElectionType,
    FeatureZNodeStatus,
    LeaderAndIsr,
    LeaderElection,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

R = ReplicaState
P = PartitionState
ElectionCallback = Callable[[dict[TopicPartition, ApiError | int]], None]
"""The callback of an admin ``ReplicaLeaderElection``: per partition ``Right(leader)`` (an int) or ``Left(error)``."""
PREFERRED = LeaderElection(ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy)
CONTROLLED_SHUTDOWN = LeaderElection(ElectionStrategy.ControlledShutdownPartitionLeaderElectionStrategy)


class KafkaController:
    """One controller incarnation (its context, state machines, batches and managers)."""

    def __init__(
        self,
        zk: SimulatedZooKeeper,
        config: ClusterConfig,
        version: KafkaVersion,
        log: ControllerLog,
        sent: list[Request],
        failures: list[StateChangeFailure],
        controller_id: int = -1,
        ctx: ControllerContext | None = None,
    ) -> None:
        self.zk = zk
        self.config = config
        self.version = version
        self.log = log
        self.ctx = ctx if ctx is not None else ControllerContext()
        self.ctx.controller_id = controller_id if ctx is None else self.ctx.controller_id
        cid = self.ctx.controller_id
        self.scl = StateChangeLogger(log, cid)
        self.logger = Logger(
            log, log.controller, "kafka.controller.KafkaController", f"[Controller id={cid}] "
        )
        self.batch = ControllerBrokerRequestBatch(self.ctx, version, log, sent, self.scl, config)
        self.replica_sm = ZkReplicaStateMachine(
            self.ctx,
            zk,
            version,
            log,
            ControllerBrokerRequestBatch(self.ctx, version, log, sent, self.scl, config),
            self.scl,
            failures,
        )
        self.partition_sm = ZkPartitionStateMachine(
            self.ctx,
            zk,
            version,
            log,
            ControllerBrokerRequestBatch(self.ctx, version, log, sent, self.scl, config),
            self.scl,
            failures,
            config,
        )
        self.deletion = TopicDeletionManager(
            self.ctx, zk, version, log, config, self.replica_sm, self.partition_sm, self.send_update_metadata
        )
        self.reassignment = Reassignment(
            self.ctx,
            zk,
            version,
            self.logger,
            self.scl,
            self.batch,
            self.replica_sm,
            self.partition_sm,
            self.deletion,
            self.send_update_metadata,
        )

    @property
    def active(self) -> bool:
        return self.ctx.controller_id != -1

    def adopt(self, zk: SimulatedZooKeeper, config: ClusterConfig, ctx: ControllerContext) -> None:
        """Take over another loaded state of the same controller id (not Kafka: ``ReferenceController.load``
        reuses an incarnation instead of building one per load, for speed). Every part that holds the ZooKeeper
        or the context gets the new ones; what an event leaves behind (pending batches, a state machine's
        last-call bookkeeping) is dropped, as a fresh incarnation would not have it."""
        if ctx.controller_id != self.ctx.controller_id:
            raise ValueError(
                f"an incarnation of controller {self.ctx.controller_id} cannot adopt the context of {ctx.controller_id}"
            )
        self.zk = zk
        self.ctx = ctx
        for part in (self.replica_sm, self.partition_sm, self.deletion, self.reassignment):
            part.zk = zk
            part.ctx = ctx
        for batch in (self.batch, self.replica_sm.batch, self.partition_sm.batch):
            batch.ctx = ctx
            batch.clear()
        self.replica_sm.forget_last_call()
        self.partition_sm.forget_last_call()
        self.set_config(config)

    def set_config(self, config: ClusterConfig) -> None:
        self.config = config
        self.partition_sm.config = config
        self.deletion.config = config
        for batch in (self.batch, self.replica_sm.batch, self.partition_sm.batch):
            batch.config = config

    def send_update_metadata(self, brokers: Iterable[int], partitions: list[TopicPartition]) -> None:
        """``sendUpdateMetadataRequest`` with the controller's own batch."""
        self.batch.new_batch()
        self.batch.add_update_metadata(list(brokers), partitions)
        self.batch.send(self.ctx.epoch)

    def _brokers(self) -> list[int]:
        return sorted(self.ctx.live_broker_epochs)

    # ================================================================================ §7.1 failover

    def log_elected(self) -> None:
        ctx = self.ctx
        if self.version >= KAFKA_2_4:
            self.logger.info(
                f"{ctx.controller_id} successfully elected as the controller. Epoch incremented to {ctx.epoch} and "
                f"epoch zk version is now {ctx.epoch_zk_version}"
            )
        else:
            self.logger.info(f"{ctx.controller_id} successfully elected as the controller")
            self.logger.info(f"Epoch incremented to {ctx.epoch}")

    @mirrors("onControllerFailover")
    def on_controller_failover(self) -> None:
        ctx = self.ctx
        zk = self.zk
        if self.version >= KAFKA_2_7:
            # maybeSetupFeatureVersioning
            if is_feature_versioning_supported(self.version, self.config):
                self._enable_feature_versioning()
            else:
                self._disable_feature_versioning()
        zk.delete_isr_change_notifications(ctx.epoch_zk_version)
        self._initialize_controller_context()
        to_delete = set(zk.delete_topics)
        reassigning = (
            {tp.topic for tp in ctx.partitions_being_reassigned}
            if self.version >= KAFKA_2_4
            else {tp.topic for tp in ctx.legacy_reassignments}
        )
        offline_topics = {
            t
            for t in to_delete
            if any(
                not ctx.is_replica_online(r, tp)
                for tp in ctx.partitions_for_topic(t)
                for r in ctx.replicas(tp)
            )
        }
        self.deletion.init(to_delete, offline_topics | reassigning)
        self.send_update_metadata(self._brokers(), [])
        self.replica_sm.startup()
        self.partition_sm.startup()
        self.logger.info(f"Ready to serve as the new controller with epoch {ctx.epoch}")
        if self.version >= KAFKA_2_4:
            resumed = self.process_zk_partition_reassignment()
            self._maybe_resume_reassignments(lambda tp, _fa: tp not in resumed)
        else:
            self._maybe_trigger_partition_reassignment_legacy(sorted(ctx.legacy_reassignments))
        self.deletion.try_topic_deletion()
        pending = self._fetch_pending_preferred_replica_elections()
        if self.version >= KAFKA_2_4:
            self.on_replica_election(pending, ElectionType.PREFERRED, ElectionTrigger.ZkTriggered)
        else:
            self._on_preferred_replica_election_legacy(pending, auto=False)

    @mirrors("enableFeatureVersioning")
    def _enable_feature_versioning(self) -> None:
        """KIP-584: ``/feature`` created Enabled when absent; a Disabled znode switched to Enabled with its features
        cleared (they are always empty in 2.8.2); an Enabled one left unmodified. Kafka's INFO lines ("Creating
        FeatureZNode ...", "Updating FeatureZNode ...") are not reproduced in the controller log (no check reads
        them)."""
        status, version = self.zk.get_feature_znode()
        if version == UNKNOWN_VERSION:
            self.zk.create_feature_znode(FeatureZNodeStatus.Enabled)
        elif status is not FeatureZNodeStatus.Enabled:
            self.zk.update_feature_znode(FeatureZNodeStatus.Enabled)

    @mirrors("disableFeatureVersioning")
    def _disable_feature_versioning(self) -> None:
        """KIP-584, IBP < 2.7-IV0: ``/feature`` created Disabled with no features when absent; an Enabled znode set to
        Disabled with its features cleared; a Disabled one (its features are always empty in 2.8.2) left alone."""
        status, version = self.zk.get_feature_znode()
        if version == UNKNOWN_VERSION:
            self.zk.create_feature_znode(FeatureZNodeStatus.Disabled)
        elif status is not FeatureZNodeStatus.Disabled:
            self.zk.update_feature_znode(FeatureZNodeStatus.Disabled)

    @mirrors("initializeControllerContext")
    def _initialize_controller_context(self) -> None:
        ctx = self.ctx
        zk = self.zk
        ctx.add_live_brokers(dict(zk.brokers))
        modern = self.version >= KAFKA_2_4
        assignments = dict(zk.assignments)
        ctx.all_topics.update(zk.topics)
        self.process_topic_ids(sorted(ctx.all_topics))
        for tp, fa in assignments.items():
            if fa.adding or fa.removing:
                if modern:
                    ctx.partitions_being_reassigned.add(tp)
                else:
                    assignments[tp] = ReplicaAssignment(fa.replicas)
        ctx.load_assignments(assignments)
        ctx.put_leaderships(zk.get_topic_partition_states(list(ctx.assignments)))
        if not modern:
            ctx.legacy_reassignments.update(zk.reassign_partitions)

    @mirrors("fetchPendingPreferredReplicaElections")
    def _fetch_pending_preferred_replica_elections(self) -> list[TopicPartition]:
        ctx = self.ctx
        pending: list[TopicPartition] = []
        for tp in sorted(self.zk.preferred_replica_election):
            replicas = ctx.replicas(tp)
            if not replicas:
                continue
            li = ctx.leadership.get(tp)
            if li is None:
                raise NoSuchElementException("None.get")
            if li.leader_and_isr.leader == replicas[0]:
                continue
            if not self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                pending.append(tp)
        return pending

    # ================================================================================ §7.2 – §7.4 brokers

    @mirrors("processBrokerChange")
    def process_broker_change(self) -> None:
        ctx = self.ctx
        current = dict(self.zk.brokers)
        known = ctx.live_broker_epochs
        new = sorted(b for b in current if b not in known)
        dead = sorted(b for b in known if b not in current)
        modern_bounce = self.version >= KAFKA_2_2
        bounced = sorted(b for b in current if b in known and current[b] > known[b]) if modern_bounce else []
        live = mk_string(sorted(current))
        if modern_bounce:
            self.logger.info(
                f"Newly added brokers: {mk_string(new)}, deleted brokers: {mk_string(dead)}, bounced brokers: "
                f"{mk_string(bounced)}, all live brokers: {live}"
            )
        else:
            self.logger.info(
                f"Newly added brokers: {mk_string(new)}, deleted brokers: {mk_string(dead)}, all live brokers: {live}"
            )
        if not modern_bounce and dead:
            ctx.remove_live_brokers(dead)
        if new:
            ctx.add_live_brokers({b: current[b] for b in new})
            self.on_broker_startup(new)
        if bounced:
            ctx.remove_live_brokers(bounced)
            self.on_broker_failure(bounced)
            ctx.add_live_brokers({b: current[b] for b in bounced})
            self.on_broker_startup(bounced)
        if dead:
            ctx.remove_live_brokers(dead)
            self.on_broker_failure(dead)

    @mirrors("onBrokerStartup")
    def on_broker_startup(self, new_brokers: list[int]) -> None:
        ctx = self.ctx
        self.logger.info(f"New broker startup callback for {mk_string(new_brokers)}")
        for b in new_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        new_set = set(new_brokers)
        if self.version >= KAFKA_2_2:
            existing = sorted(set(ctx.live_broker_epochs) - new_set)
            self.send_update_metadata(existing, [])
            self.send_update_metadata(new_brokers, ctx.partitions_with_leaders())
        else:
            self.send_update_metadata(self._brokers(), [])
        replicas = ctx.replicas_on_brokers(new_set)
        self.replica_sm.handle_state_changes(replicas, R.OnlineReplica)
        self.partition_sm.trigger_online_partition_state_change()
        if self.version >= KAFKA_2_4:
            self._maybe_resume_reassignments(lambda _tp, fa: any(r in new_set for r in target_replicas(fa)))
        else:
            for tp in sorted(ctx.legacy_reassignments):
                rar = ctx.legacy_reassignments.get(tp)
                if rar is not None and any(r in new_set for r in rar):
                    self.reassignment.on_partition_reassignment_legacy(tp, rar)
        deleting = sorted(
            {
                PartitionReplica(tp, b)
                for b, tps in replicas.items()
                for tp in tps
                if self.deletion.is_topic_queued_up_for_deletion(tp.topic)
            }
        )
        if deleting:
            self.logger.info(
                f"Some replicas {mk_string(deleting)} for topics scheduled for deletion "
                f"{mk_string(sorted(ctx.topics_to_be_deleted))} are on the newly restarted brokers "
                f"{mk_string(new_brokers)}. Signaling restart of topic deletion for these topics"
            )
            self.deletion.resume_deletion_for_topics({pr.tp.topic for pr in deleting})

    @mirrors("onBrokerFailure")
    def on_broker_failure(self, dead_brokers: list[int]) -> None:
        ctx = self.ctx
        self.logger.info(f"Broker failure callback for {mk_string(dead_brokers)}")
        for b in dead_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        removed = [b for b in dead_brokers if ctx.remove_shutting_down(b)]
        if removed:
            self.logger.info(f"Removed {mk_string(removed)} from list of shutting down brokers.")
        self.on_replicas_become_offline(ctx.replicas_on_brokers(dead_brokers))

    @mirrors("onReplicasBecomeOffline")
    def on_replicas_become_offline(self, replicas: dict[int, list[TopicPartition]]) -> None:
        ctx = self.ctx
        for_deletion: list[PartitionReplica] = []
        keep: dict[int, list[TopicPartition]] = {}
        if not ctx.topics_to_be_deleted:
            # no topic is queued for deletion: every replica is kept (without asking replica by replica)
            keep = {b: list(tps) for b, tps in replicas.items() if tps}
            replicas = {}
        for b, tps in replicas.items():
            for tp in tps:
                if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                    for_deletion.append(PartitionReplica(tp, b))
                else:
                    keep.setdefault(b, []).append(tp)
        offline_leader = ctx.partitions_with_offline_leader()
        self.partition_sm.handle_state_changes(offline_leader, P.OfflinePartition)
        self.partition_sm.trigger_online_partition_state_change()
        self.replica_sm.handle_state_changes(keep, R.OfflineReplica)
        if for_deletion:
            self.deletion.fail_replica_deletion(for_deletion)
        if not offline_leader:
            self.send_update_metadata(self._brokers(), [])

    # ================================================================================ §7.5 LAIR responses

    @mirrors("processLeaderAndIsrResponseReceived")
    def process_leader_and_isr_response(
        self, broker: int, storage_errors: tuple[TopicPartition, ...]
    ) -> None:
        ctx = self.ctx
        previous = set(ctx.replicas_on_offline_dirs.get(broker, set()))
        current = previous | set(storage_errors)
        ctx.replicas_on_offline_dirs[broker] = current
        new_offline = sorted(current - previous)
        if new_offline:
            self.scl.without_epoch().info(
                f"Mark replicas {mk_string(new_offline)} on broker {broker} as offline"
            )
            self.on_replicas_become_offline({broker: new_offline})

    def process_leader_and_isr_partition_results(
        self, broker: int, online: tuple[TopicPartition, ...], storage_errors: tuple[TopicPartition, ...]
    ) -> None:
        """``processLeaderAndIsrResponseReceived`` for a response with partitions answered NONE (``online``) as well
        as KAFKA_STORAGE_ERROR: ``current = previous -- onlineReplicas ++ offlineReplicas``."""
        ctx = self.ctx
        previous = set(ctx.replicas_on_offline_dirs.get(broker, set()))
        current = (previous - set(online)) | set(storage_errors)
        ctx.replicas_on_offline_dirs[broker] = current
        new_offline = sorted(current - previous)
        if new_offline:
            self.scl.without_epoch().info(
                f"Mark replicas {mk_string(new_offline)} on broker {broker} as offline"
            )
            self.on_replicas_become_offline({broker: new_offline})

    def process_log_dir_event_notification(self, broker_ids: tuple[int, ...]) -> None:
        """``processLogDirEventNotification``: the brokers named by the notification znodes (read, then deleted by
        the controller: the model holds no such znodes) → ``onBrokerLogDirFailure``."""
        self.on_broker_log_dir_failure(list(broker_ids))

    @mirrors("onBrokerLogDirFailure")
    def on_broker_log_dir_failure(self, broker_ids: list[int]) -> None:
        """``onBrokerLogDirFailure``: a LeaderAndIsr for every replica on those brokers, to see if they are still
        online (all → OnlineReplica; the responses report the offline ones)."""
        self.logger.info(f"Handling log directory failure for brokers {mk_string(broker_ids)}")
        self.replica_sm.handle_state_changes(self.ctx.replicas_on_brokers(set(broker_ids)), R.OnlineReplica)

    # ================================================================================ §7.6 topics

    @mirrors("processTopicChange")
    def process_topic_change(self) -> None:
        ctx = self.ctx
        zk_topics = set(self.zk.topics)
        new_topics = sorted(zk_topics - ctx.all_topics)
        deleted = sorted(ctx.all_topics - zk_topics)
        ctx.all_topics = set(zk_topics)
        added = self.zk.partitions_of(new_topics)
        for t in deleted:
            ctx.remove_topic(t)
        self.process_topic_ids(new_topics)
        for tp in added:
            fa = self.zk.assignments[tp]
            ctx.update_assignment(tp, fa if self.version >= KAFKA_2_4 else ReplicaAssignment(fa.replicas))
        shown = ", ".join(f"{tp} -> {render_assignment(self.zk.assignments[tp])}" for tp in added)
        self.logger.info(
            f"New topics: [{scala_set(new_topics)}], deleted topics: [{scala_set(deleted)}], new partition replica "
            f"assignment [Map({shown})]"
        )
        if added:
            self.on_new_partition_creation(added)

    @mirrors("processTopicIds")
    def process_topic_ids(self, topics: list[str]) -> None:
        """``processTopicIds`` (2.8, KIP-516): with ``usesTopicId`` the topic znodes of ``topics`` without an ID get
        one (``setTopicIds``, fenced); the IDs of all of them are added to ``topicIds`` — read from ZooKeeper under
        an older IBP as well ("If we don't have IBP 2.8, but are running 2.8 code, put any topic IDs from the ZNode
        in controller context")."""
        if self.version < KAFKA_2_8:
            return
        zk = self.zk
        if uses_topic_id(self.version, self.config):
            zk.set_topic_ids([t for t in topics if t not in zk.topic_ids], self.ctx.epoch_zk_version)
        for t in topics:
            topic_id = zk.topic_ids.get(t)
            if topic_id is not None:
                self.ctx.topic_ids[t] = topic_id

    @mirrors("onNewPartitionCreation")
    def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        ctx = self.ctx
        self.logger.info(f"New partition creation callback for {mk_string(partitions)}")
        self.partition_sm.handle_state_changes(partitions, P.NewPartition)
        self.replica_sm.handle_state_changes(ctx.replicas_for_partitions(partitions), R.NewReplica)
        self.partition_sm.handle_state_changes(partitions, P.OnlinePartition, OFFLINE_CLEAN)
        self.replica_sm.handle_state_changes(ctx.replicas_for_partitions(partitions), R.OnlineReplica)

    @mirrors("processPartitionModifications")
    def process_partition_modifications(self, topic: str) -> None:
        ctx = self.ctx
        zk = self.zk
        in_zk = zk.topic_partitions(topic)
        to_add = [tp for tp in in_zk if not ctx.replicas(tp)]
        if self.deletion.is_topic_queued_up_for_deletion(topic):
            if self.version >= KAFKA_2_4:
                if to_add:
                    self.logger.warn(
                        f"Skipping adding partitions {mk_string(tp.partition for tp in to_add)} for topic {topic} "
                        "since it is currently being deleted"
                    )
                    self.logger.info(f"Restoring the partition replica assignment for topic {topic}")
                    existing = {tp: ctx.assignment(tp) for tp in in_zk if tp in zk.partition_states}
                    zk.set_topic_assignment(topic, ctx.topic_ids.get(topic), existing, ctx.epoch_zk_version)
                else:
                    self.logger.info(
                        "Ignoring partition change during topic deletion as no new partitions are added"
                    )
            else:
                self.logger.error(
                    f"Skipping adding partitions {mk_string(tp.partition for tp in to_add)} for topic {topic} since "
                    "it is currently being deleted"
                )
            return
        if to_add:
            for tp in to_add:
                fa = zk.assignments[tp]
                ctx.update_assignment(tp, fa if self.version >= KAFKA_2_4 else ReplicaAssignment(fa.replicas))
            self.on_new_partition_creation(to_add)

    # ================================================================================ §8 deletion events

    @mirrors("processTopicDeletion")
    def process_topic_deletion(self) -> None:
        ctx = self.ctx
        zk = self.zk
        requested = set(zk.delete_topics)
        non_existent = requested - ctx.all_topics
        if non_existent:
            self.logger.warn(
                f"Ignoring request to delete non-existing topics {mk_string(sorted(non_existent))}"
            )
            zk.delete_topic_deletions(non_existent, ctx.epoch_zk_version)
        requested -= non_existent
        if self.config.delete_topic_enable:
            if requested:
                self.logger.info(f"Starting topic deletion for topics {mk_string(sorted(requested))}")
                reassigning = (
                    {tp.topic for tp in ctx.partitions_being_reassigned}
                    if self.version >= KAFKA_2_4
                    else {tp.topic for tp in ctx.legacy_reassignments}
                )
                for topic in sorted(requested):
                    if topic in reassigning:
                        self.deletion.mark_topic_ineligible_for_deletion(
                            {topic}, "topic reassignment in progress"
                        )
                self.deletion.enqueue_topics_for_deletion(requested)
        else:
            self.logger.info(f"Removing {scala_set(requested)} since delete topic is disabled")
            zk.delete_topic_deletions(requested, ctx.epoch_zk_version)

    def stop_replica_response_callback(
        self, broker: int, delete_partition: dict[TopicPartition, bool], error: bool
    ) -> None:
        """The response callback of ``sendStopReplicaRequests`` (§3.4): a StopReplica response becomes a
        ``TopicDeletionStopReplicaResponseReceived`` only for the partitions whose request asked
        ``deletePartition=true`` (the fix of KAFKA-9946); with none left no event is enqueued. [1.1] registers no
        callback for delete=false entries (§3.4), which has the same effect. ``delete_partition`` maps each partition
        of the response to the flag its request carried."""
        deleted = tuple(tp for tp, delete in delete_partition.items() if delete)
        if deleted:
            self.process_stop_replica_response(broker, deleted, error)

    def process_stop_replica_response(
        self, broker: int, partitions: tuple[TopicPartition, ...], error: bool
    ) -> None:
        ctx = self.ctx
        if self.version >= KAFKA_2_4:
            partitions = tuple(tp for tp in partitions if tp.topic in ctx.topics_with_deletion_started)
        replicas = [PartitionReplica(tp, broker) for tp in partitions]
        if error:
            self.deletion.fail_replica_deletion(replicas)
        elif replicas:
            self.deletion.complete_replica_deletion(replicas)

    def process_stop_replica_partition_errors(
        self,
        broker: int,
        partitions: tuple[TopicPartition, ...],
        partition_errors: tuple[TopicPartition, ...],
    ) -> None:
        """``TopicDeletionStopReplicaResponseReceived`` with no request error: the partitions with an error fail
        their replica's deletion; unless all of them failed, the others complete it."""
        ctx = self.ctx
        listed = list(dict.fromkeys(partitions))
        if self.version >= KAFKA_2_4:
            listed = [tp for tp in listed if tp.topic in ctx.topics_with_deletion_started]
        in_error = set(partition_errors)
        replicas_in_error = [PartitionReplica(tp, broker) for tp in listed if tp in in_error]
        self.deletion.fail_replica_deletion(replicas_in_error)
        if len(replicas_in_error) != len(listed):
            deleted = [PartitionReplica(tp, broker) for tp in listed if tp not in in_error]
            self.deletion.complete_replica_deletion(deleted)

    # ================================================================================ §7.7 / §7.8 reassignment

    @mirrors("maybeResumeReassignments")
    def _maybe_resume_reassignments(
        self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]
    ) -> None:
        ctx = self.ctx
        for tp in sorted(ctx.partitions_being_reassigned):
            fa = ctx.assignment(tp)
            if should_resume(tp, fa):
                self.reassignment.on_partition_reassignment(tp, fa)

    def _maybe_build_reassignment(
        self, tp: TopicPartition, target: tuple[int, ...] | None
    ) -> ReplicaAssignment | None:
        fa = self.ctx.assignment(tp)
        if is_being_reassigned(fa):
            return reassign_to(fa, target if target is not None else origin_replicas(fa))
        return reassign_to(fa, target) if target is not None else None

    @mirrors("maybeTriggerPartitionReassignment")
    def _maybe_trigger_partition_reassignment(
        self, reassignments: dict[TopicPartition, ReplicaAssignment]
    ) -> dict[TopicPartition, str]:
        results: dict[TopicPartition, str] = {}
        for tp in sorted(reassignments):
            if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                self.logger.info(f"Skipping reassignment of {tp} since the topic is currently being deleted")
                results[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
            elif self.ctx.replicas(tp):
                try:
                    self.reassignment.on_partition_reassignment(tp, reassignments[tp])
                    results[tp] = "NONE"
                except ControllerMovedException:
                    self.logger.info(
                        f"Failed completing reassignment of partition {tp} because controller has moved to another broker"
                    )
                    raise
                except KafkaThrowable as e:
                    self.logger.error(f"Error completing reassignment of partition {tp}", e)
                    results[tp] = "UNKNOWN_SERVER_ERROR"
            else:
                results[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
        return results

    @mirrors("processZkPartitionReassignment")
    def process_zk_partition_reassignment(self) -> set[TopicPartition]:
        if not self.zk.reassign_partitions:
            return set()
        results: dict[TopicPartition, str] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in sorted(self.zk.reassign_partitions.items()):
            built = self._maybe_build_reassignment(tp, target)
            if built is None:
                results[tp] = "NO_REASSIGNMENT_IN_PROGRESS"
            else:
                to_reassign[tp] = built
        results.update(self._maybe_trigger_partition_reassignment(to_reassign))
        failed = {tp: err for tp, err in results.items() if err != "NONE"}
        if failed:
            shown = ", ".join(f"{tp} -> {err}" for tp, err in sorted(failed.items()))
            self.logger.warn(f"Failed reassignment through zk with the following errors: Map({shown})")
            self.reassignment.maybe_remove_from_zk_reassignment(lambda p, _r: p in failed)
        return {tp for tp, err in results.items() if err == "NONE"}

    @mirrors("processListPartitionReassignments")
    def process_list_partition_reassignments(
        self, partitions: frozenset[TopicPartition] | None
    ) -> dict[TopicPartition, ReplicaAssignment]:
        """The ongoing reassignments of ``partitions`` (None: of every partition being reassigned), as an active
        controller answers ``ListPartitionReassignments`` (§7.7.1): each one's full replica assignment."""
        ctx = self.ctx
        listed = ctx.partitions_being_reassigned if partitions is None else partitions
        results: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in listed:
            assignment = ctx.assignment(tp)
            if assignment.adding or assignment.removing:
                results[tp] = assignment
        return results

    @mirrors("processApiPartitionReassignment")
    def process_api_partition_reassignment(
        self, targets: dict[TopicPartition, tuple[int, ...] | None]
    ) -> dict[TopicPartition, str]:
        """The reassignment results the callback gets (``Left(results)``, §7.7.1), by error name."""
        results: dict[TopicPartition, str] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in sorted(targets.items()):
            if target is not None and not self._valid_replicas(tp, target):
                results[tp] = "INVALID_REPLICA_ASSIGNMENT"
                continue
            built = self._maybe_build_reassignment(tp, target)
            if built is not None:
                to_reassign[tp] = built
            else:
                results[tp] = "NO_REASSIGNMENT_IN_PROGRESS"
        self.reassignment.maybe_remove_from_zk_reassignment(lambda p, _r: p in to_reassign)
        results.update(self._maybe_trigger_partition_reassignment(to_reassign))
        return results

    def _valid_replicas(self, tp: TopicPartition, replicas: tuple[int, ...]) -> bool:
        """``validateReplicas`` (§7.7.1): non-empty, distinct, ids ≥ 0, adding replicas live."""
        if not replicas or len(set(replicas)) != len(replicas) or any(r < 0 for r in replicas):
            return False
        adding = reassign_to(self.ctx.assignment(tp), replicas).adding
        return set(adding) <= self.ctx.live_broker_ids()

    @mirrors("maybeCompleteReassignment")
    def maybe_complete_reassignment(self, tp: TopicPartition) -> None:
        fa = self.ctx.assignment(tp)
        if self.reassignment.is_reassignment_complete(tp, fa):
            self.logger.info(
                f"Target replicas List({', '.join(str(r) for r in target_replicas(fa))}) have all caught up with the leader "
                f"for reassigning partition {tp}"
            )
            self.reassignment.on_partition_reassignment(tp, fa)

    def process_partition_reassignment_legacy(self) -> None:
        ctx = self.ctx
        if not self.zk.reassign_partitions:
            return
        ctx.legacy_reassignments.update(self.zk.reassign_partitions)
        self._maybe_trigger_partition_reassignment_legacy(sorted(self.zk.reassign_partitions))

    def _maybe_trigger_partition_reassignment_legacy(self, partitions: list[TopicPartition]) -> None:
        ctx = self.ctx
        to_remove: list[TopicPartition] = []
        for tp in partitions:
            if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                self.logger.error(f"Skipping reassignment of {tp} since the topic is currently being deleted")
                to_remove.append(tp)
                continue
            rar = ctx.legacy_reassignments.get(tp)
            if rar is None:
                raise IllegalStateException(
                    f"Initiating reassign replicas for partition {tp} not present in partitionsBeingReassigned"
                )
            assigned = ctx.assignments.get(tp)
            if assigned is None:
                self.logger.error(f"Ignoring request to reassign partition {tp} that doesn't exist.")
                to_remove.append(tp)
            elif assigned.replicas == rar:
                self.logger.info(
                    f"Partition {tp} to be reassigned is already assigned to replicas {mk_string(rar)}. Ignoring "
                    "request for partition reassignment."
                )
                to_remove.append(tp)
            else:
                try:
                    self.logger.info(
                        f"Handling reassignment of partition {tp} to new replicas {mk_string(rar)}"
                    )
                    self.deletion.mark_topic_ineligible_for_deletion({tp.topic}, "")
                    self.reassignment.on_partition_reassignment_legacy(tp, rar)
                except KafkaThrowable as e:
                    self.logger.error(f"Error completing reassignment of partition {tp}", e)
                    to_remove.append(tp)
        for tp in to_remove:
            self.reassignment.remove_partition_from_reassigned_partitions_legacy(tp)

    def process_partition_reassignment_isr_change_legacy(self, tp: TopicPartition) -> None:
        ctx = self.ctx
        rar = ctx.legacy_reassignments.get(tp)
        if rar is None:
            return
        stored = self.zk.get_topic_partition_states([tp]).get(tp)
        targets = set(rar)
        if stored is None:
            self.logger.error(
                f"Error handling reassignment of partition {tp} to replicas {mk_string(sorted(targets))} as it was "
                "never created"
            )
            return
        caught_up = targets & set(stored.leader_and_isr.isr)
        if caught_up == targets:
            self.logger.info(
                f"{len(caught_up)}/{len(targets)} replicas have caught up with the leader for partition {tp} being "
                "reassigned. Resuming partition reassignment"
            )
            self.reassignment.on_partition_reassignment_legacy(tp, rar)
        else:
            self.logger.info(
                f"{len(caught_up)}/{len(targets)} replicas have caught up with the leader for partition {tp} being "
                f"reassigned. Replica(s) {mk_string(sorted(targets - caught_up))} still need to catch up"
            )

    # ================================================================================ §7.9 elections

    @mirrors("processReplicaLeaderElection", "electionCallback")
    def process_replica_leader_election(
        self,
        requested: frozenset[TopicPartition],
        election_type: ElectionType,
        trigger: ElectionTrigger,
        callback: ElectionCallback | None = None,
    ) -> None:
        """``processReplicaLeaderElection`` (§7.9); ``callback`` (admin trigger) gets ``Right(leader)`` (an int) or
        ``Left(error)`` (an ``ApiError``) for every requested partition, unless the event throws."""
        ctx = self.ctx
        if not self.active:
            if callback is not None:
                callback({tp: ApiError.NOT_CONTROLLER for tp in requested})
            return
        if trigger is ElectionTrigger.ZkTriggered:
            if not self.zk.preferred_replica_election:
                return
            requested = frozenset(self.zk.preferred_replica_election)
        known = sorted(tp for tp in requested if tp in ctx.assignments)
        for tp in sorted(tp for tp in requested if tp not in ctx.assignments):
            self.logger.info(
                f"Skipping replica leader election ({election_type.value}) for partition {tp} by {trigger.value} "
                "since it doesn't exist."
            )
        deleting = [tp for tp in known if self.deletion.is_topic_queued_up_for_deletion(tp.topic)]
        live = [tp for tp in known if not self.deletion.is_topic_queued_up_for_deletion(tp.topic)]
        if deleting:
            self.logger.warn(
                f"Skipping replica leader election ({election_type.value}) for partitions {scala_set(deleting)} by "
                f"{trigger.value} since the respective topics are being deleted"
            )
        electable: list[TopicPartition] = []
        for tp in live:
            li = ctx.leadership.get(tp)
            if li is None:
                raise NoSuchElementException("None.get")
            leader = li.leader_and_isr.leader
            if election_type is ElectionType.PREFERRED:
                if leader != ctx.replicas(tp)[0]:
                    electable.append(tp)
            elif leader == NO_LEADER or leader not in ctx.live_broker_ids():
                electable.append(tp)
        election_results = self.on_replica_election(electable, election_type, trigger)
        if callback is None:
            return
        results: dict[TopicPartition, ApiError | int] = {}
        for tp, result in election_results.items():
            if isinstance(result, StateChangeFailedException):
                results[tp] = (
                    ApiError.PREFERRED_LEADER_NOT_AVAILABLE
                    if election_type is ElectionType.PREFERRED
                    else ApiError.ELIGIBLE_LEADERS_NOT_AVAILABLE
                )
            elif isinstance(result, KafkaThrowable):
                results[tp] = ApiError.UNKNOWN_SERVER_ERROR  # ApiError.fromThrowable
            else:
                results[tp] = result.leader
        already_valid = [tp for tp in live if tp not in election_results]
        results.update({tp: ApiError.ELECTION_NOT_NEEDED for tp in already_valid})
        results.update({tp: ApiError.INVALID_TOPIC_EXCEPTION for tp in deleting})
        results.update(
            {tp: ApiError.UNKNOWN_TOPIC_OR_PARTITION for tp in requested if tp not in ctx.assignments}
        )
        callback(results)

    @mirrors("onReplicaElection")
    def on_replica_election(
        self, partitions: list[TopicPartition], election_type: ElectionType, trigger: ElectionTrigger
    ) -> ElectionResults:
        self.logger.info(
            f"Starting replica leader election ({election_type.value}) for partitions {mk_string(partitions)} "
            f"triggered by {trigger.value}"
        )
        try:
            if election_type is ElectionType.PREFERRED:
                strategy = PREFERRED
            else:
                strategy = LeaderElection(
                    ElectionStrategy.OfflinePartitionLeaderElectionStrategy,
                    trigger is ElectionTrigger.AdminClientTriggered,
                )
            results = self.partition_sm.handle_state_changes(partitions, P.OnlinePartition, strategy)
            if trigger is not ElectionTrigger.AdminClientTriggered:
                for tp, result in results.items():
                    if isinstance(result, ControllerMovedException):
                        raise result
                    if isinstance(result, KafkaThrowable):
                        self.logger.error(
                            f"Error completing replica leader election ({election_type.value}) for partition {tp}",
                            result,
                        )
            return results
        finally:
            if trigger is not ElectionTrigger.AdminClientTriggered:
                self._remove_partitions_from_preferred_replica_election(
                    partitions, trigger is ElectionTrigger.AutoTriggered
                )

    def _remove_partitions_from_preferred_replica_election(
        self, partitions: list[TopicPartition], auto: bool
    ) -> None:
        ctx = self.ctx
        for tp in partitions:
            li = ctx.leadership.get(tp)
            if li is None:
                raise NoSuchElementException("None.get")
            leader = li.leader_and_isr.leader
            preferred = ctx.replicas(tp)[0]
            if leader == preferred:
                self.logger.info(
                    f"Partition {tp} completed preferred replica leader election. New leader is {preferred}"
                )
            else:
                self.logger.warn(
                    f"Partition {tp} failed to complete preferred replica leader election to {preferred}. Leader is "
                    f"still {leader}"
                )
        if not auto:
            self.zk.delete_preferred_replica_election(ctx.epoch_zk_version)

    def process_preferred_replica_leader_election_legacy(self) -> None:
        partitions = sorted(self.zk.preferred_replica_election)
        deleting = [tp for tp in partitions if self.deletion.is_topic_queued_up_for_deletion(tp.topic)]
        if deleting:
            self.logger.error(
                f"Skipping preferred replica election for partitions {scala_set(deleting)} since the respective "
                "topics are being deleted"
            )
        self._on_preferred_replica_election_legacy(
            [tp for tp in partitions if tp not in deleting], auto=False
        )

    def _on_preferred_replica_election_legacy(self, partitions: list[TopicPartition], auto: bool) -> None:
        self.logger.info(f"Starting preferred replica leader election for partitions {mk_string(partitions)}")
        try:
            self.partition_sm.handle_state_changes(partitions, P.OnlinePartition, PREFERRED)
        except KafkaThrowable as e:
            self.logger.error(
                f"Error completing preferred replica leader election for partitions {mk_string(partitions)}",
                e,
            )
        finally:
            self._remove_partitions_from_preferred_replica_election(partitions, auto)

    @mirrors("checkAndTriggerAutoLeaderRebalance")
    def check_and_trigger_auto_leader_rebalance(self) -> None:
        ctx = self.ctx
        self.logger.info("Processing automatic preferred replica leader election")
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp, fa in ctx.assignments.items():
            if fa.replicas and not self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                by_preferred.setdefault(fa.replicas[0], []).append(tp)
        threshold = self.config.leader_imbalance_per_broker_percentage / 100
        for broker in sorted(by_preferred):
            tps = by_preferred[broker]
            not_preferred = []
            for tp in tps:
                li = ctx.leadership.get(tp)
                if li is not None and li.leader_and_isr.leader != broker:
                    not_preferred.append(tp)
            if len(not_preferred) / len(tps) <= threshold:
                continue
            if self.version >= KAFKA_2_6:
                candidates = [
                    tp
                    for tp in not_preferred
                    if not ctx.partitions_being_reassigned
                    and not self.deletion.is_topic_queued_up_for_deletion(tp.topic)
                    and tp.topic in ctx.all_topics
                    and self._can_preferred_replica_be_leader(tp)
                ]
                self.on_replica_election(candidates, ElectionType.PREFERRED, ElectionTrigger.AutoTriggered)
            else:
                for tp in not_preferred:
                    if (
                        ctx.is_replica_online(broker, tp)
                        and not ctx.legacy_reassignments
                        and not self.deletion.is_topic_queued_up_for_deletion(tp.topic)
                        and tp.topic in ctx.all_topics
                    ):
                        self._on_preferred_replica_election_legacy([tp], auto=True)

    def _can_preferred_replica_be_leader(self, tp: TopicPartition) -> bool:
        ctx = self.ctx
        replicas = ctx.replicas(tp)
        li = ctx.leadership[tp]
        return (
            bool(replicas) and ctx.is_replica_online(replicas[0], tp) and replicas[0] in li.leader_and_isr.isr
        )

    # ================================================================================ §7.10 controlled shutdown

    @mirrors("doControlledShutdown")
    def do_controlled_shutdown(self, broker: int, broker_epoch: int) -> set[TopicPartition]:
        ctx = self.ctx
        modern = self.version >= KAFKA_2_2
        if modern and broker_epoch != UNKNOWN_BROKER_EPOCH:
            cached = ctx.live_broker_epochs.get(broker)
            if cached is None:
                raise NoSuchElementException(f"key not found: {broker}")
            if broker_epoch < cached:
                message = (
                    f"Received controlled shutdown request from an old broker epoch {broker_epoch} for broker "
                    f"{broker}. Current broker epoch is {cached}."
                )
                self.logger.info(message)
                raise StaleBrokerEpochException(message)
        self.logger.info(f"Shutting down broker {broker}")
        if broker not in ctx.live_broker_epochs:
            raise BrokerNotAvailableException(f"Broker id {broker} does not exist.")
        ctx.add_shutting_down(broker)
        skip_deleting = self.version >= KAFKA_2_1
        to_act_on = [
            tp
            for tp in ctx.partitions_on_broker(broker)
            if len(ctx.replicas(tp)) > 1
            and tp in ctx.leadership
            and not (skip_deleting and self.deletion.is_topic_queued_up_for_deletion(tp.topic))
        ]
        led = [tp for tp in to_act_on if ctx.leadership[tp].leader_and_isr.leader == broker]
        followed = [tp for tp in to_act_on if ctx.leadership[tp].leader_and_isr.leader != broker]
        self.partition_sm.handle_state_changes(led, P.OnlinePartition, CONTROLLED_SHUTDOWN)
        self.batch.new_batch()
        for tp in followed:
            self.batch.add_stop_replica((broker,), tp, False)
        self.batch.send(ctx.epoch)
        self.replica_sm.handle_state_changes({broker: followed}, R.OfflineReplica)
        if skip_deleting:
            return ctx.partition_leaders_on_broker(broker)
        return {tp for tp in ctx.leaders.get(broker, ()) if len(ctx.replicas(tp)) > 1}

    # ================================================================================ §7.11 ISR changes

    @mirrors("processAlterIsr")
    def process_alter_isr(
        self, broker: int, broker_epoch: int, tp: TopicPartition, proposed: LeaderAndIsr
    ) -> None:
        """``processAlterIsr`` (§7.11, 2.8). Everything after the broker-epoch check runs inside Kafka's
        ``catch Throwable`` (→ UNKNOWN_SERVER_ERROR): a failed write, a failed cache re-read or even a
        ``ControllerMovedException`` only logs an ERROR line; no UpdateMetadata is sent then."""
        ctx = self.ctx
        cached_epoch = ctx.live_broker_epochs.get(broker)
        if cached_epoch is None:
            self.logger.info(f"Ignoring AlterIsr due to unknown broker {broker}")
            return
        if cached_epoch != broker_epoch:
            self.logger.info(
                f"Ignoring AlterIsr due to stale broker epoch {broker_epoch} and local broker epoch "
                f"Some({cached_epoch}) for broker {broker}"
            )
            return
        try:
            success = False
            li = ctx.leadership.get(tp)
            if li is not None:
                current = li.leader_and_isr
                if proposed.leader_epoch < current.leader_epoch:
                    pass
                elif (proposed.leader, proposed.leader_epoch, proposed.isr) == (
                    current.leader,
                    current.leader_epoch,
                    current.isr,
                ):
                    success = True
                else:
                    finished, _retry = self.zk.update_leader_and_isr(
                        {tp: proposed}, ctx.epoch, ctx.epoch_zk_version
                    )
                    written = finished.get(tp)
                    if isinstance(written, KeeperException):
                        self.logger.error(f"Failed to update ISR for partition {tp}", written)
                    elif written is not None:
                        success = True
                        for refreshed_tp, refreshed in self.zk.get_topic_partition_states([tp]).items():
                            ctx.put_leadership(refreshed_tp, refreshed)
            self.send_update_metadata(self._brokers(), [tp])
        except KafkaThrowable as e:
            self.logger.error(f"Error when processing AlterIsr for partitions: List({tp})", e)
            return
        if success and tp in ctx.partitions_being_reassigned:
            self.maybe_complete_reassignment(tp)

    def process_isr_change_notification(self) -> None:
        ctx = self.ctx
        zk = self.zk
        partitions = sorted(zk.isr_change_notifications)
        try:
            if partitions:
                for tp, li in zk.get_topic_partition_states(partitions).items():
                    ctx.put_leadership(tp, li)
                self.send_update_metadata(self._brokers(), partitions)
                if self.version >= KAFKA_2_4:
                    # a partial upgrade: the ISR of a partition being reassigned may come as a notification
                    for tp in [tp for tp in partitions if tp in ctx.partitions_being_reassigned]:
                        self.maybe_complete_reassignment(tp)
        finally:
            zk.delete_isr_change_notifications(ctx.epoch_zk_version)
