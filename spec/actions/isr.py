"""ISR changes made by partition leaders (§7.11): ``AlterIsr`` (KIP-497: 2.8 with IBP ≥ 2.7-IV2) and ZooKeeper
ISR-change notifications (1.1, and 2.8 with an older IBP), and the ``IsrChange`` action.

Decision where the document is silent (code-derived, 2.8.2 ``processAlterIsr``): the whole handler runs inside a
``try`` that catches every Throwable, including the ControllerMovedException of a fenced ZK write, so a fenced
AlterIsr changes nothing and the controller does *not* resign in this event; a failing read of the updated znode
(cache refresh) likewise ends the handler before the UpdateMetadata and the reassignment check.
"""

from __future__ import annotations

from kcspec.spec import context, zk
from kcspec.spec.actions import common, reassignment_kip455, reassignment_legacy
from kcspec.spec.events import IsrChange, StaleAlterIsrReceived
from kcspec.spec.lang import Action, Block, Expr, and_, build_map, cond, if_, let, lit, or_, rec, rule, set_of
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import InterBrokerProtocol, LeaderAndIsr, LeaderIsrAndControllerEpoch


def alter_isr_enabled(p: Profile, s: Expr) -> Expr:
    """Leaders send ISR changes as AlterIsr in the ``ClusterState`` ``s`` (§7.11): the profile has AlterIsr (2.7+) and
    the IBP is ≥ 2.7-IV2 (``KafkaConfig.interBrokerProtocolVersion.isAlterIsrSupported``, which decides the broker's
    ``alterIsrManager`` and the controller's ``isAlterIsrEnabled``); otherwise they write ZooKeeper and notify."""
    if not p.alter_isr:
        return lit(False)
    return common.ibp_at_least(s, InterBrokerProtocol.KAFKA_2_7_IV2)


def send_umr(p: Profile, w: Expr, tp: Expr) -> Expr:
    """``processUpdateNotifications``: UMR for the partitions to every live-or-shutting-down broker."""
    return common.send_update_metadata(p, w, context.live_or_shutting_down(common.st(w)), set_of(tp))


def maybe_complete(p: Profile, w: Expr, tp: Expr, isr: Expr) -> Expr:
    """After the AlterIsr reply (§7.11): every successfully updated partition that is being reassigned gets
    ``maybeCompleteReassignment``, which itself checks ``isReassignmentComplete`` (TRS ⊆ ZK ISR, §7.7.1); an
    exception ends the event. (``isr`` is the ISR the reply carries; completion reads ZK, not the reply.)"""
    del isr
    return if_(
        common.ctx(w).f("partitions_being_reassigned").contains(tp),
        reassignment_kip455.maybe_complete_reassignment(p, w, tp).f("work"),
        w,
    )


def process_alter_isr(p: Profile, w: Expr, tp: Expr, leader: Expr, proposed: Expr) -> Expr:
    """``processAlterIsr(leader, epoch, {tp ↦ proposed})`` (§7.11) after the broker-epoch check."""

    def write(x: Expr) -> Expr:
        b = Block()
        b.zw = zk.update_leader_and_isr(p, common.st(x), build_map(set_of(tp), lambda _t: proposed))
        written = Block()
        written.y = x.with_(state=b.zw.f("state"))
        written.a = common.read_state_znodes(written.y, set_of(tp))
        refreshed = send_umr(p, common.refresh_leadership_cache(written.a.f("work"), set_of(tp)), tp)
        completed = written.in_(
            if_(
                written.a.f("error"), written.a.f("work"), maybe_complete(p, refreshed, tp, proposed.f("isr"))
            )
        )
        return b.in_(
            cond(
                (b.zw.f("moved"), x),
                (b.zw.f("records").has(tp), completed),
                otherwise=send_umr(p, x.with_(state=b.zw.f("state")), tp),
            )
        )

    def body(x: Expr) -> Expr:
        s = common.st(x)
        return if_(
            ~context.has_leadership(s, tp),
            send_umr(p, x, tp),
            let(
                context.leadership(s, tp).f("leader_and_isr"),
                lambda cached: cond(
                    (proposed.f("leader_epoch").lt(cached.f("leader_epoch")), send_umr(p, x, tp)),
                    (
                        proposed.f("leader").eq(cached.f("leader"))
                        & proposed.f("leader_epoch").eq(cached.f("leader_epoch"))
                        & proposed.f("isr").eq(cached.f("isr")),
                        maybe_complete(p, send_umr(p, x, tp), tp, cached.f("isr")),
                    ),
                    otherwise=write(x),
                ),
            ),
        )

    return rule("processAlterIsr", "§7.11", let(w, body))


def alter_isr_received(p: Profile, w: Expr, tp: Expr, isr: Expr) -> Expr:
    """``AlterIsrReceived(L, zk epoch of L, {tp ↦ (L, ZK leader epoch, isr, ZK version)})`` (§7.11): ignored unless the
    leader is live with that broker epoch (STALE_BROKER_EPOCH)."""

    def body(x: Expr) -> Expr:
        s = common.st(x)
        znode = zk.znode(s, tp).f("leader_and_isr")
        leader = znode.f("leader")
        live = common.ctx(x).f("live_brokers")
        return if_(
            live.has(leader) & live.get(leader).eq(common.zk_of(x).f("brokers").get(leader)),
            process_alter_isr(
                p,
                x,
                tp,
                leader,
                rec(
                    LeaderAndIsr,
                    leader=leader,
                    leader_epoch=znode.f("leader_epoch"),
                    isr=isr,
                    zk_version=znode.f("zk_version"),
                ),
            ),
            x,
        )

    return rule("AlterIsrReceived", "§7.11", let(w, body))


def isr_change_notification(p: Profile, w: Expr) -> Expr:
    """``IsrChangeNotification`` (§7.11, ZK notifications): refresh the cache of the notified partitions from ZK, UMR
    for them to every live-or-shutting-down broker, then (2.8) ``maybeCompleteReassignment`` of those being
    reassigned, in name order, an exception ending the loop; finally delete the notifications (in a ``finally``:
    also when the read or a completion throws)."""

    def complete(x: Expr, tps: Expr) -> Expr:
        if not p.kip455_reassignment:
            return x
        reassigning = tps.filter(lambda tp: common.ctx(x).f("partitions_being_reassigned").contains(tp))
        return common.attempt_fold(
            reassigning.sorted(),
            common.ok(x),
            lambda y, tp: reassignment_kip455.maybe_complete_reassignment(p, y, tp),
        ).f("work")

    def body(x: Expr) -> Expr:
        b = Block()
        b.tps = common.zk_of(x).f("isr_change_notifications")
        read = Block()
        read.a = common.read_state_znodes(x, b.tps)
        read.refreshed = common.send_update_metadata(
            p,
            common.refresh_leadership_cache(read.a.f("work"), b.tps),
            context.live_or_shutting_down(common.st(read.a.f("work"))),
            b.tps,
        )
        # the notifications are deleted in a ``finally``: also when the read throws
        deleted = read.in_(
            common.fenced_zk(
                p,
                if_(read.a.f("error"), read.a.f("work"), complete(read.refreshed, b.tps)),
                lambda z: z.with_(isr_change_notifications=z.f("isr_change_notifications").minus(b.tps)),
            )
        )
        return b.in_(if_(b.tps.is_empty(), x, deleted))

    return rule("IsrChangeNotification", "§7.11", let(w, body))


def leader_writes_isr(w: Expr, tp: Expr, isr: Expr) -> Expr:
    """[1.1] environment: the leader writes the state znode (same leader and epoch, new ISR, version + 1, its stored
    controller epoch kept) and creates an ISR-change notification."""
    z = common.zk_of(w)
    old = z.f("partition_states").get(tp)
    return common.set_zk(
        w,
        partition_states=z.f("partition_states").put(
            tp,
            rec(
                LeaderIsrAndControllerEpoch,
                leader_and_isr=old.f("leader_and_isr").with_(
                    isr=isr, zk_version=old.f("leader_and_isr", "zk_version") + 1
                ),
                controller_epoch=old.f("controller_epoch"),
            ),
        ),
        isr_change_notifications=z.f("isr_change_notifications").union(set_of(tp)),
    )


def isr_change_action(p: Profile) -> Action:
    """``IsrChange(tp, isr)`` (§7.11): the partition's live leader proposes an ISR of distinct replicas containing itself.

    Decision (environment): a leader's ISR holds only replicas assigned to the partition in ZooKeeper — the
    followers that fetch from it are the assigned replicas (§3.2). Neither the 2.8.2 controller nor a 1.1
    controller validates this (§7.11), so a proposal outside the assignment would model a misbehaving broker,
    not Kafka; the environment never makes one.

    Decision (order of the two events a ZK-notified ISR change causes): ``IsrChangeNotification`` first, then
    ``PartitionReassignmentIsrChange``, in both profiles. In Kafka the state znode's data watch fires when the
    leader writes, the notification follows when the broker propagates it (``maybePropagateIsrChanges``, seconds
    later), but events of other causes can come between the two; the model takes one order, the one 1.1 has
    always had. In 2.8 ``IsrChangeNotification`` itself completes a reassignment that can complete, and the second
    event then finds the partition no longer being reassigned."""
    v = common.param_vars(IsrChange)
    tp, isr = v["tp"], v["isr"]
    s = common.S
    states = s.f("zk", "partition_states")
    leader = states.get(tp).f("leader_and_isr", "leader")
    guard = and_(
        states.has(tp),
        leader.ge(0),
        s.f("zk", "brokers").has(leader),
        isr.contains(leader),
        isr.to_set().size().eq(isr.size()),
        isr.all(lambda r: r.ge(0)),
        s.f("zk", "assignments").has(tp),
        isr.all(lambda r: s.f("zk", "assignments").get(tp).f("replicas").contains(r)),
    )

    def notified(w: Expr) -> Expr:
        if p.kip455_reassignment:
            # 2.8: the data watch on the state znode of a partition being reassigned (registered when AlterIsr is
            # off) fires PartitionReassignmentIsrChange: ``maybeCompleteReassignment`` unless the controller moved
            return common.pipe(
                w,
                lambda x: isr_change_notification(p, x),
                lambda x: common.unless_moved(x, lambda y: maybe_complete(p, y, tp, isr)),
            )
        return common.pipe(
            w,
            lambda x: isr_change_notification(p, x),
            lambda x: reassignment_legacy.partition_reassignment_isr_change(p, x, tp).f("work"),
        )

    if p.alter_isr:
        return common.controller_action(
            IsrChange,
            "The leader of a partition changes its ISR: with AlterIsr (IBP ≥ 2.7-IV2, KIP-497) it sends AlterIsr to "
            "the controller; with an older IBP it writes its state znode and an ISR-change notification, and the "
            "controller handles IsrChangeNotification and, for a partition being reassigned, "
            "PartitionReassignmentIsrChange (§7.11, §7.7.1).",
            guard=guard,
            environment=lambda w: if_(alter_isr_enabled(p, common.st(w)), w, leader_writes_isr(w, tp, isr)),
            controller=lambda w: if_(
                alter_isr_enabled(p, common.st(w)), alter_isr_received(p, w, tp, isr), notified(w)
            ),
        )
    return common.controller_action(
        IsrChange,
        "The leader of a partition writes a new ISR to its state znode and an ISR-change notification; the "
        "controller handles IsrChangeNotification and, for a partition being reassigned, "
        "PartitionReassignmentIsrChange (§7.11, §7.8.1).",
        guard=guard,
        environment=lambda w: leader_writes_isr(w, tp, isr),
        controller=notified,
    )


def stale_alter_isr_action(p: Profile) -> Action:
    """``StaleAlterIsrReceived(b, e, tp, le, isr, zv)`` (§7.11, 2.8): ``AlterIsrReceived(b, e, {tp ↦ (b, le, isr,
    zv)})`` carrying values the broker once had (brokers send AlterIsr only with IBP ≥ 2.7-IV2): none newer than ZooKeeper's, and either an older zk version (a
    version names one record, so with the current version the leader epoch is the current one too) or only an older
    broker epoch (the broker restarted since). The broker-epoch check, then ``processAlterIsr``."""
    v = common.param_vars(StaleAlterIsrReceived)
    b, epoch, tp, le, isr, zv = (
        v["broker_id"],
        v["broker_epoch"],
        v["tp"],
        v["leader_epoch"],
        v["isr"],
        v["zk_version"],
    )
    s = common.S
    states = s.f("zk", "partition_states")
    znode = states.get(tp).f("leader_and_isr")
    registered = s.f("zk", "brokers").get(b)
    guard = and_(
        common.active(s),
        alter_isr_enabled(p, s),
        states.has(tp),
        s.f("zk", "brokers").has(b),
        s.f("zk", "assignments").has(tp),
        isr.contains(b),
        isr.to_set().size().eq(isr.size()),
        isr.all(lambda r: r.ge(0)),
        isr.all(lambda r: s.f("zk", "assignments").get(tp).f("replicas").contains(r)),
        epoch.ge(0),
        epoch.le(registered),
        le.ge(0),
        le.le(znode.f("leader_epoch")),
        zv.ge(0),
        zv.le(znode.f("zk_version")),
        or_(
            zv.lt(znode.f("zk_version")),
            and_(zv.eq(znode.f("zk_version")), le.eq(znode.f("leader_epoch")), epoch.lt(registered)),
        ),
    )

    def controller(w: Expr) -> Expr:
        live = common.ctx(w).f("live_brokers")
        proposed = rec(LeaderAndIsr, leader=b, leader_epoch=le, isr=isr, zk_version=zv)
        return if_(live.has(b) & live.get(b).eq(epoch), process_alter_isr(p, w, tp, b, proposed), w)

    return common.controller_action(
        StaleAlterIsrReceived,
        "A broker's AlterIsr arrives with an outdated broker epoch, leader epoch or zk version (a delayed or "
        "repeated request); the controller rejects or ignores it, answering the broker (§7.11, KIP-497).",
        guard=guard,
        environment=None,
        controller=controller,
    )
