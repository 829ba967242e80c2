"""The replica and partition states as sealed cases carrying their valid previous states (§2.1, §2.2).

Kafka declares each state as a case object with ``validPreviousStates``; this module is the reference
controller's own table, written from §2 (not read from the spec). The only version difference is KAFKA-8237
(2.3.0): ``ReplicaDeletionIneligible`` also accepts ``OfflineReplica``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.reference_impl.version import KAFKA_2_3, KafkaVersion
from kcspec.spec.vocabulary import PartitionState, ReplicaState

R = ReplicaState
P = PartitionState


@dataclass(frozen=True)
class ReplicaStateCase:
    """``sealed trait ReplicaState``: the state and the states it may be entered from, in declaration order."""

    state: ReplicaState
    valid_previous_states: tuple[ReplicaState, ...]

    def accepts(self, current: ReplicaState) -> bool:
        return current in self.valid_previous_states


@dataclass(frozen=True)
class PartitionStateCase:
    """``sealed trait PartitionState``."""

    state: PartitionState
    valid_previous_states: tuple[PartitionState, ...]

    def accepts(self, current: PartitionState) -> bool:
        return current in self.valid_previous_states


NewReplica = ReplicaStateCase(R.NewReplica, (R.NonExistentReplica,))
OnlineReplica = ReplicaStateCase(
    R.OnlineReplica, (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible)
)
OfflineReplica = ReplicaStateCase(
    R.OfflineReplica, (R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible)
)
ReplicaDeletionStarted = ReplicaStateCase(R.ReplicaDeletionStarted, (R.OfflineReplica,))
ReplicaDeletionSuccessful = ReplicaStateCase(R.ReplicaDeletionSuccessful, (R.ReplicaDeletionStarted,))
ReplicaDeletionIneligible = ReplicaStateCase(
    R.ReplicaDeletionIneligible, (R.OfflineReplica, R.ReplicaDeletionStarted)
)
ReplicaDeletionIneligibleLegacy = ReplicaStateCase(R.ReplicaDeletionIneligible, (R.ReplicaDeletionStarted,))
NonExistentReplica = ReplicaStateCase(R.NonExistentReplica, (R.ReplicaDeletionSuccessful,))

NewPartition = PartitionStateCase(P.NewPartition, (P.NonExistentPartition,))
OnlinePartition = PartitionStateCase(
    P.OnlinePartition, (P.NewPartition, P.OnlinePartition, P.OfflinePartition)
)
OfflinePartition = PartitionStateCase(
    P.OfflinePartition, (P.NewPartition, P.OnlinePartition, P.OfflinePartition)
)
NonExistentPartition = PartitionStateCase(P.NonExistentPartition, (P.OfflinePartition,))


def replica_state_cases(version: KafkaVersion) -> dict[ReplicaState, ReplicaStateCase]:
    ineligible = ReplicaDeletionIneligible if version >= KAFKA_2_3 else ReplicaDeletionIneligibleLegacy
    cases = (
        NewReplica,
        OnlineReplica,
        OfflineReplica,
        ReplicaDeletionStarted,
        ReplicaDeletionSuccessful,
        ineligible,
        NonExistentReplica,
    )
    return {c.state: c for c in cases}


def partition_state_cases() -> dict[PartitionState, PartitionStateCase]:
    return {c.state: c for c in (NewPartition, OnlinePartition, OfflinePartition, NonExistentPartition)}


def names(states: tuple[ReplicaState, ...] | tuple[PartitionState, ...]) -> str:
    """``validPreviousStates.mkString(",")`` in declaration order (§10.2)."""
    return ",".join(s.name for s in states)
