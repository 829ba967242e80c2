"""The guard of every event: can it happen in this state? (ARCHITECTURE.md, environment semantics table.)

Written independently of the spec's actions from the table's "guard" column, and evaluated on the mutable
simulated ZooKeeper and context (no snapshot is built). "Active" means a controller is active
(``controller_id != -1``).
"""

from __future__ import annotations

from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.version import KAFKA_2_4, KAFKA_2_7, KafkaVersion
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
    TopicCreation,
    TopicDeletion,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.vocabulary import ClusterConfig, ElectionTrigger, ElectionType, ReplicaState, TopicPartition


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


def event_enabled(
    zk: SimulatedZooKeeper,
    ctx: ControllerContext,
    config: ClusterConfig,
    event: ControllerEvent,
    version: KafkaVersion,
) -> bool:
    active = ctx.controller_id != -1
    modern = version >= KAFKA_2_4
    if isinstance(event, ControllerFailover):
        return event.broker_id in zk.brokers
    if isinstance(event, ControllerResignation):
        return active
    if isinstance(event, NewerControllerElected):
        return active and event.broker_id in zk.brokers and event.broker_id != ctx.controller_id
    if isinstance(event, ControllerChange):
        return active and zk.controller != ctx.controller_id
    if isinstance(event, ZombieControllerWrite):
        return event.tp in zk.partition_states and 1 <= event.controller_epoch < zk.controller_epoch
    if isinstance(event, BrokerStartup):
        return event.broker_id >= 0 and event.broker_id not in zk.brokers
    if isinstance(event, BrokerFailure):
        return event.broker_id in zk.brokers
    if isinstance(event, BrokerBounce):
        return event.broker_id in zk.brokers and event.broker_id != ctx.controller_id
    if isinstance(event, ControlledShutdown):
        return active and event.broker_id in zk.brokers
    if isinstance(event, TopicCreation):
        return (
            event.topic not in zk.partitions_by_topic
            and bool(event.replicas)
            and _valid_replica_lists(event.replicas)
        )
    if isinstance(event, PartitionExpansion):
        return _expansion_enabled(zk, event)
    if isinstance(event, TopicDeletion):
        return bool(event.topics)
    if isinstance(event, StopReplicaResponseReceived):
        return (
            active
            and bool(event.partitions)
            and all(
                ctx.replica_state(event.broker_id, tp) is ReplicaState.ReplicaDeletionStarted
                and tp in ctx.replica_states.get(event.broker_id, {})
                for tp in event.partitions
            )
        )
    if isinstance(event, ApiPartitionReassignment):
        return modern and active and bool(event.targets)
    if isinstance(event, ZkPartitionReassignment):
        return bool(event.targets) and not zk.reassign_partitions
    if isinstance(event, ReplicaLeaderElection):
        if not (active and event.partitions):
            return False
        if event.trigger is ElectionTrigger.ZkTriggered:
            return event.election_type is ElectionType.PREFERRED and not zk.preferred_replica_election
        return event.trigger is ElectionTrigger.AdminClientTriggered and modern
    if isinstance(event, AutoPreferredReplicaLeaderElection):
        return active and config.auto_leader_rebalance_enable
    if isinstance(event, IsrChange):
        return _isr_change_enabled(zk, event)
    if isinstance(event, LeaderAndIsrResponseReceived):
        return (
            active
            and event.broker_id in ctx.live_broker_epochs
            and bool(event.storage_errors)
            and all(event.broker_id in ctx.replicas(tp) for tp in event.storage_errors)
        )
    if isinstance(event, UncleanLeaderElectionEnable):
        return True
    if isinstance(event, ZkFaultInjection):
        return event.tp in zk.partition_states and event.tp not in zk.faults
    if isinstance(event, StaleAlterIsrReceived):
        return active and version >= KAFKA_2_7 and _stale_alter_isr_enabled(zk, event)
    if isinstance(event, StopReplicaPartitionErrorsReceived):
        # a response with some partitions in error and the others not (all in error is StopReplicaResponseReceived)
        return (
            active
            and bool(event.partitions)
            and all(
                ctx.replica_state(event.broker_id, tp) is ReplicaState.ReplicaDeletionStarted
                and tp in ctx.replica_states.get(event.broker_id, {})
                for tp in event.partitions
            )
            and bool(event.partition_errors)
            and set(event.partition_errors) < set(event.partitions)
        )
    if isinstance(event, LeaderAndIsrPartitionResultsReceived):
        return (
            active
            and event.broker_id in ctx.live_broker_epochs
            and bool(event.online)
            and not set(event.online) & set(event.storage_errors)
            and all(event.broker_id in ctx.replicas(tp) for tp in (*event.online, *event.storage_errors))
        )
    if isinstance(event, BrokerChange):
        return _broker_change_enabled(zk, ctx, event)
    if isinstance(event, LogDirEventNotification):
        return (
            active and bool(event.broker_ids) and all(b in ctx.live_broker_epochs for b in event.broker_ids)
        )
    return False
