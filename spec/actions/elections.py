"""Replica leader elections (§7.9) and the unclean-config trigger (§6): ``onReplicaElection``, the
``ReplicaLeaderElection`` (ZooKeeper- or admin-triggered), ``AutoPreferredReplicaLeaderElection`` and
``UncleanLeaderElectionEnable`` actions.

Results returned to an admin client (error codes) are not state and are not modelled. Ordering decision: the
auto rebalance visits preferred brokers in ascending id (Kafka: hash order); [1.1] its per-partition elections run
in ascending partition order.
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import common
from kcspec.spec.elections import elect, election_input
from kcspec.spec.events import (
    AutoPreferredReplicaLeaderElection,
    ReplicaLeaderElection,
    UncleanLeaderElectionEnable,
)
from kcspec.spec.lang import Action, Block, Expr, and_, if_, let, lift, rule, set_of
from kcspec.spec.partition_machine import partition_state_change, trigger_online_partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ElectionStrategy,
    ElectionTrigger,
    ElectionType,
    LeaderElection,
    PartitionState,
)

PREFERRED = LeaderElection(ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy)
OFFLINE_CLEAN = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy, allow_unclean=False)
OFFLINE_UNCLEAN = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy, allow_unclean=True)
ONLINE = PartitionState.OnlinePartition


def delete_preferred_replica_election_znode(p: Profile, w: Expr) -> Expr:
    """``deletePreferredReplicaElection`` (fenced); the re-arming event it enqueues finds no znode and does nothing."""
    return common.fenced_zk(p, w, lambda z: z.with_(preferred_replica_election=frozenset()))


def remove_partitions_from_preferred_replica_election(
    p: Profile, w: Expr, partitions: Expr, auto: bool
) -> Expr:
    """``removePartitionsFromPreferredReplicaElection(P, isAuto)`` (§7.9): only logging, then — unless auto — delete
    ``/admin/preferred_replica_election``. It dereferences LI(p) and head(AR(p)): [1.1] a partition without them
    throws before the znode is deleted (2.8 callers only pass partitions that have them)."""
    if auto:
        return lift(w)
    if p.kip460_replica_election:
        return delete_preferred_replica_election_znode(p, w)
    return let(
        w,
        lambda x: if_(
            partitions.all(
                lambda tp: (
                    context.has_leadership(common.st(x), tp) & context.replicas(common.st(x), tp).non_empty()
                )
            ),
            delete_preferred_replica_election_znode(p, x),
            x,
        ),
    )


def on_replica_election(
    p: Profile, w: Expr, partitions: Expr, election: LeaderElection, trigger: ElectionTrigger
) -> Expr:
    """``onReplicaElection(P, type, trigger)`` (§7.9): P → OnlinePartition with the strategy; for non-admin triggers,
    ``removePartitionsFromPreferredReplicaElection`` (runs in a ``finally``, but after a ControllerMovedException its
    fenced delete fails too, so nothing more happens)."""
    elected = partition_state_change(p, w, partitions, ONLINE, election)
    if trigger == ElectionTrigger.AdminClientTriggered:
        return rule("onReplicaElection", "§7.9", elected)
    return rule(
        "onReplicaElection",
        "§7.9",
        let(
            elected,
            lambda x: remove_partitions_from_preferred_replica_election(
                p, x, partitions, trigger == ElectionTrigger.AutoTriggered
            ),
        ),
    )


def election_needed(p: Profile, s: Expr, tp: Expr, etype: Expr) -> Expr:
    """The electable filter of ``processReplicaLeaderElection`` (§7.9): PREFERRED → L(p) ≠ head(AR(p)) (always, when
    the profile has no such filter); UNCLEAN → L(p) = −1 ∨ L(p) not live."""
    return if_(
        etype.eq(ElectionType.PREFERRED),
        context.leader_of(s, tp).ne(context.replicas(s, tp).head(NO_LEADER))
        | ~lift(p.preferred_already_led_filter),
        context.leader_of(s, tp).eq(NO_LEADER) | ~context.live_brokers(s).contains(context.leader_of(s, tp)),
    )


def known_partitions(s: Expr, requested: Expr) -> Expr:
    """The requested partitions that exist (``partitionsFromAdminClientOpt`` minus the unknown ones, §7.9)."""
    return requested.filter(lambda tp: context.all_partitions(s).contains(tp))


def not_deleting(s: Expr, partitions: Expr) -> Expr:
    """The partitions whose topic is not queued for deletion (§7.9)."""
    return partitions.filter(lambda tp: ~context.queued_for_deletion(s, tp.f("topic")))


def process_replica_leader_election(p: Profile, w: Expr, requested: Expr, etype: Expr, trigger: Expr) -> Expr:
    """``ReplicaLeaderElection`` (§7.9). 2.8: the partitions (the znode's content for the ZK trigger, the request
    otherwise) minus unknown ones and topics queued for deletion, filtered to those that need an election (PREFERRED:
    leader ≠ head(AR); UNCLEAN: leader −1 or not live), then ``onReplicaElection``; a remaining partition without
    leadership info throws (the event is dropped). [1.1] ``PreferredReplicaLeaderElection``: only the deletion
    filter, no "already preferred" filter."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        zk_triggered = trigger.eq(ElectionTrigger.ZkTriggered)
        source = if_(zk_triggered, common.zk_of(x).f("preferred_replica_election"), requested)
        if not p.kip460_replica_election:
            return let(
                source.filter(lambda tp: ~context.queued_for_deletion(s, tp.f("topic"))),
                lambda ps: on_replica_election(p, x, ps, PREFERRED, ElectionTrigger.ZkTriggered),
            )
        b = Block()
        b.live = not_deleting(s, known_partitions(s, source))
        needs_election = Block()
        needs_election.electable = b.live.filter(lambda tp: election_needed(p, s, tp, etype))
        elect = needs_election.in_(dispatch(p, x, needs_election.electable, etype, trigger))
        return b.in_(if_(b.live.all(lambda tp: context.has_leadership(s, tp)), elect, x))

    return rule("processReplicaLeaderElection", "§7.9", let(w, body))


def dispatch(p: Profile, w: Expr, partitions: Expr, etype: Expr, trigger: Expr) -> Expr:
    """``onReplicaElection`` with the strategy and trigger given as values of the event."""
    return if_(
        trigger.eq(ElectionTrigger.AdminClientTriggered),
        if_(
            etype.eq(ElectionType.PREFERRED),
            on_replica_election(p, w, partitions, PREFERRED, ElectionTrigger.AdminClientTriggered),
            on_replica_election(p, w, partitions, OFFLINE_UNCLEAN, ElectionTrigger.AdminClientTriggered),
        ),
        if_(
            etype.eq(ElectionType.PREFERRED),
            on_replica_election(p, w, partitions, PREFERRED, ElectionTrigger.ZkTriggered),
            on_replica_election(p, w, partitions, OFFLINE_CLEAN, ElectionTrigger.ZkTriggered),
        ),
    )


def replica_leader_election_action(p: Profile) -> Action:
    """``ReplicaLeaderElection(P, type, trigger)`` (§7.9)."""
    v = common.param_vars(ReplicaLeaderElection)
    ps, etype, trigger = v["partitions"], v["election_type"], v["trigger"]
    s = common.S
    zk_ok = etype.eq(ElectionType.PREFERRED) & s.f("zk", "preferred_replica_election").is_empty()
    admin_ok = lift(p.kip460_replica_election)
    return common.controller_action(
        ReplicaLeaderElection,
        "A preferred (ZooKeeper or admin) or unclean (admin, 2.8) leader election is requested (§7.9).",
        guard=and_(
            common.active(s),
            ps.non_empty(),
            if_(
                trigger.eq(ElectionTrigger.ZkTriggered),
                zk_ok,
                trigger.eq(ElectionTrigger.AdminClientTriggered) & admin_ok,
            ),
        ),
        environment=lambda w: if_(
            trigger.eq(ElectionTrigger.ZkTriggered), common.set_zk(w, preferred_replica_election=ps), w
        ),
        controller=lambda w: process_replica_leader_election(p, w, ps, etype, trigger),
    )


def times(n: Expr, coll: Expr) -> Expr:
    """``n · |coll|`` by a fold (the expression language has no multiplication)."""
    return coll.sorted().fold(0, lambda acc, _x: acc + n)


def can_preferred_replica_be_leader(p: Profile, s: Expr, tp: Expr) -> Expr:
    """``canPreferredReplicaBeLeader`` (§7.9, KAFKA-9866): the Preferred strategy on the cached ISR would elect."""
    return (
        elect(
            p,
            ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy,
            election_input(p, s, tp, context.leadership(s, tp).f("leader_and_isr"), PREFERRED),
        )
        .f("leader")
        .ne(NO_LEADER)
    )


def no_reassignment_in_progress(p: Profile, s: Expr) -> Expr:
    """``partitionsBeingReassigned.isEmpty``."""
    if p.kip455_reassignment:
        return s.f("controller", "partitions_being_reassigned").is_empty()
    return s.f("controller", "legacy_reassignments").is_empty()


def check_and_trigger_auto_leader_rebalance(p: Profile, w: Expr) -> Expr:
    """``checkAndTriggerAutoLeaderRebalance`` (§7.9): partitions of topics not queued for deletion grouped by
    preferred replica b; if |{p : LI(p) ∧ L(p) ≠ b}| / |group| > percentage/100, the candidates (b online for p, no
    reassignment in progress, topic not deleting and known, 2.8: preferred replica can lead) get a preferred election:
    2.8 one call per broker (KAFKA-7299), 1.1 one per partition."""

    def group_election(x: Expr, b: Expr, group: Expr) -> Expr:
        s = common.st(x)
        pct = s.f("config", "leader_imbalance_per_broker_percentage")
        return let(
            group.filter(lambda tp: context.has_leadership(s, tp) & context.leader_of(s, tp).ne(b)),
            lambda not_pref: if_(
                times(lift(100), not_pref).gt(times(pct, group)),
                elect_candidates(x, b, not_pref),
                x,
            ),
        )

    def candidate(s: Expr, b: Expr, tp: Expr) -> Expr:
        base = and_(
            context.is_online(s, b, tp),
            no_reassignment_in_progress(p, s),
            ~context.queued_for_deletion(s, tp.f("topic")),
            s.f("controller", "all_topics").contains(tp.f("topic")),
        )
        return base & can_preferred_replica_be_leader(p, s, tp) if p.auto_rebalance_isr_check else base

    def elect_candidates(x: Expr, b: Expr, not_pref: Expr) -> Expr:
        if p.auto_rebalance_batched:
            return on_replica_election(
                p,
                x,
                not_pref.filter(lambda tp: candidate(common.st(x), b, tp)),
                PREFERRED,
                ElectionTrigger.AutoTriggered,
            )
        return common.work_fold(
            not_pref.sorted(),
            x,
            lambda y, tp: if_(
                candidate(common.st(y), b, tp),
                on_replica_election(p, y, set_of(tp), PREFERRED, ElectionTrigger.AutoTriggered),
                y,
            ),
        )

    def body(x: Expr) -> Expr:
        s = common.st(x)
        return let(
            context.all_partitions(s).filter(
                lambda tp: (
                    ~context.queued_for_deletion(s, tp.f("topic")) & context.replicas(s, tp).non_empty()
                )
            ),
            lambda parts: common.work_fold(
                parts.map(lambda tp: context.replicas(s, tp).head(NO_LEADER)).sorted(),
                x,
                lambda y, b: group_election(
                    y, b, parts.filter(lambda tp: context.replicas(s, tp).head(NO_LEADER).eq(b))
                ),
            ),
        )

    return rule("checkAndTriggerAutoLeaderRebalance", "§7.9", let(w, body))


def auto_preferred_replica_leader_election_action(p: Profile) -> Action:
    """``AutoPreferredReplicaLeaderElection()`` (§7.9): the scheduled auto-rebalance check."""
    s = common.S
    return common.controller_action(
        AutoPreferredReplicaLeaderElection,
        "The scheduled leader-imbalance check runs (auto.leader.rebalance.enable) (§7.9).",
        guard=common.active(s) & s.f("config", "auto_leader_rebalance_enable"),
        environment=None,
        controller=lambda w: check_and_trigger_auto_leader_rebalance(p, w),
    )


def unclean_leader_election_enable_action(p: Profile) -> Action:
    """``UncleanLeaderElectionEnable(t)`` (§6): the config becomes true (``""`` = broker default); 2.8 re-triggers
    offline elections (KAFKA-6526/6835), 1.1 does not."""
    t = common.param_vars(UncleanLeaderElectionEnable)["topic"]

    def controller(w: Expr) -> Expr:
        return if_(
            t.eq(""),
            trigger_online_partition_state_change(p, w),
            trigger_online_partition_state_change(p, w, t),
        )

    return common.controller_action(
        UncleanLeaderElectionEnable,
        "unclean.leader.election.enable is set to true for a topic or as the broker default (§6).",
        guard=lift(True),
        environment=lambda w: if_(
            t.eq(""),
            common.set_config(w, unclean_leader_election_enable=True),
            common.set_config(w, unclean_topics=w.f("state", "config", "unclean_topics").union(set_of(t))),
        ),
        controller=controller if p.unclean_config_retrigger else None,
    )
