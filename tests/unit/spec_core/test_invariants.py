"""The §11 invariants: they hold on steps of the state machines and catch hand-made violations."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.model.evaluate import compile_expr
from kcspec.spec.invariants import invariants
from kcspec.spec.lang import Invariant, Var, lit
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaState,
    ZkFault,
)
from kcspec.spec.work import Work

from tests.support.builders import cluster, pr, tp, with_ctx, with_zk

PROFILES = [KAFKA_2_8, KAFKA_1_1]
T0 = tp("t-0")
R, P = ReplicaState, PartitionState


def check(
    inv: Invariant, s: ClusterState, s2: ClusterState | None = None, requests: frozenset[object] = frozenset()
) -> bool:
    if inv.kind == "state":
        return bool(compile_expr(inv.expr, ("s",))({"s": s}))
    return bool(compile_expr(inv.expr, ("s", "s2", "requests"))({"s": s, "s2": s2, "requests": requests}))


def by_name(p: Profile, prefix: str) -> Invariant:
    matches = [i for i in invariants(p) if i.name.startswith(prefix)]
    assert len(matches) == 1, f"{prefix!r} names {[i.name for i in matches]} in {p.name}"
    return matches[0]


def start() -> ClusterState:
    return cluster(
        brokers=(1, 2, 3),
        assignments={"t-0": [1, 2, 3], "t-1": [2, 3], "t-2": [3, 1]},
        leadership={"t-0": (1, [1, 2, 3], 2, 2), "t-1": (2, [2, 3]), "t-2": (3, [3], 1, 1)},
        replica_states={
            (t, r): R.OnlineReplica
            for t, rs in (("t-0", (1, 2, 3)), ("t-1", (2, 3)), ("t-2", (3, 1)))
            for r in rs
        },
        partition_states={"t-0": P.OnlinePartition, "t-1": P.OnlinePartition, "t-2": P.OnlinePartition},
        faults={"t-1": ZkFault.BADVERSION},
    )


def broker_3_fails(p: Profile, s: ClusterState) -> Work:
    """Broker 3 disappears (from ZooKeeper and the live set); its replicas go offline and its partitions re-elect
    (a §7.4-like sequence)."""
    s1 = with_ctx(
        with_zk(s, brokers=s.zk.brokers.remove(3)), live_brokers=s.controller.live_brokers.remove(3)
    )
    replicas = frozenset({pr("t-0", 3), pr("t-1", 3), pr("t-2", 3)})
    expr = replica_state_change(
        p,
        partition_state_change(
            p,
            partition_state_change(p, Var("w"), lit(frozenset({tp("t-2")})), P.OfflinePartition, None),
            lit(frozenset({tp("t-2")})),
            P.OnlinePartition,
            LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy),
        ),
        lit(replicas),
        R.OfflineReplica,
    )
    result = compile_expr(expr, ("w",))({"w": Work(s1)})
    assert isinstance(result, Work)
    return result


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_invariants_hold_on_machine_steps(p: Profile) -> None:
    s = start()
    w = broker_3_fails(p, s)
    for inv in invariants(p):
        ok = check(inv, w.state) if inv.kind == "state" else check(inv, s, w.state, w.sent)
        assert ok, f"{inv.name} ({inv.section}) violated\n  before: {s}\n  after: {w.state}\n  sent: {w.sent}"


def test_profiles_list_the_required_invariants() -> None:
    required = ["I1", "I3", "I4", "I5", "I6", "I7", "I9", "I10", "I11", "I12", "I13", "I20"]
    for p in PROFILES:
        names = {i.name.split()[0] for i in invariants(p)}
        missing = [r for r in required if r not in names]
        assert not missing, f"{p.name} lacks {missing}"
        assert all(i.section.startswith("§") and i.doc for i in invariants(p))
    assert any(i.name.startswith("I8") for i in invariants(KAFKA_2_8))
    assert not any(i.name.startswith("I8") for i in invariants(KAFKA_1_1)), (
        "1.1 has no single-writer guarantee"
    )


def _rewrite(s: ClusterState, rec: LeaderIsrAndControllerEpoch) -> ClusterState:
    return with_zk(s, partition_states=s.zk.partition_states.set(T0, rec))


def test_state_invariants_catch_violations() -> None:
    p = KAFKA_2_8
    s = start()
    bad = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (2,), 3), 1)
    assert not check(by_name(p, "I1 leader in ISR"), _rewrite(s, bad))
    empty = LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 3, (), 3), 1)
    assert not check(by_name(p, "I3 ISR never empty"), _rewrite(s, empty))
    no_li = with_ctx(s, leadership=s.controller.leadership.remove(T0))
    assert not check(by_name(p, "I12"), no_li)
    assert not check(by_name(p, "W4"), with_ctx(s, controller_id=-1))
    assert not check(by_name(p, "W3"), with_ctx(s, shutting_down=frozenset({9})))


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_step_invariants_catch_violations(p: Profile) -> None:
    s = start()
    old = s.zk.partition_states[T0].leader_and_isr
    elected_outside_isr = _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (1,), 3), 1))
    assert not check(by_name(p, "I1 elected"), s, elected_outside_isr)
    assert not check(
        by_name(p, "I6"), s, _rewrite(s, LeaderIsrAndControllerEpoch(replace(old, leader=2, isr=(2, 3)), 1))
    )
    assert not check(
        by_name(p, "I7"), s, _rewrite(s, LeaderIsrAndControllerEpoch(replace(old, isr=(1, 2)), 1))
    )
    unassigned = _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 9), 3), 1))
    assert not check(by_name(p, "I4"), s, unassigned)
    sd = with_ctx(
        _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (2,), 3), 1)), shutting_down=frozenset({2})
    )
    assert not check(by_name(p, "I5"), s, sd)
    deleting = with_ctx(s, topics_to_be_deleted=frozenset({"t"}))
    moved = with_ctx(
        _rewrite(deleting, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (2, 3), 3), 1)),
        topics_to_be_deleted=frozenset({"t"}),
    )
    assert not check(by_name(p, "I13"), deleting, moved)
    lair = LeaderAndIsrRequest(
        1, 1, 1, frozenset({LeaderAndIsrPartitionState(T0, 1, 1, 2, (1,), 2, (1,), (), (), False)})
    )
    assert not check(by_name(p, "I18"), s, s, frozenset({lair}))
    jumped = with_ctx(s, replica_states=s.controller.replica_states.set(pr("t-0", 1), R.NewReplica))
    assert not check(by_name(p, "I20"), s, jumped), "Online → New is not reachable in one context"
    assert not check(by_name(p, "I11"), s, jumped), "the leader became NewReplica"
    stale = LeaderAndIsrRequest(1, 1, 0, frozenset())
    assert not check(by_name(p, "I9"), s, s, frozenset({stale}))


def test_zombie_write_is_not_a_controller_decision_in_1_1() -> None:
    """A 1.1 zombie write (controller epoch below /controller_epoch) is outside I1's step form."""
    p = KAFKA_1_1
    s = with_zk(start(), controller_epoch=3)
    s = with_ctx(s, epoch=3)
    zombie = _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (1,), 3), 2))
    assert check(by_name(p, "I1 elected"), s, zombie)
