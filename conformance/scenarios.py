"""Built-in scenarios: short, meaningful event sequences covering §7–§8 for both profiles.

``kcspec verify`` runs each through the declarative spec and the reference controller side by
side, comparing every step. A scenario is a name, the semantics sections it exercises, and the event
sequence for a profile (some events exist only in ``kafka-2.8``; ``events(profile)`` picks the
profile's form). All scenarios start from the empty ``ClusterState()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, TopicPartition, ZkFault

LEGACY = "kafka-1.1"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def cluster(brokers: int = 3, controller: int = 0) -> list[ControllerEvent]:
    """Brokers 0..n-1 register, then ``controller`` wins the election and fails over (§7.1–§7.3)."""
    return [*(BrokerStartup(b) for b in range(brokers)), ControllerFailover(controller)]


@dataclass(frozen=True)
class Scenario:
    name: str
    sections: tuple[str, ...]
    doc: str
    build: Callable[[str], list[ControllerEvent]]
    near_misses: Callable[[str], list[ControllerEvent]] | None = None
    """Events whose guard is false at the scenario's end (each becomes a ``not_enabled`` vector)."""

    def events(self, profile: str) -> tuple[ControllerEvent, ...]:
        return tuple(self.build(profile))

    def not_enabled(self, profile: str) -> tuple[ControllerEvent, ...]:
        return tuple(self.near_misses(profile)) if self.near_misses is not None else ()


def _create_and_fail_leader(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("t", ((1, 2, 0), (2, 0, 1))),
        BrokerFailure(1),
        BrokerStartup(1),
        ReplicaLeaderElection(frozenset({tp("t", 0)}), ElectionType.PREFERRED, ElectionTrigger.ZkTriggered),
        AutoPreferredReplicaLeaderElection(),
    ]


def _controlled_shutdown(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("t", ((1, 2, 0), (2, 1, 0), (0, 1, 2))),
        ControlledShutdown(1),
        ControlledShutdown(1),
        BrokerFailure(1),
        BrokerStartup(1),
    ]


def _all_replicas_fail(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(4),
        TopicCreation("t", ((1, 2),)),
        BrokerFailure(2),
        BrokerFailure(1),
        BrokerStartup(2),
        UncleanLeaderElectionEnable("t"),
        BrokerStartup(1),
        BrokerFailure(3),
    ]


def _topic_deletion(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("d", ((0, 1), (1, 2))),
        BrokerFailure(2),
        TopicDeletion(("d", "nope")),
        # the response to the retry's StopReplica(delete=false) changes nothing (§3.4, KAFKA-9946)
        StopReplicaResponseWithoutDeletionReceived(1, (tp("d", 0),)),
        StopReplicaResponseReceived(1, (tp("d", 0),)),
        BrokerStartup(2),
        StopReplicaResponseReceived(0, (tp("d", 0),)),
        StopReplicaResponseReceived(1, (tp("d", 1),), error=True),
        # a failed replica deletion halts the topic until a broker hosting it restarts (§8)
        BrokerFailure(1),
        BrokerStartup(1),
        StopReplicaResponseReceived(1, (tp("d", 1),)),
        StopReplicaResponseReceived(2, (tp("d", 1),)),
        TopicCreation("d", ((2, 0),)),
    ]


def _partition_expansion(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("t", ((0, 1),)),
        PartitionExpansion("t", ((0, 1), (1, 2), (2, 0))),
        BrokerFailure(2),
        TopicDeletion(("t",)),
        PartitionExpansion("t", ((0, 1), (1, 2), (2, 0), (0, 2))),
    ]


def _topic_znode_without_partitions(profile: str) -> list[ControllerEvent]:
    """2.8: adding a partition to a topic queued for deletion whose partition never had a state znode leaves its
    topic znode with no partition (KAFKA-6612, §7.6); the topic still exists through another topic's creation
    (TopicChange), with its replica being deleted. 1.1 keeps the partitions (no restore)."""
    return [
        *cluster(1),
        TopicCreation("e", ((1,),)),
        TopicDeletion(("e",)),
        BrokerStartup(1),
        PartitionExpansion("e", ((1,), (0,))),
        TopicCreation("f", ((0,),)),
    ]


def _topic_znode_without_partitions_near_misses(profile: str) -> list[ControllerEvent]:
    """e's topic znode exists (2.8: with no partition), so e cannot be created."""
    return [TopicCreation("e", ((0,),))]


def _topic_znode_without_partitions_failover(profile: str) -> list[ControllerEvent]:
    """Then a controller failover: 2.8's new context has e without partitions, so e's deletion completes at once and
    deletes its topic znode (§7.1 step 5, §8), after which e can be created again; 1.1 still has e's partitions."""
    events = [*_topic_znode_without_partitions(profile), ControllerFailover(1)]
    return events if profile == LEGACY else [*events, TopicCreation("e", ((0, 1),))]


def _create_fault(profile: str) -> list[ControllerEvent]:
    """A connection loss armed on the path of a state znode still to be created: the New → Online transition of the
    broker's startup throws in ``createTopicPartitionStatesRaw`` (§5.2a step 4: the partition stays NewPartition),
    then the next attempt creates it (PartitionStateMachineTest
    ``testNewPartitionToOnlinePartitionTransitionZkUtilsExceptionFromCreateStates``)."""
    return [
        *cluster(1),
        TopicCreation("c", ((1,), (1, 0))),
        ZkFaultInjection(tp("c", 0), ZkFault.CONNECTIONLOSS),
        BrokerStartup(1),
        ControllerFailover(1),
    ]


def _create_fault_near_misses(profile: str) -> list[ControllerEvent]:
    """A BADVERSION needs an existing znode: not on the path of one still to be created."""
    return [
        ZkFaultInjection(tp("c", 2), ZkFault.CONNECTIONLOSS),
        ZkFaultInjection(tp("nope", 0), ZkFault.BADVERSION),
    ]


def _zk_reassignment(profile: str) -> list[ControllerEvent]:
    p = tp("r", 0)
    return [
        *cluster(5),
        TopicCreation("r", ((0, 1, 2),)),
        ZkPartitionReassignment(FMap({p: (3, 4, 2)})),
        IsrChange(p, (0, 1, 2, 3)),
        IsrChange(p, (0, 1, 2, 3, 4)),
        BrokerFailure(0),
    ]


def _reassignment_across_failover(profile: str) -> list[ControllerEvent]:
    p = tp("r", 0)
    return [
        *cluster(4),
        TopicCreation("r", ((0, 1),)),
        ZkPartitionReassignment(FMap({p: (2, 3)})),
        ControllerFailover(1),
        BrokerFailure(3),
        BrokerStartup(3),
        IsrChange(p, (0, 1, 2, 3)),
    ]


def _api_reassignment(profile: str) -> list[ControllerEvent]:
    if profile == LEGACY:
        return _zk_reassignment(profile)
    p, q = tp("r", 0), tp("r", 1)
    return [
        *cluster(4),
        TopicCreation("r", ((0, 1), (1, 2))),
        ApiPartitionReassignment(FMap({p: (2, 3), q: (1, 2)})),
        ApiPartitionReassignment(FMap({p: (3, 0)})),
        ApiPartitionReassignment(FMap({p: None, tp("r", 7): (0, 1), q: ()})),
        ApiPartitionReassignment(FMap({q: (0, 9)})),
        ApiPartitionReassignment(FMap({q: (2, 0)})),
        IsrChange(q, (1, 2, 0)),
    ]


def _zk_faults(profile: str) -> list[ControllerEvent]:
    p = tp("f", 0)
    return [
        *cluster(3),
        TopicCreation("f", ((0, 1, 2), (1, 2, 0))),
        ZkFaultInjection(p, ZkFault.BADVERSION),
        BrokerFailure(0),
        ZkFaultInjection(tp("f", 1), ZkFault.CONNECTIONLOSS),
        BrokerFailure(1),
        BrokerStartup(0),
        BrokerStartup(1),
    ]


def _controller_moves(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("c", ((0, 1, 2),)),
        # controller 0 is deposed but has not noticed: 2.8 fences its writes (it resigns), 1.1 lets them through
        NewerControllerElected(2),
        BrokerFailure(1),
        ZombieControllerWrite(tp("c", 0), 2, (2,), 1),
        ControllerFailover(2),
        BrokerStartup(1),
        NewerControllerElected(0),
        ControllerChange(),
        ControllerFailover(0),
        ControllerResignation(),
        ControllerFailover(1),
    ]


def _bounce_and_log_dirs(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("b", ((1, 2, 0), (2, 0, 1))),
        BrokerBounce(1),
        LeaderAndIsrResponseReceived(2, (tp("b", 1),)),
        IsrChange(tp("b", 0), (2, 0, 1)),
        BrokerFailure(0),
    ]


def _isr_order_election(profile: str) -> list[ControllerEvent]:
    p = tp("o", 0)
    return [
        *cluster(3),
        TopicCreation("o", ((1, 0, 2),)),
        # the ISR's order is not the assignment's: the offline election walks the assignment (§6)
        IsrChange(p, (1, 2, 0)),
        BrokerFailure(1),
        BrokerFailure(2),
        UncleanLeaderElectionEnable("o"),
        BrokerStartup(1),
    ]


def _shutdown_with_retry(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("s", ((0, 1, 2),)),
        TopicCreation("u", ((1, 2, 0),)),
        ControlledShutdown(0),
        # the next election of s-0 must retry after a BADVERSION, only for that partition (§3.3, §5.2)
        ZkFaultInjection(tp("s", 0), ZkFault.BADVERSION),
        BrokerBounce(1),
    ]


def _deletion_without_leaders(profile: str) -> list[ControllerEvent]:
    return [
        BrokerStartup(0),
        ControllerFailover(0),
        # the replicas of n-0 and m-0 are on brokers that have not registered: no leader is ever elected
        TopicCreation("n", ((0, 1, 2),)),
        TopicCreation("m", ((1, 2, 3),)),
        TopicDeletion(("n",)),
        TopicDeletion(("m",)),
        BrokerStartup(1),
        StopReplicaResponseReceived(0, (tp("n", 0),)),
        UncleanLeaderElectionEnable("n"),
        StopReplicaResponseReceived(1, (tp("n", 0),)),
    ]


def _deletion_during_reassignment(profile: str) -> list[ControllerEvent]:
    p, q = tp("r", 0), tp("r", 1)
    return [
        *cluster(4),
        TopicCreation("r", ((0, 1), (0, 1))),
        ZkPartitionReassignment(FMap({p: (2, 3), q: (2, 3)})),
        TopicDeletion(("r",)),
        *(StopReplicaResponseReceived(b, (p, q)) for b in range(4)),
        # the deleted topic's partitions were being reassigned: a new controller starts from ZooKeeper (§7.12)
        ControllerFailover(1),
        ControllerFailover(0),
    ]


def _reassignment_interrupted(profile: str) -> list[ControllerEvent]:
    p, q = tp("i", 0), tp("i", 1)
    moves: dict[TopicPartition, tuple[int, ...]] = {p: (0,), q: (2, 3)}
    return [
        *cluster(5),
        TopicCreation("i", ((0, 1), (0, 1))),
        # reading i-0's state fails: its reassignment is written to ZooKeeper but not completed (§3.3)
        ZkFaultInjection(p, ZkFault.CONNECTIONLOSS),
        ZkPartitionReassignment(FMap(moves)) if profile == LEGACY else ApiPartitionReassignment(FMap(moves)),
        ControllerResignation(),
        # deletion requested while no controller is active; the next one resumes the reassignments (§7.1, §8)
        TopicDeletion(("i",)),
        ControllerFailover(1),
    ]


def _reassignment_resignation(profile: str) -> list[ControllerEvent]:
    p = tp("r", 0)
    return [
        *cluster(4),
        TopicCreation("r", ((0, 1),)),
        ZkPartitionReassignment(FMap({p: (2, 3)})),
        ControllerResignation(),
        ControllerFailover(1),
        IsrChange(p, (0, 1, 2, 3)),
    ]


def _auto_rebalance_threshold(profile: str) -> list[ControllerEvent]:
    a = [tp("a", i) for i in range(10)]
    b = tp("b", 0)
    return [
        *cluster(4, controller=2),
        TopicCreation("a", ((0, 1),) * 10),
        TopicCreation("b", ((3, 2),)),
        BrokerFailure(3),
        BrokerStartup(3),
        IsrChange(b, (2, 3)),
        BrokerFailure(0),
        BrokerStartup(0),
        *(IsrChange(p, (1, 0)) for p in a),
        ReplicaLeaderElection(frozenset(a[:9]), ElectionType.PREFERRED, ElectionTrigger.ZkTriggered),
        # broker 0 leads 9 of its 10 preferred partitions (imbalance exactly 10 %: left alone), broker 3 none of
        # its 1 (moved back); every broker is checked (§7.9 auto rebalance)
        AutoPreferredReplicaLeaderElection(),
    ]


def _log_dir_failures(profile: str) -> list[ControllerEvent]:
    l0, l1 = tp("l", 0), tp("l", 1)
    return [
        *cluster(3),
        TopicCreation("l", ((1, 2, 0), (2, 0, 1), (0, 1, 2))),
        LeaderAndIsrResponseReceived(2, (l0,)),
        # a second storage error from the same broker: only the newly offline replica is handled (§7.5)
        LeaderAndIsrResponseReceived(2, (l1,)),
        ControllerFailover(1),
        LeaderAndIsrResponseReceived(2, (l0,)),
        BrokerFailure(0),
    ]


def _zombie_write_then_isr_change(profile: str) -> list[ControllerEvent]:
    z = tp("z", 0)
    return [
        *cluster(3),
        TopicCreation("z", ((2, 1, 0),)),
        ControllerFailover(0),
        # 1.1: the deposed controller's write lands (a new leader); the ISR change makes the controller re-read it
        ZombieControllerWrite(z, 1, (1,), 1),
        IsrChange(z, (1, 0) if profile == LEGACY else (2, 1, 0)),
        BrokerFailure(2),
    ]


def _shutdown_broker_epochs(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("e", ((2, 1, 0), (1, 2, 0))),
        # broker 2 registered with epoch 3: a request from epoch 1 is stale (2.2+ rejects it), epoch 2 of broker 1
        # is current (§7.10)
        ControlledShutdown(2, 1),
        ControlledShutdown(1, 2),
        # an epoch above the cached one is not stale: only older epochs are rejected
        ControlledShutdown(2, 9),
    ]


def _deleted_topic_config(profile: str) -> list[ControllerEvent]:
    u = tp("u", 0)
    return [
        *cluster(3),
        TopicCreation("u", ((0, 1),)),
        UncleanLeaderElectionEnable("u"),
        TopicDeletion(("u",)),
        StopReplicaResponseReceived(0, (u,)),
        StopReplicaResponseReceived(1, (u,)),
        # the deleted topic's config went with it (§8): the new "u" has no unclean override
        TopicCreation("u", ((1, 2),)),
        BrokerFailure(1),
        BrokerFailure(2),
        BrokerStartup(1),
    ]


def _unclean_cluster_wide(profile: str) -> list[ControllerEvent]:
    return [
        *cluster(3),
        TopicCreation("w", ((1, 2),)),
        BrokerFailure(1),
        BrokerFailure(2),
        BrokerStartup(1),
        # the cluster-wide setting (empty topic name), not a topic override (§6; 2.8 elects at once)
        UncleanLeaderElectionEnable(""),
        BrokerStartup(2),
    ]


def _unclean_admin_election(profile: str) -> list[ControllerEvent]:
    if profile == LEGACY:
        return _unclean_cluster_wide(profile)
    w = tp("w", 0)
    return [
        *cluster(3),
        TopicCreation("w", ((1, 2),)),
        BrokerFailure(1),
        BrokerFailure(2),
        BrokerStartup(1),
        # KIP-460: an admin UNCLEAN election elects outside the ISR whatever the config says (§6, §7.9)
        ReplicaLeaderElection(frozenset({w}), ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered),
    ]


def _shutdown_after_reassignment(profile: str) -> list[ControllerEvent]:
    p = tp("r", 0)
    return [
        *cluster(5),
        TopicCreation("r", ((0, 1, 2),)),
        ZkPartitionReassignment(FMap({p: (3, 4, 2)})),
        IsrChange(p, (0, 1, 2, 3, 4)),
        # broker 1 no longer hosts r-0: its controlled shutdown must not touch it (§7.10)
        ControlledShutdown(1),
        BrokerFailure(1),
        BrokerStartup(1),
    ]


def _partition_errors(profile: str) -> list[ControllerEvent]:
    e0, e1, e2, f0, f1 = tp("e", 0), tp("e", 1), tp("e", 2), tp("f", 0), tp("f", 1)
    return [
        *cluster(3),
        TopicCreation("e", ((0, 1), (1, 2), (1, 0))),
        TopicDeletion(("e",)),
        # broker 1 answers one StopReplica for three partitions, one of them with a partition error (§8)
        StopReplicaPartitionErrorsReceived(1, (e0, e1, e2), (e1,)),
        StopReplicaResponseReceived(0, (e0, e2)),
        StopReplicaResponseReceived(2, (e1,)),
        BrokerFailure(1),
        BrokerStartup(1),
        StopReplicaResponseReceived(1, (e1,)),
        TopicCreation("f", ((2, 0), (0, 2))),
        LeaderAndIsrResponseReceived(2, (f0, f1)),
        # f-0 answered NONE leaves the offline replicas, f-1 stays (not newly offline) (§7.5)
        LeaderAndIsrPartitionResultsReceived(2, (f0,), (f1,)),
        # f-0 is offline again (newly: onReplicasBecomeOffline), f-1 back
        LeaderAndIsrPartitionResultsReceived(2, (f1,), (f0,)),
        LeaderAndIsrPartitionResultsReceived(2, (f0, f1)),
        # both replicas on broker 2 are online again: they can take the leadership
        BrokerFailure(0),
        *_stale_alter_isr(profile),
    ]


def _stale_alter_isr(profile: str) -> list[ControllerEvent]:
    """2.8, after broker 0 (the controller) failed and broker 1 took over: a delayed AlterIsr of g-0's leader 2
    (broker epoch 3) with its old ISR at zk version 0 after the ISR changed (INVALID_UPDATE_VERSION: UpdateMetadata
    only), then the current record with an older broker epoch (STALE_BROKER_EPOCH: ignored) (§7.11)."""
    if profile == LEGACY:
        return []
    g0 = tp("g", 0)
    return [
        ControllerFailover(1),
        TopicCreation("g", ((2, 1),)),
        IsrChange(g0, (2,)),
        StaleAlterIsrReceived(2, 3, g0, 0, (2, 1), 0),
        StaleAlterIsrReceived(2, 2, g0, 0, (2,), 1),
    ]


def _broker_batches(profile: str) -> list[ControllerEvent]:
    g0, h0, h1 = tp("g", 0), tp("h", 0), tp("h", 1)
    return [
        *cluster(3),
        TopicCreation("g", ((1, 2), (2, 1), (0, 1))),
        # one watch firing, two new brokers: one onBrokerStartup([3, 4]) (§7.2, §7.3)
        BrokerChange(new_broker_ids=(3, 4)),
        TopicCreation("h", ((3, 4), (4, 1))),
        # two brokers die at once: g-0 loses both replicas, one round of elections (§7.4)
        BrokerChange(dead_broker_ids=(1, 2)),
        # new, dead and bounced in one firing: 2.8 starts 1, fails and restarts 3, fails 4; 1.1 drops 4 from the live
        # set before onBrokerStartup([1]) and does not see the bounce (§7.2)
        BrokerChange(new_broker_ids=(1,), dead_broker_ids=(4,), bounced_broker_ids=(3,)),
        # log-dir failures on two brokers: a LeaderAndIsr for every replica they host (§7.5)
        LogDirEventNotification((1, 3)),
        # the responses name the replica on the failed directory, then it is back
        LeaderAndIsrResponseReceived(3, (h0,)),
        LogDirEventNotification((3,)),
        LeaderAndIsrPartitionResultsReceived(3, (h0,)),
        BrokerChange(new_broker_ids=(2, 4), bounced_broker_ids=(1,)),
        LogDirEventNotification((4, 4, 2)),
        LeaderAndIsrResponseReceived(4, (h1,)),
        # the controller's broker dies; the next controller finds g-0 led by a non-preferred replica
        BrokerFailure(0),
        ControllerFailover(2),
        ReplicaLeaderElection(frozenset({g0}), ElectionType.PREFERRED, ElectionTrigger.ZkTriggered),
    ]


def _broker_batches_near_misses(profile: str) -> list[ControllerEvent]:
    """At the end of broker-batches (brokers 1-4 registered, 2 the controller, 0 gone): guards that are false."""
    return [
        BrokerChange(new_broker_ids=(0,)),  # one broker: that is BrokerStartup
        BrokerChange(new_broker_ids=(5, 0)),  # not ascending
        BrokerChange(new_broker_ids=(0,), dead_broker_ids=(2,)),  # 2 is the active controller
        BrokerChange(dead_broker_ids=(1,), bounced_broker_ids=(1, 3)),  # 1 in two lists
        BrokerChange(dead_broker_ids=(0, 1)),  # 0 is not registered
        LogDirEventNotification(()),
        LogDirEventNotification((0,)),  # 0 is not a live broker
    ]


def _broker_change_during_reassignment(profile: str) -> list[ControllerEvent]:
    p = tp("r", 0)
    return [
        *cluster(4),
        TopicCreation("r", ((0, 1),)),
        # with no reassignment in flight several brokers may change at once (§7.2)
        BrokerChange(new_broker_ids=(4, 5)),
        # r-0 moves to 2 and 4, which are not in its ISR yet: the reassignment stays in flight (§7.7)
        ZkPartitionReassignment(FMap({p: (2, 4)})),
    ]


def _broker_change_during_reassignment_near_misses(profile: str) -> list[ControllerEvent]:
    """At the end of broker-change-during-reassignment (r-0 being reassigned): BrokerChange batches that are
    well formed (the guard's other conditions hold) but refused because a reassignment is in flight. Decision
    (the guard's comment, ``spec/actions/broker_notifications.py``): onBrokerStartup can then throw and end
    processBrokerChange before the later groups, a state the model leaves out."""
    return [
        BrokerChange(new_broker_ids=(6, 7)),  # new brokers only
        BrokerChange(new_broker_ids=(6,), dead_broker_ids=(1,)),  # a dead broker after the new one
        BrokerChange(dead_broker_ids=(3,), bounced_broker_ids=(5,)),  # dead and bounced, no new broker
    ]


def _offline_partitions_count(profile: str) -> list[ControllerEvent]:
    """Kafka's ``PartitionStateMachineTest.testUpdatingOfflinePartitionsCount`` (2.8.2) as events: the four
    partitions of ``test`` on broker 0 go OfflinePartition when it fails (OfflinePartitionsCount 4) and back to
    OnlinePartition when it returns (0). The controller is broker 1, which hosts none of them."""
    return [
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(1),
        TopicCreation("test", ((0,), (0,), (0,), (0,))),
        BrokerFailure(0),
        BrokerStartup(0),
    ]


def _offline_partitions_count_during_deletion(profile: str) -> list[ControllerEvent]:
    """Kafka's ``PartitionStateMachineTest.testUpdatingOfflinePartitionsCountDuringTopicDeletion`` (2.8.2) as events:
    four offline partitions (OfflinePartitionsCount 4), then their topic is deleted; 2.8 moves them to
    NonExistentPartition when the deletion starts (§8 ``onTopicDeletion`` step 1), so the count drops to 0 although
    the deletion halts on the dead replicas. (1.1 counts cached leaders not on a registered broker, topics queued for
    deletion left out: 0 as well.)"""
    return [*_offline_partitions_count(profile)[:-1], TopicDeletion(("test",))]


def _imbalance_concurrent_topic_deletion(profile: str) -> list[ControllerEvent]:
    """Kafka's ``ControllerContextTest.testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion`` (3.3.0,
    KAFKA-13572) as events: ``t1``'s preferred replica 1 shuts down (PreferredReplicaImbalanceCount 1); deleting
    ``t0`` sets its leader to −1 (no longer its preferred replica); deleting ``t1`` while ``t0`` is still queued
    re-reads ``/admin/delete_topics`` and queues both. The count ends at 0 (Kafka 2.8.2, before the fix, cleaned
    ``t0`` again: −1)."""
    return [
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1),)),
        TopicCreation("t1", ((1, 0),)),
        ControlledShutdown(1),
        TopicDeletion(("t0",)),
        TopicDeletion(("t1",)),
    ]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "create-fail-restart",
        ("§7.1", "§7.3", "§7.4", "§7.6", "§7.9"),
        "topic creation, leader failure and restart, preferred and auto elections",
        _create_and_fail_leader,
    ),
    Scenario(
        "controlled-shutdown",
        ("§7.10", "§6"),
        "controlled shutdown of a leader and follower",
        _controlled_shutdown,
    ),
    Scenario(
        "unclean",
        ("§6", "§7.4"),
        "every ISR member dies; unclean election enabled per topic",
        _all_replicas_fail,
    ),
    Scenario(
        "topic-deletion",
        ("§8",),
        "deletion with a dead replica, retries, completion, re-creation",
        _topic_deletion,
    ),
    Scenario(
        "partition-expansion", ("§7.6", "§8"), "adding partitions, also during deletion", _partition_expansion
    ),
    Scenario(
        "topic-znode-without-partitions",
        ("§7.6", "§8", "§7.1"),
        "a topic znode restored to no partition during deletion: the topic still exists",
        _topic_znode_without_partitions,
        _topic_znode_without_partitions_near_misses,
    ),
    Scenario(
        "topic-znode-without-partitions-failover",
        ("§7.6", "§8", "§7.1"),
        "a topic znode without partitions at controller failover: its deletion completes, it can be created again",
        _topic_znode_without_partitions_failover,
    ),
    Scenario(
        "create-fault",
        ("§5.2a", "§3.3"),
        "createTopicPartitionStatesRaw throws (a connection loss): the partitions stay NewPartition",
        _create_fault,
        _create_fault_near_misses,
    ),
    Scenario(
        "zk-reassignment",
        ("§7.7", "§7.8"),
        "reassignment through /admin/reassign_partitions",
        _zk_reassignment,
    ),
    Scenario(
        "reassignment-failover",
        ("§7.1", "§7.7", "§7.8"),
        "controller failover in the middle of a reassignment",
        _reassignment_across_failover,
    ),
    Scenario(
        "api-reassignment",
        ("§7.7",),
        "API reassignment: validation, superseding, cancellation",
        _api_reassignment,
    ),
    Scenario(
        "zk-faults",
        ("§3.3", "§5.2"),
        "BADVERSION and CONNECTIONLOSS during elections and ISR removal",
        _zk_faults,
    ),
    Scenario(
        "controller-moves",
        ("§7.12", "§9"),
        "a newer controller, zombie writes, resignation, failover",
        _controller_moves,
    ),
    Scenario(
        "bounce-and-log-dirs",
        ("§7.2", "§7.5", "§7.11"),
        "broker bounce, offline log dir, ISR change",
        _bounce_and_log_dirs,
    ),
    Scenario(
        "isr-order-election",
        ("§6", "§7.4", "§7.11"),
        "offline and unclean elections when the ISR order is not the assignment order",
        _isr_order_election,
    ),
    Scenario(
        "shutdown-with-retry",
        ("§7.10", "§5.2", "§3.3"),
        "controlled shutdown, then an election that hits BADVERSION and retries",
        _shutdown_with_retry,
    ),
    Scenario(
        "deletion-without-leaders",
        ("§8", "§4.3", "§7.3"),
        "deleting topics whose partitions never had a leader",
        _deletion_without_leaders,
    ),
    Scenario(
        "deletion-during-reassignment",
        ("§7.7", "§8", "§7.12"),
        "a topic deleted while its partitions are being reassigned, then controller failovers",
        _deletion_during_reassignment,
    ),
    Scenario(
        "reassignment-interrupted",
        ("§7.1", "§7.7", "§8", "§3.3"),
        "a reassignment left half-done by a ZooKeeper error, its topic deleted before the next controller",
        _reassignment_interrupted,
    ),
    Scenario(
        "auto-rebalance-threshold",
        ("§7.9", "§7.4"),
        "automatic preferred election at the imbalance threshold, over every broker",
        _auto_rebalance_threshold,
    ),
    Scenario(
        "log-dir-failures",
        ("§7.5", "§7.1"),
        "two storage errors from one broker, a failover, and the error reported again",
        _log_dir_failures,
    ),
    Scenario(
        "zombie-write-then-isr-change",
        ("§9", "§7.11", "§7.4"),
        "a zombie controller's leader change read back through an ISR change, then the old leader fails",
        _zombie_write_then_isr_change,
    ),
    Scenario(
        "shutdown-broker-epochs",
        ("§7.10",),
        "controlled shutdown requests with a stale and with the current broker epoch",
        _shutdown_broker_epochs,
    ),
    Scenario(
        "deleted-topic-config",
        ("§8", "§6"),
        "a topic with an unclean override deleted and re-created: the override is gone",
        _deleted_topic_config,
    ),
    Scenario(
        "unclean-cluster-wide",
        ("§6", "§7.4"),
        "unclean leader election enabled for the whole cluster while a partition is offline",
        _unclean_cluster_wide,
    ),
    Scenario(
        "unclean-admin-election",
        ("§6", "§7.9"),
        "an admin-requested unclean election of an offline partition (2.8; 1.1: the cluster-wide setting)",
        _unclean_admin_election,
    ),
    Scenario(
        "shutdown-after-reassignment",
        ("§7.7", "§7.10"),
        "controlled shutdown of a broker a completed reassignment moved a partition away from",
        _shutdown_after_reassignment,
    ),
    Scenario(
        "reassignment-resignation",
        ("§7.7", "§7.8", "§7.12"),
        "the controller resigns in the middle of a reassignment and another one finishes it",
        _reassignment_resignation,
    ),
    Scenario(
        "partition-errors",
        ("§7.5", "§8"),
        "broker responses with per-partition errors: a StopReplica with one partition in error, LeaderAndIsr "
        "responses with partitions back online",
        _partition_errors,
    ),
    Scenario(
        "broker-batches",
        ("§7.2", "§7.5"),
        "one BrokerChange with several new, dead and bounced brokers, and log-dir failure notifications of "
        "several brokers followed by their LeaderAndIsr responses",
        _broker_batches,
        _broker_batches_near_misses,
    ),
    Scenario(
        "offline-partitions-count",
        ("§3.1", "§7.4", "§7.3"),
        "OfflinePartitionsCount through a broker failure and return "
        "(PartitionStateMachineTest.testUpdatingOfflinePartitionsCount)",
        _offline_partitions_count,
    ),
    Scenario(
        "offline-partitions-count-during-deletion",
        ("§3.1", "§8"),
        "offline partitions leave OfflinePartitionsCount when their topic's deletion starts "
        "(PartitionStateMachineTest.testUpdatingOfflinePartitionsCountDuringTopicDeletion)",
        _offline_partitions_count_during_deletion,
    ),
    Scenario(
        "imbalance-concurrent-topic-deletion",
        ("§3.1", "§8", "§12.4"),
        "a second topic deletion while the first is queued leaves PreferredReplicaImbalanceCount at 0 "
        "(ControllerContextTest.testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion, KAFKA-13572)",
        _imbalance_concurrent_topic_deletion,
    ),
    Scenario(
        "broker-change-during-reassignment",
        ("§7.2", "§7.7"),
        "several brokers change at once before a reassignment; while it is in flight such a BrokerChange is not "
        "enabled",
        _broker_change_during_reassignment,
        _broker_change_during_reassignment_near_misses,
    ),
)

SCENARIOS_BY_NAME = {s.name: s for s in SCENARIOS}

METRIC_CHECKPOINTS: dict[str, tuple[tuple[int, int | None, int | None], ...]] = {
    "offline-partitions-count": ((5, 4, None), (6, 0, None)),
    "offline-partitions-count-during-deletion": ((5, 4, None), (6, 0, None)),
    "imbalance-concurrent-topic-deletion": ((8, None, 0),),
}
"""What the Kafka test each scenario ports asserts, in both profiles: (after step n counted from 1,
OfflinePartitionsCount, PreferredReplicaImbalanceCount), ``None`` where the test asserts nothing."""
