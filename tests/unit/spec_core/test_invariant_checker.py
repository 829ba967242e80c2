"""``InvariantChecker`` evaluates all invariants of a kind in one compiled function: it must name exactly the
invariants that fail one by one (checked against the interpreter, invariant by invariant)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.model.evaluate import compile_expr
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine
from kcspec.spec.events import BrokerFailure, ControlledShutdown, ControllerFailover
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.requests import Request
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaState

from tests.support.builders import cluster, tp, with_ctx, with_zk

PROFILES = [KAFKA_2_8, KAFKA_1_1]
T0 = tp("t-0")


def start() -> ClusterState:
    return cluster(
        brokers=(1, 2, 3),
        assignments={"t-0": [1, 2, 3], "t-1": [2, 3]},
        leadership={"t-0": (1, [1, 2, 3], 2, 2), "t-1": (2, [2, 3])},
        replica_states={
            (t, r): ReplicaState.OnlineReplica for t, rs in (("t-0", (1, 2, 3)), ("t-1", (2, 3))) for r in rs
        },
    )


def one_by_one(
    p: Profile, s: ClusterState, s2: ClusterState | None = None, requests: frozenset[Request] = frozenset()
) -> list[str]:
    """The names of the failing invariants, each evaluated on its own by the interpreter."""
    failing = []
    for inv in invariants(p):
        if inv.kind == "state" and s2 is None:
            ok = compile_expr(inv.expr, ("s",))({"s": s})
        elif inv.kind == "step" and s2 is not None:
            ok = compile_expr(inv.expr, ("s", "s2", "requests"))({"s": s, "s2": s2, "requests": requests})
        else:
            continue
        if not ok:
            failing.append(inv.name)
    return failing


def _rewrite(s: ClusterState, rec: LeaderIsrAndControllerEpoch) -> ClusterState:
    return with_zk(s, partition_states=s.zk.partition_states.set(T0, rec))


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_the_checker_names_exactly_the_failing_invariants(p: Profile) -> None:
    checker = InvariantChecker(p.name)
    s = start()
    old = s.zk.partition_states[T0].leader_and_isr
    states = [
        s,
        _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (2,), 3), 1)),
        _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 3, (), 3), 1)),
        with_ctx(s, leadership=s.controller.leadership.remove(T0)),
        with_ctx(s, controller_id=-1),
        with_ctx(s, shutting_down=frozenset({9})),
    ]
    seen_failing = False
    for state in states:
        expected = one_by_one(p, state)
        seen_failing |= bool(expected)
        assert [v.name for v in checker.check_state(state)] == expected
    steps = [
        (s, _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (1,), 3), 1))),
        (s, _rewrite(s, LeaderIsrAndControllerEpoch(replace(old, leader=2, isr=(2, 3)), 1))),
        (s, _rewrite(s, LeaderIsrAndControllerEpoch(replace(old, isr=(1, 2)), 1))),
        (s, _rewrite(s, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 9), 3), 1))),
    ]
    spec = SpecMachine(p)
    for event in (ControllerFailover(1), BrokerFailure(2), ControlledShutdown(3)):
        if spec.enabled(s, event):
            result = spec.step(s, event)
            steps.append((s, result.state))
            assert checker.check_step(s, result.state, result.requests) == []
    for before, after in steps:
        expected = one_by_one(p, before, after)
        seen_failing |= bool(expected)
        assert [v.name for v in checker.check_step(before, after, frozenset())] == expected
    assert seen_failing, "the hand-made violations violate nothing: the test checks nothing"
