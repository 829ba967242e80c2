"""Semantics profiles: ``kafka-2.8`` (default) and ``kafka-1.1``, each a table set plus named behaviour flags.

Every **[1.1]** difference of the semantics document that changes controller behaviour is one flag
below, with the section (and ticket) it comes from. The spec's rules are built per profile and read
these flags while the spec is being built; the reference controller has its own, independent,
version checks (DESIGN.md rule 2) and must not import this module.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from kcspec.spec import tables
from kcspec.spec.vocabulary import PartitionState, ReplicaState


@dataclass(frozen=True)
class Profile:
    name: str
    kafka_version: str
    replica_valid_previous: dict[ReplicaState, tuple[ReplicaState, ...]]
    partition_valid_previous: dict[PartitionState, tuple[PartitionState, ...]]
    # --- behaviour flags (True = the 2.8.2 behaviour) -------------------------------------------------
    zk_write_fencing: bool
    """§3.3, §9, KAFKA-6082: every controller ZK write is a multi with a CheckOp on /controller_epoch."""
    controller_moved_rethrown: bool
    """§2.3 step 7: ControllerMovedException is rethrown by the state machines (1.1 swallows every Throwable)."""
    offline_replica_without_leadership: bool
    """§4.3 step 5, KAFKA-6650/KAFKA-3143: replicas of partitions without leadership go OfflineReplica (+UMR)."""
    startup_offlines_dead_replicas: bool
    """§4.8 step 3, KAFKA-3143: replica-machine startup moves dead replicas to OfflineReplica."""
    offline_replica_state_change_line: bool
    """§4.3 step 4, §10.4: INFO "Partition … state changed to … after removing replica …" (absent in 1.1)."""
    umr_empty_means_no_partitions: bool
    """§3.4: an empty partition set in addUpdateMetadataRequestForBrokers means "broker list only" (1.1: all)."""
    umr_carries_deleting_partitions: bool
    """§3.4 [1.1]: every UMR additionally carries every partition of every topic queued for deletion."""
    controlled_shutdown_recipients_include_shutting_down: bool
    """§6, KAFKA-7482: the ControlledShutdown strategy's LAIR goes to the shutting-down broker too."""
    controlled_shutdown_epoch_and_deletion_checks: bool
    """§7.10, KAFKA-7235/KAFKA-6753: stale broker epoch rejected; topics queued for deletion skipped."""
    election_retry_remaining_only: bool
    """§5.2b [1.1 bug]: on BADVERSION 1.1 re-elects the *original full list*, bumping epochs again."""
    kip455_reassignment: bool
    """§7.7 (KIP-455, adding/removing replicas) vs §7.8 (legacy 12-step OAR/RAR algorithm)."""
    bounce_detection: bool
    """§7.2, KAFKA-7235: a re-registered broker with a larger epoch is handled as failure + startup."""
    partition_expansion_restore: bool
    """§7.6, KAFKA-6612: partitions added to a topic under deletion are reverted in ZK."""
    preferred_already_led_filter: bool
    """§7.9: partitions already led by their preferred replica are not re-elected (1.1 re-elects them)."""
    unclean_config_retrigger: bool
    """§6: enabling unclean.leader.election.enable re-triggers offline elections (KAFKA-6526/6835)."""
    auto_rebalance_isr_check: bool
    """§7.9, KAFKA-9866: auto rebalance only elects where the preferred replica is online and in the ISR."""
    deletion_started_bookkeeping: bool
    """§8: partitions go Offline → NonExistentPartition at onTopicDeletion (1.1: at completeDeleteTopic)."""
    broker_startup_umr_split: bool
    """§7.3 step 2, KAFKA-7537: broker-list UMR to existing brokers, full UMR to new brokers only."""
    alter_isr: bool
    """§7.11: the controller has AlterIsr (2.7+, KIP-497): ISR changes arrive as AlterIsr when the cluster's
    ``inter_broker_protocol`` is ≥ 2.7-IV2, as ZK notifications below (``isr.alter_isr_enabled``). 1.1: always ZK
    notifications, whatever the setting."""
    stop_replica_leader_epoch: bool
    """§3.4, KIP-570 (2.6+): StopReplica partitions carry a leader epoch (−2 while the topic is queued for deletion,
    else the cached epoch, else −1). 1.1 has no such field; the spec sends −1."""
    broker_failure_umr_only_without_offline_leaders: bool
    """§7.4 step 7 (KAFKA-13225 present in 2.8.2): the broker-list UMR is sent only when P_off = ∅. 1.1: same
    condition, but the UMR carries all partitions."""
    topic_deletion_batched: bool
    """§8 resumeDeletions: 2.8 classifies every queued topic, then retries all retry candidates in one
    OfflineReplica call and starts all eligible topics in one onTopicDeletion call; 1.1 handles topic by topic
    (markTopicForDeletionRetry(t), then onTopicDeletion({t}))."""
    auto_rebalance_batched: bool
    """§7.9, KAFKA-7299: the auto rebalance elects the candidates of one preferred broker in one call (1.1: one
    onPreferredReplicaElection call per partition)."""
    topic_ids: bool
    """KIP-516 (2.8): topics have IDs — in the topic znode, in ``controllerContext.topicIds``, in LeaderAndIsr and
    UpdateMetadata — as the cluster's ``inter_broker_protocol`` allows (1.1: no topic IDs, whatever the setting)."""
    feature_versioning: bool
    """§7.1 step 1, KIP-584 (2.7+): failover sets up the ``/feature`` znode (``maybeSetupFeatureVersioning``:
    ``enableFeatureVersioning`` with IBP ≥ 2.7-IV0, else ``disableFeatureVersioning``). 1.1 predates KIP-584: no
    ``/feature``."""
    kip460_replica_election: bool
    """§7.9 (KIP-460): the ReplicaLeaderElection handler — admin-triggered preferred/unclean elections exist, unknown
    partitions are skipped, partitions already led as wanted get no election. 1.1's PreferredReplicaLeaderElection
    only skips topics queued for deletion and dereferences LI/AR of every listed partition afterwards."""
    incremental_metrics: bool
    """§3.1, KAFKA-10040 (2.6): ``offlinePartitionCount`` counts partitions in OfflinePartition (``putPartitionState``
    bookkeeping, topics with deletion started left out) and ``preferredReplicaImbalanceCount`` honours an adding
    preferred replica, both kept by ``ControllerContext``. 1.1 recomputes both after every event
    (``KafkaController.updateMetrics``): offline = cached leader not live-or-shutting-down, partition state ignored."""

    def flags(self) -> dict[str, bool]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.type in ("bool", bool)}


KAFKA_2_8 = Profile(
    name="kafka-2.8",
    kafka_version="2.8.2",
    replica_valid_previous=tables.REPLICA_VALID_PREVIOUS_2_8,
    partition_valid_previous=tables.PARTITION_VALID_PREVIOUS,
    zk_write_fencing=True,
    controller_moved_rethrown=True,
    offline_replica_without_leadership=True,
    startup_offlines_dead_replicas=True,
    offline_replica_state_change_line=True,
    umr_empty_means_no_partitions=True,
    umr_carries_deleting_partitions=False,
    controlled_shutdown_recipients_include_shutting_down=True,
    controlled_shutdown_epoch_and_deletion_checks=True,
    election_retry_remaining_only=True,
    kip455_reassignment=True,
    bounce_detection=True,
    partition_expansion_restore=True,
    preferred_already_led_filter=True,
    unclean_config_retrigger=True,
    auto_rebalance_isr_check=True,
    deletion_started_bookkeeping=True,
    broker_startup_umr_split=True,
    alter_isr=True,
    stop_replica_leader_epoch=True,
    broker_failure_umr_only_without_offline_leaders=True,
    topic_deletion_batched=True,
    auto_rebalance_batched=True,
    topic_ids=True,
    feature_versioning=True,
    kip460_replica_election=True,
    incremental_metrics=True,
)

KAFKA_1_1 = Profile(
    name="kafka-1.1",
    kafka_version="1.1.1",
    replica_valid_previous=tables.REPLICA_VALID_PREVIOUS_1_1,
    partition_valid_previous=tables.PARTITION_VALID_PREVIOUS,
    zk_write_fencing=False,
    controller_moved_rethrown=False,
    offline_replica_without_leadership=False,
    startup_offlines_dead_replicas=False,
    offline_replica_state_change_line=False,
    umr_empty_means_no_partitions=False,
    umr_carries_deleting_partitions=True,
    controlled_shutdown_recipients_include_shutting_down=False,
    controlled_shutdown_epoch_and_deletion_checks=False,
    election_retry_remaining_only=False,
    kip455_reassignment=False,
    bounce_detection=False,
    partition_expansion_restore=False,
    preferred_already_led_filter=False,
    unclean_config_retrigger=False,
    auto_rebalance_isr_check=False,
    deletion_started_bookkeeping=False,
    broker_startup_umr_split=False,
    alter_isr=False,
    stop_replica_leader_epoch=False,
    broker_failure_umr_only_without_offline_leaders=True,
    topic_deletion_batched=False,
    auto_rebalance_batched=False,
    topic_ids=False,
    feature_versioning=False,
    kip460_replica_election=False,
    incremental_metrics=False,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (KAFKA_2_8, KAFKA_1_1)}
DEFAULT_PROFILE = KAFKA_2_8.name


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ``KeyError`` with the known names otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; known profiles: {', '.join(PROFILES)}") from None


def differences() -> list[tuple[str, str, bool, bool]]:
    """(flag, doc, kafka-2.8 value, kafka-1.1 value) for every flag on which the profiles differ."""
    out = []
    for f in fields(Profile):
        if f.type not in ("bool", bool):
            continue
        a, b = getattr(KAFKA_2_8, f.name), getattr(KAFKA_1_1, f.name)
        if a != b:
            out.append((f.name, _flag_doc(f.name), a, b))
    return out


def _flag_doc(name: str) -> str:
    import ast
    import inspect

    src = inspect.getsource(Profile)
    tree = ast.parse(src)
    body = tree.body[0].body  # type: ignore[attr-defined]
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == name and i + 1 < len(body):
            nxt = body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                return str(nxt.value.value)
    return ""
