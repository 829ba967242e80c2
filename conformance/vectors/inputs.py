"""The inputs of the conformance vectors: election inputs, state-machine calls in named contexts, and
controller events along the built-in scenarios. Expected answers come from the oracles
(``generate.py``); this module only decides *what* is asked, and which section it checks.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from kcspec.conformance.protocol import messages as m
from kcspec.spec.events import (
    ApiPartitionReassignment,
    ApiPartitionReassignmentQueued,
    BrokerBounce,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdownQueued,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    ListPartitionReassignmentsQueued,
    PartitionExpansion,
    QueuedEventProcessed,
    ReplicaLeaderElectionQueued,
    StopReplicaResponseReceived,
    TopicCreation,
    TopicDeletion,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    ClusterConfig,
    ElectionInput,
    ElectionStrategy,
    ElectionType,
    FeatureZNodeStatus,
    InterBrokerProtocol,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
    ZkFault,
)

S = ElectionStrategy
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
T2 = TopicPartition("t", 2)


@dataclass(frozen=True)
class Case:
    """One vector to be: an id, the sections it checks, what a SUT needs, the state and the request."""

    id: str
    sections: tuple[str, ...]
    description: str
    capabilities: frozenset[m.Capability]
    state: ClusterState | None
    request: m.Elect | m.ReplicaStateChange | m.PartitionStateChange | m.Event


# ------------------------------------------------------------------------------------------ elections

STRATEGY_SLUG = {
    S.OfflinePartitionLeaderElectionStrategy: "offline",
    S.ReassignPartitionLeaderElectionStrategy: "reassign",
    S.PreferredReplicaPartitionLeaderElectionStrategy: "preferred",
    S.ControlledShutdownPartitionLeaderElectionStrategy: "controlled-shutdown",
}
ISRS: tuple[tuple[int, ...], ...] = ((1, 2, 3), (2, 3), (3, 1), (3,), (1,), (4, 2), ())
"""ISR variants, including a member outside the assignment (4) and the impossible empty ISR (§6 edge cases)."""
ONLINE: tuple[frozenset[int], ...] = (
    frozenset({1, 2, 3}),
    frozenset({2, 3}),
    frozenset({3}),
    frozenset({1}),
    frozenset(),
    frozenset({2, 4}),
)
SHUTTING_DOWN: tuple[frozenset[int], ...] = (frozenset(), frozenset({1}), frozenset({1, 2}))
TARGETS: tuple[tuple[int, ...], ...] = ((1, 2, 3), (3, 2), (4, 5))


def _slug(values: object) -> str:
    if isinstance(values, frozenset | set):
        values = sorted(values)
    if isinstance(values, tuple | list):
        return "_".join(str(v) for v in values) or "none"
    return str(values)


def election_cases() -> Iterator[Case]:
    """Every strategy over ISR × liveness × shutting-down × unclean flags (§6, with its edge cases)."""
    assignment = (1, 2, 3)
    caps = frozenset({m.Capability.elections})
    for strategy, slug in STRATEGY_SLUG.items():
        flags = [(False, False), (True, False), (False, True)] if slug == "offline" else [(False, False)]
        targets = TARGETS if slug == "reassign" else (assignment,)
        for isr, live, down, (allow, enabled), target in itertools.product(
            ISRS, ONLINE, SHUTTING_DOWN, flags, targets
        ):
            online = live - down
            leader = isr[0] if isr else -1
            inp = ElectionInput(
                assignment=assignment,
                target_replicas=target,
                leader_and_isr=LeaderAndIsr(leader, 5, isr, 7),
                online=online,
                online_or_shutting_down=live | down,
                shutting_down=down,
                allow_unclean=allow,
                unclean_enabled=enabled,
            )
            ident = (
                f"elect.{slug}.isr-{_slug(isr)}.live-{_slug(live)}.down-{_slug(down)}"
                + (f".allow-{int(allow)}.unclean-{int(enabled)}" if slug == "offline" else "")
                + (f".target-{_slug(target)}" if slug == "reassign" else "")
            )
            yield Case(
                ident,
                ("§6",),
                f"{strategy.name}: ISR {list(isr)}, live {sorted(live)}, shutting down {sorted(down)}"
                + (
                    f", allowUnclean={allow}, unclean.leader.election.enable={enabled}"
                    if slug == "offline"
                    else ""
                )
                + (f", target replicas {list(target)}" if slug == "reassign" else ""),
                caps,
                None,
                m.Elect(strategy, inp),
            )


# ------------------------------------------------------------------------------------ machine contexts


def base_state() -> ClusterState:
    """Controller 1 (epoch 1) with brokers 1–3 live; topic t: t-0 on [1,2,3] led by 1 with ISR [1,2,3],
    Online, replicas Online; t-1 on [2,3,1] without leadership yet, New, replicas New."""
    li = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3), 0), 1)
    brokers = FMap({1: 10, 2: 11, 3: 12})
    assignments = FMap({T0: ReplicaAssignment((1, 2, 3)), T1: ReplicaAssignment((2, 3, 1))})
    replica_states: dict[PartitionReplica, ReplicaState] = {}
    for r in (1, 2, 3):
        replica_states[PartitionReplica(T0, r)] = ReplicaState.OnlineReplica
        replica_states[PartitionReplica(T1, r)] = ReplicaState.NewReplica
    return ClusterState(
        zk=ZkState(
            controller=1,
            controller_epoch=1,
            controller_epoch_zk_version=1,
            brokers=brokers,
            topics=frozenset({T0.topic, T1.topic}),
            assignments=assignments,
            partition_states=FMap({T0: li}),
            zxid=13,
        ),
        controller=ControllerContext(
            controller_id=1,
            epoch=1,
            epoch_zk_version=1,
            live_brokers=brokers,
            all_topics=frozenset({"t"}),
            assignments=assignments,
            leadership=FMap({T0: li}),
            replica_states=FMap(replica_states),
            partition_states=FMap({T0: PartitionState.OnlinePartition, T1: PartitionState.NewPartition}),
        ),
    )


def _without_broker(s: ClusterState, b: int) -> ClusterState:
    return replace(
        s,
        zk=replace(s.zk, brokers=s.zk.brokers.remove(b)),
        controller=replace(s.controller, live_brokers=s.controller.live_brokers.remove(b)),
    )


def _fault(s: ClusterState, f: ZkFault) -> ClusterState:
    return replace(s, zk=replace(s.zk, faults=FMap({T0: f})))


def _newer_znode(s: ClusterState) -> ClusterState:
    li = s.zk.partition_states[T0]
    return replace(
        s, zk=replace(s.zk, partition_states=s.zk.partition_states.set(T0, replace(li, controller_epoch=2)))
    )


def _deleting(s: ClusterState) -> ClusterState:
    """Topic t queued for deletion; t-0 at leader epoch 3, version 2, so that the UpdateMetadata state of a
    deleting partition (epoch 0, version 0, leader -2, §3.4) differs from the cached one."""
    li = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3), 2), 1)
    return replace(
        s,
        zk=replace(s.zk, delete_topics=frozenset({"t"}), partition_states=s.zk.partition_states.set(T0, li)),
        controller=replace(
            s.controller,
            topics_to_be_deleted=frozenset({"t"}),
            leadership=s.controller.leadership.set(T0, li),
        ),
    )


U0 = TopicPartition("u", 0)


def _other_topic_deleting(s: ClusterState) -> ClusterState:
    """A second topic u (u-0 on [2, 1], led by 2 at epoch 4) queued for deletion: [1.1] every UpdateMetadata
    carries its partitions (§3.4)."""
    li = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 4, (2, 1), 5), 1)
    fa = ReplicaAssignment((2, 1))
    c = s.controller
    states = c.replica_states.merge({PartitionReplica(U0, r): ReplicaState.OnlineReplica for r in (2, 1)})
    return replace(
        s,
        zk=replace(
            s.zk,
            topics=s.zk.topics | {U0.topic},
            assignments=s.zk.assignments.set(U0, fa),
            partition_states=s.zk.partition_states.set(U0, li),
            delete_topics=frozenset({"u"}),
        ),
        controller=replace(
            c,
            all_topics=c.all_topics | {"u"},
            assignments=c.assignments.set(U0, fa),
            leadership=c.leadership.set(U0, li),
            replica_states=states,
            partition_states=c.partition_states.set(U0, PartitionState.OnlinePartition),
            topics_to_be_deleted=frozenset({"u"}),
        ),
    )


def _no_znode(s: ClusterState) -> ClusterState:
    return replace(s, zk=replace(s.zk, partition_states=FMap()))


def _sole_isr(s: ClusterState) -> ClusterState:
    li = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 0), 1)
    return replace(
        s,
        zk=replace(s.zk, partition_states=s.zk.partition_states.set(T0, li)),
        controller=replace(s.controller, leadership=s.controller.leadership.set(T0, li)),
    )


def _zk_isr_shrunk(s: ClusterState) -> ClusterState:
    li = s.zk.partition_states[T0]
    shrunk = replace(li, leader_and_isr=replace(li.leader_and_isr, isr=(1, 2), zk_version=1))
    return replace(s, zk=replace(s.zk, partition_states=s.zk.partition_states.set(T0, shrunk)))


@dataclass(frozen=True)
class Context:
    name: str
    doc: str
    sections: tuple[str, ...]
    fault: bool
    state: ClusterState


def contexts() -> tuple[Context, ...]:
    b = base_state()
    return (
        Context("base", "all brokers live", (), False, b),
        Context(
            "broker3-dead",
            "broker 3 is not registered (still in the ISR)",
            ("§3.1",),
            False,
            _without_broker(b, 3),
        ),
        Context(
            "leader-dead",
            "the leader of t-0 (broker 1) is not registered",
            ("§3.1",),
            False,
            _without_broker(b, 1),
        ),
        Context(
            "broker2-shutting-down",
            "broker 2 is shutting down",
            ("§3.1",),
            False,
            replace(b, controller=replace(b.controller, shutting_down=frozenset({2}))),
        ),
        Context("topic-deleting", "topic t is queued for deletion", ("§3.4", "§8"), False, _deleting(b)),
        Context(
            "other-topic-deleting",
            "another topic, u (u-0 on [2, 1] led by 2), is queued for deletion",
            ("§3.4", "§8"),
            False,
            _other_topic_deleting(b),
        ),
        Context(
            "znode-newer-controller",
            "t-0's znode was written by controller epoch 2",
            ("§3.3", "§9"),
            False,
            _newer_znode(b),
        ),
        Context(
            "znode-missing", "t-0 is cached but its state znode is missing", ("§3.3",), False, _no_znode(b)
        ),
        Context(
            "sole-isr",
            "t-0's ISR is its leader alone (broker 1), in ZooKeeper and in the cache",
            ("§3.2",),
            False,
            _sole_isr(b),
        ),
        Context(
            "zk-isr-shrunk",
            "the leader shrank t-0's ISR to [1, 2] in ZooKeeper (version 1); the cache still has [1, 2, 3]",
            ("§3.2", "§3.3"),
            False,
            _zk_isr_shrunk(b),
        ),
        Context(
            "controller-moved",
            "/controller_epoch was rewritten by a newer controller: 2.8's fenced writes fail (ControllerMovedException)",
            ("§3.3", "§9"),
            False,
            replace(b, zk=replace(b.zk, controller_epoch_zk_version=2)),
        ),
        Context(
            "fault-badversion",
            "t-0's next conditional write fails with BADVERSION",
            ("§3.3",),
            True,
            _fault(b, ZkFault.BADVERSION),
        ),
        Context(
            "fault-connectionloss",
            "t-0's next read throws CONNECTIONLOSS",
            ("§3.3",),
            True,
            _fault(b, ZkFault.CONNECTIONLOSS),
        ),
    )


REPLICA_SECTION = {
    ReplicaState.NewReplica: "§4.1",
    ReplicaState.OnlineReplica: "§4.2",
    ReplicaState.OfflineReplica: "§4.3",
    ReplicaState.ReplicaDeletionStarted: "§4.4",
    ReplicaState.ReplicaDeletionIneligible: "§4.5",
    ReplicaState.ReplicaDeletionSuccessful: "§4.6",
    ReplicaState.NonExistentReplica: "§4.7",
}
PARTITION_SECTION = {
    PartitionState.NewPartition: "§5.1",
    PartitionState.OnlinePartition: "§5.2",
    PartitionState.OfflinePartition: "§5.3",
    PartitionState.NonExistentPartition: "§5.3",
}


def _with_replica_state(s: ClusterState, pr: PartitionReplica, state: ReplicaState) -> ClusterState:
    states = s.controller.replica_states
    states = states.remove(pr) if state is ReplicaState.NonExistentReplica else states.set(pr, state)
    return replace(s, controller=replace(s.controller, replica_states=states))


def _with_partition_state(s: ClusterState, tp: TopicPartition, state: PartitionState | None) -> ClusterState:
    states = s.controller.partition_states
    states = states.remove(tp) if state is None else states.set(tp, state)
    return replace(s, controller=replace(s.controller, partition_states=states))


def replica_cases(valid_previous: dict[ReplicaState, tuple[ReplicaState, ...]]) -> Iterator[Case]:
    """Every (from, target) pair of the replica machine: valid ones in every context for the leader, a
    follower and a replica of a partition without leadership; invalid ones once (§2.1, §2.3, §4)."""
    base_caps = frozenset({m.Capability.replica_state_machine})
    elements = (
        ("leader", PartitionReplica(T0, 1)),
        ("follower", PartitionReplica(T0, 2)),
        ("no-leadership", PartitionReplica(T1, 2)),
    )
    for target, valid in valid_previous.items():
        for source in ReplicaState:
            is_valid = source in valid
            for ctx in contexts() if is_valid else contexts()[:1]:
                for el_name, pr in elements if is_valid else elements[1:2]:
                    state = _with_replica_state(ctx.state, pr, source)
                    kind = "valid" if is_valid else "invalid"
                    yield Case(
                        f"replica.{target.name}.from-{source.name}.{el_name}.{ctx.name}",
                        (REPLICA_SECTION[target] if is_valid else "§2.1", "§2.3", *ctx.sections),
                        f"{kind} replica transition {source.name} → {target.name} of {pr} ({el_name}); {ctx.doc}",
                        base_caps | ({m.Capability.fault_injection} if ctx.fault else frozenset()),
                        state,
                        m.ReplicaStateChange((pr,), target),
                    )
    # whole-broker calls: several partitions of one broker, and several brokers in one call (§2.3 grouping)
    for ctx in contexts():
        group = (PartitionReplica(T0, 2), PartitionReplica(T1, 2), PartitionReplica(T0, 3))
        for target in (ReplicaState.OfflineReplica, ReplicaState.OnlineReplica):
            yield Case(
                f"replica.{target.name}.batch.{ctx.name}",
                (REPLICA_SECTION[target], "§2.3", "§3.4", *ctx.sections),
                f"one call moving {', '.join(map(str, group))} to {target.name}; {ctx.doc}",
                base_caps | ({m.Capability.fault_injection} if ctx.fault else frozenset()),
                ctx.state,
                m.ReplicaStateChange(group, target),
            )
    yield Case(
        "replica.empty-call",
        ("§2.3",),
        "an empty call is a no-op",
        base_caps,
        base_state(),
        m.ReplicaStateChange((), ReplicaState.OfflineReplica),
    )


ELECTIONS: tuple[tuple[str, LeaderElection | None], ...] = (
    ("offline", LeaderElection(S.OfflinePartitionLeaderElectionStrategy)),
    ("offline-unclean", LeaderElection(S.OfflinePartitionLeaderElectionStrategy, allow_unclean=True)),
    ("reassign", LeaderElection(S.ReassignPartitionLeaderElectionStrategy)),
    ("preferred", LeaderElection(S.PreferredReplicaPartitionLeaderElectionStrategy)),
    ("controlled-shutdown", LeaderElection(S.ControlledShutdownPartitionLeaderElectionStrategy)),
)


def partition_cases(valid_previous: dict[PartitionState, tuple[PartitionState, ...]]) -> Iterator[Case]:
    """Every (from, target[, strategy]) of the partition machine for a partition with and without
    leadership, valid ones in every context, invalid ones once (§2.2, §2.3, §5, §6)."""
    base_caps = frozenset({m.Capability.partition_state_machine})
    elements = (("led", T0), ("unled", T1))
    for target, valid in valid_previous.items():
        for source in PartitionState:
            is_valid = source in valid
            if target is PartitionState.OnlinePartition and is_valid:
                elections = ELECTIONS[:1] if source is PartitionState.NewPartition else ELECTIONS
            else:
                elections = (("none", None),)
            for (e_name, election), ctx in itertools.product(
                elections, contexts() if is_valid else contexts()[:1]
            ):
                if target is PartitionState.OnlinePartition and source is PartitionState.NewPartition:
                    election = None
                    e_name = "init"
                for el_name, tp in elements if is_valid else elements[:1]:
                    state = _with_partition_state(ctx.state, tp, source)
                    sections = (PARTITION_SECTION[target] if is_valid else "§2.2", "§2.3", *ctx.sections)
                    if election is not None:
                        sections += ("§6",)
                    yield Case(
                        f"partition.{target.name}.from-{source.name}.{e_name}.{el_name}.{ctx.name}",
                        sections,
                        f"{'valid' if is_valid else 'invalid'} partition transition {source.name} → {target.name}"
                        f" of {tp} ({el_name}), election {e_name}; {ctx.doc}",
                        base_caps | ({m.Capability.fault_injection} if ctx.fault else frozenset()),
                        state,
                        m.PartitionStateChange((tp,), target, election),
                    )
    yield Case(
        "partition.OnlinePartition.batch.offline.base",
        ("§5.2", "§2.3", "§3.4", "§6"),
        "one call electing t-0 and initialising t-1",
        base_caps,
        _with_partition_state(base_state(), T0, PartitionState.OfflinePartition),
        m.PartitionStateChange((T0, T1), PartitionState.OnlinePartition, ELECTIONS[0][1]),
    )


# ------------------------------------------------------------------------------------- the /feature znode

FEATURE_ZNODE_TESTS: tuple[tuple[str, FeatureZNodeStatus, InterBrokerProtocol], ...] = tuple(
    (f"testControllerFeatureZNodeSetupWhenFeatureVersioningIs{mode}With{znode}FeatureZNode", status, ibp)
    for mode, ibp in (
        ("Enabled", InterBrokerProtocol.KAFKA_2_7_IV0),
        ("Disabled", InterBrokerProtocol.KAFKA_2_6_IV0),
    )
    for znode, status in (
        ("NonExisting", FeatureZNodeStatus.Absent),
        ("DisabledExisting", FeatureZNodeStatus.Disabled),
        ("EnabledExisting", FeatureZNodeStatus.Enabled),
    )
)
"""Kafka 2.8.2 ``ControllerIntegrationTest`` methods on the ``/feature`` znode, with the znode each starts with and
the IBP of its brokers: 2.7-IV0 (``enableFeatureVersioning``) or 2.6-IV0 (``disableFeatureVersioning``)."""


def feature_znode_cases() -> Iterator[Case]:
    """The first failover of a one-broker cluster whose ZooKeeper holds ``/feature`` as each Kafka test sets it up
    (at version 3 when present, so that an update shows as version 4), under the test's IBP: 2.8 creates, enables or
    disables it (§7.1 step 1), 1.1 leaves it alone. The ids of the 2.7-IV0 cases name the znode only (they were the
    first); those of the 2.6-IV0 cases name the IBP too."""
    for test, status, ibp in FEATURE_ZNODE_TESTS:
        state = ClusterState(
            zk=ZkState(
                brokers=FMap({0: 1}),
                zxid=2,
                feature_znode=status,
                feature_znode_zk_version=0 if status is FeatureZNodeStatus.Absent else 3,
            ),
            config=ClusterConfig(inter_broker_protocol=ibp),
        )
        versioning = "" if ibp is InterBrokerProtocol.KAFKA_2_7_IV0 else "ibp-2_6-IV0."
        yield Case(
            f"event.feature-znode.{versioning}{status.value.lower()}.ControllerFailover",
            ("§7.1",),
            f"ControllerIntegrationTest.{test}: broker 0 fails over with /feature {status.value}, IBP {ibp.value}",
            frozenset({m.Capability.controller_events}),
            state,
            m.Event(ControllerFailover(0)),
        )


# ------------------------------------------------------------------------------- topic IDs (KIP-516)


Phase = tuple[InterBrokerProtocol, tuple[ControllerEvent, ...]]
"""Events run under one IBP."""


@dataclass(frozen=True)
class KafkaTestSequence:
    """A test method of Kafka 2.8.2's ``ControllerIntegrationTest`` as kcspec events, in phases.

    Kafka's test restarts its brokers with another ``inter.broker.protocol.version`` between phases; here the
    state a phase reached is the next phase's, with ``config.inter_broker_protocol`` set to that phase's IBP (a
    cluster setting of the model, §7.6). Kafka's tests use IBP 2.7-IV0 for "before topic IDs", and so do these.
    """

    name: str
    """The Kafka test method, or a name for a case no Kafka test has (a part of the vectors' ids)."""
    doc: str
    """What the sequence shows, citing the Kafka test."""
    sections: tuple[str, ...]
    profiles: tuple[str, ...]
    phases: tuple[Phase, ...]


_IV2_7 = InterBrokerProtocol.KAFKA_2_7_IV0
_IV2_8 = InterBrokerProtocol.KAFKA_2_8_IV1
_ONE_BROKER = (BrokerStartup(0), ControllerFailover(0))
_TWO_BROKERS = (BrokerStartup(0), BrokerStartup(1), ControllerFailover(0))
_T1 = TopicCreation("t1", ((0,),))
_DELETE_T1 = (TopicDeletion(("t1",)), StopReplicaResponseReceived(0, (TopicPartition("t1", 0),)))
"""``adminZkClient.deleteTopic`` on the one-broker cluster, to its end: the broker answers the StopReplica
(delete=true) of the topic's one replica (§8)."""


def _kafka_test(
    name: str, sections: tuple[str, ...], profiles: tuple[str, ...], phases: tuple[Phase, ...]
) -> KafkaTestSequence:
    return KafkaTestSequence(name, f"ControllerIntegrationTest.{name}", sections, profiles, phases)


def _migration(ibp: InterBrokerProtocol, name: str) -> KafkaTestSequence:
    """``testTopicIdMigrationAndHandling[WithOlderVersion]``: a topic is created, gets a second partition
    (``addPartitions``) and is deleted; each step is a phase, so that the test can look at the state after each."""
    both = (TopicPartition("t1", 0), TopicPartition("t1", 1))
    return _kafka_test(
        name,
        ("§7.6", "§8"),
        ("kafka-2.8",),
        (
            (ibp, (*_ONE_BROKER, _T1)),
            (ibp, (PartitionExpansion("t1", ((0,), (0,))),)),
            (ibp, (TopicDeletion(("t1",)), StopReplicaResponseReceived(0, both))),
        ),
    )


def _reelection(ibp: InterBrokerProtocol, name: str) -> KafkaTestSequence:
    """``test[No]TopicIdPersistsThroughControllerReelection``: two brokers, the topic on the controller (0), whose
    broker shuts down; broker 1 becomes the controller."""
    return _kafka_test(
        name,
        ("§7.6", "§7.1", "§7.4"),
        ("kafka-2.8",),
        ((ibp, (*_TWO_BROKERS, _T1)), (ibp, (BrokerFailure(0), ControllerFailover(1)))),
    )


TOPIC_ID_TESTS: tuple[KafkaTestSequence, ...] = (
    _kafka_test(
        "testTopicIdsAreAdded",
        ("§7.6",),
        ("kafka-2.8",),
        ((_IV2_8, (*_ONE_BROKER, _T1, TopicCreation("t2", ((0,),)))),),
    ),
    _kafka_test(
        "testTopicIdsAreNotAdded",
        ("§7.6",),
        ("kafka-2.8",),
        ((_IV2_7, (*_ONE_BROKER, _T1, TopicCreation("t2", ((0,),)))),),
    ),
    _migration(_IV2_8, "testTopicIdMigrationAndHandling"),
    _migration(_IV2_7, "testTopicIdMigrationAndHandlingWithOlderVersion"),
    _reelection(_IV2_8, "testTopicIdPersistsThroughControllerReelection"),
    _reelection(_IV2_7, "testNoTopicIdPersistsThroughControllerReelection"),
    _kafka_test(
        "testTopicIdPersistsThroughControllerRestart",
        ("§7.6", "§7.1", "§7.4", "§7.3"),
        ("kafka-2.8",),
        ((_IV2_8, (*_ONE_BROKER, _T1)), (_IV2_8, (BrokerFailure(0), *_ONE_BROKER))),
    ),
    _kafka_test(
        "testTopicIdCreatedOnUpgrade",
        ("§7.6", "§7.1", "§8"),
        ("kafka-2.8",),
        (
            (_IV2_7, (*_ONE_BROKER, _T1, BrokerFailure(0))),
            (_IV2_8, _ONE_BROKER),
            (_IV2_8, _DELETE_T1),
        ),
    ),
    KafkaTestSequence(
        "ibp-2_8-IV0",
        "IBP 2.8-IV0: the topic gets an ID, which LeaderAndIsr (v4) and UpdateMetadata (v6) do not carry (KIP-516)",
        ("§7.6", "§3.4"),
        ("kafka-2.8",),
        ((InterBrokerProtocol.KAFKA_2_8_IV0, (*_ONE_BROKER, _T1)),),
    ),
    KafkaTestSequence(
        "kafka-1_1-no-topic-ids",
        "kafka-1.1 ignores the IBP setting: no topic gets an ID",
        ("§7.6",),
        ("kafka-1.1",),
        ((_IV2_8, (*_ONE_BROKER, _T1)),),
    ),
)
"""Kafka 2.8.2's ``ControllerIntegrationTest`` topic-ID test methods (the ones named after them, each as the
test's own text does it: a broker's ``shutdown()`` is its ``BrokerFailure``, ``makeServers`` with another IBP a
new phase after it), plus the two
cases of the model no Kafka test has: IBP 2.8-IV0, where topics get IDs but LeaderAndIsr (< v5) and UpdateMetadata
(< v7) do not carry them, and the kafka-1.1 profile. ``tests/unit/spec_actions/test_topic_ids.py`` asserts on both
engines what each Kafka test asserts; the vector generator turns every step into a vector."""


# --------------------------------------------------------------- ISR changes without AlterIsr (IBP < 2.7-IV2)

_T1_0 = TopicPartition("t1", 0)

ISR_NOTIFICATION_TESTS: tuple[KafkaTestSequence, ...] = (
    KafkaTestSequence(
        "ibp-2_6-IV0-isr-notification",
        "IBP 2.6-IV0: the leader writes its ISR changes to ZooKeeper and notifies the controller, which refreshes "
        "its cache and sends UpdateMetadata (§7.11); without a controller the notification waits for the next "
        "failover, which deletes it; the /feature znode is created Disabled (KIP-584)",
        ("§7.11", "§7.1"),
        ("kafka-2.8", "kafka-1.1"),
        (
            (
                InterBrokerProtocol.KAFKA_2_6_IV0,
                (
                    BrokerStartup(0),
                    BrokerStartup(1),
                    ControllerFailover(0),
                    TopicCreation("t1", ((0, 1),)),
                    IsrChange(_T1_0, (0,)),
                    IsrChange(_T1_0, (0, 1)),
                    ControllerResignation(),
                    IsrChange(_T1_0, (0,)),
                    ControllerFailover(1),
                ),
            ),
        ),
    ),
    KafkaTestSequence(
        "ibp-2_7-IV0-reassignment-isr-notification",
        "IBP 2.7-IV0 (feature versioning, no AlterIsr): an API reassignment completes when the leader's ISR "
        "notification shows the targets caught up (IsrChangeNotification, maybeCompleteReassignment, §7.7.1, §7.11)",
        ("§7.7.1", "§7.11"),
        ("kafka-2.8",),
        (
            (
                InterBrokerProtocol.KAFKA_2_7_IV0,
                (
                    BrokerStartup(0),
                    BrokerStartup(1),
                    BrokerStartup(2),
                    ControllerFailover(0),
                    TopicCreation("t1", ((0, 1),)),
                    ApiPartitionReassignment(FMap({_T1_0: (1, 2)})),
                    IsrChange(_T1_0, (0, 1, 2)),
                ),
            ),
        ),
    ),
)
"""Runs of the kafka-2.8 profile under an IBP whose leaders send no AlterIsr (no Kafka test method has them); the
vector generator turns every step into a vector, as for ``TOPIC_ID_TESTS``."""


# ------------------------------------------------------------------------------------- the event queue


@dataclass(frozen=True)
class QueueCase:
    """A run of events from ``initial`` that queues admin elections and ends with a preemption or a processing;
    every step is a vector (``event_queue_cases``)."""

    name: str
    description: str
    initial: ClusterState
    events: tuple[ControllerEvent, ...]


QUEUE_CONFIG = ClusterConfig(max_queued_requests=4)
"""The model bound the queue vectors run with: four requests may wait."""
U0 = TopicPartition("u", 0)

EVENT_QUEUE_CASES: tuple[QueueCase, ...] = (
    QueueCase(
        "preemption-on-controller-shutdown",
        "ControllerIntegrationTest.testPreemptionOnControllerShutdown: two events wait behind a blocked one on a "
        "one-broker cluster, the controller shuts down (clearAndPut: written as ControllerResignation); both are "
        "preempted: every partition of both elections answered NOT_CONTROLLER, nothing elected",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            ControllerFailover(0),
            TopicCreation("t", ((0,),)),
            ReplicaLeaderElectionQueued(frozenset({T0})),
            ReplicaLeaderElectionQueued(frozenset({T0})),
            ControllerResignation(),
        ),
    ),
    QueueCase(
        "preemption-with-callbacks",
        "ControllerIntegrationTest.testPreemptionWithCallbacks: a preferred election for t-0 and t-1 (no such topic) "
        "broker 0's controlled shutdown, a reassignment cancelling t-0's and t-1's and a listing of t-0's and t-1's "
        "reassignments wait on a one-broker cluster, the controller shuts down: both partitions of the election "
        "answered NOT_CONTROLLER, the shutdown Failure(ControllerMovedException), the reassignment and the listing "
        "NOT_CONTROLLER for the whole request (the test's election is ZkTriggered with a callback, the model's an "
        "admin one, preempted alike)",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            ControllerFailover(0),
            ReplicaLeaderElectionQueued(frozenset({T0, T1})),
            ControlledShutdownQueued(0, 0),
            ApiPartitionReassignmentQueued(FMap({T0: None, T1: None})),
            ListPartitionReassignmentsQueued(frozenset({T0, T1})),
            ControllerResignation(),
        ),
    ),
    QueueCase(
        "processed",
        "a queued preferred election processed (§7.9): t-0 elects its preferred replica 1 (NONE, leader 1), t-1 "
        "is already led by its preferred replica (ELECTION_NOT_NEEDED), u-0 does not exist "
        "(UNKNOWN_TOPIC_OR_PARTITION); then a queued unclean election of t-0, led by a live broker "
        "(ELECTION_NOT_NEEDED)",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            BrokerStartup(1),
            ControllerFailover(0),
            TopicCreation("t", ((1, 0), (0, 1))),
            BrokerFailure(1),
            BrokerStartup(1),
            IsrChange(T0, (0, 1)),
            ReplicaLeaderElectionQueued(frozenset({T0, T1, U0})),
            ReplicaLeaderElectionQueued(frozenset({T0}), ElectionType.UNCLEAN),
            QueuedEventProcessed(),
            QueuedEventProcessed(),
        ),
    ),
    QueueCase(
        "controlled-shutdown-processed",
        "queued controlled shutdowns processed (§7.10): broker 1 leads t-0 (replicas 1, 0) and follows t-1 "
        "(replicas 0, 1); its shutdown moves t-0's leadership to broker 0 and answers Success with no partition "
        "still led; then broker 0's shutdown (the only other live broker, so no leader can be elected for t-0 "
        "and t-1) answers Success with both partitions still led",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            BrokerStartup(1),
            ControllerFailover(0),
            TopicCreation("t", ((1, 0), (0, 1))),
            ControlledShutdownQueued(1),
            ControlledShutdownQueued(0),
            QueuedEventProcessed(),
            QueuedEventProcessed(),
        ),
    ),
    QueueCase(
        "reassignment-processed",
        "a queued reassignment processed (§7.7.1): t-0 (replicas 0) moves to broker 1 (NONE), t-1's reassignment "
        "is cancelled with none in progress (NO_REASSIGNMENT_IN_PROGRESS), t-2 targets broker 5, not alive "
        "(INVALID_REPLICA_ASSIGNMENT), u-0 does not exist (UNKNOWN_TOPIC_OR_PARTITION)",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            BrokerStartup(1),
            ControllerFailover(0),
            TopicCreation("t", ((0,), (0,), (0,))),
            ApiPartitionReassignmentQueued(FMap({T0: (1,), T1: None, T2: (5,), U0: (0,)})),
            QueuedEventProcessed(),
        ),
    ),
    QueueCase(
        "list-reassignments-processed",
        "queued reassignment listings processed (§7.7.1): t-0 (replicas 0) is being moved to broker 1, t-1 is not "
        "being reassigned, u-0 does not exist; a listing of the three answers t-0's ongoing reassignment only "
        "(replicas 1, 0, adding 1, removing 0), a listing of all (Kafka's None) the same; nothing changes",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            BrokerStartup(1),
            ControllerFailover(0),
            TopicCreation("t", ((0,), (0,))),
            ApiPartitionReassignment(FMap({T0: (1,)})),
            ListPartitionReassignmentsQueued(frozenset({T0, T1, U0})),
            ListPartitionReassignmentsQueued(),
            QueuedEventProcessed(),
            QueuedEventProcessed(),
        ),
    ),
    QueueCase(
        "controlled-shutdown-stale-epoch",
        "a queued controlled shutdown with a stale broker epoch processed (§7.10 step 2, KAFKA-7235): "
        "Failure(StaleBrokerEpochException), nothing changed, after a queued election of t-0 answered first "
        "(first in, first out)",
        ClusterState(config=QUEUE_CONFIG),
        (
            BrokerStartup(0),
            BrokerStartup(1),
            ControllerFailover(0),
            TopicCreation("t", ((1, 0),)),
            BrokerBounce(1),
            ReplicaLeaderElectionQueued(frozenset({T0})),
            ControlledShutdownQueued(1, 0),
            QueuedEventProcessed(),
            QueuedEventProcessed(),
        ),
    ),
)
"""The runs of the event-queue vectors (kafka-2.8: admin elections are KIP-460's): Kafka 2.8.2's two preemption
tests, ported, and a processed election's answers."""
