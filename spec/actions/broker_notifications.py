"""Broker notifications Kafka handles for several brokers at once: a ``BrokerChange`` watch firing with several new,
dead and bounced brokers (§7.2), and ``LogDirEventNotification`` (§7.5, ``onBrokerLogDirFailure``).

Both reuse the handlers of ``brokers.py`` (``processBrokerChange``, the replica state machine); what is new here is
that one event carries several brokers, so each of Kafka's calls gets a whole group at once.
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import brokers, common
from kcspec.spec.events import BrokerChange, LogDirEventNotification
from kcspec.spec.lang import Action, Expr, and_, if_, let, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.state import NO_CONTROLLER
from kcspec.spec.vocabulary import ReplicaState


def _ascending(ids: Expr) -> Expr:
    """``ids`` lists distinct brokers in ascending order (each group of ``BrokerChange`` is written sorted, as Kafka
    sorts it before each call, so one change has one form)."""
    return ids.eq(ids.to_set().sorted())


def broker_change_action(p: Profile) -> Action:
    """``BrokerChange(new, dead, bounced)`` (§7.2): several brokers change in ``/brokers/ids`` before the watch
    fires. The new ones register (then the bounced ones re-register) with consecutive zxids as their epochs, in the
    listed order; the dead ones disappear; the controller runs ``processBrokerChange`` once for all of them."""
    v = common.param_vars(BrokerChange)
    new, dead, bounced = v["new_broker_ids"], v["dead_broker_ids"], v["bounced_broker_ids"]
    s = common.S
    registered = s.f("zk", "brokers")
    controller_id = s.f("controller", "controller_id")
    guard = and_(
        _ascending(new),
        _ascending(dead),
        _ascending(bounced),
        (new.size() + dead.size() + bounced.size()).ge(2),
        new.to_set().inter(dead.to_set()).is_empty(),
        new.to_set().inter(bounced.to_set()).is_empty(),
        dead.to_set().inter(bounced.to_set()).is_empty(),
        new.all(lambda b: b.ge(0) & ~registered.has(b)),
        dead.all(lambda b: registered.has(b) & b.ne(controller_id)),
        bounced.all(lambda b: registered.has(b) & b.ne(controller_id)),
        # Out of the model: several groups while a reassignment is in flight. onBrokerStartup can then throw
        # (maybeResumeReassignments has no try), which ends processBrokerChange before the later groups: Kafka
        # leaves those brokers' changes unhandled (the dead ones stay live) until the next BrokerChange or
        # failover, a state the strengthening W6 (live brokers are the registered ones) rules out.
        s.f("controller", "partitions_being_reassigned").is_empty(),
        s.f("controller", "legacy_reassignments").keys().is_empty(),
    )

    def environment(w: Expr) -> Expr:
        def register(z: Expr, b: Expr) -> Expr:
            return z.with_(brokers=z.f("brokers").put(b, z.f("zxid")), zxid=z.f("zxid") + 1)

        def leave(z: Expr) -> Expr:
            # a dead broker's sessions end: its registration, and /controller if it holds it (as in BrokerFailure)
            return z.with_(
                brokers=z.f("brokers").delete_all(dead.to_set()),
                controller=if_(dead.contains(z.f("controller")), NO_CONTROLLER, z.f("controller")),
            )

        return let(
            new.concat(bounced).fold(common.zk_of(w), register),
            lambda z: w.with_(state=common.st(w).with_(zk=leave(z))),
        )

    return common.controller_action(
        BrokerChange,
        "Several brokers register, re-register with a new epoch or disappear before the controller's watch on "
        "/brokers/ids fires; one BrokerChange handles them all: onBrokerStartup of the new ones, onBrokerFailure "
        "then onBrokerStartup of the bounced ones (2.8), onBrokerFailure of the dead ones (§7.2).",
        guard=guard,
        environment=environment,
        controller=lambda w: brokers.process_broker_change(p, w),
    )


def on_broker_log_dir_failure(p: Profile, w: Expr, broker_ids: Expr) -> Expr:
    """``onBrokerLogDirFailure(brokerIds)`` (§7.5): every replica on those brokers → OnlineReplica, so that each gets
    a LeaderAndIsr and its response names the replicas on the failed directories."""
    return rule(
        "onBrokerLogDirFailure",
        "§7.5",
        let(
            w,
            lambda x: replica_state_change(
                p,
                x,
                context.replicas_on_brokers(common.st(x), broker_ids.to_set()),
                ReplicaState.OnlineReplica,
            ),
        ),
    )


def log_dir_event_notification_action(p: Profile) -> Action:
    """``LogDirEventNotification(broker_ids)`` (§7.5): ``processLogDirEventNotification`` reads the brokers' ids from
    the notification znodes (deleted afterwards) and calls ``onBrokerLogDirFailure``."""
    v = common.param_vars(LogDirEventNotification)
    ids = v["broker_ids"]
    s = common.S
    return common.controller_action(
        LogDirEventNotification,
        "Brokers report a failed log directory through /log_dir_event_notification; the controller sends a "
        "LeaderAndIsr for every replica they host (all → OnlineReplica) to learn which are offline (§7.5).",
        guard=and_(
            common.active(s),
            ids.non_empty(),
            ids.all(lambda b: s.f("controller", "live_brokers").has(b)),
        ),
        environment=None,
        controller=lambda w: on_broker_log_dir_failure(p, w, ids),
    )
