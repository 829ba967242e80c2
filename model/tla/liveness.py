"""Liveness: the three progress properties TLC checks on the generated module, and the known gaps.

Safety (invariants, the crosscheck) says nothing bad happens; these say something good eventually does, which
only TLC checks here (the explorer has no notion of infinite behaviours). Each property is ``P(x) ~> Q(x)`` for
every partition or topic ``x`` of the model, with ``P`` and ``Q`` written in the spec's expression language (so
the Python evaluator can check a counterexample's states too, ``lasso.py``):

* ``LeaderEventuallyElected`` — a partition whose ISR has a live (registered) member eventually has a live leader
  (or no longer exists) (§5.2, §7.4, §11);
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kcspec.model.evaluate import evaluate
from kcspec.model.tla.config import ModelConfig
from kcspec.spec import lang as L
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import TopicPartition


@dataclass(frozen=True)
class LivenessProperty:
    """``\\A x \\in domain : P(x) ~> Q(x)``."""

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
        return f"{self.name} ==\n    \\A {v} \\in {self.domain} : {self.name}_P({v}) ~> {self.name}_Q({v})"


_s = L.var("s")
_zk = _s.f("zk")
_live = _zk.f("brokers").keys()


def _leader_premise(tp: L.Var) -> L.Expr:
    states = _zk.f("partition_states")
    isr = states.get(tp).f("leader_and_isr").f("isr")
    return L.and_(states.has(tp), isr.any(lambda b: _live.contains(b)))


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
        targets.all(lambda r: L.and_(_live.contains(r), isr.contains(r))),
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
        mine.all(lambda tp: a.get(tp).f("replicas").all(lambda r: _live.contains(r))),
    )


def _delete_goal(topic: L.Var) -> L.Expr:
    return L.not_(_zk.f("delete_topics").contains(topic))


PROPERTIES: tuple[LivenessProperty, ...] = (
    LivenessProperty(
        "LeaderEventuallyElected",
        "§5.2, §7.4",
        "A partition whose ISR has a live member eventually has a live leader (or is deleted).",
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

FAIR_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("ControllerFailover", "\\E broker_id \\in Brokers : ControllerFailover(broker_id)", "§7.1"),
    ("AutoPreferredReplicaLeaderElection", "AutoPreferredReplicaLeaderElection", "§7.9"),
    (
        "StopReplicaResponseReceived",
        "\\E broker_id \\in Brokers, partitions \\in {<<p>> : p \\in TopicPartitions} :\n"
        "        StopReplicaResponseReceived(broker_id, partitions, FALSE)",
        "§8",
    ),
)
"""The controller's own actions (name, the TLA+ action under ``WF_vars``, section): what happens without anyone
outside the controller doing anything — a controller is elected, the rebalance timer fires, brokers answer."""


@dataclass(frozen=True)
class KnownGap:
    """A liveness property Kafka is known not to satisfy in some behaviours (§12): an expected violation."""

    prop: str
    profile: str
    ticket: str
    section: str
    explanation: str


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
    ),
)


def known_gap(prop: str, profile: str) -> KnownGap | None:
    """The recorded §12 gap that explains a violation of ``prop`` under ``profile``, if any."""
    return next((g for g in KNOWN_GAPS if g.prop == prop and g.profile == profile), None)


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
    ``cycle_start = n - 1``). ``P ~> Q`` is false for ``x`` exactly when some state ``i`` has ``P(x)`` and no state
    from ``i`` on ever has ``Q(x)``: the states ``min(i, cycle_start)..n-1`` (the rest of the prefix and the
    cycle, visited forever) all have ``not Q(x)``."""
    if not 0 <= cycle_start < len(states):
        raise ValueError(f"cycle start {cycle_start} outside the lasso's {len(states)} states")
    out: list[tuple[str, object]] = []
    for prop in PROPERTIES:
        var = L.var(prop.var)
        for x in domain_values(prop, config):
            premise = [bool(evaluate(prop.premise(var), s=st, **{prop.var: x})) for st in states]
            goal = [bool(evaluate(prop.goal(var), s=st, **{prop.var: x})) for st in states]
            if any(premise[i] and not any(goal[min(i, cycle_start) :]) for i in range(len(states))):
                out.append((prop.name, x))
    return tuple(out)


def fair_spec(actions: frozenset[str]) -> str:
    """``FairSpec``: ``Spec`` with weak fairness of each of the controller's own actions the module has."""
    lines = ["FairSpec =="]
    lines.append("    /\\ Spec")
    for name, action, section in FAIR_ACTIONS:
        if name not in actions:
            continue
        body = action.replace("\n", "\n       ")
        lines.append(f"    (* {section} {name} *)")
        lines.append(f"    /\\ WF_vars({body})")
    return "\n".join(lines)


__all__ = [
    "FAIR_ACTIONS",
    "KNOWN_GAPS",
    "PROPERTIES",
    "KnownGap",
    "LivenessProperty",
    "fair_spec",
    "known_gap",
    "violated",
]
