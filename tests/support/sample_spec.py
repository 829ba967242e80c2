"""A small hand-built set of spec actions and invariants (in the spec's expression language) for testing
the TLA+ backend while the real actions are being written; it exercises every kind of node."""

from __future__ import annotations

from kcspec.spec import lang as L
from kcspec.spec.lang import Action, Invariant, Param, if_, let, rec, rule, seq_of, set_of
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)
from kcspec.spec.work import Work

s = L.var("s")


def broker_startup() -> Action:
    b = L.var("broker_id")
    zk = s.f("zk")
    new_zk = zk.with_(brokers=zk.f("brokers").put(b, zk.f("zxid")), zxid=zk.f("zxid") + 1)
    state = s.with_(zk=new_zk)
    return Action(
        "BrokerStartup",
        "§7.3",
        "A broker registers.",
        (Param("broker_id", int),),
        L.and_(b.ge(0), ~zk.f("brokers").has(b)),
        rule("registerBroker", "§7.2", rec(Work, state=state)),
    )


def topic_creation() -> Action:
    t, reps = L.var("topic"), L.var("replicas")
    zk = s.f("zk")
    indices = L.Sorted(reps.map(lambda r: r.size()).to_set())  # sets of ints -> ascending sequence
    assignments = indices.fold(
        zk.f("assignments"),
        lambda acc, i: acc.put(
            rec(TopicPartition, topic=t, partition=i - 1), rec(ReplicaAssignment, replicas=seq_of(0))
        ),
    )
    leaders = L.build_map(
        assignments.keys(),
        lambda tp: rec(
            LeaderIsrAndControllerEpoch,
            leader_and_isr=rec(
                LeaderAndIsr,
                leader=assignments.get(tp).f("replicas").head(-1),
                leader_epoch=0,
                isr=assignments.get(tp).f("replicas").distinct(),
                zk_version=0,
            ),
            controller_epoch=zk.f("controller_epoch"),
        ),
    )
    replicas = assignments.keys().flat_map(
        lambda tp: (
            assignments.get(tp).f("replicas").map(lambda r: rec(PartitionReplica, tp=tp, replica=r)).to_set()
        )
    )
    states = L.build_map(replicas, lambda pr: L.lit(ReplicaState.NewReplica))
    new_state = let(
        zk.with_(assignments=assignments, partition_states=zk.f("partition_states").merge(leaders)),
        lambda z: s.with_(zk=z, controller=s.f("controller").with_(replica_states=states)),
    )
    guard = L.and_(
        ~zk.f("assignments").keys().any(lambda tp: tp.f("topic").eq(t)),
        reps.non_empty(),
        reps.all(lambda r: L.and_(r.non_empty(), r.distinct().size().eq(r.size()), r.all(lambda x: x.ge(0)))),
    )
    return Action(
        "TopicCreation",
        "§7.6",
        "A topic is created with the given assignment; its partitions get a first leader.",
        (Param("topic", str), Param("replicas", tuple[tuple[int, ...], ...])),
        guard,
        rule("onNewPartitionCreation", "§7.6", rec(Work, state=new_state)),
    )


def isr_change() -> Action:
    tp, isr = L.var("tp"), L.var("isr")
    ps = s.f("zk", "partition_states")
    li = ps.get(tp).f("leader_and_isr")
    live = s.f("zk", "brokers").keys()
    first_live = isr.first(lambda r: live.contains(r), -1)
    shrunk = isr.filter(lambda r: live.contains(r)).minus(set_of(-1)).inter(live.union(isr))
    new_li = li.with_(
        isr=if_(
            shrunk.is_empty(), isr, shrunk.concat(seq_of()).append(first_live).distinct().minus(seq_of(-1))
        ),
        zk_version=L.maximum(li.f("zk_version") + 1, 0),
        leader_epoch=L.cond(
            (li.f("leader").eq(-1), li.f("leader_epoch")), otherwise=li.f("leader_epoch") + 0
        ),
    )
    deleted = s.f("zk", "faults").delete(tp).delete_all(set_of(tp))
    state = s.with_(
        zk=s.f("zk").with_(
            partition_states=ps.put(tp, ps.get(tp).with_(leader_and_isr=new_li)), faults=deleted
        )
    )
    guard = L.and_(
        ps.has(tp),
        li.f("leader").ge(0),
        isr.contains(li.f("leader")),
        isr.to_set().subset_of(live),
        tp.gt(rec(TopicPartition, topic="", partition=-1)) | L.lit(False).implies(L.lit(True)),
        s.f("controller", "replica_states")
        .get_or(rec(PartitionReplica, tp=tp, replica=0), L.lit(ReplicaState.NewReplica))
        .ne(L.lit(ReplicaState.OfflineReplica)),
    )
    return Action(
        "IsrChange",
        "§7.11",
        "The leader changes the ISR.",
        (Param("tp", TopicPartition), Param("isr", tuple[int, ...])),
        guard,
        rule("alterIsr", "§7.11", rec(Work, state=state)),
    )


def resignation() -> Action:
    return Action(
        "ControllerResignation",
        "§7.12",
        "The controller resigns.",
        (),
        s.f("controller", "controller_id").ne(-1),
        rec(
            Work,
            state=s.with_(controller=L.lit(ClusterState().controller), zk=s.f("zk").with_(controller=-1)),
        ),
    )


def actions() -> list[Action]:
    return [topic_creation(), broker_startup(), isr_change(), resignation()]


def invariants() -> list[Invariant]:
    ps = s.f("zk", "partition_states")
    leader_in_isr = ps.keys().all(
        lambda tp: L.or_(
            ps.get(tp).f("leader_and_isr", "leader").eq(-1),
            ps.get(tp).f("leader_and_isr", "isr").contains(ps.get(tp).f("leader_and_isr", "leader")),
        )
    )
    epoch_monotonic = L.var("s2").f("zk", "controller_epoch").ge(s.f("zk", "controller_epoch"))
    return [
        Invariant(
            "LeaderInIsr",
            "§11.1",
            "A leader is in its ISR.",
            "state",
            rule("leaderInIsr", "§11.1", leader_in_isr),
        ),
        Invariant("ControllerEpochMonotonic", "§11.4", "Epochs only grow.", "step", epoch_monotonic),
    ]
