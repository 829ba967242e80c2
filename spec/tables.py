"""Valid-previous-state tables of the replica and partition state machines (§2.1, §2.2), per profile.

These tables are the only gate on a transition (§11 I20): an element whose current state is not a
valid previous state of the target gets one ERROR line and no other effect (§2.3 step 4).
Declaration order is Kafka's (it is how ``validPreviousStates`` is rendered in log lines, §10.2).
"""

from __future__ import annotations

from kcspec.spec.vocabulary import PartitionState, ReplicaState

R = ReplicaState
P = PartitionState

REPLICA_VALID_PREVIOUS_2_8: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    R.NewReplica: (R.NonExistentReplica,),
    R.OnlineReplica: (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible),
    R.OfflineReplica: (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible),
    R.ReplicaDeletionStarted: (R.OfflineReplica,),
    R.ReplicaDeletionSuccessful: (R.ReplicaDeletionStarted,),
    R.ReplicaDeletionIneligible: (R.OfflineReplica, R.ReplicaDeletionStarted),
    R.NonExistentReplica: (R.ReplicaDeletionSuccessful,),
}
"""§2.1, 2.8.2 column. ReplicaDeletionIneligible accepts OfflineReplica since KAFKA-8237 (2.3.0)."""

REPLICA_VALID_PREVIOUS_1_1: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    **REPLICA_VALID_PREVIOUS_2_8,
    R.ReplicaDeletionIneligible: (R.ReplicaDeletionStarted,),
}
"""§2.1, 1.1.1 column: identical except ReplicaDeletionIneligible, valid only from ReplicaDeletionStarted."""

PARTITION_VALID_PREVIOUS: dict[PartitionState, tuple[PartitionState, ...]] = {
    P.NewPartition: (P.NonExistentPartition,),
    P.OnlinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
    P.OfflinePartition: (P.NewPartition, P.OnlinePartition, P.OfflinePartition),
    P.NonExistentPartition: (P.OfflinePartition,),
}
"""§2.2, identical in 2.8.2 and 1.1.1 (self-loops Online→Online and Offline→Offline are valid)."""

REPLICA_INITIAL = R.NonExistentReplica
"""§2.1: the implicit initial state inserted before validity is checked; reaching it removes the entry."""
PARTITION_INITIAL = P.NonExistentPartition
"""§2.2: the implicit initial state; after deletion the entry is kept as NonExistentPartition (2.8.2)."""
