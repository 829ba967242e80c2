"""The catalogue of historical Kafka controller bugs, each re-injected into the reference controller.

Every entry names the ticket, the release that fixed it, the wrong behaviour and how it is injected; the
semantics document's §12 (and its inline ``[1.1]`` / ticket notes) is the source. Bugs fixed before the
profile's release are mutants of that profile; a later fix (3.x) back-ported into 2.8 is a mutant of the 2.8
controller too, because 2.8.2 still behaves the old way. Injection never edits ``reference_impl/``: a named
function or method is replaced for the duration of a run (``patching.injected``), either by a small
re-implementation with the bug, by a wrapper, or by running one method as an older Kafka version (the
reference controller guards behaviour changes with version checks, as Kafka does with its IBP).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from typing import Any

from kcspec.conformance.selfcheck.bugzoo.mutant import Mutant
from kcspec.conformance.selfcheck.bugzoo.patching import Patch

P28 = "kafka-2.8"
P11 = "kafka-1.1"


def _modules() -> dict[str, Any]:
    import kcspec.reference_impl.context as context
    import kcspec.reference_impl.controller as controller
    import kcspec.reference_impl.elections as elections
    import kcspec.reference_impl.partition_state_machine as partition_state_machine
    import kcspec.reference_impl.reassignment as reassignment
    import kcspec.reference_impl.reference as reference
    import kcspec.reference_impl.replica_state_machine as replica_state_machine
    import kcspec.reference_impl.states as states
    import kcspec.reference_impl.version as version
    import kcspec.reference_impl.zookeeper as zookeeper

    return {
        "context": context,
        "controller": controller,
        "elections": elections,
        "psm": partition_state_machine,
        "reassignment": reassignment,
        "reference": reference,
        "rsm": replica_state_machine,
        "states": states,
        "version": version,
        "zookeeper": zookeeper,
    }


def as_version(version_name: str) -> Callable[[Any], Any]:
    """A patch maker: run the method with ``self.version`` set to an older Kafka release for the call only."""

    def make(original: Any) -> Any:
        older = getattr(_modules()["version"], version_name)

        @functools.wraps(original)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            saved = self.version
            self.version = older
            try:
                return original(self, *args, **kwargs)
            finally:
                self.version = saved

        return run

    return make


# ------------------------------------------------------------------------------------------ §12.1 elections


def _kafka_1503() -> tuple[Patch, ...]:
    def make(_original: Any) -> Any:
        def offline_partition_leader_election(
            assignment: Sequence[int], isr: Collection[int], live: Collection[int], unclean_enabled: bool
        ) -> int | None:
            for r in isr:  # the bug: ISR order instead of assignment order
                if r in live:
                    return r
            if unclean_enabled:
                for r in assignment:
                    if r in live:
                        return r
            return None

        return offline_partition_leader_election

    return (Patch(_modules()["elections"], "offline_partition_leader_election", make),)


def _kafka_7482() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        before_fix = _modules()["version"].KAFKA_2_1

        def leader_for_controlled_shutdown(ctx: Any, version: Any, tp: Any, lai: Any) -> Any:
            return original(ctx, before_fix, tp, lai)

        return leader_for_controlled_shutdown

    return (Patch(_modules()["elections"], "leader_for_controlled_shutdown", make),)


def _kafka_9866() -> tuple[Patch, ...]:
    def make(_original: Any) -> Any:
        def can_preferred_replica_be_leader(self: Any, tp: Any) -> bool:
            replicas = self.ctx.replicas(tp)
            return bool(replicas) and bool(self.ctx.is_replica_online(replicas[0], tp))  # no ISR condition

        return can_preferred_replica_be_leader

    return (Patch(_modules()["controller"].KafkaController, "_can_preferred_replica_be_leader", make),)


def _kafka_14140_fix() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def process_alter_isr(self: Any, broker: int, broker_epoch: int, tp: Any, proposed: Any) -> None:
            live = self.ctx.live_broker_ids()
            if self.ctx.live_broker_epochs.get(broker) == broker_epoch and any(
                r not in live for r in proposed.isr
            ):
                self.logger.info(f"Rejecting AlterIsr for {tp}: ISR contains ineligible replicas")
                return
            original(self, broker, broker_epoch, tp, proposed)

        return process_alter_isr

    return (Patch(_modules()["controller"].KafkaController, "process_alter_isr", make),)


def _kip_460_retry() -> tuple[Patch, ...]:
    def make(_original: Any) -> Any:
        def elect_leader_for_partitions(self: Any, partitions: list[Any], election: Any) -> Any:
            finished_elections: dict[Any, Any] = {}
            remaining = partitions
            kafka_throwable = _errors().KafkaThrowable
            online = _modules()["psm"].P.OnlinePartition
            while remaining:
                finished, remaining = self._do_elect_leader_for_partitions(partitions, election)  # the bug
                for tp, result in finished.items():
                    if isinstance(result, kafka_throwable):
                        self._fail(tp, self.ctx.partition_state(tp), online, self._reason(result), result)
                finished_elections.update(finished)
            return finished_elections

        return elect_leader_for_partitions

    return (Patch(_modules()["psm"].ZkPartitionStateMachine, "_elect_leader_for_partitions", make),)


def _errors() -> Any:
    import kcspec.reference_impl.errors as errors

    return errors


# ------------------------------------------------------------------------------------------ §12.2 replica machine, failover


def _kafka_6650() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            self.offline_without_leadership = False  # §4.3 step 5 is gone

        return init

    return (Patch(_modules()["rsm"].ZkReplicaStateMachine, "__init__", make),)


def _kafka_8237() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        before_fix = _modules()["version"].KAFKA_2_2

        def replica_state_cases(version: Any) -> Any:
            return original(before_fix)

        return replica_state_cases

    return (Patch(_modules()["states"], "replica_state_cases", make),)


def _kafka_6082() -> tuple[Patch, ...]:
    def make(_original: Any) -> Any:
        def check_controller_epoch(self: Any, expected_zk_version: int) -> None:
            return None  # no CheckOp on /controller_epoch

        return check_controller_epoch

    return (Patch(_modules()["zookeeper"].SimulatedZooKeeper, "check_controller_epoch", make),)


def _kafka_5310() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def incarnation(self: Any, controller_id: int, ctx: object = None) -> Any:
            new = original(self, controller_id, ctx)
            previous = getattr(self, "kc", None)
            if ctx is None and previous is not None:  # the reassignment context survives resignation
                new.ctx.partitions_being_reassigned.update(previous.ctx.partitions_being_reassigned)
                new.ctx.legacy_reassignments.update(previous.ctx.legacy_reassignments)
            return new

        return incarnation

    return (Patch(_modules()["reference"].ReferenceController, "_incarnation", make),)


def _kafka_13225(
    condition: Callable[[list[Any], dict[int, list[Any]], dict[Any, Any]], bool],
) -> Callable[[], tuple[Patch, ...]]:
    """``onReplicasBecomeOffline`` (§7.4) with a different condition for the step-7 broker-list UMR."""

    def build() -> tuple[Patch, ...]:
        mods = _modules()
        kafka_throwable = _errors().KafkaThrowable
        controller = mods["controller"]

        def make(_original: Any) -> Any:
            def on_replicas_become_offline(self: Any, replicas: dict[int, list[Any]]) -> None:
                for_deletion: list[Any] = []
                keep: dict[int, list[Any]] = {}
                for b, tps in replicas.items():
                    for tp in tps:
                        if self.deletion.is_topic_queued_up_for_deletion(tp.topic):
                            for_deletion.append(controller.PartitionReplica(tp, b))
                        else:
                            keep.setdefault(b, []).append(tp)
                offline_leader = self.ctx.partitions_with_offline_leader()
                self.partition_sm.handle_state_changes(offline_leader, controller.P.OfflinePartition)
                results = self.partition_sm.trigger_online_partition_state_change()
                self.replica_sm.handle_state_changes(keep, controller.R.OfflineReplica)
                if for_deletion:
                    self.deletion.fail_replica_deletion(for_deletion)
                failed = {tp: isinstance(r, kafka_throwable) for tp, r in results.items()}
                if condition(offline_leader, keep, failed):
                    self.send_update_metadata(self._brokers(), [])

            return on_replicas_become_offline

        return (Patch(controller.KafkaController, "on_replicas_become_offline", make),)

    return build


def _umr_as_fixed_in_3_1(_offline: list[Any], keep: dict[int, list[Any]], failed: dict[Any, bool]) -> bool:
    return not keep and all(failed.values())


def _umr_never(_offline: list[Any], _keep: dict[int, list[Any]], _failed: dict[Any, bool]) -> bool:
    return False


# ------------------------------------------------------------------------------------------ §12.3 reassignment


def _kafka_1097() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def update_leader_epoch(self: Any, tp: Any) -> Any:
            cached = self.ctx.leadership.get(tp)
            return original(self, tp) if cached is None else cached  # no epoch bump, nothing written

        return update_leader_epoch

    return (Patch(_modules()["reassignment"].Reassignment, "update_leader_epoch", make),)


def _kafka_9212() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def update_leader_epoch(self: Any, tp: Any) -> Any:
            cached = self.ctx.leadership.get(tp)
            written = original(self, tp)
            if cached is not None:
                self.ctx.put_leadership(tp, cached)  # ZooKeeper has the bump, the cache does not
            return written

        return update_leader_epoch

    return (Patch(_modules()["reassignment"].Reassignment, "update_leader_epoch", make),)


def _kafka_10314() -> tuple[Patch, ...]:
    return (
        Patch(
            _modules()["reassignment"].Reassignment,
            "_update_leader_epoch_and_send_request",
            as_version("KAFKA_2_6"),
        ),
    )


def _hazard_b9() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def on_partition_reassignment(self: Any, tp: Any, fa_new: Any) -> None:
            deletion = self.deletion
            resume = deletion.resume_deletion_for_topics

            def guarded(topics: Any) -> None:
                still = {p.topic for p in self.ctx.partitions_being_reassigned}
                resume([t for t in topics if t not in still])

            deletion.resume_deletion_for_topics = guarded
            try:
                original(self, tp, fa_new)
            finally:
                del deletion.resume_deletion_for_topics

        return on_partition_reassignment

    return (Patch(_modules()["reassignment"].Reassignment, "on_partition_reassignment", make),)


# ------------------------------------------------------------------------------------------ §12.4 deletion, metadata


def _kafka_6612() -> tuple[Patch, ...]:
    return (
        Patch(
            _modules()["controller"].KafkaController,
            "process_partition_modifications",
            as_version("KAFKA_1_1"),
        ),
    )


def _kafka_9946() -> tuple[Patch, ...]:
    def make(original: Any) -> Any:
        def stop_replica_response_callback(
            self: Any, broker: int, delete_partition: Any, error: bool
        ) -> None:
            # the bug: every partition of the response counts, whatever its request's deletePartition flag
            original(self, broker, dict.fromkeys(delete_partition, True), error)

        return stop_replica_response_callback

    return (Patch(_modules()["controller"].KafkaController, "stop_replica_response_callback", make),)


def _kafka_13572() -> tuple[Patch, ...]:
    def make(_original: Any) -> Any:
        def queue_topic_deletion(self: Any, topics: Any) -> None:
            # 2.8.2: no difference with the topics already queued, so a queued topic is cleaned again
            given = set(topics)
            self.topics_to_be_deleted.update(given)
            for topic in sorted(given):
                self._clean_preferred_replica_imbalance(topic)

        return queue_topic_deletion

    return (Patch(_modules()["context"].ControllerContext, "queue_topic_deletion", make),)


HISTORICAL: tuple[Mutant, ...] = (
    Mutant(
        "kafka-1503",
        "historical",
        P28,
        "KAFKA-1503",
        "0.8.2.0",
        "Offline election picks the first live ISR member in ISR order, not the first live ISR member in "
        "assignment order, so leadership piles up on one broker after failures",
        "elections.offline_partition_leader_election replaced by one that iterates the ISR",
        ("§6", "§12.1"),
        _kafka_1503,
    ),
    Mutant(
        "kafka-1503-legacy",
        "historical",
        P11,
        "KAFKA-1503",
        "0.8.2.0",
        "as kafka-1503, in the 1.1 controller (the fix predates 1.1)",
        "elections.offline_partition_leader_election replaced by one that iterates the ISR",
        ("§6", "§12.1"),
        _kafka_1503,
    ),
    Mutant(
        "kafka-7482",
        "historical",
        P28,
        "KAFKA-7482",
        "2.2.0 (2.1.1)",
        "controlled-shutdown LeaderAndIsr recipients exclude shutting-down brokers, so the old leader never "
        "learns it is a follower",
        "elections.leader_for_controlled_shutdown called as Kafka 2.1 (includeShuttingDownBrokers = false)",
        ("§6", "§7.10", "§12.1"),
        _kafka_7482,
    ),
    Mutant(
        "kafka-9866",
        "historical",
        P28,
        "KAFKA-9866",
        "2.6.0",
        "auto-rebalance elects the preferred replica when it is alive but not yet back in the ISR (failing "
        "elections, log storms)",
        "KafkaController._can_preferred_replica_be_leader without the ISR condition",
        ("§7.9", "§12.1"),
        _kafka_9866,
    ),
    Mutant(
        "kafka-14140-fix",
        "historical",
        P28,
        "KAFKA-14140",
        "3.3.0",
        "the 3.3 fix back-ported into 2.8: AlterIsr proposals with a replica that is not live are rejected "
        "(2.8.2 writes them)",
        "KafkaController.process_alter_isr wrapped: returns before the write when the ISR names a non-live broker",
        ("§7.11", "§12.1"),
        _kafka_14140_fix,
    ),
    Mutant(
        "kip-460-election-retry",
        "historical",
        P28,
        "KIP-460 (1.1 retry bug)",
        "2.4.0",
        "after a BADVERSION the election loop retries the original full partition list, re-electing "
        "partitions that already succeeded (another epoch bump and LeaderAndIsr)",
        "ZkPartitionStateMachine._elect_leader_for_partitions re-implemented with the 1.1 retry loop",
        ("§5.2", "§3.3"),
        _kip_460_retry,
    ),
    Mutant(
        "kafka-6650",
        "historical",
        P28,
        "KAFKA-6650",
        "2.0.0",
        "OfflineReplica skips replicas of partitions without leadership info (e.g. partially deleted topics); "
        "they never leave their state and deletion hangs",
        "ZkReplicaStateMachine.__init__ wrapped: offline_without_leadership = False (§4.3 step 5 removed)",
        ("§4.3", "§12.2"),
        _kafka_6650,
    ),
    Mutant(
        "kafka-8237",
        "historical",
        P28,
        "KAFKA-8237",
        "2.3.0",
        "ReplicaDeletionIneligible accepts only ReplicaDeletionStarted: dead replicas cannot be marked failed "
        "directly during topic deletion",
        "states.replica_state_cases answers as Kafka 2.2 (the 1.1 valid-previous set)",
        ("§2.1", "§8", "§12.2"),
        _kafka_8237,
    ),
    Mutant(
        "kafka-6082",
        "historical",
        P28,
        "KAFKA-6082",
        "2.1.0",
        "a deposed (zombie) controller still writes partition state to ZooKeeper: no CheckOp on the "
        "/controller_epoch version",
        "SimulatedZooKeeper.check_controller_epoch made a no-op",
        ("§3.3", "§9", "§12.2"),
        _kafka_6082,
    ),
    Mutant(
        "kafka-5310",
        "historical",
        P28,
        "KAFKA-5310",
        "0.11.0.0",
        "the reassignment context is not reset on resignation; a controller that regains leadership "
        "re-applies an abandoned reassignment",
        "ReferenceController._incarnation carries partitions_being_reassigned / legacy_reassignments into the "
        "next incarnation",
        ("§7.12", "§12.2"),
        _kafka_5310,
    ),
    Mutant(
        "kafka-5310-legacy",
        "historical",
        P11,
        "KAFKA-5310",
        "0.11.0.0",
        "as kafka-5310, in the 1.1 controller (legacy reassignment map)",
        "ReferenceController._incarnation carries the reassignment maps into the next incarnation",
        ("§7.12", "§12.2"),
        _kafka_5310,
    ),
    Mutant(
        "kafka-1097",
        "historical",
        P28,
        "KAFKA-1097",
        "0.8.1",
        "reassignment sends LeaderAndIsr with the new assignment without bumping the leader epoch, so "
        "brokers keep acting on the old epoch (a leader can re-add removed replicas)",
        "Reassignment.update_leader_epoch returns the cached record: no +1, no ZooKeeper write",
        ("§7.7", "§12.3"),
        _kafka_1097,
    ),
    Mutant(
        "kafka-1097-legacy",
        "historical",
        P11,
        "KAFKA-1097",
        "0.8.1",
        "as kafka-1097, in the 1.1 12-step reassignment (steps 2 and 7)",
        "Reassignment.update_leader_epoch returns the cached record: no +1, no ZooKeeper write",
        ("§7.8", "§12.3"),
        _kafka_1097,
    ),
    Mutant(
        "kafka-9212",
        "historical",
        P28,
        "KAFKA-9212",
        "2.5.0",
        "the reassignment leader-epoch bump is written to ZooKeeper but not to the controller cache, so "
        "UpdateMetadata carries a stale leader epoch",
        "Reassignment.update_leader_epoch wrapped: the cached leadership is put back after the write",
        ("§7.7", "§12.3"),
        _kafka_9212,
    ),
    Mutant(
        "kafka-10314",
        "historical",
        P28,
        "KAFKA-10314",
        "2.7.0",
        "reassignment LeaderAndIsr goes to adding replicas with isNew=false (one LAIR to all replicas), so a "
        "broker with an offline log dir will not create the replica elsewhere",
        "Reassignment._update_leader_epoch_and_send_request run as Kafka 2.6",
        ("§7.7", "§12.3"),
        _kafka_10314,
    ),
    Mutant(
        "kafka-6612",
        "historical",
        P28,
        "KAFKA-6612",
        "2.0.0",
        "partitions added to a topic queued for deletion stay in ZooKeeper (leak) instead of the topic's "
        "assignment being restored",
        "KafkaController.process_partition_modifications run as Kafka 1.1",
        ("§7.6", "§12.4"),
        _kafka_6612,
    ),
    Mutant(
        "kafka-13225-fix",
        "historical",
        P28,
        "KAFKA-13225",
        "3.1.0",
        "the 3.1 fix back-ported into 2.8: the broker-list UpdateMetadata after a failure is sent iff no "
        "replica went offline outside deletion and every election failed (2.8.2: iff no partition had an "
        "offline leader)",
        "KafkaController.on_replicas_become_offline re-implemented with the 3.1 step-7 condition",
        ("§7.4", "§12.4"),
        _kafka_13225(_umr_as_fixed_in_3_1),
    ),
    Mutant(
        "kafka-13225-no-umr",
        "historical",
        P28,
        "KAFKA-13225",
        "3.1.0",
        "a stronger form of the bug: the broker-list UpdateMetadata of onReplicasBecomeOffline is never "
        "sent, so surviving brokers keep a dead broker in their metadata",
        "KafkaController.on_replicas_become_offline re-implemented without step 7",
        ("§7.4", "§12.4"),
        _kafka_13225(_umr_never),
    ),
    Mutant(
        "kafka-9946",
        "historical",
        P28,
        "KAFKA-9946",
        "2.6.0",
        "a StopReplica response counts as a deletion result whatever the request asked: the response to a "
        "retry's StopReplica(delete=false) completes the replica's deletion before the broker deleted anything",
        "KafkaController.stop_replica_response_callback wrapped: every partition is passed as deletePartition=true",
        ("§3.4", "§8"),
        _kafka_9946,
    ),
    Mutant(
        "kafka-13572",
        "historical",
        P28,
        "KAFKA-13572",
        "3.3.0",
        "Kafka 2.8.2's own code, before the 3.3 fix the reference controller keeps: every TopicDeletion event "
        "re-queues the topics already queued and cleans their imbalance again, so PreferredReplicaImbalanceCount "
        "is decremented twice for a queued partition whose leader is not its preferred replica (and can go "
        "negative)",
        "ControllerContext.queue_topic_deletion replaced by one that cleans every given topic",
        ("§3.1", "§8", "§12.4"),
        _kafka_13572,
    ),
    Mutant(
        "hazard-i15-b9",
        "hazard",
        P28,
        "— (I15 hazard, no ticket)",
        "not fixed",
        "the I15 hazard fixed: completing one partition's reassignment no longer clears the topic's deletion "
        "ineligibility while other partitions of the topic are still being reassigned (Kafka does clear it)",
        "Reassignment.on_partition_reassignment wrapped: its resumeDeletionForTopics skips topics with "
        "partitions still being reassigned",
        ("§7.7", "§8", "§11 I15"),
        _hazard_b9,
    ),
)

HISTORICAL_BY_NAME = {m.name: m for m in HISTORICAL}
