"""Liveness: the three progress properties TLC checks on the generated module, and the known gaps.

Safety (invariants, the crosscheck) says nothing bad happens; these say something good eventually does, which
only TLC checks here (the explorer has no notion of infinite behaviours). Each property is
``<>[]P(x) => []<>Q(x)`` for every partition or topic ``x`` of the model — if the premise holds from some point
on, the goal holds again and again — with ``P`` and ``Q`` written in the spec's expression language (so the
Python evaluator can check a counterexample's states too, ``violated``).

Decision: the premise must *stay* true (``<>[]P``), not merely hold once (``P ~> Q``). The premises speak of the
environment (a live ISR member, live target replicas), which the model lets fail at any time: under ``P ~> Q`` a
broker that fails right after a reassignment request, and never returns, is a violation (TLC's first lasso with
the fairness below), although no controller could complete it; that says nothing about the controller. A
premise that flips forever (a broker bouncing without end) is not covered: no system promises progress then.

* ``LeaderEventuallyElected`` — a partition whose ISR has a live (registered) member, of a topic not queued for
  deletion, eventually has a live leader (or no longer exists) (§5.2, §7.4, §8, §11);
* ``ReassignmentEventuallyCompletes`` — a reassignment whose target replicas are all live and all in the ISR (they
  caught up) eventually completes: no adding/removing replicas and no ``/admin/reassign_partitions`` entry
  (§7.7, §7.8);
* ``DeletionEventuallyCompletes`` — a topic queued for deletion whose replicas' brokers are all live is eventually
  deleted (§8).

They are checked under weak fairness of the controller's own actions (``FAIR_ACTIONS``): a controller is
eventually elected when there is none (§7.1), the periodic preferred-leader election runs (§7.9), and brokers
answer the controller's StopReplica requests without error (§8). Nothing else is assumed: brokers may fail,
users may keep issuing requests. The properties go in a configuration of their own (``liveness_cfg``) because
TLC's liveness checking is much more expensive than the safety run and must not change the crosscheck's counts.

Where Kafka itself is known not to make progress (§12), the violation is expected and recorded in
``KNOWN_GAPS`` with the ticket, so a counterexample TLC finds there is reported as the known gap, not as a bug.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kcspec.model.evaluate import evaluate
from kcspec.model.tla.config import ModelConfig
from kcspec.spec import lang as L
from kcspec.spec.context import replica
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import PartitionReplica, ReplicaState, TopicPartition


@dataclass(frozen=True)
class LivenessProperty:
    """``\\A x \\in domain : <>[]P(x) => []<>Q(x)``."""

    name: str
    section: str
    doc: str
    var: str
    """The bound name (``tp`` or ``topic``) and the domain it ranges over in the module."""
    domain: str
    premise: Callable[[L.Var], L.Expr]
    goal: Callable[[L.Var], L.Expr]

    def tla(self) -> str:
        v = self.var
        return (
            f"{self.name} ==\n    \\A {v} \\in {self.domain} :\n"
            f"        <>[]({self.name}_P({v}) /\\ ~{CUT_BY_BOUNDS})\n"
            f"            => []<>{self.name}_Q({v})"
        )


_s = L.var("s")
_zk = _s.f("zk")
_live = _zk.f("brokers").keys()
_failed_dirs = _s.f("controller").f("offline_replicas")


def _online(tp: L.Expr, r: L.Expr) -> L.Expr:
    """Replica ``r`` of ``tp`` can serve: its broker is registered and the controller has not seen its log dir
    fail (``replicasOnOfflineDirs``, §3.1, learned from a LeaderAndIsr response with a storage error). A failed
    log dir stays failed until the broker restarts (an operator replaces the disk): the environment, not the
    controller, must act, so no premise counts such a replica (TLC's lasso of a deletion that waits forever
    for a replica on a failed dir, while its broker stays registered, is Kafka's behaviour). Likewise a broker
    in controlled shutdown (§7.10): the controller treats its replicas as offline (``isReplicaOnline``), and it is
    the broker that must go on to stop; a model broker that stays "shutting down" forever is the environment's
    choice."""
    return L.and_(
        _live.contains(r),
        L.not_(_failed_dirs.contains(replica(tp, r))),
        L.not_(_s.f("controller").f("shutting_down").contains(r)),
    )


def _leader_premise(tp: L.Var) -> L.Expr:
    """The partition exists, its ISR has an online member, and its topic is not queued for deletion: Kafka elects
    no leader for a topic queued for deletion (§8; ``onReplicasBecomeOffline`` and
    ``triggerOnlinePartitionStateChange`` leave such partitions out, and invariant I13 forbids the election), so
    there the progress asked for is the deletion's (``DeletionEventuallyCompletes``). Without this clause TLC's
    first lasso on the 2-broker model was exactly that: the leader fails after ``TopicDeletion``, deletion waits
    for it (ineligible, §8), and no leader is elected."""
    states = _zk.f("partition_states")
    isr = states.get(tp).f("leader_and_isr").f("isr")
    queued = _zk.f("delete_topics").contains(tp.f("topic"))
    return L.and_(states.has(tp), isr.any(lambda b: _online(tp, b)), L.not_(queued))


def _leader_goal(tp: L.Var) -> L.Expr:
    states = _zk.f("partition_states")
    return L.or_(L.not_(states.has(tp)), _live.contains(states.get(tp).f("leader_and_isr").f("leader")))


def _pending(tp: L.Var) -> L.Expr:
    a = _zk.f("assignments")
    return L.or_(
        _zk.f("reassign_partitions").has(tp),
        L.and_(a.has(tp), L.or_(a.get(tp).f("adding").non_empty(), a.get(tp).f("removing").non_empty())),
    )


def _reassign_premise(tp: L.Var) -> L.Expr:
    a = _zk.f("assignments")
    states = _zk.f("partition_states")
    rp = _zk.f("reassign_partitions")
    current = a.get(tp)
    targets = L.if_(
        rp.has(tp),
        rp.get(tp),
        current.f("replicas").filter(lambda r: L.not_(current.f("removing").contains(r))),
    )
    isr = states.get(tp).f("leader_and_isr").f("isr")
    return L.and_(
        _pending(tp),
        a.has(tp),
        states.has(tp),
        targets.all(lambda r: L.and_(_online(tp, r), isr.contains(r))),
    )


def _reassign_goal(tp: L.Var) -> L.Expr:
    return L.not_(_pending(tp))


def _delete_premise(topic: L.Var) -> L.Expr:
    """Queued for deletion, with partitions, all of whose replicas' brokers are live. "With partitions" excludes
    the vacuous case TLC found first: a delete request for a topic that does not exist (§8: the controller
    ignores it, the request stays queued while no broker ever starts), which says nothing about deletion."""
    a = _zk.f("assignments")
    mine = a.keys().filter(lambda tp: tp.f("topic").eq(topic))
    return L.and_(
        _zk.f("delete_topics").contains(topic),
        mine.non_empty(),
        mine.all(lambda tp: a.get(tp).f("replicas").all(lambda r: _online(tp, r))),
    )


def _delete_goal(topic: L.Var) -> L.Expr:
    return L.not_(_zk.f("delete_topics").contains(topic))


PROPERTIES: tuple[LivenessProperty, ...] = (
    LivenessProperty(
        "LeaderEventuallyElected",
        "§5.2, §7.4, §8",
        "A partition whose ISR has a live member, of a topic not queued for deletion, eventually has a live leader "
        "(or is deleted).",
        "tp",
        "TopicPartitions",
        _leader_premise,
        _leader_goal,
    ),
    LivenessProperty(
        "ReassignmentEventuallyCompletes",
        "§7.7, §7.8",
        "A reassignment whose target replicas are live and in the ISR eventually completes.",
        "tp",
        "TopicPartitions",
        _reassign_premise,
        _reassign_goal,
    ),
    LivenessProperty(
        "DeletionEventuallyCompletes",
        "§8",
        "A topic queued for deletion whose replicas' brokers are all live is eventually deleted.",
        "topic",
        "Topics",
        _delete_premise,
        _delete_goal,
    ),
)


@dataclass(frozen=True)
class Fairness:
    """Weak fairness of one of the controller's own actions, with ``ENABLED`` written as a state predicate.

    ``WF_vars(A)`` is ``[]<>~ENABLED <<A>>_vars \\/ []<><<A>>_vars``. TLC evaluates ``ENABLED`` of the generated
    actions (a quantified action over the spec's procedures) so slowly that a 600-state model made no progress
    in 15 minutes. Here the condition is ``<A>_Due``: ``when`` holds and some instance ``A(args)`` *moves*
    (``<A>_Moves``: its guard holds and its outcome differs from the state, within the model's bounds) — the
    same as ``ENABLED <<A>>_vars`` where ``when`` holds, but an ordinary expression that TLC evaluates once per
    state. The fairness is then ``[]<>~<A>_Due \\/ []<><<A>>_vars``.

    Two decisions. (1) Only what the controller itself must eventually do is fair; the environment's events
    (brokers failing and starting, users' requests, ZooKeeper's faults) may happen or not. (2) A step cut off
    by the model's bounds does not count as enabled (``WithinBounds``): otherwise every behaviour that reaches
    a bound with the action enabled would be unfair, and so excluded, and a property would pass vacuously at
    the bounds. The price is the opposite artefact: a lasso may stay at a bound where the controller would act
    in Kafka; ``cut_by_bounds`` names such lassos, which are then reported as artefacts of the model, not as
    Kafka's behaviour."""

    action: str
    binders: str
    """TLA+ binders of the action's parameters (``broker_id \\in Brokers``), empty for an action without."""
    args: str
    """The arguments of the fair instances (a fixed ``FALSE`` for "no error", for example)."""
    when: str
    """A further state condition under which the controller must act (``TRUE`` for none)."""
    section: str
    why: str


FAIR_ACTIONS: tuple[Fairness, ...] = (
    Fairness(
        "ControllerFailover",
        "broker_id \\in Brokers",
        "broker_id",
        "zk.controller = -1",
        "§7.1",
        "when /controller is absent and a broker is registered, one of them is elected; a failover while a "
        "controller is active is the environment's (a session expiry), not something that must happen",
    ),
    Fairness(
        "AutoPreferredReplicaLeaderElection",
        "",
        "",
        "TRUE",
        "§7.9",
        "the rebalance timer fires periodically: when it would move a leader back to its preferred replica, it does",
    ),
    Fairness(
        "StopReplicaResponseReceived",
        "broker_id \\in Brokers, partitions \\in {<<p>> : p \\in TopicPartitions}",
        "broker_id, partitions, FALSE",
        "TRUE",
        "§8",
        "a live broker answers the controller's StopReplica (delete) request for a replica being deleted, without error",
    ),
)
"""The controller's own actions and when each must eventually happen: what happens without anyone outside the
controller doing anything — a controller is elected, the rebalance timer fires, brokers answer."""


@dataclass(frozen=True)
class KnownGap:
    """A liveness property Kafka is known not to satisfy in some behaviours (§12): an expected violation."""

    prop: str
    profile: str
    ticket: str
    section: str
    explanation: str
    applies: Callable[[ClusterState, object], bool] | None = None
    """Whether the gap explains a violation for this partition or topic, judged on a state of the lasso's cycle
    (``None``: every violation of ``prop`` under ``profile``)."""


def _partition_without_leadership(state: ClusterState, topic: object) -> bool:
    """A partition of the topic has no leadership information in the controller's cache (KAFKA-6650's case)."""
    c = state.controller
    return any(tp.topic == topic and tp not in c.leadership for tp in c.assignments)


def _deletion_halted_by_failure(state: ClusterState, topic: object) -> bool:
    """The topic's deletion is halted (ineligible) while none of its replicas is on a dead broker: the halt came
    from a failed replica deletion, which only a broker startup or a new controller lifts (§8)."""
    c = state.controller
    return topic in c.topics_ineligible_for_deletion and all(
        r in c.live_brokers for tp, a in c.assignments.items() if tp.topic == topic for r in a.replicas
    )


def _deletion_stalled_by_a_zk_error(state: ClusterState, topic: object) -> bool:
    """The topic is queued for deletion and eligible (not halted), every replica is on a live broker, and every
    replica is still OnlineReplica: ``onPartitionDeletion`` moved none of them to OfflineReplica, because the ISR
    removal's ZooKeeper read or write failed (§3.3: the failed partitions keep their state), so none was moved on
    to ReplicaDeletionStarted and no StopReplica is awaited (§8)."""
    c = state.controller
    if topic not in c.topics_to_be_deleted or topic in c.topics_ineligible_for_deletion:
        return False
    replicas = [(tp, r) for tp, a in c.assignments.items() if tp.topic == topic for r in a.replicas]
    return bool(replicas) and all(
        r in c.live_brokers and c.replica_states.get(PartitionReplica(tp, r)) is ReplicaState.OnlineReplica
        for tp, r in replicas
    )


_STALLED_DELETION = (
    "a ZooKeeper error on the ISR removal of onPartitionDeletion's OfflineReplica step (the read of the state "
    "znodes fails, §3.3) leaves the replicas in OnlineReplica, so their move to ReplicaDeletionStarted is an "
    "invalid transition and no StopReplica is sent; the topic stays eligible, but only the next resumeDeletions "
    "(a broker startup or failure, a StopReplica response, another deletion request, a reassignment's end or a "
    "controller failover) starts its deletion again, and with none of those the deletion waits forever "
    "(TopicDeletionManager.onPartitionDeletion, 2.8.2 and 1.1)"
)

_HALTED_DELETION = (
    "a replica deletion that failed (a StopReplica error) halts the topic's deletion: resumeDeletions moves the "
    "replica back to OfflineReplica but restarts nothing while the topic is ineligible, and only a broker startup "
    "(resumeDeletionForTopics) or a controller failover lifts the halt; with every broker staying up, the "
    "deletion waits forever (TopicDeletionManager, 2.8.2 and 1.1)"
)

KNOWN_GAPS: tuple[KnownGap, ...] = (
    KnownGap(
        "ReassignmentEventuallyCompletes",
        "kafka-2.8",
        "KAFKA-9478",
        "§12.3 item 21",
        "a /admin/reassign_partitions entry whose target differs from the assignment that completes is never "
        "removed (the znode's data changes are not watched), so the reassignment never completes until failover",
    ),
    KnownGap(
        "DeletionEventuallyCompletes",
        "kafka-1.1",
        "KAFKA-6650",
        "§12.2 item 8",
        "before 2.0, OfflineReplica skipped replicas of partitions without leadership information, so they never "
        "left their state and the deletion of a partially deleted topic hung",
        _partition_without_leadership,
    ),
    *(
        KnownGap(
            "DeletionEventuallyCompletes",
            profile,
            "no ticket (Kafka's design)",
            "§8 failReplicaDeletion",
            _HALTED_DELETION,
            _deletion_halted_by_failure,
        )
        for profile in ("kafka-2.8", "kafka-1.1")
    ),
    *(
        KnownGap(
            "DeletionEventuallyCompletes",
            profile,
            "no ticket (Kafka's design)",
            "§8 onPartitionDeletion, §3.3",
            _STALLED_DELETION,
            _deletion_stalled_by_a_zk_error,
        )
        for profile in ("kafka-2.8", "kafka-1.1")
    ),
)


def known_gap(
    prop: str, profile: str, state: ClusterState | None = None, subject: object = None
) -> KnownGap | None:
    """The recorded gap that explains a violation of ``prop`` under ``profile``, if any: with ``state`` (a state
    of the lasso's cycle) and ``subject`` (its partition or topic), only a gap whose ``applies`` holds there."""
    for g in KNOWN_GAPS:
        if g.prop != prop or g.profile != profile:
            continue
        if g.applies is None or (state is not None and g.applies(state, subject)):
            return g
    return None


def domain_values(prop: LivenessProperty, config: ModelConfig) -> tuple[object, ...]:
    """The values ``prop``'s bound variable ranges over in the model (its partitions or its topics)."""
    if prop.domain == "Topics":
        return tuple(config.topic_names)
    return tuple(TopicPartition(t, p) for t in config.topic_names for p in range(config.partitions))


def violated(
    states: Sequence[ClusterState], cycle_start: int, config: ModelConfig
) -> tuple[tuple[str, object], ...]:
    """Which properties a lasso violates, and for which partition or topic: TLC names none.

    The behaviour is ``states[0..n-1]`` and then ``states[cycle_start..n-1]`` forever (a stuttering lasso has
    ``cycle_start = n - 1``). ``<>[]P => []<>Q`` is false for ``x`` exactly when the states visited forever (the
    cycle) all have ``P(x)`` and none has ``Q(x)``."""
    if not 0 <= cycle_start < len(states):
        raise ValueError(f"cycle start {cycle_start} outside the lasso's {len(states)} states")
    cycle = states[cycle_start:]
    out: list[tuple[str, object]] = []
    for prop in PROPERTIES:
        var = L.var(prop.var)
        for x in domain_values(prop, config):
            premise = all(bool(evaluate(prop.premise(var), s=st, **{prop.var: x})) for st in cycle)
            if premise and not any(bool(evaluate(prop.goal(var), s=st, **{prop.var: x})) for st in cycle):
                out.append((prop.name, x))
    return tuple(out)


CUT_BY_BOUNDS = "BoundsStopTheController"
"""The name of the state predicate: some fair action is due but its step leaves the model's bounds."""


def fair_spec(actions: frozenset[str]) -> str:
    """``<A>_Due`` and ``<A>_CutByBounds`` for each fair action the module has, ``BoundsStopTheController``, and
    ``FairSpec``: ``Spec`` with the fairness of each."""
    lines: list[str] = []
    fair = [f for f in FAIR_ACTIONS if f.action in actions]
    for f in fair:
        for row in textwrap.wrap(f"{f.section} {f.action} is due: {f.why}.", 100):
            lines.append(f"(* {row} *)")
        for name, bounded in (("Due", "WithinBounds(t)"), ("CutByBounds", "~WithinBounds(t)")):
            lines.append(f"{f.action}_{name} ==")
            if f.when != "TRUE":
                lines.append(f"    /\\ {f.when}")
            call = f"{f.action}_Successor({f.args})" if f.args else f"{f.action}_Successor"
            if f.binders:
                lines.append(f"    /\\ \\E {f.binders} :")
                lines.append(f"           LET t == {call}")
                lines.append(f"           IN  t # s /\\ {bounded}")
            else:
                lines.append(f"    /\\ LET t == {call}")
                lines.append(f"       IN  t # s /\\ {bounded}")
        lines.append("")
    lines.append(
        "(* A fair action is due, but its step is outside the model's bounds: in Kafka the controller acts *)"
    )
    lines.append("(* here, in the model it cannot (the properties exclude such states, liveness.py). *)")
    lines.append(f"{CUT_BY_BOUNDS} ==")
    lines += [f"    \\/ {f.action}_CutByBounds" for f in fair] or ["    FALSE"]
    lines.append("")
    lines.append("FairSpec ==")
    lines.append("    /\\ Spec")
    for f in fair:
        lines.append(f"    (* {f.section} {f.action} *)")
        lines.append(f"    /\\ \\/ []<>~{f.action}_Due")
        if f.binders:
            lines.append(f"       \\/ []<><<\\E {f.binders} :")
            lines.append(f"                   {f.action}({f.args})>>_vars")
        else:
            lines.append(f"       \\/ []<><<{f.action}>>_vars")
    return "\n".join(lines)


__all__ = [
    "CUT_BY_BOUNDS",
    "FAIR_ACTIONS",
    "KNOWN_GAPS",
    "PROPERTIES",
    "Fairness",
    "KnownGap",
    "LivenessProperty",
    "fair_spec",
    "known_gap",
    "violated",
]
