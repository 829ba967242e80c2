"""Valid-previous-state tables of the replica and partition state machines (§2.1, §2.2), per profile.

These tables are the only gate on a transition (§11 I20): an element whose current state is not a
valid previous state of the target gets one ERROR line and no other effect (§2.3 step 4).
Declaration order is Kafka's (it is how ``validPreviousStates`` is rendered in log lines, §10.2).
"""

from __future__ import annotations

from kcspec.spec.vocabulary import PartitionState, ReplicaState

REPLICA_VALID_PREVIOUS_2_8: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    ReplicaState.NewReplica: (ReplicaState.NonExistentReplica,),
    ReplicaState.OnlineReplica: (
        ReplicaState.NewReplica,
        ReplicaState.OnlineReplica,
        ReplicaState.OfflineReplica,
        ReplicaState.ReplicaDeletionIneligible,
    ),
    ReplicaState.OfflineReplica: (
        ReplicaState.NewReplica,
        ReplicaState.OnlineReplica,
        ReplicaState.OfflineReplica,
        ReplicaState.ReplicaDeletionIneligible,
    ),
    ReplicaState.ReplicaDeletionStarted: (ReplicaState.OfflineReplica,),
    ReplicaState.ReplicaDeletionSuccessful: (ReplicaState.ReplicaDeletionStarted,),
    ReplicaState.ReplicaDeletionIneligible: (
        ReplicaState.OfflineReplica,
        ReplicaState.ReplicaDeletionStarted,
    ),
    ReplicaState.NonExistentReplica: (ReplicaState.ReplicaDeletionSuccessful,),
}
"""§2.1, 2.8.2 column. ReplicaDeletionIneligible accepts OfflineReplica since KAFKA-8237 (2.3.0)."""

REPLICA_VALID_PREVIOUS_1_1: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    **REPLICA_VALID_PREVIOUS_2_8,
    ReplicaState.ReplicaDeletionIneligible: (ReplicaState.ReplicaDeletionStarted,),
}
"""§2.1, 1.1.1 column: identical except ReplicaDeletionIneligible, valid only from ReplicaDeletionStarted."""

PARTITION_VALID_PREVIOUS: dict[PartitionState, tuple[PartitionState, ...]] = {
    PartitionState.NewPartition: (PartitionState.NonExistentPartition,),
    PartitionState.OnlinePartition: (
        PartitionState.NewPartition,
        PartitionState.OnlinePartition,
        PartitionState.OfflinePartition,
    ),
    PartitionState.OfflinePartition: (
        PartitionState.NewPartition,
        PartitionState.OnlinePartition,
        PartitionState.OfflinePartition,
    ),
    PartitionState.NonExistentPartition: (PartitionState.OfflinePartition,),
}
"""§2.2, identical in 2.8.2 and 1.1.1 (self-loops Online→Online and Offline→Offline are valid)."""

REPLICA_INITIAL = ReplicaState.NonExistentReplica
"""§2.1: the implicit initial state inserted before validity is checked; reaching it removes the entry."""
PARTITION_INITIAL = PartitionState.NonExistentPartition
"""§2.2: the implicit initial state; after deletion the entry is kept as NonExistentPartition (2.8.2)."""
