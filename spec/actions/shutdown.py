"""Controlled shutdown (§7.10): ``doControlledShutdown`` and the ``ControlledShutdown`` action.

The broker's reply (the partitions it still leads) is not state and is not modelled.
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import common
from kcspec.spec.batch import add_stop_replica_bulk, send
from kcspec.spec.events import ControlledShutdown
from kcspec.spec.lang import Action, Block, Expr, and_, if_, lift, rule, set_of
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import (
    UNKNOWN_BROKER_EPOCH,
    ElectionStrategy,
    LeaderElection,
    PartitionState,
    ReplicaState,
)

CONTROLLED_SHUTDOWN = LeaderElection(ElectionStrategy.ControlledShutdownPartitionLeaderElectionStrategy)


def accepted(p: Profile, s: Expr, broker: Expr, broker_epoch: Expr) -> Expr:
    """Steps 2–3: the broker is live-or-shutting-down and (2.8, KAFKA-7235) its epoch is not stale."""
    known = s.f("controller", "live_brokers").has(broker)
    if not p.controlled_shutdown_epoch_and_deletion_checks:
        return known
    return known & (
        broker_epoch.eq(UNKNOWN_BROKER_EPOCH) | broker_epoch.ge(s.f("controller", "live_brokers").get(broker))
    )


def partitions_to_act_on(p: Profile, s: Expr, broker: Expr) -> Expr:
    """Step 5: partitions with the broker in AR, |AR| > 1, leadership info, (2.8, KAFKA-6753) topic not deleting."""
    parts = (
        s.f("controller", "leadership")
        .keys()
        .filter(lambda tp: context.replicas(s, tp).contains(broker) & context.replicas(s, tp).size().gt(1))
    )
    if p.controlled_shutdown_epoch_and_deletion_checks:
        return parts.filter(lambda tp: ~context.queued_for_deletion(s, tp.f("topic")))
    return parts


def do_controlled_shutdown(p: Profile, w: Expr, broker: Expr, broker_epoch: Expr) -> Expr:
    """``doControlledShutdown(id, brokerEpoch)`` (§7.10): mark the broker shutting down; partitions it leads →
    OnlinePartition with the ControlledShutdown strategy; one batch of StopReplica(delete=false) to it for the
    partitions it follows; those follower replicas → OfflineReplica."""

    def body(x: Expr) -> Expr:
        b = Block()
        b.y = common.set_ctx(x, shutting_down=common.ctx(x).f("shutting_down").union(set_of(broker)))
        b.act = partitions_to_act_on(p, common.st(b.y), broker)
        b.led = b.act.filter(lambda tp: context.leader_of(common.st(b.y), tp).eq(broker))
        b.followed = b.act.minus(b.led).map(lambda tp: context.replica(tp, broker))
        return b.in_(
            common.pipe(
                b.y,
                lambda z: partition_state_change(
                    p, z, b.led, PartitionState.OnlinePartition, CONTROLLED_SHUTDOWN
                ),
                lambda z: if_(
                    b.followed.is_empty(), z, send(p, add_stop_replica_bulk(p, z, b.followed, False))
                ),
                lambda z: replica_state_change(p, z, b.followed, ReplicaState.OfflineReplica),
            )
        )

    b = Block()
    b.x = w
    return rule(
        "doControlledShutdown",
        "§7.10",
        b.in_(if_(accepted(p, common.st(b.x), broker, broker_epoch), body(b.x), b.x)),
    )


def controlled_shutdown_action(p: Profile) -> Action:
    """``ControlledShutdown(b, epoch)`` (§7.10)."""
    v = common.param_vars(ControlledShutdown)
    b, e = v["broker_id"], v["broker_epoch"]
    return common.controller_action(
        ControlledShutdown,
        "A broker asks the controller to move its leaderships away before it shuts down (§7.10).",
        guard=and_(common.active(common.S), common.S.f("zk", "brokers").has(b)),
        environment=None,
        controller=lambda w: do_controlled_shutdown(p, w, b, lift(e)),
    )
