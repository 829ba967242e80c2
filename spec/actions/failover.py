"""Controller election, failover and resignation (§7.1, §7.12): ``onControllerFailover`` and the
``ControllerFailover`` / ``ControllerResignation`` / ``ControllerChange`` actions.

Failover steps that only register watches, start the scheduler or touch metrics have no state effect. A
non-ControllerMoved exception during failover (a CONNECTIONLOSS read of the state znodes, an exception while
resuming a reassignment, a pending preferred election on a partition without leadership info) ends it with
``triggerControllerMove`` (§7.1 step 3).
"""

from __future__ import annotations

from kcspec.spec import context as C
from kcspec.spec.actions import common as K
from kcspec.spec.actions import deletion as D
from kcspec.spec.actions import elections as E
from kcspec.spec.actions import reassignment_kip455 as R455
from kcspec.spec.actions import reassignment_legacy as RL
from kcspec.spec.events import ControllerChange, ControllerFailover, ControllerResignation
from kcspec.spec.lang import Action, Expr, and_, if_, let, rule
from kcspec.spec.partition_machine import initialize_partition_state, trigger_online_partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import initialize_replica_state, replica_state_change
from kcspec.spec.state import NO_CONTROLLER, ControllerContext
from kcspec.spec.vocabulary import ElectionTrigger, ReplicaState


def elect_controller(w: Expr, broker: Expr) -> Expr:
    """Environment of ``ControllerFailover(b)`` (§7.1 election): an active controller resigns first; ``/controller``
    := b and ``/controller_epoch`` is incremented (value and znode version)."""
    z = K.zk_of(w)
    return K.set_zk(
        if_(K.active(K.st(w)), K.resign(w), w),
        controller=broker,
        controller_epoch=z.f("controller_epoch") + 1,
        controller_epoch_zk_version=z.f("controller_epoch_zk_version") + 1,
    )


def initialize_controller_context(p: Profile, w: Expr, broker: Expr) -> Expr:
    """``initializeControllerContext`` (§7.1 steps 3–4), an ``Attempt``: epoch from ZooKeeper, ISR-change
    notifications deleted, live brokers with their epochs, topics, assignments, reassigning partitions (2.8: FA with
    adding/removing replicas; 1.1: the ``/admin/reassign_partitions`` content), then the leadership cache read from
    the state znodes of every assigned partition (exactly as stored)."""
    z = K.zk_of(w)
    fresh = ControllerContext()
    base = K.st(w).with_(
        controller=K.ctx(w).with_(
            controller_id=broker,
            epoch=z.f("controller_epoch"),
            epoch_zk_version=z.f("controller_epoch_zk_version"),
            live_brokers=z.f("brokers"),
            shutting_down=fresh.shutting_down,
            all_topics=z.f("assignments").keys().map(lambda tp: tp.f("topic")),
            assignments=z.f("assignments"),
            partitions_being_reassigned=z.f("assignments")
            .keys()
            .filter(lambda tp: R455.being_reassigned(z.f("assignments").get(tp)))
            if p.kip455_reassignment
            else fresh.partitions_being_reassigned,
            legacy_reassignments=fresh.legacy_reassignments
            if p.kip455_reassignment
            else z.f("reassign_partitions"),
        ),
        zk=z.with_(isr_change_notifications=frozenset()),
    )
    return rule(
        "initializeControllerContext",
        "§7.1",
        let(
            w.with_(state=base),
            lambda x: K.then_work(
                K.read_state_znodes(x, z.f("assignments").keys()),
                lambda y: K.refresh_leadership_cache(y, z.f("assignments").keys()),
            ),
        ),
    )


def fetch_topic_deletions_in_progress(p: Profile, w: Expr) -> Expr:
    """§7.1 step 5: ``/admin/delete_topics`` is queued (deletion enabled) with the topics that have an offline
    replica or a partition being reassigned marked ineligible; with deletion disabled the znodes are deleted."""

    def body(x: Expr) -> Expr:
        s = K.st(x)
        requested = K.zk_of(x).f("delete_topics")
        ineligible = (
            K.ctx(x)
            .f("all_topics")
            .filter(
                lambda t: C.replicas_of_topic(s, t).any(
                    lambda pr: ~C.is_online(s, pr.f("replica"), pr.f("tp"))
                )
            )
            .union(D.reassigning_topics(p, s))
        )
        return if_(
            D.deletion_enabled(x),
            K.set_ctx(
                x,
                topics_to_be_deleted=requested,
                topics_ineligible_for_deletion=ineligible.inter(requested),
            ),
            if_(
                requested.is_empty(),
                x,
                K.fenced_zk(p, x, lambda zt: zt.with_(delete_topics=zt.f("delete_topics").minus(requested))),
            ),
        )

    return rule("fetchTopicDeletionsInProgress", "§7.1", let(w, body))


def start_state_machines(p: Profile, w: Expr) -> Expr:
    """§7.1 step 7: replica machine startup (§4.8: initial states, online replicas → OnlineReplica, 2.8: offline
    replicas → OfflineReplica), then partition machine startup (§5.4)."""

    def replica_startup(x: Expr) -> Expr:
        return let(
            initialize_replica_state(p, x),
            lambda y: let(
                C.replicas_of_partitions(K.st(y), C.all_partitions(K.st(y))),
                lambda all_r: let(
                    all_r.filter(lambda pr: C.is_online(K.st(y), pr.f("replica"), pr.f("tp"))),
                    lambda online: K.pipe(
                        y,
                        lambda v: replica_state_change(p, v, online, ReplicaState.OnlineReplica),
                        *(
                            [
                                lambda v: replica_state_change(
                                    p, v, all_r.minus(online), ReplicaState.OfflineReplica
                                )
                            ]
                            if p.startup_offlines_dead_replicas
                            else []
                        ),
                    ),
                ),
            ),
        )

    return rule(
        "startStateMachines",
        "§7.1",
        K.pipe(
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
        s = K.st(x)
        return let(
            K.zk_of(x).f("preferred_replica_election"),
            lambda listed: let(
                listed.filter(lambda tp: C.replicas(s, tp).non_empty()),
                lambda existing: if_(
                    existing.all(lambda tp: C.has_leadership(s, tp)),
                    K.ok(
                        E.on_replica_election(
                            p,
                            x,
                            existing.filter(
                                lambda tp: (
                                    C.leader_of(s, tp).ne(C.replicas(s, tp).head(-1))
                                    & ~C.queued_for_deletion(s, tp.f("topic"))
                                )
                            ),
                            E.PREFERRED,
                            ElectionTrigger.ZkTriggered,
                        )
                    ),
                    K.thrown(x),
                ),
            ),
        )

    return rule("fetchPendingPreferredReplicaElections", "§7.1", let(w, body))


def on_controller_failover(p: Profile, w: Expr, broker: Expr) -> Expr:
    """``onControllerFailover`` (§7.1 steps 3–11) on the work after the election; an exception ends it with
    ``triggerControllerMove``."""
    reassignments = (
        R455.initialize_partition_reassignments
        if p.kip455_reassignment
        else RL.initialize_partition_reassignments
    )
    attempt = K.attempt_pipe(
        initialize_controller_context(p, w, broker),
        K.as_attempt(lambda x: fetch_topic_deletions_in_progress(p, x)),
        K.as_attempt(lambda x: K.send_update_metadata(p, x, C.live_or_shutting_down(K.st(x)), frozenset())),
        K.as_attempt(lambda x: start_state_machines(p, x)),
        lambda x: reassignments(p, x),
        K.as_attempt(lambda x: D.try_topic_deletion(p, x)),
        lambda x: pending_preferred_replica_elections(p, x),
    )
    return rule(
        "onControllerFailover",
        "§7.1",
        let(
            attempt,
            lambda a: if_(
                a.f("error") & ~a.f("work", "moved"),
                K.trigger_controller_move(p, a.f("work")),
                a.f("work"),
            ),
        ),
    )


def controller_failover_action(p: Profile) -> Action:
    """``ControllerFailover(b)`` (§7.1, §7.12)."""
    b = K.param_vars(ControllerFailover)["broker_id"]
    effect = let(
        elect_controller(K.start_work(K.S), b),
        lambda w: K.finish(on_controller_failover(p, w, b)),
    )
    return Action(
        name=ControllerFailover.kind,
        section=ControllerFailover.section,
        doc="The active controller (if any) resigns and the broker wins the controller election; it increments "
        "the controller epoch and runs onControllerFailover (§7.1).",
        params=K.params_of(ControllerFailover),
        guard=K.S.f("zk", "brokers").has(b),
        effect=rule(ControllerFailover.kind, ControllerFailover.section, effect),
    )


def controller_resignation_action(p: Profile) -> Action:
    """``ControllerResignation()`` (§7.12 ``Expire``): ``/controller`` disappears with the session; the controller
    resigns."""
    return K.controller_action(
        ControllerResignation,
        "The active controller's ZooKeeper session expires: /controller is deleted and the controller resigns.",
        guard=K.active(K.S),
        environment=lambda w: K.set_zk(w, controller=NO_CONTROLLER),
        controller=K.resign,
    )


def controller_change_action(p: Profile) -> Action:
    """``ControllerChange()`` (§7.12 ``maybeResign``): ``/controller`` no longer names the active controller."""
    s = K.S
    return K.controller_action(
        ControllerChange,
        "The active controller sees that /controller names another broker (or none) and resigns (§7.12).",
        guard=and_(K.active(s), s.f("zk", "controller").ne(s.f("controller", "controller_id"))),
        environment=None,
        controller=K.resign,
    )
