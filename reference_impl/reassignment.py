"""Partition reassignment: KIP-455 (§7.7, 2.4+) and the legacy 12-step algorithm (§7.8, 1.1).

``Reassignment`` holds the controller parts reassignment uses and implements ``onPartitionReassignment`` and its
helpers for both profiles; the event handlers that trigger it live in ``controller.py``.

Decisions where the semantics document is silent: partitions are processed in ascending order where Kafka iterates
a hash map; legacy step 1 orders ``AR' = distinct(RAR ++ AR)`` (docs/contracts.md decision); the legacy new-only
replicas are started in ascending broker order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kcspec.reference_impl.context import (
    ControllerContext,
    is_being_reassigned,
    origin_replicas,
    target_replicas,
)
from kcspec.reference_impl.elections import new_epoch_and_zk_version
from kcspec.reference_impl.errors import (
    IllegalStateException,
    KafkaException,
    KeeperException,
    NoSuchElementException,
    StateChangeFailedException,
)
from kcspec.reference_impl.logs import (
    Logger,
    mk_string,
    render_assignment,
    render_leader_isr_and_epoch,
    scala_list,
)
from kcspec.reference_impl.partition_state_machine import ZkPartitionStateMachine
from kcspec.reference_impl.replica_state_machine import ZkReplicaStateMachine
from kcspec.reference_impl.request_batch import ControllerBrokerRequestBatch
from kcspec.reference_impl.state_change_logger import StateChangeLogger
from kcspec.reference_impl.topic_deletion import TopicDeletionManager
from kcspec.reference_impl.version import KAFKA_2_5, KAFKA_2_7, KafkaVersion
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

R = ReplicaState
REASSIGN = LeaderElection(ElectionStrategy.ReassignPartitionLeaderElectionStrategy)


class Reassignment:
    def __init__(
        self,
        ctx: ControllerContext,
        zk: SimulatedZooKeeper,
        version: KafkaVersion,
        logger: Logger,
        scl: StateChangeLogger,
        batch: ControllerBrokerRequestBatch,
        replica_sm: ZkReplicaStateMachine,
        partition_sm: ZkPartitionStateMachine,
        deletion: TopicDeletionManager,
        send_update_metadata: Callable[[Iterable[int], list[TopicPartition]], None],
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.version = version
        self.logger = logger
        self.scl = scl
        self.batch = batch
        self.replica_sm = replica_sm
        self.partition_sm = partition_sm
        self.deletion = deletion
        self.send_update_metadata = send_update_metadata

    # ================================================================================ KIP-455 (§7.7.2)

    def on_partition_reassignment(self, tp: TopicPartition, fa_new: ReplicaAssignment) -> None:
        ctx = self.ctx
        self.deletion.mark_topic_ineligible_for_deletion({tp.topic}, "topic reassignment in progress")
        self._update_current_reassignment(tp, fa_new)
        if not self.is_reassignment_complete(tp, fa_new):
            self._update_leader_epoch_and_send_request(tp, fa_new)
            for r in fa_new.adding:
                self.replica_sm.handle_state_changes({r: [tp]}, R.NewReplica)
            return
        self.replica_sm.handle_state_changes(_per_broker(tp, fa_new.adding), R.OnlineReplica)
        completed = ReplicaAssignment(target_replicas(fa_new))
        ctx.update_assignment(tp, completed)
        self._move_reassigned_partition_leader_if_required(tp, completed)
        self._stop_removed_replicas(tp, fa_new.removing)
        self._update_replica_assignment_for_partition(tp, completed)
        self._remove_partition_from_reassigning_partitions(tp, completed)
        self.send_update_metadata(ctx.live_broker_epochs.keys(), [tp])
        self.deletion.resume_deletion_for_topics([tp.topic])

    def _update_current_reassignment(self, tp: TopicPartition, fa_new: ReplicaAssignment) -> None:
        ctx = self.ctx
        current = ctx.assignment(tp)
        if current != fa_new:
            self._update_replica_assignment_for_partition(tp, fa_new)
            ctx.update_assignment(tp, fa_new)
            unneeded = tuple(r for r in current.replicas if r not in fa_new.replicas)
            if unneeded:
                self._stop_removed_replicas(tp, unneeded)
        ctx.partitions_being_reassigned.add(tp)

    def is_reassignment_complete(self, tp: TopicPartition, fa: ReplicaAssignment) -> bool:
        """¬FA.isBeingReassigned ∨ (state znode exists ∧ TRS ⊆ ZK ISR); reads ZooKeeper, not the cache."""
        if not is_being_reassigned(fa):
            return True
        stored = self.zk.get_topic_partition_states([tp]).get(tp)
        return stored is not None and set(target_replicas(fa)) <= set(stored.leader_and_isr.isr)

    def _update_replica_assignment_for_partition(self, tp: TopicPartition, fa: ReplicaAssignment) -> None:
        ctx = self.ctx
        topic_assignment = {p: ctx.assignments[p] for p in ctx.partitions_for_topic(tp.topic)}
        topic_assignment[tp] = fa
        code = self.zk.set_topic_assignment(
            tp.topic, ctx.topic_ids.get(tp.topic), topic_assignment, ctx.epoch_zk_version
        )
        if code == "NONODE":
            raise IllegalStateException(
                f"Failed to update assignment for {tp} since the topic has no current assignment"
            )
        self.logger.info(f"Successfully updated assignment of partition {tp} to {render_assignment(fa)}")

    def _stop_removed_replicas(self, tp: TopicPartition, removed: Iterable[int]) -> None:
        replicas = _per_broker(tp, removed)
        for target in (
            R.OfflineReplica,
            R.ReplicaDeletionStarted,
            R.ReplicaDeletionSuccessful,
            R.NonExistentReplica,
        ):
            self.replica_sm.handle_state_changes(replicas, target)

    def _move_reassigned_partition_leader_if_required(
        self, tp: TopicPartition, fa: ReplicaAssignment
    ) -> None:
        ctx = self.ctx
        replicas = fa.replicas
        li = ctx.leadership.get(tp)
        if li is None:
            raise _none_get()
        leader = li.leader_and_isr.leader
        shown = mk_string(replicas)
        if leader not in replicas:
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is not in the new list of replicas {shown}. "
                "Re-electing leader"
            )
            self.partition_sm.handle_state_changes([tp], PartitionState.OnlinePartition, REASSIGN)
        elif ctx.is_replica_online(leader, tp):
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is already in the new list of replicas {shown} "
                "and is alive"
            )
            self._update_leader_epoch_and_send_request(tp, fa)
        else:
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is already in the new list of replicas {shown} "
                "but is dead"
            )
            self.partition_sm.handle_state_changes([tp], PartitionState.OnlinePartition, REASSIGN)

    def _update_leader_epoch_and_send_request(self, tp: TopicPartition, fa: ReplicaAssignment) -> None:
        """A1 / B3: bump the leader epoch, then LAIR (isNew=false) to ORS and (isNew=true) to ADD (KAFKA-10314)."""
        li = self.update_leader_epoch(tp)
        self.batch.new_batch()
        if self.version >= KAFKA_2_7:
            self.batch.add_leader_and_isr(origin_replicas(fa), tp, li, fa, False)
            self.batch.add_leader_and_isr(fa.adding, tp, li, fa, True)
        else:
            self.batch.add_leader_and_isr(fa.replicas, tp, li, fa, False)
        self.batch.send(self.ctx.epoch)
        self.scl.with_controller_epoch(self.ctx.epoch).info(
            f"Sent LeaderAndIsr request {render_leader_isr_and_epoch(li, self.version)} with new replica assignment "
            f"{render_assignment(fa)} to leader {li.leader_and_isr.leader} for partition being reassigned {tp}"
        )

    def update_leader_epoch(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch:
        """``updateLeaderEpoch``: re-read, +1 epoch, conditional write until it succeeds (cache updated 2.5+)."""
        ctx = self.ctx
        while True:
            stored = self.zk.get_topic_partition_states([tp]).get(tp)
            if stored is None:
                raise IllegalStateException(
                    f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. This could mean we "
                    "somehow tried to reassign a partition that doesn't exist"
                )
            if stored.controller_epoch > ctx.epoch:
                space = " " if self.version >= KAFKA_2_5 else ""
                raise StateChangeFailedException(
                    f"Leader and isr path written by another controller. This probably{space}means the current "
                    f"controller with epoch {ctx.epoch} went through a soft failure and another controller was "
                    f"elected with epoch {stored.controller_epoch}. Aborting state change by this controller"
                )
            finished, _retry = self.zk.update_leader_and_isr(
                {tp: new_epoch_and_zk_version(stored.leader_and_isr)}, ctx.epoch, ctx.epoch_zk_version
            )
            result = finished.get(tp)
            if isinstance(result, KeeperException):
                raise result
            if result is not None:
                li = LeaderIsrAndControllerEpoch(result, ctx.epoch)
                if self.version >= KAFKA_2_5:
                    ctx.put_leadership(tp, li)
                    self.logger.info(
                        f"Updated leader epoch for partition {tp} to {result.leader_epoch}, zkVersion={result.zk_version}"
                    )
                else:
                    self.logger.info(f"Updated leader epoch for partition {tp} to {result.leader_epoch}")
                return li

    def _remove_partition_from_reassigning_partitions(
        self, tp: TopicPartition, fa: ReplicaAssignment
    ) -> None:
        if tp not in self.ctx.partitions_being_reassigned:
            raise IllegalStateException(
                "Cannot remove a reassigning partition because it is not present in memory"
            )
        self.maybe_remove_from_zk_reassignment(lambda p, replicas: p == tp and replicas == fa.replicas)
        self.ctx.partitions_being_reassigned.discard(tp)

    def maybe_remove_from_zk_reassignment(
        self, should_remove: Callable[[TopicPartition, tuple[int, ...]], bool]
    ) -> None:
        zk = self.zk
        if not zk.reassign_partitions:
            return
        removing = {p: r for p, r in zk.reassign_partitions.items() if should_remove(p, r)}
        remaining = {p: r for p, r in zk.reassign_partitions.items() if p not in removing}
        shown = ", ".join(f"{p} -> {scala_list(r)}" for p, r in sorted(removing.items()))
        self.logger.info(
            f"Removing partitions Map({shown}) from the list of reassigned partitions in zookeeper"
        )
        if not remaining:
            self.logger.info(
                "No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions"
            )
            zk.delete_partition_reassignment(self.ctx.epoch_zk_version)
        else:
            zk.set_partition_reassignment(remaining, self.ctx.epoch_zk_version)

    # ================================================================================ legacy (§7.8.2)

    def on_partition_reassignment_legacy(self, tp: TopicPartition, rar: tuple[int, ...]) -> None:
        ctx = self.ctx
        if not self._are_replicas_in_isr(tp, rar):
            self.logger.info(
                f"New replicas {mk_string(rar)} for partition {tp} being reassigned not yet caught up with the leader"
            )
            current = ctx.replicas(tp)
            new_only = sorted(set(rar) - set(current))
            new_and_old = tuple(dict.fromkeys(rar + current))
            self._update_assigned_replicas_for_partition(tp, new_and_old)
            self._update_leader_epoch_and_send_request_legacy(tp, ctx.replicas(tp), new_and_old)
            for r in new_only:
                self.replica_sm.handle_state_changes({r: [tp]}, R.NewReplica)
            self.logger.info(
                f"Waiting for new replicas {mk_string(rar)} for partition {tp} being reassigned to catch up with "
                "the leader"
            )
            return
        old_replicas = sorted(set(ctx.replicas(tp)) - set(rar))
        for r in rar:
            self.replica_sm.handle_state_changes({r: [tp]}, R.OnlineReplica)
        self._move_reassigned_partition_leader_if_required_legacy(tp, rar)
        self._stop_removed_replicas(tp, old_replicas)
        self._update_assigned_replicas_for_partition(tp, rar)
        self.remove_partition_from_reassigned_partitions_legacy(tp)
        self.send_update_metadata(ctx.live_broker_epochs.keys(), [tp])
        self.deletion.resume_deletion_for_topics([tp.topic])

    def _are_replicas_in_isr(self, tp: TopicPartition, replicas: tuple[int, ...]) -> bool:
        stored = self.zk.get_topic_partition_states([tp]).get(tp)
        return stored is not None and all(r in stored.leader_and_isr.isr for r in replicas)

    def _update_assigned_replicas_for_partition(self, tp: TopicPartition, replicas: tuple[int, ...]) -> None:
        ctx = self.ctx
        topic_assignment = {p: ctx.assignments[p] for p in ctx.partitions_for_topic(tp.topic)}
        topic_assignment[tp] = ReplicaAssignment(replicas)
        code = self.zk.set_topic_assignment(
            tp.topic, ctx.topic_ids.get(tp.topic), topic_assignment, ctx.epoch_zk_version
        )
        if code == "NONODE":
            raise IllegalStateException(
                f"Failed to update assignment for {tp} since the topic has no current assignment"
            )
        if code != "OK":
            raise KafkaException(code)
        self.logger.info(
            f"Updated assigned replicas for partition {tp} being reassigned to {mk_string(replicas)}"
        )
        ctx.update_assignment(tp, ReplicaAssignment(replicas))

    def _update_leader_epoch_and_send_request_legacy(
        self, tp: TopicPartition, recipients: tuple[int, ...], new_assigned: tuple[int, ...]
    ) -> None:
        """Legacy step 2 / 7: epoch +1 in ZK only (KAFKA-9212: the cache keeps the old record), LAIR isNew=false."""
        li = self.update_leader_epoch(tp)
        self.batch.new_batch()
        self.batch.add_leader_and_isr(recipients, tp, li, ReplicaAssignment(new_assigned), False)
        self.batch.send(self.ctx.epoch)
        self.scl.with_controller_epoch(self.ctx.epoch).trace(
            f"Sent LeaderAndIsr request {render_leader_isr_and_epoch(li, self.version)} with new assigned replica "
            f"list {mk_string(new_assigned)} to leader {li.leader_and_isr.leader} for partition being reassigned {tp}"
        )

    def _move_reassigned_partition_leader_if_required_legacy(
        self, tp: TopicPartition, rar: tuple[int, ...]
    ) -> None:
        ctx = self.ctx
        li = ctx.leadership.get(tp)
        if li is None:
            raise _none_get()
        leader = li.leader_and_isr.leader
        old_and_new = ctx.replicas(tp)
        ctx.update_assignment(tp, ReplicaAssignment(rar))
        shown = mk_string(rar)
        if leader not in rar:
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is not in the new list of replicas {shown}. "
                "Re-electing leader"
            )
            self.partition_sm.handle_state_changes([tp], PartitionState.OnlinePartition, REASSIGN)
        elif ctx.is_replica_online(leader, tp):
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is already in the new list of replicas {shown} "
                "and is alive"
            )
            self._update_leader_epoch_and_send_request_legacy(tp, old_and_new, rar)
        else:
            self.logger.info(
                f"Leader {leader} for partition {tp} being reassigned, is already in the new list of replicas {shown} "
                "but is dead"
            )
            self.partition_sm.handle_state_changes([tp], PartitionState.OnlinePartition, REASSIGN)

    def remove_partition_from_reassigned_partitions_legacy(self, tp: TopicPartition) -> None:
        ctx = self.ctx
        remaining = {p: r for p, r in ctx.legacy_reassignments.items() if p != tp}
        self.logger.info(f"Removing partition {tp} from the list of reassigned partitions in zookeeper")
        if not remaining:
            self.logger.info(
                "No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions"
            )
            self.zk.delete_partition_reassignment(ctx.epoch_zk_version)
        else:
            self.zk.set_partition_reassignment(remaining, ctx.epoch_zk_version)
        ctx.legacy_reassignments.pop(tp, None)


def _per_broker(tp: TopicPartition, replicas: Iterable[int]) -> dict[int, list[TopicPartition]]:
    return {r: [tp] for r in replicas}


def _none_get() -> NoSuchElementException:
    return NoSuchElementException("None.get")
