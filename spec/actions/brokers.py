"""Broker membership (§7.2–§7.5): ``BrokerChange`` (new, bounced, dead brokers), ``onBrokerStartup``,
``onBrokerFailure``, ``onReplicasBecomeOffline``, LeaderAndIsr responses with storage errors, and the
``BrokerStartup`` / ``BrokerFailure`` / ``BrokerBounce`` / ``LeaderAndIsrResponseReceived`` /
``LeaderAndIsrPartitionResultsReceived`` actions.

``process_broker_change`` is Kafka's handler, computed from ``/brokers/ids`` against the controller's
``liveBrokerEpochs``; the three events only differ in how they change ``/brokers/ids``. ``onBrokerStartup`` can
throw (``maybeResumeReassignments`` has no ``try``), so it returns an ``Attempt``; an exception ends the event.
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import common, deletion, reassignment_kip455, reassignment_legacy
from kcspec.spec.events import (
    BrokerBounce,
    BrokerFailure,
    BrokerStartup,
    LeaderAndIsrPartitionResultsReceived,
    LeaderAndIsrResponseReceived,
)
from kcspec.spec.lang import Action, Block, Expr, and_, build_map, if_, let, lift, rule
from kcspec.spec.partition_machine import partition_state_change, trigger_online_partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.state import NO_CONTROLLER
from kcspec.spec.vocabulary import PartitionState, ReplicaState


def clear_offline_dirs(w: Expr, brokers: Expr) -> Expr:
    """``brokers.foreach(replicasOnOfflineDirs.remove)`` (§7.3 step 1, §7.4)."""
    return common.set_ctx(
        w,
        offline_replicas=common.ctx(w)
        .f("offline_replicas")
        .filter(lambda pr: ~brokers.contains(pr.f("replica"))),
    )


def on_broker_startup(p: Profile, w: Expr, new_brokers: Expr) -> Expr:
    """``onBrokerStartup(B)`` (§7.3), an ``Attempt``: clear offline dirs; UMRs (2.8: broker list to existing brokers,
    ``partitionsWithLeaders`` to the new ones, KAFKA-7537; 1.1: one UMR, all partitions, to everyone); replicas on B
    → OnlineReplica; ``triggerOnlinePartitionStateChange``; resume reassignments touching B; resume deletion of
    queued topics with replicas on B."""
    if p.broker_startup_umr_split:

        def umrs(x: Expr) -> Expr:
            return common.pipe(
                x,
                lambda y: common.send_update_metadata(
                    p, y, context.live_or_shutting_down(common.st(y)).minus(new_brokers), frozenset()
                ),
                lambda y: common.send_update_metadata(
                    p, y, new_brokers, context.partitions_with_leaders(common.st(y))
                ),
            )

    else:

        def umrs(x: Expr) -> Expr:
            return common.send_update_metadata(p, x, context.live_or_shutting_down(common.st(x)), frozenset())

    resume = (
        reassignment_kip455.resume_on_broker_startup
        if p.kip455_reassignment
        else reassignment_legacy.resume_on_broker_startup
    )

    def resume_deletion(y: Expr, hosted: Expr) -> Expr:
        b = Block()
        b.deleting = hosted.filter(lambda pr: context.queued_for_deletion(common.st(y), pr.f("tp", "topic")))
        return b.in_(
            if_(
                b.deleting.is_empty(),
                y,
                deletion.resume_deletion_for_topics(p, y, b.deleting.map(lambda pr: pr.f("tp", "topic"))),
            )
        )

    def body(x: Expr) -> Expr:
        b = Block()
        b.hosted = context.replicas_on_brokers(common.st(x), new_brokers)
        started = common.pipe(
            x,
            lambda y: clear_offline_dirs(y, new_brokers),
            umrs,
            lambda y: replica_state_change(p, y, b.hosted, ReplicaState.OnlineReplica),
            lambda y: trigger_online_partition_state_change(p, y),
        )
        return b.in_(
            common.attempt_pipe(
                common.ok(started),
                lambda y: resume(p, y, new_brokers),
                common.as_attempt(lambda y: resume_deletion(y, b.hosted)),
            )
        )

    return rule("onBrokerStartup", "§7.3", let(w, body))


def on_replicas_become_offline(p: Profile, w: Expr, replicas: object) -> Expr:
    """``onReplicasBecomeOffline(R)`` (§7.4): partitions with an offline leader → OfflinePartition;
    ``triggerOnlinePartitionStateChange``; replicas of topics not queued for deletion → OfflineReplica; the others
    fail their deletion; the broker-list UMR only if no partition had an offline leader (2.8.2 keeps
    KAFKA-13225; without ``broker_failure_umr_only_without_offline_leaders`` the 3.1 condition: also when no
    replica was kept and no election of step 4 succeeded)."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        b = Block()
        b.r_del = lift(replicas).filter(lambda pr: context.queued_for_deletion(s, pr.f("tp", "topic")))
        b.r_keep = lift(replicas).minus(b.r_del)
        b.p_off = context.partitions_with_offline_leader(s)
        b.y1 = partition_state_change(p, x, b.p_off, PartitionState.OfflinePartition, None)
        b.electable = context.partitions_in_states(
            common.st(b.y1), frozenset({PartitionState.OfflinePartition, PartitionState.NewPartition})
        )
        b.y2 = trigger_online_partition_state_change(p, b.y1)
        return b.in_(
            common.pipe(
                b.y2,
                lambda y: replica_state_change(p, y, b.r_keep, ReplicaState.OfflineReplica),
                lambda y: if_(b.r_del.is_empty(), y, deletion.fail_replica_deletion(p, y, b.r_del)),
                lambda y: if_(
                    umr_condition(p, b.p_off, b.r_keep, b.electable, b.y2),
                    common.send_update_metadata(
                        p, y, context.live_or_shutting_down(common.st(y)), frozenset()
                    ),
                    y,
                ),
            )
        )

    return rule("onReplicasBecomeOffline", "§7.4", let(w, body))


def umr_condition(p: Profile, p_off: Expr, r_keep: Expr, electable: Expr, after: Expr) -> Expr:
    """§7.4 step 7: when the broker-list UMR is sent."""
    if p.broker_failure_umr_only_without_offline_leaders:
        return p_off.is_empty()
    none_elected = electable.all(
        lambda tp: context.partition_state(common.st(after), tp).ne(PartitionState.OnlinePartition)
    )
    return p_off.is_empty() | (r_keep.is_empty() & none_elected)


def on_broker_failure(p: Profile, w: Expr, dead: Expr) -> Expr:
    """``onBrokerFailure(B)`` (§7.4): clear offline dirs, drop B from the shutting-down set, and
    ``onReplicasBecomeOffline`` of every replica hosted by B."""
    b = Block()
    b.x = common.set_ctx(
        clear_offline_dirs(w, dead), shutting_down=common.ctx(w).f("shutting_down").minus(dead)
    )
    return rule(
        "onBrokerFailure",
        "§7.4",
        b.in_(on_replicas_become_offline(p, b.x, context.replicas_on_brokers(common.st(b.x), dead))),
    )


def add_live_brokers(w: Expr, brokers: Expr) -> Expr:
    """``addLiveBrokers``: the brokers join ``liveBrokerEpochs`` with their registration epochs from ZooKeeper."""
    return common.set_ctx(
        w,
        live_brokers=common.ctx(w)
        .f("live_brokers")
        .merge(build_map(brokers, lambda b: common.zk_of(w).f("brokers").get(b))),
    )


def remove_live_brokers(w: Expr, brokers: Expr) -> Expr:
    """``removeLiveBrokers``."""
    return common.set_ctx(w, live_brokers=common.ctx(w).f("live_brokers").delete_all(brokers))


def process_broker_change(p: Profile, w: Expr) -> Expr:
    """``BrokerChange`` (§7.2): new = registered − known; bounced (2.8, KAFKA-7235) = registered ∩ known with a
    larger epoch; dead = known − registered. Then new → ``onBrokerStartup``; bounced → removed, ``onBrokerFailure``,
    re-added, ``onBrokerStartup``; dead → removed, ``onBrokerFailure``. An exception ends the event.

    Without bounce detection (1.1.1, before KIP-380 rewrote this handler with it in 2.2) the live set is replaced
    by the registered brokers first (``controllerContext.liveBrokers = curBrokers``), so the dead brokers are
    already gone while ``onBrokerStartup(new)`` runs; this shows only when one event has both (``BrokerChange``)."""

    def restart(y: Expr, bnc: Expr) -> Expr:
        """A bounced broker: removed, ``onBrokerFailure``, re-added, ``onBrokerStartup``."""
        return on_broker_startup(
            p, add_live_brokers(on_broker_failure(p, remove_live_brokers(y, bnc), bnc), bnc), bnc
        )

    def body(x: Expr) -> Expr:
        registered = common.zk_of(x).f("brokers")
        known = common.ctx(x).f("live_brokers")
        bounced = (
            registered.keys().inter(known.keys()).filter(lambda b: registered.get(b).gt(known.get(b)))
            if p.bounce_detection
            else lift(frozenset())
        )
        block = Block()
        block.new = registered.keys().minus(known.keys())
        block.bnc = bounced
        block.dead = known.keys().minus(registered.keys())
        return block.in_(
            common.attempt_pipe(
                common.ok(x if p.bounce_detection else remove_live_brokers(x, block.dead)),
                lambda y: if_(
                    block.new.is_empty(),
                    common.ok(y),
                    on_broker_startup(p, add_live_brokers(y, block.new), block.new),
                ),
                lambda y: if_(block.bnc.is_empty(), common.ok(y), restart(y, block.bnc)),
                common.as_attempt(
                    lambda y: if_(
                        block.dead.is_empty(),
                        y,
                        on_broker_failure(p, remove_live_brokers(y, block.dead), block.dead),
                    )
                ),
            ).f("work")
        )

    return rule("processBrokerChange", "§7.2", let(w, body))


def broker_startup_action(p: Profile) -> Action:
    """``BrokerStartup(b)`` (§7.2, §7.3): b registers with the next zxid as its epoch; ``BrokerChange``."""
    v = common.param_vars(BrokerStartup)
    b = v["broker_id"]
    return common.controller_action(
        BrokerStartup,
        "A broker registers in /brokers/ids (its czxid is its broker epoch); the controller handles BrokerChange "
        "and runs onBrokerStartup (§7.2, §7.3).",
        guard=b.ge(0) & ~common.S.f("zk", "brokers").has(b),
        environment=lambda w: common.set_zk(
            w,
            brokers=common.zk_of(w).f("brokers").put(b, common.zk_of(w).f("zxid")),
            zxid=common.zk_of(w).f("zxid") + 1,
        ),
        controller=lambda w: process_broker_change(p, w),
    )


def broker_failure_action(p: Profile) -> Action:
    """``BrokerFailure(b)`` (§7.2, §7.4): b's registration disappears (and ``/controller`` if b held it); the active
    controller on b dies with it; any other active controller handles ``BrokerChange``."""
    v = common.param_vars(BrokerFailure)
    b = v["broker_id"]
    return common.controller_action(
        BrokerFailure,
        "A broker's registration disappears; the controller handles BrokerChange and runs onBrokerFailure (§7.4); "
        "if the failed broker was the controller, its context is simply gone.",
        guard=common.S.f("zk", "brokers").has(b),
        environment=lambda w: common.set_zk(
            w,
            brokers=common.zk_of(w).f("brokers").delete(b),
            controller=if_(
                common.zk_of(w).f("controller").eq(b), NO_CONTROLLER, common.zk_of(w).f("controller")
            ),
        ),
        controller=lambda w: if_(
            common.ctx(w).f("controller_id").eq(b), common.resign(w), process_broker_change(p, w)
        ),
    )


def broker_bounce_action(p: Profile) -> Action:
    """``BrokerBounce(b)`` (§7.2): b re-registers with a new epoch between two watch firings. 2.8 handles it as
    failure + startup (KAFKA-7235); in 1.1 it is invisible to the controller."""
    v = common.param_vars(BrokerBounce)
    b = v["broker_id"]
    return common.controller_action(
        BrokerBounce,
        "A broker re-registers with a new epoch before the controller notices it left (§7.2).",
        guard=common.S.f("zk", "brokers").has(b) & b.ne(common.S.f("controller", "controller_id")),
        environment=lambda w: common.set_zk(
            w,
            brokers=common.zk_of(w).f("brokers").put(b, common.zk_of(w).f("zxid")),
            zxid=common.zk_of(w).f("zxid") + 1,
        ),
        controller=(lambda w: process_broker_change(p, w)) if p.bounce_detection else None,
    )


def process_leader_and_isr_response(p: Profile, w: Expr, broker: Expr, storage_errors: Expr) -> Expr:
    """``LeaderAndIsrResponseReceived`` (§7.5): partitions answered KAFKA_STORAGE_ERROR join the broker's offline
    dirs; the newly offline ones go through ``onReplicasBecomeOffline``."""
    b = Block()
    b.x = w
    b.offline = storage_errors.to_set().map(lambda tp: context.replica(tp, broker))
    b.newly = b.offline.minus(common.ctx(b.x).f("offline_replicas"))
    b.y = common.set_ctx(b.x, offline_replicas=common.ctx(b.x).f("offline_replicas").union(b.offline))
    handled = b.in_(if_(b.newly.is_empty(), b.y, on_replicas_become_offline(p, b.y, b.newly)))
    return rule("processLeaderAndIsrResponseReceived", "§7.5", handled)


def leader_and_isr_response_action(p: Profile) -> Action:
    """``LeaderAndIsrResponseReceived(b, P)`` (§7.5): broker b reports KAFKA_STORAGE_ERROR for P."""
    v = common.param_vars(LeaderAndIsrResponseReceived)
    b, errs = v["broker_id"], v["storage_errors"]
    s = common.S
    return common.controller_action(
        LeaderAndIsrResponseReceived,
        "A broker answers a LeaderAndIsr request with KAFKA_STORAGE_ERROR for some partitions (offline log "
        "directory); they are marked offline (§7.5).",
        guard=and_(
            common.active(s),
            s.f("controller", "live_brokers").has(b),
            errs.non_empty(),
            errs.all(lambda tp: context.replicas(s, tp).contains(b)),
        ),
        environment=None,
        controller=lambda w: process_leader_and_isr_response(p, w, b, errs),
    )


def leader_and_isr_partition_results_action(p: Profile) -> Action:
    """``LeaderAndIsrPartitionResultsReceived(b, online, storage_errors)`` (§7.5): the partitions answered NONE leave
    b's offline replicas (``previous -- onlineReplicas``), then those answered KAFKA_STORAGE_ERROR are handled as
    in ``LeaderAndIsrResponseReceived`` (joined, the newly offline ones through ``onReplicasBecomeOffline``)."""
    v = common.param_vars(LeaderAndIsrPartitionResultsReceived)
    b, online, errs = v["broker_id"], v["online"], v["storage_errors"]
    s = common.S

    def controller(w: Expr) -> Expr:
        back = online.to_set().map(lambda tp: context.replica(tp, b))
        return process_leader_and_isr_response(
            p, common.set_ctx(w, offline_replicas=common.ctx(w).f("offline_replicas").minus(back)), b, errs
        )

    return common.controller_action(
        LeaderAndIsrPartitionResultsReceived,
        "A broker answers a LeaderAndIsr request with NONE for some partitions (they are no longer offline) and "
        "KAFKA_STORAGE_ERROR for others (they are marked offline) (§7.5).",
        guard=and_(
            common.active(s),
            s.f("controller", "live_brokers").has(b),
            online.non_empty(),
            online.to_set().inter(errs.to_set()).is_empty(),
            online.all(lambda tp: context.replicas(s, tp).contains(b)),
            errs.all(lambda tp: context.replicas(s, tp).contains(b)),
        ),
        environment=None,
        controller=controller,
    )
