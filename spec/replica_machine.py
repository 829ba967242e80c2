"""The replica state machine (§4, generic mechanics §2.3) as procedures on ``Work``.

``replica_state_change(p, w, replicas, target)`` is one whole ``handleStateChanges(replicas, target)`` call:

1. an empty ``replicas`` (or an earlier ControllerMovedException) → no-op;
2. every replica without a state gets the implicit initial state NonExistentReplica (this entry stays even if
   the transition is then rejected);
3. replicas whose state is not a valid previous state of ``target`` (per profile, §2.1) get one
   ``StateChangeFailure(InvalidTransition)`` and no other effect;
4. the target rule of §4.1–§4.7 is applied to the valid replicas. OnlineReplica and OfflineReplica are processed
   broker by broker in ascending broker id (Kafka: hash order; docs/contracts.md ordering decision), each
   broker's partitions together; the other targets have no cross-replica interaction and are applied at once;
5. ``send``.

``initialize_replica_state(p, w)`` is §4.8 step 1. Decision where the document is silent: the NonExistentReplica
transition of a replica whose partition has no assignment stores an empty assignment for it (2.8's
``updatePartitionFullReplicaAssignment`` behaviour), in both profiles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcspec.spec import batch, context, element_states, zk
from kcspec.spec.lang import Block, Expr, build_map, if_, let, lit, procedure, rec, rule, set_of
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import MACHINE_REPLICA, FailureReason, StateChangeFailure
from kcspec.spec.vocabulary import (
    NO_LEADER,
    LeaderIsrAndControllerEpoch,
    ReplicaState,
    TopicPartition,
)
from kcspec.spec.work import Work


@dataclass(frozen=True)
class IsrRemoval:
    """One round of ``doRemoveReplicasFromIsr`` (§4.3 step 3): the work after it, the partitions with a result
    (rewritten or unchanged) and those to retry after a BADVERSION."""

    work: Work
    done: frozenset[TopicPartition]
    retry: frozenset[TopicPartition]


def state_name(state: Expr) -> Expr:
    """The Kafka name of a replica state, as logged."""
    return element_states.state_name(state, ReplicaState)


def _set_replica_states(w: Expr, states: Expr) -> Expr:
    return element_states.set_states(w, "replica_states", states)


def _put_states(w: Expr, elements: Expr, target: ReplicaState) -> Expr:
    return element_states.put_states(w, "replica_states", elements, target)


def _failures(w: Expr, replicas: Expr, target_name: str, reason: FailureReason) -> Expr:
    """``w`` with one failure per replica, logged from its current state to ``target_name``."""
    return batch.bind(w, lambda wv: _add_failures(wv, replicas, target_name, reason))


def _add_failures(w: Expr, replicas: Expr, target_name: str, reason: FailureReason) -> Expr:
    states = w.f("state", "controller", "replica_states")
    return w.with_(
        failures=w.f("failures").union(
            replicas.map(
                lambda pr: rec(
                    StateChangeFailure,
                    machine=MACHINE_REPLICA,
                    tp=pr.f("tp"),
                    replica=pr.f("replica"),
                    from_state=state_name(states.get_or(pr, ReplicaState.NonExistentReplica)),
                    target=target_name,
                    reason=reason,
                )
            )
        )
    )


def _partition_failures(w: Expr, tps: Expr, broker: Expr, reason: FailureReason) -> Expr:
    return _failures(
        w, tps.map(lambda tp: context.replica(tp, broker)), ReplicaState.OfflineReplica.name, reason
    )


# ------------------------------------------------------------------------------------------- §4.1 NewReplica


def _to_new(p: Profile, w: Expr, valid: Expr) -> Expr:
    """§4.1: the current leader is refused (logged with target OfflineReplica, a Kafka quirk); replicas of
    partitions with leadership info get LAIR(isNew = true) to themselves (+ UMR); RS := NewReplica."""
    lead = w.f("state", "controller", "leadership")
    b = Block()
    b.leaders = valid.filter(
        lambda pr: (
            lead.has(pr.f("tp")) & lead.get(pr.f("tp")).f("leader_and_isr", "leader").eq(pr.f("replica"))
        )
    )
    b.ok = valid.minus(b.leaders)
    refused = _failures(w, b.leaders, ReplicaState.OfflineReplica.name, FailureReason.NewReplicaIsLeader)
    with_leadership = b.ok.filter(lambda pr: lead.has(pr.f("tp")))
    return b.in_(
        batch.add_leader_and_isr_keys(
            p, _put_states(refused, b.ok, ReplicaState.NewReplica), with_leadership, True
        )
    )


# ------------------------------------------------------------------------------------------- §4.2 OnlineReplica


def _to_online_broker(p: Profile, w: Expr, broker: Expr, prs: Expr) -> Expr:
    """§4.2 for the valid replicas ``prs`` of one broker: from NewReplica, append the broker to AR if missing (no
    request); from any other state, LAIR(isNew = false) to the broker with the cached LI (+ UMR) when present."""
    s = w.f("state")
    states = s.f("controller", "replica_states")
    assigns = s.f("controller", "assignments")
    b = Block()
    b.from_new = prs.filter(lambda pr: states.get(pr).eq(ReplicaState.NewReplica))
    b.appended = b.from_new.filter(lambda pr: ~context.replicas(s, pr.f("tp")).contains(broker)).map(
        lambda pr: pr.f("tp")
    )
    grown = build_map(
        b.appended,
        lambda tp: context.assignment(s, tp).with_(replicas=context.replicas(s, tp).append(broker)),
    )
    b.w1 = w.with_at("state", "controller", assignments=assigns.merge(grown))
    others = prs.minus(b.from_new).filter(lambda pr: context.has_leadership(s, pr.f("tp")))
    return b.in_(
        _put_states(batch.add_leader_and_isr_keys(p, b.w1, others, False), prs, ReplicaState.OnlineReplica)
    )


# ------------------------------------------------------------------------------------------- §4.3 OfflineReplica


def _isr_removal_round(p: Profile, w: Expr, broker: Expr, remaining: Expr) -> Expr:
    """One ``doRemoveReplicasFromIsr(broker, remaining)`` round (§4.3 step 3a–e) → ``IsrRemoval``: the znode
    round of ``zk.leader_and_isr_round`` that drops ``broker`` from the ISR (and from the leadership) of every
    candidate whose ISR holds it."""

    def without_broker(lai: Expr) -> Expr:
        return lai.with_(
            leader=if_(lai.f("leader").eq(broker), NO_LEADER, lai.f("leader")),
            leader_epoch=lai.f("leader_epoch") + 1,
            isr=if_(lai.f("isr").size().eq(1), lai.f("isr"), lai.f("isr").minus(set_of(broker))),
        )

    def updates(s1: Expr, b: Block) -> Expr:
        zkps = s1.f("zk", "partition_states")
        b.with_r = b.cands.filter(lambda tp: zkps.get(tp).f("leader_and_isr", "isr").contains(broker))
        return build_map(b.with_r, lambda tp: let(zkps.get(tp).f("leader_and_isr"), without_broker))

    def written(s1: Expr, b: Block) -> Expr:
        my_epoch = s1.f("controller", "epoch")
        out = Block()
        out.done = b.wr.f("records").keys().union(b.cands.minus(b.with_r))
        out.s2 = b.wr.f("state")
        cached = build_map(
            out.done,
            lambda tp: rec(
                LeaderIsrAndControllerEpoch,
                leader_and_isr=out.s2.f("zk", "partition_states").get(tp).f("leader_and_isr"),
                controller_epoch=my_epoch,
            ),
        )
        w2 = w.with_(
            state=out.s2.with_at("controller", leadership=out.s2.f("controller", "leadership").merge(cached))
        )
        vanished = b.missing.filter(lambda tp: ~context.queued_for_deletion(s1, tp.f("topic")))
        w2 = _partition_failures(w2, vanished, broker, FailureReason.LeaderAndIsrPathEmpty)
        w2 = _partition_failures(w2, b.newer, broker, FailureReason.WrittenByNewerController)
        w2 = _partition_failures(w2, b.wr.f("failed"), broker, FailureReason.ZkError)
        return out.in_(rec(IsrRemoval, work=w2, done=out.done, retry=b.wr.f("retry")))

    return zk.leader_and_isr_round(
        p,
        "doRemoveReplicasFromIsr",
        "§4.3",
        w,
        remaining,
        nothing_done=lambda work: rec(IsrRemoval, work=work, done=frozenset(), retry=frozenset()),
        failed=lambda work, tps, reason: _partition_failures(work, tps, broker, reason),
        updates=updates,
        written=written,
    )


def _to_offline_broker(p: Profile, w: Expr, broker: Expr, prs: Expr) -> Expr:
    """§4.3 for the valid replicas ``prs`` of one broker.

    SR(delete = false) to the broker for every partition; ``removeReplicasFromIsr`` for the partitions with
    leadership info — at most two rounds, since a one-shot BADVERSION fault makes at most one retry; then, for
    every partition with a result, LAIR(isNew = false) to AR − {broker} unless the topic is queued for deletion,
    and RS := OfflineReplica. Partitions without leadership info: 2.8 RS := OfflineReplica + UMR (KAFKA-6650,
    KAFKA-3143); 1.1 leaves them untouched. Failed partitions keep their state.
    """
    lead = w.f("state", "controller", "leadership")

    def finish(wd: Expr, done: Expr, p0: Expr) -> Expr:
        # A fenced ISR write (ControllerMovedException, §3.3) aborts the rest of the call: no LAIR, no state
        # change, and the partitions without leadership info are not transitioned either (§2.3 step 7).
        return if_(wd.f("moved"), wd, _finish(wd, done, p0))

    def _finish(wd: Expr, done: Expr, p0: Expr) -> Expr:
        s = wd.f("state")
        w1 = _put_states(
            batch.add_leader_and_isr_bulk(
                p,
                wd,
                done.filter(lambda tp: ~context.queued_for_deletion(s, tp.f("topic"))),
                lambda tp: context.replicas(s, tp).minus(set_of(broker)),
                False,
            ),
            done.map(lambda tp: context.replica(tp, broker)),
            ReplicaState.OfflineReplica,
        )
        if not p.offline_replica_without_leadership:
            return w1
        return batch.bind(
            w1,
            lambda w2: if_(
                p0.is_empty(),
                w2,
                batch.add_update_metadata(
                    p,
                    _put_states(
                        w2, p0.map(lambda tp: context.replica(tp, broker)), ReplicaState.OfflineReplica
                    ),
                    context.live_or_shutting_down(w2.f("state")),
                    p0,
                ),
            ),
        )

    def body(wa: Expr) -> Expr:
        b = Block()
        b.tps = prs.map(lambda pr: pr.f("tp"))
        b.p_l = b.tps.filter(lambda tp: lead.has(tp))
        return zk.at_most_two_rounds(
            b,
            lambda work, remaining: _isr_removal_round(p, work, broker, remaining),
            wa,
            b.p_l,
            done="done",
            again=lambda r1: r1.f("retry"),
            finish=lambda last, done: finish(last.f("work"), done, b.tps.minus(b.p_l)),
        )

    return batch.unless_moved(batch.add_stop_replica_bulk(p, w, prs, False), lambda wa: body(wa))


# ------------------------------------------------------------------------------------------- §4.7 NonExistentReplica


def _to_non_existent(w: Expr, valid: Expr) -> Expr:
    """§4.7: r is removed from FA(p) (replicas, adding and removing lists) and the state entry is removed."""
    s = w.f("state")
    c = s.f("controller")

    def shrunk(tp: Expr) -> Expr:
        b = Block()
        b.gone = valid.filter(lambda pr: pr.f("tp").eq(tp)).map(lambda pr: pr.f("replica"))
        b.fa = context.assignment(s, tp)
        return b.in_(
            b.fa.with_(
                replicas=b.fa.f("replicas").minus(b.gone),
                adding=b.fa.f("adding").minus(b.gone),
                removing=b.fa.f("removing").minus(b.gone),
            )
        )

    b = Block()
    b.tps = valid.map(lambda pr: pr.f("tp"))
    return b.in_(
        w.with_at(
            "state",
            "controller",
            assignments=c.f("assignments").merge(build_map(b.tps, shrunk)),
            replica_states=c.f("replica_states").delete_all(valid),
        )
    )


# ------------------------------------------------------------------------------------------- the call


def _by_broker_checked(
    w: Expr, replicas: Expr, valid: Expr, target: ReplicaState, fn: Callable[[Expr, Expr, Expr], Expr]
) -> Expr:
    """Kafka's ``groupBy(_.replica)`` then ``doHandleStateChanges(replicaId, …)`` for each broker of ``replicas`` in
    ascending id: each broker's invalid replicas are logged (§2.3 step 4), then ``fn(w, broker, its valid
    replicas)``. A broker after one whose ISR write was fenced (ControllerMovedException, §2.3 step 7) is not
    reached: neither its transitions nor its invalid ones are logged.

    Decision (§2.3 lists the steps of one call; 2.8.2 ``ZkReplicaStateMachine.handleStateChanges`` and 1.1
    ``ReplicaStateMachine.handleStateChanges`` run steps 3–5 inside ``doHandleStateChanges``, once per broker):
    the split into valid and invalid is per broker, which only shows when a broker's step aborts the call."""

    def one(acc: Expr, broker: Expr) -> Expr:
        mine = valid.filter(lambda pr: pr.f("replica").eq(broker))
        logged = _add_failures(
            acc,
            replicas.filter(lambda pr: pr.f("replica").eq(broker)).minus(mine),
            target.name,
            FailureReason.InvalidTransition,
        )
        return batch.bind(logged, lambda wl: if_(mine.is_empty(), wl, fn(wl, broker, mine)))

    return (
        replicas.map(lambda pr: pr.f("replica"))
        .sorted()
        .fold(w, lambda acc, b: if_(acc.f("moved"), acc, one(acc, b)))
    )


_BY_BROKER = (ReplicaState.OnlineReplica, ReplicaState.OfflineReplica)
"""The targets whose rule runs broker by broker (§4.2, §4.3); the others act on all valid replicas at once."""


def _apply_by_broker(p: Profile, w: Expr, replicas: Expr, valid: Expr, target: ReplicaState) -> Expr:
    if target is ReplicaState.OnlineReplica:
        return rule(
            "OnlineReplica",
            "§4.2",
            _by_broker_checked(w, replicas, valid, target, lambda a, b, prs: _to_online_broker(p, a, b, prs)),
        )
    return rule(
        "OfflineReplica",
        "§4.3",
        _by_broker_checked(w, replicas, valid, target, lambda a, b, prs: _to_offline_broker(p, a, b, prs)),
    )


def _apply_target(p: Profile, w: Expr, valid: Expr, target: ReplicaState) -> Expr:
    if target is ReplicaState.NewReplica:
        return rule("NewReplica", "§4.1", _to_new(p, w, valid))
    if target is ReplicaState.ReplicaDeletionStarted:
        return rule(
            "ReplicaDeletionStarted",
            "§4.4",
            batch.add_stop_replica_bulk(p, _put_states(w, valid, target), valid, True),
        )
    if target is ReplicaState.NonExistentReplica:
        return rule("NonExistentReplica", "§4.7", _to_non_existent(w, valid))
    section = "§4.5" if target is ReplicaState.ReplicaDeletionIneligible else "§4.6"
    return rule(target.name, section, _put_states(w, valid, target))


@procedure("replica_state_change", "§4")
def replica_state_change(p: Profile, w: object, replicas: object, target: ReplicaState) -> Expr:
    """One whole ``ReplicaStateMachine.handleStateChanges(replicas, target)`` call (§2.3, §4), ending with send."""
    valid_prev = lit(frozenset(p.replica_valid_previous[target]))

    def call(wv: Expr, rs: Expr) -> Expr:
        current = wv.f("state", "controller", "replica_states")
        b = Block()
        b.states = current.merge(
            build_map(rs.filter(lambda pr: ~current.has(pr)), lambda _pr: ReplicaState.NonExistentReplica)
        )
        b.valid = rs.filter(lambda pr: valid_prev.contains(b.states.get(pr)))
        if target in _BY_BROKER:
            b.w1 = _set_replica_states(wv, b.states)
            return b.in_(batch.send(p, _apply_by_broker(p, b.w1, rs, b.valid, target)))
        b.w1 = _failures(
            _set_replica_states(wv, b.states), rs.minus(b.valid), target.name, FailureReason.InvalidTransition
        )
        return b.in_(batch.send(p, if_(b.valid.is_empty(), b.w1, _apply_target(p, b.w1, b.valid, target))))

    return rule(
        f"ReplicaStateMachine.handleStateChanges({target.name})",
        "§2.3",
        batch.unless_moved(
            w, lambda wv: batch.bind(replicas, lambda rs: if_(rs.is_empty(), wv, call(wv, rs)))
        ),
    )


@procedure("initialize_replica_state", "§4.8")
def initialize_replica_state(p: Profile, w: object) -> Expr:
    """§4.8 step 1 ``initializeReplicaState``: every assigned replica → OnlineReplica if online, else
    ReplicaDeletionIneligible (no requests)."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        b = Block()
        b.live = context.live_brokers(s)
        states = build_map(
            context.replicas_of_partitions(s, context.all_partitions(s)),
            lambda pr: if_(
                context.is_online_with(b.live, context.offline_dir_replicas(s), pr.f("replica"), pr.f("tp")),
                ReplicaState.OnlineReplica,
                ReplicaState.ReplicaDeletionIneligible,
            ),
        )
        return b.in_(_set_replica_states(wv, s.f("controller", "replica_states").merge(states)))

    return rule("initializeReplicaState", "§4.8", batch.unless_moved(w, body))
