"""Controller election, failover and resignation (§7.1, §7.12): ``onControllerFailover`` and the
``ControllerFailover`` / ``ControllerResignation`` / ``ControllerChange`` actions.

Failover steps that only register watches, start the scheduler or touch metrics have no state effect. A
non-ControllerMoved exception during failover (a CONNECTIONLOSS read of the state znodes, an exception while
resuming a reassignment, a pending preferred election on a partition without leadership info) ends it with
``triggerControllerMove`` (§7.1 step 3).
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import (
    common,
    deletion,
    elections,
    features,
    reassignment_kip455,
    reassignment_legacy,
    topic_ids,
)
from kcspec.spec.events import ControllerChange, ControllerFailover, ControllerResignation
from kcspec.spec.lang import Action, Block, Expr, and_, if_, let, rule
from kcspec.spec.partition_machine import initialize_partition_state, trigger_online_partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import initialize_replica_state, replica_state_change
from kcspec.spec.state import NO_CONTROLLER, ControllerContext
from kcspec.spec.vocabulary import ElectionTrigger, ReplicaState


def elect_controller(w: Expr, broker: Expr) -> Expr:
    """Environment of ``ControllerFailover(b)`` (§7.1 election): an active controller resigns first; ``/controller``
    := b and ``/controller_epoch`` is incremented (value and znode version)."""
    z = common.zk_of(w)
    return common.set_zk(
        if_(common.active(common.st(w)), common.resign(w), w),
        controller=broker,
        controller_epoch=z.f("controller_epoch") + 1,
        controller_epoch_zk_version=z.f("controller_epoch_zk_version") + 1,
    )


def initialize_controller_context(p: Profile, w: Expr, broker: Expr) -> Expr:
    """``initializeControllerContext`` (§7.1 steps 3–4), an ``Attempt``: epoch from ZooKeeper, ISR-change
    notifications deleted, live brokers with their epochs, topics (``getAllTopicsInCluster``: the topic znodes,
    with or without partitions), ``processTopicIds`` for all of them (2.8, ``topic_ids.py``: a failed CheckOp makes
    the failover throw), assignments, reassigning partitions (2.8: FA with adding/removing replicas; 1.1:
    the ``/admin/reassign_partitions`` content), then the leadership cache read from the state znodes of every
    assigned partition (exactly as stored)."""
    z = common.zk_of(w)
    fresh = ControllerContext()
    base = common.st(w).with_(
        controller=common.ctx(w).with_(
            controller_id=broker,
            epoch=z.f("controller_epoch"),
            epoch_zk_version=z.f("controller_epoch_zk_version"),
            live_brokers=z.f("brokers"),
            shutting_down=fresh.shutting_down,
            all_topics=z.f("topics"),
            assignments=z.f("assignments"),
            partitions_being_reassigned=z.f("assignments")
            .keys()
            .filter(lambda tp: reassignment_kip455.being_reassigned(z.f("assignments").get(tp)))
            if p.kip455_reassignment
            else fresh.partitions_being_reassigned,
            legacy_reassignments=fresh.legacy_reassignments
            if p.kip455_reassignment
            else z.f("reassign_partitions"),
        ),
        zk=z.with_(isr_change_notifications=frozenset()),
    )
    b = Block()
    b.x = topic_ids.process_topic_ids(p, w.with_(state=base), z.f("topics"))
    refreshed = common.then(
        common.ok(b.x),
        lambda y: common.then_work(
            common.read_state_znodes(y, z.f("assignments").keys()),
            lambda v: common.refresh_leadership_cache(v, z.f("assignments").keys()),
        ),
    )
    return rule("initializeControllerContext", "§7.1", b.in_(refreshed))


def fetch_topic_deletions_in_progress(p: Profile, w: Expr) -> Expr:
    """§7.1 step 5: ``/admin/delete_topics`` is queued (deletion enabled) with the topics that have an offline
    replica or a partition being reassigned marked ineligible; with deletion disabled the znodes are deleted."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        requested = common.zk_of(x).f("delete_topics")
        ineligible = (
            common.ctx(x)
            .f("all_topics")
            .filter(
                lambda t: context.replicas_of_topic(s, t).any(
                    lambda pr: ~context.is_online(s, pr.f("replica"), pr.f("tp"))
                )
            )
            .union(deletion.reassigning_topics(p, s))
        )
        return if_(
            deletion.deletion_enabled(x),
            common.set_ctx(
                x,
                topics_to_be_deleted=requested,
                topics_ineligible_for_deletion=ineligible.inter(requested),
            ),
            if_(
                requested.is_empty(),
                x,
                common.fenced_zk(
                    p, x, lambda zt: zt.with_(delete_topics=zt.f("delete_topics").minus(requested))
                ),
            ),
        )

    return rule("fetchTopicDeletionsInProgress", "§7.1", let(w, body))


def start_state_machines(p: Profile, w: Expr) -> Expr:
    """§7.1 step 7: replica machine startup (§4.8: initial states, online replicas → OnlineReplica, 2.8: offline
    replicas → OfflineReplica), then partition machine startup (§5.4)."""

    def replica_startup(x: Expr) -> Expr:
        b = Block()
        b.y = initialize_replica_state(p, x)
        b.all_r = context.replicas_of_partitions(common.st(b.y), context.all_partitions(common.st(b.y)))
        b.online = b.all_r.filter(lambda pr: context.is_online(common.st(b.y), pr.f("replica"), pr.f("tp")))
        offline_dead: list[common.Step] = (
            [lambda v: replica_state_change(p, v, b.all_r.minus(b.online), ReplicaState.OfflineReplica)]
            if p.startup_offlines_dead_replicas
            else []
        )
        return b.in_(
            common.pipe(
                b.y, lambda v: replica_state_change(p, v, b.online, ReplicaState.OnlineReplica), *offline_dead
            )
        )

    return rule(
        "startStateMachines",
        "§7.1",
        common.pipe(
            w,
            replica_startup,
            lambda x: initialize_partition_state(p, x),
            lambda x: trigger_online_partition_state_change(p, x),
        ),
    )


def pending_preferred_replica_elections(p: Profile, w: Expr) -> Expr:
    """§7.1 step 11, an ``Attempt``: the partitions of ``/admin/preferred_replica_election`` that still exist, are not
    led by their preferred replica and whose topic is not queued for deletion get a ZK-triggered preferred election
    (which deletes the znode). An existing listed partition without leadership info throws."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        b = Block()
        b.listed = common.zk_of(x).f("preferred_replica_election")
        b.existing = b.listed.filter(lambda tp: context.replicas(s, tp).non_empty())
        not_led_by_preferred = b.existing.filter(
            lambda tp: (
                context.leader_of(s, tp).ne(context.replicas(s, tp).head(-1))
                & ~context.queued_for_deletion(s, tp.f("topic"))
            )
        )
        elect = common.ok(
            elections.on_replica_election(
                p, x, not_led_by_preferred, elections.PREFERRED, ElectionTrigger.ZkTriggered
            )
        )
        return b.in_(if_(b.existing.all(lambda tp: context.has_leadership(s, tp)), elect, common.thrown(x)))

    return rule("fetchPendingPreferredReplicaElections", "§7.1", let(w, body))


def on_controller_failover(p: Profile, w: Expr, broker: Expr) -> Expr:
    """``onControllerFailover`` (§7.1 steps 1, 3–11) on the work after the election: the ``/feature`` znode set up
    first (2.8, ``features.py``), then the context and the state machines; an exception ends it with
    ``triggerControllerMove``."""
    reassignments = (
        reassignment_kip455.initialize_partition_reassignments
        if p.kip455_reassignment
        else reassignment_legacy.initialize_partition_reassignments
    )
    attempt = common.attempt_pipe(
        initialize_controller_context(p, features.maybe_setup_feature_versioning(p, w), broker),
        common.as_attempt(lambda x: fetch_topic_deletions_in_progress(p, x)),
        common.as_attempt(
            lambda x: common.send_update_metadata(
                p, x, context.live_or_shutting_down(common.st(x)), frozenset()
            )
        ),
        common.as_attempt(lambda x: start_state_machines(p, x)),
        lambda x: reassignments(p, x),
        common.as_attempt(lambda x: deletion.try_topic_deletion(p, x)),
        lambda x: pending_preferred_replica_elections(p, x),
    )
    b = Block()
    b.a = attempt
    ended = if_(
        b.a.f("error") & ~b.a.f("work", "moved"),
        common.trigger_controller_move(p, b.a.f("work")),
        b.a.f("work"),
    )
    return rule("onControllerFailover", "§7.1", b.in_(ended))


def controller_failover_action(p: Profile) -> Action:
    """``ControllerFailover(b)`` (§7.1, §7.12)."""
    b = common.param_vars(ControllerFailover)["broker_id"]
    block = Block()
    block.w = elect_controller(common.start_work(common.S), b)
    effect = block.in_(common.finish(on_controller_failover(p, block.w, b)))
    return common.event_action(
        ControllerFailover,
        "The active controller (if any) resigns and the broker wins the controller election; it increments "
        "the controller epoch and runs onControllerFailover (§7.1).",
        guard=and_(common.S.f("zk", "brokers").has(b), common.nothing_queued(common.S)),
        effect=effect,
    )


def controller_resignation_action(p: Profile) -> Action:
    """``ControllerResignation()`` (§7.12 ``Expire``): ``/controller`` disappears with the session; the controller
    resigns. ``Expire`` is put with ``clearAndPut``: it preempts every queued request (answered NOT_CONTROLLER by
    ``resign``) instead of waiting behind them. Controller shutdown (``ShutdownEventThread``, also ``clearAndPut``,
    then ``onControllerResignation`` and the session closed) has the same effect on the controller and is written
    as this event too."""
    return common.controller_action(
        ControllerResignation,
        "The active controller's ZooKeeper session expires: /controller is deleted and the controller resigns.",
        guard=common.active(common.S),
        environment=lambda w: common.set_zk(w, controller=NO_CONTROLLER),
        controller=common.resign,
        preempts=True,
    )


def controller_change_action(p: Profile) -> Action:
    """``ControllerChange()`` (§7.12 ``maybeResign``): ``/controller`` no longer names the active controller."""
    s = common.S
    return common.controller_action(
        ControllerChange,
        "The active controller sees that /controller names another broker (or none) and resigns (§7.12).",
        guard=and_(common.active(s), s.f("zk", "controller").ne(s.f("controller", "controller_id"))),
        environment=None,
        controller=common.resign,
    )
