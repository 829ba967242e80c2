"""``TopicDeletionManager`` (§8): queueing, starting, retrying and completing topic deletions.

The queued / started / ineligible sets live in the context (the 1.1 manager's own sets are folded into the same
fields). Topics are processed in ascending name order where Kafka iterates a hash set.

[1.1] differences: no ``topicsWithDeletionStarted`` (partitions go Offline → NonExistentPartition only when the
deletion completes), one ``onTopicDeletion`` per topic interleaved with per-topic retries, ReplicaDeletionIneligible
only from ReplicaDeletionStarted (dead replicas in OfflineReplica are rejected), no reasons in "Halted deletion"
lines, and the log prefix ``[Topic Deletion Manager <id>], ``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.logs import ControllerLog, Logger, mk_string
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.partition_state_machine import ZkPartitionStateMachine
from kcspec.reference_impl.replica_state_machine import ZkReplicaStateMachine
from kcspec.reference_impl.version import KAFKA_2_4, KafkaVersion
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.vocabulary import (
    ClusterConfig,
    PartitionReplica,
    PartitionState,
    ReplicaState,
    TopicPartition,
)

R = ReplicaState


def _merge(groups: Iterable[dict[int, list[TopicPartition]]]) -> dict[int, list[TopicPartition]]:
    out: dict[int, list[TopicPartition]] = {}
    for g in groups:
        for b, tps in g.items():
            out.setdefault(b, []).extend(tps)
    return out


class TopicDeletionManager:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: SimulatedZooKeeper,
        version: KafkaVersion,
        log: ControllerLog,
        config: ClusterConfig,
        replica_sm: ZkReplicaStateMachine,
        partition_sm: ZkPartitionStateMachine,
        send_update_metadata: Callable[[Iterable[int], list[TopicPartition]], None],
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.version = version
        self.config = config
        self.replica_sm = replica_sm
        self.partition_sm = partition_sm
        self.send_update_metadata = send_update_metadata
        self.modern = version >= KAFKA_2_4
        sep = " " if self.modern else ", "
        self.logger = Logger(
            log,
            log.controller,
            "kafka.controller.TopicDeletionManager",
            f"[Topic Deletion Manager {ctx.controller_id}]{sep}",
        )

    @property
    def enabled(self) -> bool:
        return self.config.delete_topic_enable

    def init(self, to_delete: set[str], ineligible: set[str]) -> None:
        """Failover step 5: queue the pending deletions, mark ineligible ones; delete the znodes if disabled."""
        ctx = self.ctx
        if self.enabled:
            ctx.queue_topic_deletion(to_delete)
            ctx.topics_ineligible_for_deletion.update(ineligible & ctx.topics_to_be_deleted)
        else:
            self.logger.info(f"Removing {mk_string(sorted(to_delete))} since delete topic is disabled")
            self.zk.delete_topic_deletions(to_delete, ctx.epoch_zk_version)

    def try_topic_deletion(self) -> None:
        if self.enabled:
            self.resume_deletions()

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return self.enabled and topic in self.ctx.topics_to_be_deleted

    @mirrors("enqueueTopicsForDeletion")
    def enqueue_topics_for_deletion(self, topics: set[str]) -> None:
        if self.enabled:
            self.ctx.queue_topic_deletion(topics)
            self.resume_deletions()

    @mirrors("resumeDeletionForTopics")
    def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        if self.enabled:
            resume = set(topics) & self.ctx.topics_to_be_deleted
            if resume:
                self.ctx.topics_ineligible_for_deletion.difference_update(resume)
                self.resume_deletions()

    @mirrors("completeReplicaDeletion")
    def complete_replica_deletion(self, replicas: list[PartitionReplica]) -> None:
        done = [pr for pr in replicas if self.is_topic_queued_up_for_deletion(pr.tp.topic)]
        self.replica_sm.handle_state_changes(_group(done), R.ReplicaDeletionSuccessful)
        self.resume_deletions()

    @mirrors("failReplicaDeletion")
    def fail_replica_deletion(self, replicas: list[PartitionReplica]) -> None:
        if not self.enabled:
            return
        failed = [pr for pr in replicas if self.is_topic_queued_up_for_deletion(pr.tp.topic)]
        if failed:
            self.replica_sm.handle_state_changes(_group(failed), R.ReplicaDeletionIneligible)
            self.mark_topic_ineligible_for_deletion(
                {pr.tp.topic for pr in failed}, "replica deletion failure"
            )
            self.resume_deletions()

    @mirrors("markTopicIneligibleForDeletion")
    def mark_topic_ineligible_for_deletion(self, topics: set[str], reason: str) -> None:
        if self.enabled:
            halted = topics & self.ctx.topics_to_be_deleted
            self.ctx.topics_ineligible_for_deletion.update(halted)
            if halted:
                why = f" due to {reason}" if self.modern else ""
                self.logger.info(f"Halted deletion of topics {mk_string(sorted(halted))}{why}")

    def _is_eligible(self, topic: str) -> bool:
        ctx = self.ctx
        return (
            topic in ctx.topics_to_be_deleted
            and not ctx.is_any_replica_in_state(topic, R.ReplicaDeletionStarted)
            and topic not in ctx.topics_ineligible_for_deletion
        )

    # ------------------------------------------------------------------------------------ resumeDeletions

    @mirrors("resumeDeletions")
    def resume_deletions(self) -> None:
        queued = sorted(self.ctx.topics_to_be_deleted)
        if queued:
            self.logger.info(f"Handling deletion for topics {mk_string(queued)}")
        if self.modern:
            self._resume_deletions(queued)
        else:
            self._resume_deletions_legacy(queued)

    def _resume_deletions(self, queued: list[str]) -> None:
        ctx = self.ctx
        retry: list[str] = []
        eligible: list[str] = []
        for topic in queued:
            if ctx.are_all_replicas_in_state(topic, R.ReplicaDeletionSuccessful):
                self._complete_delete_topic(topic)
                self.logger.info(f"Deletion of topic {topic} successfully completed")
            elif not ctx.is_any_replica_in_state(
                topic, R.ReplicaDeletionStarted
            ) and ctx.is_any_replica_in_state(topic, R.ReplicaDeletionIneligible):
                retry.append(topic)
            if self._is_eligible(topic):
                self.logger.info(f"Deletion of topic {topic} (re)started")
                eligible.append(topic)
        if retry:
            failed = _merge(ctx.replicas_in_state(t, R.ReplicaDeletionIneligible) for t in retry)
            self.replica_sm.handle_state_changes(failed, R.OfflineReplica)
        if eligible:
            self._on_topic_deletion(eligible)

    def _resume_deletions_legacy(self, queued: list[str]) -> None:
        ctx = self.ctx
        for topic in queued:
            if ctx.are_all_replicas_in_state(topic, R.ReplicaDeletionSuccessful):
                self._complete_delete_topic(topic)
                self.logger.info(f"Deletion of topic {topic} successfully completed")
            else:
                started = ctx.replicas_in_state(topic, R.ReplicaDeletionStarted)
                if started:
                    ids = sorted(started)
                    parts = sorted({tp for tps in started.values() for tp in tps})
                    self.logger.info(
                        f"Deletion for replicas {mk_string(ids)} for partition {mk_string(parts)} of topic {topic} "
                        "in progress"
                    )
                else:
                    failed = ctx.replicas_in_state(topic, R.ReplicaDeletionIneligible)
                    if failed:
                        listed = [PartitionReplica(tp, b) for b in sorted(failed) for tp in failed[b]]
                        self.logger.info(
                            f"Retrying delete topic for topic {topic} since replicas {mk_string(listed)} were not "
                            "successfully deleted"
                        )
                        self.replica_sm.handle_state_changes(failed, R.OfflineReplica)
            if self._is_eligible(topic):
                self.logger.info(f"Deletion of topic {topic} (re)started")
                self._on_topic_deletion([topic])
            elif topic in ctx.topics_ineligible_for_deletion and topic in ctx.topics_to_be_deleted:
                self.logger.info(
                    f"Not retrying deletion of topic {topic} at this time since it is marked ineligible for deletion"
                )

    @mirrors("completeDeleteTopic")
    def _complete_delete_topic(self, topic: str) -> None:
        ctx = self.ctx
        successful = ctx.replicas_in_state(topic, R.ReplicaDeletionSuccessful)
        self.replica_sm.handle_state_changes(successful, R.NonExistentReplica)
        if not self.modern:
            partitions = ctx.partitions_for_topic(topic)
            self.partition_sm.handle_state_changes(partitions, PartitionState.OfflinePartition)
            self.partition_sm.handle_state_changes(partitions, PartitionState.NonExistentPartition)
        self.zk.delete_topic(topic, ctx.epoch_zk_version)
        ctx.remove_topic(topic)

    # ------------------------------------------------------------------------------------ onTopicDeletion

    @mirrors("onTopicDeletion")
    def _on_topic_deletion(self, topics: list[str]) -> None:
        ctx = self.ctx
        if self.modern:
            unseen = [t for t in topics if t not in ctx.topics_with_deletion_started]
            if unseen:
                partitions = [tp for t in unseen for tp in ctx.partitions_for_topic(t)]
                self.partition_sm.handle_state_changes(partitions, PartitionState.OfflinePartition)
                self.partition_sm.handle_state_changes(partitions, PartitionState.NonExistentPartition)
                ctx.topics_with_deletion_started.update(unseen)
        self.send_update_metadata(
            ctx.live_broker_epochs.keys(), [tp for t in topics for tp in ctx.partitions_for_topic(t)]
        )
        if self.modern:
            self._on_partition_deletion(topics)
        else:
            for topic in topics:
                self._start_replica_deletion_legacy(topic)

    def _split_replicas(
        self, topic: str
    ) -> tuple[dict[int, list[TopicPartition]], dict[int, list[TopicPartition]]]:
        """(retry = alive minus ReplicaDeletionSuccessful, dead) replicas of ``topic``, grouped by broker."""
        ctx = self.ctx
        retry: dict[int, list[TopicPartition]] = {}
        dead: dict[int, list[TopicPartition]] = {}
        for b, tps in ctx.replicas_for_topic(topic).items():
            for tp in tps:
                if ctx.is_replica_online(b, tp):
                    if ctx.replica_state(b, tp) is not R.ReplicaDeletionSuccessful:
                        retry.setdefault(b, []).append(tp)
                else:
                    dead.setdefault(b, []).append(tp)
        return retry, dead

    @mirrors("onPartitionDeletion")
    def _on_partition_deletion(self, topics: list[str]) -> None:
        all_dead: list[dict[int, list[TopicPartition]]] = []
        all_retry: list[dict[int, list[TopicPartition]]] = []
        ineligible: set[str] = set()
        for topic in topics:
            retry, dead = self._split_replicas(topic)
            all_dead.append(dead)
            all_retry.append(retry)
            if dead:
                ineligible.add(topic)
        retry_all = _merge(all_retry)
        self.replica_sm.handle_state_changes(_merge(all_dead), R.ReplicaDeletionIneligible)
        self.replica_sm.handle_state_changes(retry_all, R.OfflineReplica)
        self.replica_sm.handle_state_changes(retry_all, R.ReplicaDeletionStarted)
        if ineligible:
            self.mark_topic_ineligible_for_deletion(ineligible, "offline replicas")

    def _start_replica_deletion_legacy(self, topic: str) -> None:
        retry, dead = self._split_replicas(topic)
        self.replica_sm.handle_state_changes(dead, R.ReplicaDeletionIneligible)
        self.replica_sm.handle_state_changes(retry, R.OfflineReplica)
        self.replica_sm.handle_state_changes(retry, R.ReplicaDeletionStarted)
        if dead:
            self.mark_topic_ineligible_for_deletion({topic}, "")


def _group(replicas: Iterable[PartitionReplica]) -> dict[int, list[TopicPartition]]:
    out: dict[int, list[TopicPartition]] = {}
    for pr in replicas:
        out.setdefault(pr.replica, []).append(pr.tp)
    return out
