"""The four partition-leader election strategies (§6), in the style of Kafka's ``Election`` object and
``PartitionLeaderElectionAlgorithms``.

The pure algorithms pick a leader from an assignment order, an ISR and a set of live replicas. The
``leader_for_*`` functions apply them to one partition with the context (liveness, assignment, shutting-down
brokers) and return the new ``LeaderAndIsr`` (``None`` when no leader can be elected) with the LeaderAndIsr
recipients. Every successful election bumps the leader epoch (``newLeaderAndIsr`` / ``newLeader``), even when the
same leader is chosen again.

[1.1] differences: the ControlledShutdown strategy's candidates and recipients exclude shutting-down brokers
(KAFKA-7482, fixed in 2.2), and the Reassign strategy reads RAR (``partitionsBeingReassigned(p).newReplicas``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kcspec.reference_impl.context import ControllerContext, target_replicas
from kcspec.reference_impl.errors import NoSuchElementException
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.records import is_plain_record, leader_and_isr
from kcspec.reference_impl.version import KAFKA_2_2, KAFKA_2_4, KafkaVersion
from kcspec.spec.vocabulary import ElectionStrategy, LeaderAndIsr, LeaderElection, TopicPartition


def new_leader_and_isr(lai: LeaderAndIsr, leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
    """``newLeaderAndIsr``: leader epoch +1, zk version kept as the expected version (§3.2)."""
    return leader_and_isr(leader, lai.leader_epoch + 1, isr, lai.zk_version)


def new_leader(lai: LeaderAndIsr, leader: int) -> LeaderAndIsr:
    return LeaderAndIsr(leader, lai.leader_epoch + 1, lai.isr, lai.zk_version)


def new_epoch_and_zk_version(lai: LeaderAndIsr) -> LeaderAndIsr:
    return LeaderAndIsr(lai.leader, lai.leader_epoch + 1, lai.isr, lai.zk_version)


# -------------------------------------------------------------------- PartitionLeaderElectionAlgorithms


@mirrors("OfflinePartitionLeaderElectionStrategy")
def offline_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live: Collection[int], unclean_enabled: bool
) -> int | None:
    """First assigned replica that is live and in the ISR; else, if unclean is enabled, first live one."""
    for r in assignment:
        if r in live and r in isr:
            return r
    if unclean_enabled:
        for r in assignment:
            if r in live:
                return r
    return None


@mirrors("ReassignPartitionLeaderElectionStrategy")
def reassign_partition_leader_election(
    reassignment: Sequence[int], isr: Collection[int], live: Collection[int]
) -> int | None:
    for r in reassignment:
        if r in live and r in isr:
            return r
    return None


@mirrors("PreferredReplicaPartitionLeaderElectionStrategy")
def preferred_replica_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live: Collection[int]
) -> int | None:
    if assignment and assignment[0] in live and assignment[0] in isr:
        return assignment[0]
    return None


@mirrors("ControlledShutdownPartitionLeaderElectionStrategy")
def controlled_shutdown_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live: Collection[int], shutting_down: Collection[int]
) -> int | None:
    for r in assignment:
        if r in live and r in isr and r not in shutting_down:
            return r
    return None


# -------------------------------------------------------------------- Election (per partition)


@dataclass(frozen=True)
class ElectionOutcome:
    """``ElectionResult(topicPartition, leaderAndIsr: Option, liveReplicas)``: the recipients of the LAIR."""

    tp: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    recipients: tuple[int, ...]
    unclean: bool = False


def _outcome(
    tp: TopicPartition, lai: LeaderAndIsr | None, recipients: tuple[int, ...], unclean: bool
) -> ElectionOutcome:
    """``ElectionOutcome(tp, lai, recipients, unclean)``, built directly (see ``records``)."""
    if not _OUTCOME_DIRECT:
        return ElectionOutcome(tp, lai, recipients, unclean)
    outcome = _new(ElectionOutcome)
    _set(outcome, "__dict__", {"tp": tp, "leader_and_isr": lai, "recipients": recipients, "unclean": unclean})
    return outcome


_new = object.__new__
_set = object.__setattr__
_OUTCOME_DIRECT = is_plain_record(ElectionOutcome, ("tp", "leader_and_isr", "recipients", "unclean"))


def leader_for_offline(
    ctx: ControllerContext, tp: TopicPartition, lai: LeaderAndIsr | None, unclean_enabled: bool
) -> ElectionOutcome:
    """``leaderForOffline``: clean ISR = ISR filtered to online replicas; unclean ISR = [leader] (§6)."""
    assignment = ctx.replicas(tp)
    up: set[int] | None = None
    """The online brokers when no log dir is offline (then online = live and not shutting down)."""
    if ctx.replicas_on_offline_dirs:
        live = tuple(r for r in assignment if ctx.is_replica_online(r, tp))
    else:
        up = ctx.live_broker_ids()
        live = assignment if up.issuperset(assignment) else tuple(r for r in assignment if r in up)
    if lai is None:
        return _outcome(tp, None, live, False)
    isr = lai.isr
    leader = offline_partition_leader_election(assignment, isr, live, unclean_enabled)
    if leader is None:
        return _outcome(tp, None, live, False)
    if leader in isr:
        if up is None:
            online_isr = tuple(r for r in isr if ctx.is_replica_online(r, tp))
        else:
            online_isr = isr if up.issuperset(isr) else tuple(r for r in isr if r in up)
        return _outcome(tp, new_leader_and_isr(lai, leader, online_isr), live, False)
    return _outcome(tp, new_leader_and_isr(lai, leader, (leader,)), live, True)


def leader_for_reassign(
    ctx: ControllerContext, version: KafkaVersion, tp: TopicPartition, lai: LeaderAndIsr
) -> ElectionOutcome:
    """``leaderForReassign``: first TRS (1.1: RAR) member online and in the ISR; ISR unchanged; LAIR to all TRS."""
    if version >= KAFKA_2_4:
        targets = target_replicas(ctx.assignment(tp))
    else:
        rar = ctx.legacy_reassignments.get(tp)
        if rar is None:
            raise NoSuchElementException(f"key not found: {tp}")
        targets = rar
    live = {r for r in targets if ctx.is_replica_online(r, tp)}
    leader = reassign_partition_leader_election(targets, lai.isr, live)
    return ElectionOutcome(tp, None if leader is None else new_leader(lai, leader), targets)


def leader_for_preferred_replica(
    ctx: ControllerContext, tp: TopicPartition, lai: LeaderAndIsr
) -> ElectionOutcome:
    """``leaderForPreferredReplica``: head(AR) if online and in the ISR; ISR unchanged; LAIR to all of AR."""
    assignment = ctx.replicas(tp)
    live = {r for r in assignment if ctx.is_replica_online(r, tp)}
    leader = preferred_replica_partition_leader_election(assignment, lai.isr, live)
    return ElectionOutcome(tp, None if leader is None else new_leader(lai, leader), assignment)


def leader_for_controlled_shutdown(
    ctx: ControllerContext, version: KafkaVersion, tp: TopicPartition, lai: LeaderAndIsr
) -> ElectionOutcome:
    """``leaderForControlledShutdown``: ISR := ISR − shutting down; recipients include shutting-down brokers (2.2+)."""
    assignment = ctx.replicas(tp)
    include_sd = version >= KAFKA_2_2
    live = tuple(r for r in assignment if ctx.is_replica_online(r, tp, include_shutting_down=include_sd))
    shutting_down = ctx.shutting_down
    leader = controlled_shutdown_partition_leader_election(assignment, lai.isr, live, shutting_down)
    if leader is None:
        return ElectionOutcome(tp, None, live)
    new_isr = tuple(r for r in lai.isr if r not in shutting_down)
    return ElectionOutcome(tp, new_leader_and_isr(lai, leader, new_isr), live)


def strategy_name(election: LeaderElection, version: KafkaVersion) -> str:
    """The strategy as Kafka prints it (§10.2): 2.8 ``OfflinePartitionLeaderElectionStrategy(false)``."""
    name = election.strategy.name
    if election.strategy is ElectionStrategy.OfflinePartitionLeaderElectionStrategy and version >= KAFKA_2_4:
        return f"{name}({'true' if election.allow_unclean else 'false'})"
    return name
