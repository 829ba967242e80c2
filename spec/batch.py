"""The request batch (``ControllerBrokerRequestBatch``, §3.4) as procedures on ``Work``.

Each procedure returns an ``Expr`` evaluating to the next ``Work``; once ``Work.moved`` is true every
procedure returns its input unchanged (ControllerMovedException, §2.3 step 7).

* ``add_leader_and_isr`` — LAIR partition states per (broker, partition), overwritten by later additions with
  ``isNew`` sticky, and the implicit UMR of the partition to every live-or-shutting-down broker.
* ``add_update_metadata`` — UMR recipients and partition states; a partition's UMR state is computed *when it
  is added* (leader −2 / epoch 0 / version 0 while its topic is queued for deletion; offline replicas =
  assigned replicas that are not online; partitions without leadership info are skipped).
* ``add_stop_replica`` — StopReplica entries per (broker, partition) with ``deletePartition`` sticky and the
  leader epoch of §3.4 (2.8: −2 while deleting, else the cached epoch, else −1; 1.1 has no such field: −1).
* ``send`` — ``sendRequestsToBrokers``: one request of each kind per recipient broker, requests to brokers
  that are not live-or-shutting-down at send time dropped, the batch cleared.

The ``*_bulk`` variants add the entries of many partitions at once; they are equivalent to one call per
partition made in the same state (the entries of distinct partitions are independent), and let a
procedure build one map instead of folding ``put`` over partitions.
"""

from __future__ import annotations

from collections.abc import Callable

from kcspec.spec import context
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import (
    Block,
    Const,
    Expr,
    Var,
    build_map,
    if_,
    let,
    lift,
    lit,
    procedure,
    rec,
    rule,
    set_of,
)
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    RequestBatch,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcspec.spec.vocabulary import (
    EPOCH_DURING_DELETE,
    INITIAL_LEADER_EPOCH,
    INITIAL_ZK_VERSION,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    InterBrokerProtocol,
)

NO_TOPIC_IDS: FMap[str, int] = FMap()
ZERO_UUID = 0
"""``Uuid.ZERO_UUID``: the topic ID a request carries for a topic the context has no ID of."""

EMPTY_BATCH = RequestBatch()


def bind(value: object, fn: Callable[[Expr], Expr]) -> Expr:
    """``fn(value)``, naming ``value`` with ``let`` unless it is already a variable or a constant."""
    e = lift(value)
    if isinstance(e, Var | Const):
        return fn(e)
    return let(e, fn)


def unless_moved(w: object, body: Callable[[Expr], Expr]) -> Expr:
    """``w`` unchanged if a ControllerMovedException was raised earlier in the event, else ``body(w)``."""
    return bind(w, lambda wv: if_(wv.f("moved"), wv, body(wv)))


def with_batch(w: Expr, **updates: object) -> Expr:
    """``w`` with some fields of its batch replaced."""
    return bind(w, lambda wv: wv.with_(batch=wv.f("batch").with_(**updates)))


# ------------------------------------------------------------------------------------------- LeaderAndIsr


def _lair_state(s: Expr, key: Expr, is_new: Expr, existing: Expr, li_of: Callable[[Expr], Expr]) -> Expr:
    tp = key.f("tp")
    b = Block()
    b.li = li_of(tp)
    b.fa = context.assignment(s, tp)
    return b.in_(
        rec(
            LeaderAndIsrPartitionState,
            tp=tp,
            controller_epoch=b.li.f("controller_epoch"),
            leader=b.li.f("leader_and_isr", "leader"),
            leader_epoch=b.li.f("leader_and_isr", "leader_epoch"),
            isr=b.li.f("leader_and_isr", "isr"),
            zk_version=b.li.f("leader_and_isr", "zk_version"),
            replicas=b.fa.f("replicas"),
            adding=b.fa.f("adding"),
            removing=b.fa.f("removing"),
            is_new=is_new | (existing.has(key) & existing.get(key).f("is_new")),
        )
    )


def _add_lair(
    p: Profile, wv: Expr, ts: Expr, keys: Expr, is_new: object, li_of: Callable[[Expr], Expr]
) -> Expr:
    s = wv.f("state")
    b = Block()
    b.lair = wv.f("batch", "leader_and_isr")
    states = build_map(keys, lambda k: _lair_state(s, k, lift(is_new), b.lair, li_of))
    return b.in_(
        add_update_metadata(
            p, with_batch(wv, leader_and_isr=b.lair.merge(states)), context.live_or_shutting_down(s), ts
        )
    )


@procedure("add_leader_and_isr_bulk", "§3.4")
def add_leader_and_isr_bulk(
    p: Profile,
    w: object,
    tps: object,
    recipients: Callable[[Expr], object],
    is_new: object,
    *,
    leader_isr: Callable[[Expr], Expr] | None = None,
) -> Expr:
    """``addLeaderAndIsrRequestForBrokers(recipients(tp), tp, LI, FA(tp), isNew)`` for every tp ∈ ``tps`` (§3.4).

    The partition state carries LI (by default the cached LI(tp); ``leader_isr`` overrides it, e.g. for the
    1.1 reassignment epoch bump that is not cached, KAFKA-9212) and FA(tp) of the current context; ``isNew``
    is sticky per (broker, partition). Then UMR for all ``tps`` to all live-or-shutting-down brokers (even for
    a partition whose recipient list is empty). An empty ``tps`` adds nothing (no call is made).
    """

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        li_of = leader_isr or (lambda tp: context.leadership(s, tp))

        def keys_of(tp: Expr) -> Expr:
            return (
                lift(recipients(tp)).to_set().filter(lambda b: b.ge(0)).map(lambda b: context.replica(tp, b))
            )

        def add(ts: Expr) -> Expr:
            b = Block()
            b.keys = ts.flat_map(keys_of)
            return if_(ts.is_empty(), wv, b.in_(_add_lair(p, wv, ts, b.keys, is_new, li_of)))

        return bind(tps, add)

    return rule("addLeaderAndIsrRequestForBrokers", "§3.4", unless_moved(w, body))


@procedure("add_leader_and_isr_keys", "§3.4")
def add_leader_and_isr_keys(p: Profile, w: object, keys: object, is_new: object) -> Expr:
    """``addLeaderAndIsrRequestForBrokers([r], tp, LI(tp), FA(tp), isNew)`` for every (tp, r) ∈ ``keys`` — a set of
    ``PartitionReplica`` whose replica is the recipient broker — with the implicit UMR for their partitions."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        return bind(
            keys,
            lambda ks: if_(
                ks.is_empty(),
                wv,
                _add_lair(
                    p,
                    wv,
                    ks.map(lambda k: k.f("tp")),
                    ks.filter(lambda k: k.f("replica").ge(0)),
                    is_new,
                    lambda tp: context.leadership(s, tp),
                ),
            ),
        )

    return rule("addLeaderAndIsrRequestForBrokers", "§3.4", unless_moved(w, body))


@procedure("add_leader_and_isr", "§3.4")
def add_leader_and_isr(
    p: Profile,
    w: object,
    brokers: object,
    tp: object,
    is_new: object,
    *,
    leader_isr: Expr | None = None,
) -> Expr:
    """``addLeaderAndIsrRequestForBrokers(brokers, tp, LI(tp), FA(tp), isNew)`` + implicit UMR for tp (§3.4).

    ``brokers`` is a set or sequence of broker ids (ids < 0 are ignored); ``leader_isr`` overrides the cached LI.
    """
    override = None if leader_isr is None else (lambda _tp: leader_isr)
    return bind(
        tp,
        lambda t: add_leader_and_isr_bulk(p, w, set_of(t), lambda _x: brokers, is_new, leader_isr=override),
    )


# ------------------------------------------------------------------------------------------- UpdateMetadata


def umr_partition_state(s: Expr, live: Expr, offline: Expr, tp: Expr) -> Expr:
    """The UMR partition state of ``tp`` computed now (§3.4 ``updateMetadataRequestPartitionInfo``)."""
    b = Block()
    b.li = context.leadership(s, tp)
    b.ar = context.replicas(s, tp)
    b.deleting = context.queued_for_deletion(s, tp.f("topic"))
    return b.in_(
        rec(
            UpdateMetadataPartitionState,
            tp=tp,
            controller_epoch=b.li.f("controller_epoch"),
            leader=if_(b.deleting, LEADER_DURING_DELETE, b.li.f("leader_and_isr", "leader")),
            leader_epoch=if_(b.deleting, INITIAL_LEADER_EPOCH, b.li.f("leader_and_isr", "leader_epoch")),
            isr=b.li.f("leader_and_isr", "isr"),
            zk_version=if_(b.deleting, INITIAL_ZK_VERSION, b.li.f("leader_and_isr", "zk_version")),
            replicas=b.ar,
            offline_replicas=b.ar.filter(lambda r: ~context.is_online_with(live, offline, r, tp)),
        )
    )


def update_metadata_partitions(p: Profile, s: Expr, tps: Expr) -> Expr:
    """The partitions an ``addUpdateMetadataRequestForBrokers(_, tps)`` call adds states for (§3.4).

    2.8: exactly ``tps``. 1.1: ``tps``, or every cached partition when ``tps`` is empty, plus every partition of
    every topic queued for deletion (``partitionsToBeDeleted``).
    """
    if p.umr_empty_means_no_partitions:
        given = tps
    else:
        given = if_(tps.is_empty(), s.f("controller", "leadership").keys(), tps)
    if p.umr_carries_deleting_partitions:
        deleting = s.f("controller", "topics_to_be_deleted")
        given = given.union(context.all_partitions(s).filter(lambda tp: deleting.contains(tp.f("topic"))))
    return given


@procedure("add_update_metadata", "§3.4")
def add_update_metadata(p: Profile, w: object, brokers: object, tps: object) -> Expr:
    """``addUpdateMetadataRequestForBrokers(brokers, tps)`` (§3.4): brokers ≥ 0 join the recipients; every
    partition of ``update_metadata_partitions`` with leadership info gets its state computed now (overwriting an
    earlier state of the same partition in this batch); partitions without leadership info are skipped."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        b = Block()
        b.parts = update_metadata_partitions(p, s, lift(tps))
        b.live = context.live_brokers(s)
        states = build_map(
            b.parts.filter(lambda tp: context.has_leadership(s, tp)),
            lambda tp: umr_partition_state(s, b.live, context.offline_dir_replicas(s), tp),
        )
        return b.in_(
            with_batch(
                wv,
                update_metadata_brokers=wv.f("batch", "update_metadata_brokers").union(
                    lift(brokers).to_set().filter(lambda b: b.ge(0))
                ),
                update_metadata_partitions=wv.f("batch", "update_metadata_partitions").merge(states),
            )
        )

    return rule("addUpdateMetadataRequestForBrokers", "§3.4", unless_moved(w, body))


# ------------------------------------------------------------------------------------------- StopReplica


def stop_replica_leader_epoch(p: Profile, s: Expr, tp: Expr) -> Expr:
    """StopReplica ``leaderEpoch`` (§3.4, KIP-570): −2 while the topic is queued for deletion, else the cached
    epoch, else −1. 1.1 has no such field: −1 (docs/contracts.md step contract)."""
    if not p.stop_replica_leader_epoch:
        return lit(NO_EPOCH)
    return if_(
        context.queued_for_deletion(s, tp.f("topic")),
        EPOCH_DURING_DELETE,
        if_(
            context.has_leadership(s, tp),
            context.leadership(s, tp).f("leader_and_isr", "leader_epoch"),
            NO_EPOCH,
        ),
    )


@procedure("add_stop_replica_bulk", "§3.4")
def add_stop_replica_bulk(p: Profile, w: object, replicas: object, delete: object) -> Expr:
    """``addStopReplicaRequestForBrokers([r], tp, delete)`` for every (tp, r) ∈ ``replicas`` (the recipient is the
    replica's broker), ``deletePartition`` sticky per (broker, partition) (§3.4)."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        b = Block()
        b.sr = wv.f("batch", "stop_replica")
        states = build_map(
            lift(replicas).to_set().filter(lambda k: k.f("replica").ge(0)),
            lambda k: rec(
                StopReplicaPartitionState,
                tp=k.f("tp"),
                delete_partition=lift(delete) | (b.sr.has(k) & b.sr.get(k).f("delete_partition")),
                leader_epoch=stop_replica_leader_epoch(p, s, k.f("tp")),
            ),
        )
        return b.in_(with_batch(wv, stop_replica=b.sr.merge(states)))

    return rule("addStopReplicaRequestForBrokers", "§3.4", unless_moved(w, body))


@procedure("add_stop_replica", "§3.4")
def add_stop_replica(p: Profile, w: object, brokers: object, tp: object, delete: object) -> Expr:
    """``addStopReplicaRequestForBrokers(brokers, tp, delete)`` (§3.4)."""
    return bind(
        tp,
        lambda t: add_stop_replica_bulk(
            p, w, lift(brokers).to_set().map(lambda b: context.replica(t, b)), delete
        ),
    )


# ------------------------------------------------------------------------------------------- send


@procedure("send", "§3.4")
def send(p: Profile, w: object) -> Expr:
    """``sendRequestsToBrokers(ctrlEpoch)`` (§3.4): one LeaderAndIsr, UpdateMetadata and StopReplica request per
    recipient broker, carrying the controller's id and epoch; recipients that are not live-or-shutting-down at
    send time are dropped; UMR ``live_brokers`` is the live-or-shutting-down set; the batch is cleared. 2.8 with
    IBP 2.8-IV1: LeaderAndIsr (v5) and UpdateMetadata (v7) carry the ID of each of their topics from
    ``controllerContext.topicIds``, the zero UUID for a topic without one (``ControllerChannelManager``
    ``sendLeaderAndIsrRequest`` / ``sendUpdateMetadataRequests``, KIP-516)."""

    def body(wv: Expr) -> Expr:
        c = wv.f("state", "controller")
        pending = wv.f("batch")
        block = Block()
        block.ids = c.f("topic_ids")
        block.carry = wv.f("state", "config", "inter_broker_protocol").eq(InterBrokerProtocol.KAFKA_2_8_IV1)

        def topic_ids_of(states: Expr) -> Expr:
            """The request's topic IDs (KIP-516): every topic of ``states`` → its context ID, else the zero UUID;
            none before IBP 2.8-IV1 (LeaderAndIsr < v5, UpdateMetadata < v7) and in 1.1."""
            if not p.topic_ids:
                return lit(NO_TOPIC_IDS)
            return if_(
                block.carry,
                build_map(
                    states.map(lambda ps: ps.f("tp", "topic")), lambda t: block.ids.get_or(t, ZERO_UUID)
                ),
                lit(NO_TOPIC_IDS),
            )

        block.live = c.f("live_brokers").keys()
        block.lair = pending.f("leader_and_isr")
        block.sr = pending.f("stop_replica")
        block.ump = pending.f("update_metadata_partitions")

        def lair_request(br: Expr) -> Expr:
            one = Block()
            one.states = (
                block.lair.keys().filter(lambda k: k.f("replica").eq(br)).map(lambda k: block.lair.get(k))
            )
            return one.in_(
                rec(
                    LeaderAndIsrRequest,
                    broker=br,
                    controller_id=c.f("controller_id"),
                    controller_epoch=c.f("epoch"),
                    partition_states=one.states,
                    topic_ids=topic_ids_of(one.states),
                )
            )

        leader_and_isr = block.lair.keys().map(lambda k: k.f("replica")).inter(block.live).map(lair_request)
        umr = Block()
        umr.states = block.ump.keys().map(lambda k: block.ump.get(k))
        umr.umr_topic_ids = topic_ids_of(umr.states)
        update_metadata = umr.in_(
            pending.f("update_metadata_brokers")
            .inter(block.live)
            .map(
                lambda br: rec(
                    UpdateMetadataRequest,
                    broker=br,
                    controller_id=c.f("controller_id"),
                    controller_epoch=c.f("epoch"),
                    live_brokers=block.live,
                    partition_states=umr.states,
                    topic_ids=umr.umr_topic_ids,
                )
            )
        )
        stop_replica = (
            block.sr.keys()
            .map(lambda k: k.f("replica"))
            .inter(block.live)
            .map(
                lambda br: rec(
                    StopReplicaRequest,
                    broker=br,
                    controller_id=c.f("controller_id"),
                    controller_epoch=c.f("epoch"),
                    partition_states=block.sr.keys()
                    .filter(lambda k: k.f("replica").eq(br))
                    .map(lambda k: block.sr.get(k)),
                )
            )
        )
        sent = wv.f("sent").union(leader_and_isr).union(update_metadata).union(stop_replica)
        return block.in_(wv.with_(batch=EMPTY_BATCH, sent=sent))

    return rule("sendRequestsToBrokers", "§3.4", unless_moved(w, body))
