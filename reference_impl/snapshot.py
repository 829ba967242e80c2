"""Conversion between the mutable ``ControllerContext`` and the canonical ``ControllerContext`` record (spec/state.py).

``to_canonical`` produces exactly the canonical form: FMaps, frozensets, tuples; replica states keyed by
``PartitionReplica`` (a replica that reached NonExistentReplica has no entry); ``offline_replicas`` flattened to
(partition, broker) pairs. ``from_canonical`` rebuilds the mutable context and its indexes.
"""

from __future__ import annotations

from kcspec.reference_impl.context import ControllerContext, copy_map
from kcspec.reference_impl.records import canonical_context
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ControllerContext as CanonicalContext
from kcspec.spec.vocabulary import (
    PartitionReplica,
    PartitionState,
    ReplicaState,
    TopicPartition,
    make_partition_replica,
)

_NEW = PartitionState.NewPartition
_OFFLINE = PartitionState.OfflinePartition

_REPLICA_KEYS: dict[int, dict[TopicPartition, PartitionReplica]] = {}
"""``PartitionReplica(tp, broker)`` already made, by broker then partition: a snapshot reuses them (equal values,
immutable) instead of building one per replica and snapshot (bounded: ``_REPLICA_KEYS_MAX`` per broker)."""
_REPLICA_KEYS_MAX = 16384


_NO_CONTROLLER = CanonicalContext()
"""The canonical context of a controller that is not active (an immutable value, so one serves every snapshot:
building it makes a dozen empty maps)."""


def to_canonical(ctx: ControllerContext) -> CanonicalContext:
    if ctx.controller_id == -1:
        return _NO_CONTROLLER
    replica_states: dict[PartitionReplica, ReplicaState] = {}
    for broker, states in ctx.replica_states.items():
        keys = _REPLICA_KEYS.get(broker)
        if keys is None:
            keys = _REPLICA_KEYS[broker] = {}
        for tp, state in states.items():
            pr = keys.get(tp)
            if pr is None:
                pr = make_partition_replica(tp, broker)  # PartitionReplica(tp, broker), faster
                if len(keys) < _REPLICA_KEYS_MAX:
                    keys[tp] = pr
            replica_states[pr] = state
    return canonical_context(
        controller_id=ctx.controller_id,
        epoch=ctx.epoch,
        epoch_zk_version=ctx.epoch_zk_version,
        live_brokers=FMap(ctx.live_broker_epochs),
        shutting_down=frozenset(ctx.shutting_down),
        offline_replicas=frozenset(
            PartitionReplica(tp, b) for b, tps in ctx.replicas_on_offline_dirs.items() for tp in tps
        ),
        all_topics=frozenset(ctx.all_topics),
        topic_ids=FMap(ctx.topic_ids),
        assignments=FMap(ctx.assignments),
        leadership=FMap(ctx.leadership),
        partitions_being_reassigned=frozenset(ctx.partitions_being_reassigned),
        legacy_reassignments=FMap(ctx.legacy_reassignments),
        replica_states=FMap(replica_states),
        partition_states=FMap(ctx.partition_states),
        topics_to_be_deleted=frozenset(ctx.topics_to_be_deleted),
        topics_with_deletion_started=frozenset(ctx.topics_with_deletion_started),
        topics_ineligible_for_deletion=frozenset(ctx.topics_ineligible_for_deletion),
        queued_elections=(),
    )


def from_canonical(c: CanonicalContext) -> ControllerContext:
    ctx = ControllerContext()
    ctx.controller_id = c.controller_id
    ctx.epoch = c.epoch
    ctx.epoch_zk_version = c.epoch_zk_version
    ctx.shutting_down = set(c.shutting_down)
    ctx.add_live_brokers(copy_map(c.live_brokers))
    for pr in c.offline_replicas:
        ctx.replicas_on_offline_dirs.setdefault(pr.replica, set()).add(pr.tp)
    ctx.all_topics = set(c.all_topics)
    ctx.topic_ids = copy_map(c.topic_ids)
    ctx.load_assignments(c.assignments)
    ctx.put_leaderships(c.leadership)
    ctx.partitions_being_reassigned = set(c.partitions_being_reassigned)
    ctx.legacy_reassignments = copy_map(c.legacy_reassignments)
    replica_states = ctx.replica_states
    for pr, state in c.replica_states.items():
        states = replica_states.get(pr.replica)
        if states is None:
            replica_states[pr.replica] = {pr.tp: state}
        else:
            states[pr.tp] = state
    # ``put_partition_state`` of each partition in order, at once
    ctx.partition_states = copy_map(c.partition_states)
    ctx.new_or_offline = {
        tp: None for tp, pstate in c.partition_states.items() if pstate is _NEW or pstate is _OFFLINE
    }
    ctx.topics_to_be_deleted = set(c.topics_to_be_deleted)
    ctx.topics_with_deletion_started = set(c.topics_with_deletion_started)
    ctx.topics_ineligible_for_deletion = set(c.topics_ineligible_for_deletion)
    ctx.recount_metrics()
    return ctx
