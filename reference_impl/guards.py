"""The guard of every event: can it happen in this state? (docs/contracts.md, environment semantics table.)

Written independently of the spec's actions from the table's "guard" column, and evaluated on the mutable
simulated ZooKeeper and context (no snapshot is built). "Active" means a controller is active
(``controller_id != -1``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.version import KAFKA_2_4, KafkaVersion, is_alter_isr_enabled
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.events import (
    ApiPartitionReassignment,
    AutoPreferredReplicaLeaderElection,
    BrokerBounce,
    BrokerChange,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerChange,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrPartitionResultsReceived,
    LeaderAndIsrResponseReceived,
    LogDirEventNotification,
    NewerControllerElected,
    PartitionExpansion,
    ReplicaLeaderElection,
    StaleAlterIsrReceived,
    StopReplicaPartitionErrorsReceived,
    StopReplicaResponseReceived,
    StopReplicaResponseWithoutDeletionReceived,
    TopicCreation,
    TopicDeletion,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.vocabulary import (
    ClusterConfig,
    ElectionTrigger,
    ElectionType,
    ReplicaState,
    TopicPartition,
    ZkFault,
)


def _valid_replica_lists(replicas: tuple[tuple[int, ...], ...]) -> bool:
    """Each list non-empty, distinct, ids ≥ 0."""
    return all(r and len(set(r)) == len(r) and all(b >= 0 for b in r) for r in replicas)


def _expansion_enabled(zk: SimulatedZooKeeper, event: PartitionExpansion) -> bool:
    n = len(zk.partitions_by_topic.get(event.topic, ()))
    if n < 1 or len(event.replicas) <= n:
        return False
    for i in range(n):
        fa = zk.assignments.get(TopicPartition(event.topic, i))
        if fa is None or fa.replicas != event.replicas[i]:
            return False
    return _valid_replica_lists(event.replicas[n:])


def _isr_change_enabled(zk: SimulatedZooKeeper, event: IsrChange) -> bool:
    stored = zk.partition_states.get(event.tp)
    if stored is None:
        return False
    leader = stored.leader_and_isr.leader
    isr = event.isr
    assigned = zk.assignments.get(event.tp)
    if assigned is None or not set(isr) <= set(assigned.replicas):
        return False  # followers are assigned replicas: a leader never proposes anyone else (§7.11, §3.2)
    return (
        leader >= 0 and leader in zk.brokers and leader in isr and len(set(isr)) == len(isr) and min(isr) >= 0
    )


def _stale_alter_isr_enabled(zk: SimulatedZooKeeper, event: StaleAlterIsrReceived) -> bool:
    """An AlterIsr from a registered broker, in its ISR of assigned replicas, with no value newer than ZooKeeper's:
    an older version of the state znode, or the current record with an older broker epoch."""
    stored = zk.partition_states.get(event.tp)
    assigned = zk.assignments.get(event.tp)
    registered = zk.brokers.get(event.broker_id)
    if stored is None or assigned is None or registered is None:
        return False
    current = stored.leader_and_isr
    isr = event.isr
    if event.broker_id not in isr or len(set(isr)) != len(isr) or not set(isr) <= set(assigned.replicas):
        return False
    values = (
        (event.broker_epoch, registered),
        (event.leader_epoch, current.leader_epoch),
        (event.zk_version, current.zk_version),
    )
    if not all(0 <= sent <= now for sent, now in values):
        return False
    if event.zk_version < current.zk_version:
        return True
    # the current zk version names the current record, so only the broker epoch can be old
    return event.leader_epoch == current.leader_epoch and event.broker_epoch < registered


def _broker_change_enabled(zk: SimulatedZooKeeper, ctx: ControllerContext, event: BrokerChange) -> bool:
    """Several brokers at once (one is a single-broker event), each list sorted without repeats, no broker in two
    lists; new ones unregistered, dead and bounced ones registered and not the active controller."""
    groups = (event.new_broker_ids, event.dead_broker_ids, event.bounced_broker_ids)
    if any(list(g) != sorted(set(g)) for g in groups):
        return False
    everyone = [b for g in groups for b in g]
    if len(everyone) < 2 or len(set(everyone)) != len(everyone):
        return False
    if not all(b >= 0 and b not in zk.brokers for b in event.new_broker_ids):
        return False
    if ctx.partitions_being_reassigned or ctx.legacy_reassignments:
        return False  # out of the model: an exception in onBrokerStartup would skip the later groups
    leaving = (*event.dead_broker_ids, *event.bounced_broker_ids)
    return all(b in zk.brokers and b != ctx.controller_id for b in leaving)


_Guard = Callable[[SimulatedZooKeeper, ControllerContext, ClusterConfig, Any, KafkaVersion, bool, bool], bool]
"""A guard: ZooKeeper, context, config, the event, the version, whether a controller is active, whether 2.4+."""


def _controller_failover(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControllerFailover,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.broker_id in zk.brokers


def _controller_resignation(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControllerResignation,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active


def _newer_controller_elected(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: NewerControllerElected,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and event.broker_id in zk.brokers and event.broker_id != ctx.controller_id


def _controller_change(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControllerChange,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and zk.controller != ctx.controller_id


def _zombie_controller_write(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ZombieControllerWrite,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.tp in zk.partition_states and 1 <= event.controller_epoch < zk.controller_epoch


def _broker_startup(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: BrokerStartup,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.broker_id >= 0 and event.broker_id not in zk.brokers


def _broker_failure(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: BrokerFailure,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.broker_id in zk.brokers


def _broker_bounce(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: BrokerBounce,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.broker_id in zk.brokers and event.broker_id != ctx.controller_id


def _controlled_shutdown(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControlledShutdown,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and event.broker_id in zk.brokers


def _topic_creation(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: TopicCreation,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return event.topic not in zk.topics and bool(event.replicas) and _valid_replica_lists(event.replicas)


def _partition_expansion(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: PartitionExpansion,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return _expansion_enabled(zk, event)


def _topic_deletion(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: TopicDeletion,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return bool(event.topics)


def _all_being_deleted(ctx: ControllerContext, broker: int, partitions: Collection[TopicPartition]) -> bool:
    """Some partitions, each with its replica on ``broker`` in ReplicaDeletionStarted: what a StopReplica response
    (with or without errors) is about."""
    replicas = ctx.replica_states.get(broker, {})
    return bool(partitions) and all(
        ctx.replica_state(broker, tp) is ReplicaState.ReplicaDeletionStarted and tp in replicas
        for tp in partitions
    )


def _stop_replica_response_received(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: StopReplicaResponseReceived | StopReplicaResponseWithoutDeletionReceived,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and _all_being_deleted(ctx, event.broker_id, event.partitions)


def _api_partition_reassignment(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ApiPartitionReassignment,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return modern and active and bool(event.targets)


def _zk_partition_reassignment(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ZkPartitionReassignment,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return bool(event.targets) and not zk.reassign_partitions


def _replica_leader_election(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ReplicaLeaderElection,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    if not (active and event.partitions):
        return False
    if event.trigger is ElectionTrigger.ZkTriggered:
        return event.election_type is ElectionType.PREFERRED and not zk.preferred_replica_election
    return event.trigger is ElectionTrigger.AdminClientTriggered and modern


def _auto_preferred_replica_leader_election(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: AutoPreferredReplicaLeaderElection,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and config.auto_leader_rebalance_enable


def _isr_change(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: IsrChange,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return _isr_change_enabled(zk, event)


def _leader_and_isr_response_received(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: LeaderAndIsrResponseReceived,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return (
        active
        and event.broker_id in ctx.live_broker_epochs
        and bool(event.storage_errors)
        and all(event.broker_id in ctx.replicas(tp) for tp in event.storage_errors)
    )


def _unclean_leader_election_enable(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: UncleanLeaderElectionEnable,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return True


def _zk_fault_injection(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ZkFaultInjection,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    if event.tp in zk.faults:
        return False
    # a CONNECTIONLOSS may also wait on the path of a state znode still to be created (its create throws)
    return event.tp in zk.partition_states or (
        event.tp in zk.assignments and event.fault is ZkFault.CONNECTIONLOSS
    )


def _stale_alter_isr_received(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: StaleAlterIsrReceived,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    # brokers send AlterIsr only when the IBP enables it (else they write ZooKeeper, IsrChange)
    return active and is_alter_isr_enabled(version, config) and _stale_alter_isr_enabled(zk, event)


def _stop_replica_partition_errors_received(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: StopReplicaPartitionErrorsReceived,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    # a response with some partitions in error and the others not (all in error is StopReplicaResponseReceived)
    return (
        active
        and _all_being_deleted(ctx, event.broker_id, event.partitions)
        and bool(event.partition_errors)
        and set(event.partition_errors) < set(event.partitions)
    )


def _leader_and_isr_partition_results_received(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: LeaderAndIsrPartitionResultsReceived,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return (
        active
        and event.broker_id in ctx.live_broker_epochs
        and bool(event.online)
        and not set(event.online) & set(event.storage_errors)
        and all(event.broker_id in ctx.replicas(tp) for tp in (*event.online, *event.storage_errors))
    )


def _broker_change(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: BrokerChange,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return _broker_change_enabled(zk, ctx, event)


def _log_dir_event_notification(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: LogDirEventNotification,
    version: KafkaVersion,
    active: bool,
    modern: bool,
) -> bool:
    return active and bool(event.broker_ids) and all(b in ctx.live_broker_epochs for b in event.broker_ids)


_GUARDS: dict[type[ControllerEvent], _Guard] = {
    ControllerFailover: _controller_failover,
    ControllerResignation: _controller_resignation,
    NewerControllerElected: _newer_controller_elected,
    ControllerChange: _controller_change,
    ZombieControllerWrite: _zombie_controller_write,
    BrokerStartup: _broker_startup,
    BrokerFailure: _broker_failure,
    BrokerBounce: _broker_bounce,
    ControlledShutdown: _controlled_shutdown,
    TopicCreation: _topic_creation,
    PartitionExpansion: _partition_expansion,
    TopicDeletion: _topic_deletion,
    StopReplicaResponseReceived: _stop_replica_response_received,
    ApiPartitionReassignment: _api_partition_reassignment,
    ZkPartitionReassignment: _zk_partition_reassignment,
    ReplicaLeaderElection: _replica_leader_election,
    AutoPreferredReplicaLeaderElection: _auto_preferred_replica_leader_election,
    IsrChange: _isr_change,
    LeaderAndIsrResponseReceived: _leader_and_isr_response_received,
    UncleanLeaderElectionEnable: _unclean_leader_election_enable,
    ZkFaultInjection: _zk_fault_injection,
    StaleAlterIsrReceived: _stale_alter_isr_received,
    StopReplicaPartitionErrorsReceived: _stop_replica_partition_errors_received,
    LeaderAndIsrPartitionResultsReceived: _leader_and_isr_partition_results_received,
    BrokerChange: _broker_change,
    LogDirEventNotification: _log_dir_event_notification,
    # the response to a StopReplica(delete=false) sent to replicas that are now being deleted (§3.4, §8)
    StopReplicaResponseWithoutDeletionReceived: _stop_replica_response_received,
}
"""The guard of each event type, in the order they were once tested one by one with ``isinstance``."""


def event_enabled(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControllerEvent,
    version: KafkaVersion,
) -> bool:
    """The guard of ``event``'s type: found by the event's exact type in ``_GUARDS`` (not a chain of ``isinstance``
    tests, for speed; a subclass's by ``isinstance`` in the table's order); ``False`` for an event of no known
    type."""
    guard = _GUARDS.get(type(event))
    if guard is None:
        for kind, candidate in _GUARDS.items():
            if isinstance(event, kind):
                guard = candidate
                break
        else:
            return False
    return guard(zk, ctx, config, event, version, ctx.controller_id != -1, version >= KAFKA_2_4)
