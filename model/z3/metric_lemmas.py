"""Metric bookkeeping lemmas (§3.1): Kafka's incremental updates of its two gauges keep them equal to the spec's
definitions (``spec/metrics.py``), for every context of a bounded shape.

The gauges are not state, so no invariant of the spec can say "kept value = definition"; what Z3 can prove is
the step that makes the explorer's check inductive: for each ``ControllerContext`` mutator that Kafka 2.8.2 hooks
a gauge update into, on a symbolic context ``s``,

    definition(mutated s) = definition(s) + Kafka's update

— so a gauge that equals its definition before a mutation equals it after. Each mutation and each update is
restated here in Z3 directly (``putPartitionState`` / ``updatePartitionStateMetrics``,
``putPartitionLeadershipInfo``, ``updatePartitionFullReplicaAssignment`` / ``updatePreferredReplicaImbalanceMetric``,
``queueTopicDeletion``, ``removeTopic`` / ``cleanPreferredReplicaImbalanceMetric``), never through the spec's
trees; only the definitions are the spec's, evaluated by the Z3 backend.

The shape: brokers 0..2, topics ``t`` (partitions 0 and 1) and ``u`` (partition 0); every partition's state,
cached leadership (leader −1..2, any ISR), assignment (any sequence of distinct brokers as replicas, any adding
set) present or not; which topics are queued for deletion and which have deletion started, free. 2.8 only: 1.1
recomputes both gauges after every event (``KafkaController.updateMetrics``), nothing is kept to prove.

``queueTopicDeletion`` as 2.8.2 has it (every given topic cleaned, also one already queued) is an expected
counterexample: KAFKA-13572, fixed in 3.3.0; the reference controller and the lemma use the fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.model.z3.induction_family import Vars
from kcspec.model.z3.results import ProofResult, check_goal
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec.fmap import FMap
from kcspec.spec.metrics import offline_partition_count, preferred_replica_imbalance_count
from kcspec.spec.profiles import Profile
from kcspec.spec.state import ClusterState, ControllerContext
from kcspec.spec.vocabulary import (
    PartitionState,
    ReplicaAssignment,
    TopicPartition,
)

BROKERS = 3
TOPICS = ("t", "u")
PARTITIONS = (TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0))
TARGET = TopicPartition("t", 0)
"""The partition every single-partition mutation touches (``t`` also has a second partition, ``u`` one)."""
Bool = Any


@dataclass(frozen=True)
class Context:
    """A symbolic pre-state: the ``ClusterState`` the definitions read, its parts, and their range constraints."""

    state: V.SRec
    states: V.SMap
    leadership: V.SMap
    assignments: V.SMap
    queued: V.SColl
    started: V.SColl
    constraints: tuple[Any, ...]


def _assignment(v: Vars, name: str) -> V.SRec:
    """Any assignment: replicas and adding replicas each any sequence of distinct brokers."""
    return V.SRec(
        ReplicaAssignment,
        (
            ("replicas", v.isr(f"{name}_replicas", BROKERS)),
            ("adding", v.isr(f"{name}_adding", BROKERS)),
            ("removing", ()),
        ),
    )


def context(prefix: str = "") -> Context:
    """A symbolic active 2.8 context of the shape in the module docstring."""
    v = Vars(prefix)
    states = V.SMap(
        tuple((v.boolean(f"ps_{tp}"), tp, v.enum(f"ps_{tp}_v", PartitionState)) for tp in PARTITIONS)
    )
    leadership = V.SMap(
        tuple((v.boolean(f"li_{tp}"), tp, v.leadership(f"li_{tp}", BROKERS)) for tp in PARTITIONS)
    )
    assignments = V.SMap(tuple((v.boolean(f"fa_{tp}"), tp, _assignment(v, f"fa_{tp}")) for tp in PARTITIONS))
    queued = V.SColl("set", tuple((v.boolean(f"queued_{t}"), t) for t in TOPICS))
    started = V.SColl("set", tuple((v.boolean(f"started_{t}"), t) for t in TOPICS))
    state = _state(states, leadership, assignments, queued, started)
    return Context(state, states, leadership, assignments, queued, started, tuple(v.constraints))


def _state(states: Any, leadership: Any, assignments: Any, queued: Any, started: Any) -> V.SRec:
    fields = V.record_defaults(ControllerContext)
    fields.update(
        controller_id=0,
        live_brokers=FMap(dict.fromkeys(range(BROKERS), 0)),
        partition_states=states,
        leadership=leadership,
        assignments=assignments,
        topics_to_be_deleted=queued,
        topics_with_deletion_started=started,
    )
    ctl = V.make_record(ControllerContext, fields)
    cluster = V.record_defaults(ClusterState)
    cluster.update(controller=ctl)
    out = V.make_record(ClusterState, cluster)
    assert isinstance(out, V.SRec)
    return out


# ------------------------------------------------------------------------------------ Kafka's updates, in Z3


def _int(x: Any) -> Any:
    return x if V.is_z3(x) else z3.IntVal(int(x))


def _indicator(b: Bool) -> Any:
    return z3.If(V.bool_term(b), z3.IntVal(1), z3.IntVal(0))


def _offline(state: Any) -> Bool:
    _sort, consts = V.enum_sort(PartitionState)
    return V.eq(state, consts[PartitionState.OfflinePartition])


def _has_preferred_leader(fa: Any, li: Any) -> Bool:
    """``hasPreferredLeader`` (2.6+), with an empty assignment counted as balanced (Kafka would throw)."""
    replicas = V.as_coll(fa.get("replicas"))
    isr = li.get("leader_and_isr").get("isr")
    leader = li.get("leader_and_isr").get("leader")
    # the head: the first present slot
    result: Bool = True
    for p, r in reversed(replicas.items):
        branch = z3.If(
            V.bool_term(V.member(r, fa.get("adding"))),
            V.bool_term(V.b_not(V.member(r, isr))),
            V.bool_term(V.eq(leader, r)),
        )
        result = z3.If(V.bool_term(p), branch, V.bool_term(result))
    return result


def _imbalanced(li: Any, fa: Any, li_present: Bool, fa_present: Bool) -> Any:
    """1 when ``tp`` counts as imbalanced with leadership ``li`` and assignment ``fa`` (both present), else 0."""
    return _indicator(V.b_and(li_present, fa_present, V.b_not(_has_preferred_leader(fa, li))))


def _entry(m: V.SMap, tp: TopicPartition) -> tuple[Bool, Any]:
    for p, k, val in m.entries:
        if k == tp:
            return p, val
    raise KeyError(tp)


def _clean(cx: Context, topic: str) -> Any:
    """``cleanPreferredReplicaImbalanceMetric(topic)``: the number of the topic's imbalanced partitions."""
    total: Any = z3.IntVal(0)
    for tp in PARTITIONS:
        if tp.topic == topic:
            li_p, li = _entry(cx.leadership, tp)
            fa_p, fa = _entry(cx.assignments, tp)
            total = total + _imbalanced(li, fa, li_p, fa_p)
    return total


@dataclass(frozen=True)
class Mutation:
    """One ``ControllerContext`` mutator: the pre-state's mutated state and Kafka's gauge update, with any fresh
    variables' constraints."""

    state: V.SRec
    metric: str
    delta: Any
    constraints: tuple[Any, ...] = ()
    assumption: Bool = True


def put_partition_state(cx: Context) -> Mutation:
    """``putPartitionState(t-0, new)`` with ``updatePartitionStateMetrics``: ±1 on entering / leaving Offline, unless
    the topic's deletion has started."""
    sort, _consts = V.enum_sort(PartitionState)
    new = z3.Const("new_ps", sort)
    p, old = _entry(cx.states, TARGET)
    old_offline = V.b_and(p, _offline(old))
    started = V.member(TARGET.topic, cx.started)
    delta = z3.If(
        V.bool_term(started),
        z3.IntVal(0),
        _indicator(V.b_and(V.b_not(old_offline), _offline(new)))
        - _indicator(V.b_and(old_offline, V.b_not(_offline(new)))),
    )
    states = V.map_put(cx.states, TARGET, new)
    return Mutation(_state(states, cx.leadership, cx.assignments, cx.queued, cx.started), "offline", delta)


def _imbalance_update(cx: Context, new_li: bool) -> Mutation:
    """A new cached leadership (``new_li``) or a new assignment of t-0: −its old contribution + its new one, unless
    the topic is queued for deletion (``updatePreferredReplicaImbalanceMetric``)."""
    v = Vars("new_")
    li_p, li = _entry(cx.leadership, TARGET)
    fa_p, fa = _entry(cx.assignments, TARGET)
    if new_li:
        li2, li2_p, fa2, fa2_p = v.leadership("li", BROKERS), True, fa, fa_p
        leadership, assignments = V.map_put(cx.leadership, TARGET, li2), cx.assignments
    else:
        li2, li2_p, fa2, fa2_p = li, li_p, _assignment(v, "fa"), True
        leadership, assignments = cx.leadership, V.map_put(cx.assignments, TARGET, fa2)
    delta = z3.If(
        V.bool_term(V.member(TARGET.topic, cx.queued)),
        z3.IntVal(0),
        _imbalanced(li2, fa2, li2_p, fa2_p) - _imbalanced(li, fa, li_p, fa_p),
    )
    state = _state(cx.states, leadership, assignments, cx.queued, cx.started)
    return Mutation(state, "imbalance", delta, tuple(v.constraints))


def put_partition_leadership_info(cx: Context) -> Mutation:
    """``putPartitionLeadershipInfo(t-0, li)``, with the partition's assignment."""
    return _imbalance_update(cx, new_li=True)


def update_partition_full_replica_assignment(cx: Context) -> Mutation:
    """``updatePartitionFullReplicaAssignment(t-0, fa)``, with the partition's cached leadership."""
    return _imbalance_update(cx, new_li=False)


def _queue(cx: Context, only_new: bool) -> Mutation:
    topic = TARGET.topic
    already = V.member(topic, cx.queued)
    cleaned = _clean(cx, topic)
    delta = z3.If(V.bool_term(already), z3.IntVal(0), -cleaned) if only_new else -cleaned
    queued = V.SColl("set", tuple((True if t == topic else p, t) for p, t in cx.queued.items))
    return Mutation(_state(cx.states, cx.leadership, cx.assignments, queued, cx.started), "imbalance", delta)


def queue_topic_deletion(cx: Context) -> Mutation:
    """``queueTopicDeletion({t})`` as fixed by KAFKA-13572: a topic not yet queued is queued and cleaned once."""
    return _queue(cx, only_new=True)


def queue_topic_deletion_2_8_2(cx: Context) -> Mutation:
    """``queueTopicDeletion({t})`` as Kafka 2.8.2 has it: cleaned whether or not it was queued already."""
    return _queue(cx, only_new=False)


def remove_topic(cx: Context) -> Mutation:
    """``removeTopic(t)``: cleaned first unless queued (cleaned when it was queued); then t leaves the queue, the
    started set, the assignments and the leadership cache (not the partition states)."""
    topic = TARGET.topic
    delta = z3.If(V.bool_term(V.member(topic, cx.queued)), z3.IntVal(0), -_clean(cx, topic))
    gone = [tp for tp in PARTITIONS if tp.topic == topic]
    queued = V.SColl("set", tuple((False if t == topic else p, t) for p, t in cx.queued.items))
    started = V.SColl("set", tuple((False if t == topic else p, t) for p, t in cx.started.items))
    state = _state(
        cx.states, V.map_delete(cx.leadership, gone), V.map_delete(cx.assignments, gone), queued, started
    )
    return Mutation(state, "imbalance", delta)


def begin_topic_deletion(cx: Context) -> Mutation:
    """``beginTopicDeletion({t})`` in ``onTopicDeletion`` step 1, after every partition of t went Offline →
    NonExistentPartition (assumed: no partition of t is Offline): no gauge update."""
    topic = TARGET.topic
    none_offline = V.b_and(
        *(
            V.b_not(V.b_and(_entry(cx.states, tp)[0], _offline(_entry(cx.states, tp)[1])))
            for tp in PARTITIONS
            if tp.topic == topic
        )
    )
    started = V.SColl("set", tuple((True if t == topic else p, t) for p, t in cx.started.items))
    state = _state(cx.states, cx.leadership, cx.assignments, cx.queued, started)
    return Mutation(state, "offline", z3.IntVal(0), assumption=none_offline)


LEMMAS: tuple[tuple[str, Callable[[Context], Mutation]], ...] = (
    ("putPartitionState keeps OfflinePartitionsCount", put_partition_state),
    ("beginTopicDeletion after Offline → NonExistent keeps OfflinePartitionsCount", begin_topic_deletion),
    ("putPartitionLeadershipInfo keeps PreferredReplicaImbalanceCount", put_partition_leadership_info),
    (
        "updatePartitionFullReplicaAssignment keeps PreferredReplicaImbalanceCount",
        update_partition_full_replica_assignment,
    ),
    ("queueTopicDeletion (KAFKA-13572 fix) keeps PreferredReplicaImbalanceCount", queue_topic_deletion),
    ("queueTopicDeletion (2.8.2) keeps PreferredReplicaImbalanceCount", queue_topic_deletion_2_8_2),
    ("removeTopic keeps PreferredReplicaImbalanceCount", remove_topic),
)

EXPECTED: dict[str, str] = {
    "queueTopicDeletion (2.8.2) keeps PreferredReplicaImbalanceCount": (
        "KAFKA-13572 (§12.4 item 26, fixed in 3.3.0): a topic queued again is cleaned again; the reference "
        "controller keeps the fix, and tests/quality/explore/test_metrics_bookkeeping.py finds the 2.8.2 code"
    )
}
"""Lemma name → why it is known not to hold."""


def _describe(cx: Context, model: Any) -> str:
    s = V.concretize(cx.state, model)
    c = s.controller
    parts = [
        f"partition states { {str(tp): st.name for tp, st in c.partition_states.items()} }",
        f"leadership { {str(tp): (li.leader_and_isr.leader, li.leader_and_isr.isr) for tp, li in c.leadership.items()} }",
        f"assignments { {str(tp): (fa.replicas, fa.adding) for tp, fa in c.assignments.items()} }",
        f"queued {sorted(c.topics_to_be_deleted)}",
        f"deletion started {sorted(c.topics_with_deletion_started)}",
    ]
    return "; ".join(parts)


def prove_metric_bookkeeping(profile: Profile) -> list[ProofResult]:
    """Every lemma for ``profile`` (2.8; 1.1 keeps no gauge: one skipped result with the reason)."""
    if not profile.incremental_metrics:
        return [
            ProofResult(
                "metrics: incremental bookkeeping",
                "§3.1",
                "skipped",
                0.0,
                f"{profile.name} recomputes both gauges after every event (KafkaController.updateMetrics): "
                "nothing is kept incrementally",
            )
        ]
    definitions = {
        "offline": offline_partition_count(profile),
        "imbalance": preferred_replica_imbalance_count(profile),
    }
    out: list[ProofResult] = []
    for name, mutate in LEMMAS:
        start = time.perf_counter()
        cx = context()
        mutation = mutate(cx)
        ev = SymbolicEvaluator(Domain.brokers(BROKERS))
        expr = definitions[mutation.metric]
        before = _int(ev.eval(expr, {"s": cx.state}))
        after = _int(ev.eval(expr, {"s": mutation.state}))
        solver = z3.Solver()
        solver.add(*cx.constraints, *mutation.constraints, V.bool_term(mutation.assumption))
        ref = check_goal(solver, after == before + mutation.delta, ev.obligations)
        seconds = time.perf_counter() - start
        reason = EXPECTED.get(name)
        if ref is not None:
            broken = f" (obligation broken: {ref.broken_obligation})" if ref.broken_obligation else ""
            detail = f"{TARGET}: {_describe(cx, ref.model)}{broken}" + (
                f" — expected: {reason}" if reason else ""
            )
            status = "expected-counterexample" if reason else "counterexample"
        elif reason:
            status, detail = "counterexample", f"expected a counterexample ({reason}) but the lemma holds"
        else:
            status = "proved"
            detail = (
                f"every context over brokers 0..{BROKERS - 1}, partitions {', '.join(map(str, PARTITIONS))}: states, "
                "leadership, assignments, deletion sets symbolic"
            )
        out.append(ProofResult(f"metrics: {name}", "§3.1", status, seconds, detail))
    return out
