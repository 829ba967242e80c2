"""The election strategies (§6): examples for every edge case, and Hypothesis properties over random inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.model.evaluate import compile_expr
from kcspec.spec.elections import elect, election_input
from kcspec.spec.lang import Var, lit
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.vocabulary import (
    ClusterConfig,
    ElectionInput,
    ElectionResult,
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    ReplicaAssignment,
)

from tests.support.builders import cluster, run, tp

S = ElectionStrategy
OFF, RE, PREF, CS = (
    S.OfflinePartitionLeaderElectionStrategy,
    S.ReassignPartitionLeaderElectionStrategy,
    S.PreferredReplicaPartitionLeaderElectionStrategy,
    S.ControlledShutdownPartitionLeaderElectionStrategy,
)
PROFILES = [KAFKA_2_8, KAFKA_1_1]
_COMPILED = {(p.name, s): compile_expr(elect(p, s, Var("inp")), ("inp",)) for p in PROFILES for s in S}


def run_elect(p: Profile, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
    result = _COMPILED[(p.name, strategy)]({"inp": inp})
    assert isinstance(result, ElectionResult)
    return result


def inp(
    ar: tuple[int, ...],
    isr: tuple[int, ...],
    online: set[int],
    *,
    leader: int = -1,
    sd: set[int] = frozenset(),  # type: ignore[assignment]
    targets: tuple[int, ...] | None = None,
    allow: bool = False,
    enabled: bool = False,
) -> ElectionInput:
    return ElectionInput(
        assignment=ar,
        target_replicas=ar if targets is None else targets,
        leader_and_isr=LeaderAndIsr(leader, 3, isr, 7),
        online=frozenset(online) - frozenset(sd),
        online_or_shutting_down=frozenset(online) | frozenset(sd),
        shutting_down=frozenset(sd),
        allow_unclean=allow,
        unclean_enabled=enabled,
    )


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
class TestOffline:
    def test_first_live_isr_member_in_assignment_order(self, p: Profile) -> None:
        r = run_elect(p, OFF, inp((3, 1, 2), (1, 2, 3), {1, 2}))
        assert (r.leader, r.isr, r.recipients, r.unclean) == (1, (1, 2), (1, 2), False), "KAFKA-1503 order"

    def test_current_leader_rechosen(self, p: Profile) -> None:
        r = run_elect(p, OFF, inp((1, 2), (1, 2), {1, 2}, leader=1))
        assert r.leader == 1 and r.isr == (1, 2)

    def test_empty_isr_clean_fails_unclean_picks_first_live(self, p: Profile) -> None:
        assert run_elect(p, OFF, inp((1, 2), (), {2})).leader == -1
        r = run_elect(p, OFF, inp((1, 2), (), {2}, enabled=True))
        assert (r.leader, r.isr, r.unclean) == (2, (2,), True)

    def test_all_isr_dead_needs_unclean_permission(self, p: Profile) -> None:
        assert run_elect(p, OFF, inp((1, 2, 3), (1,), {2, 3})).leader == -1
        assert run_elect(p, OFF, inp((1, 2, 3), (1,), {2, 3}, allow=True)).leader == 2
        assert run_elect(p, OFF, inp((1, 2, 3), (1,), {2, 3}, enabled=True)).leader == 2

    def test_no_live_replica_fails_even_unclean(self, p: Profile) -> None:
        assert run_elect(p, OFF, inp((1, 2), (1,), {5}, allow=True)).leader == -1

    def test_live_isr_member_outside_assignment_blocks_unclean(self, p: Profile) -> None:
        r = run_elect(p, OFF, inp((1, 2), (9, 1), {2, 9}, allow=True))
        assert r.leader == -1, "an online ISR member (even unassigned) forces a clean election"

    def test_clean_isr_keeps_live_unassigned_members(self, p: Profile) -> None:
        r = run_elect(p, OFF, inp((1, 2), (9, 2, 1), {2, 9}))
        assert (r.leader, r.isr) == (2, (9, 2))

    def test_leader_not_in_assignment_is_ignored(self, p: Profile) -> None:
        r = run_elect(p, OFF, inp((1, 2), (7, 2), {7, 2}, leader=7))
        assert r.leader == 2


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_reassign_uses_targets_and_sends_to_all_of_them(p: Profile) -> None:
    r = run_elect(p, RE, inp((4, 5, 1, 2), (1, 2, 5), {1, 2, 5}, targets=(4, 5)))
    assert (r.leader, r.isr, r.recipients) == (5, (1, 2, 5), (4, 5))
    assert run_elect(p, RE, inp((4, 1), (1,), {1, 4}, targets=(4,))).leader == -1


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_preferred_only_head_of_assignment(p: Profile) -> None:
    r = run_elect(p, PREF, inp((2, 1), (1, 2), {1, 2}, leader=1))
    assert (r.leader, r.isr, r.recipients) == (2, (1, 2), (2, 1))
    assert run_elect(p, PREF, inp((2, 1), (1,), {1, 2}, leader=1)).leader == -1, "head not in ISR"
    assert run_elect(p, PREF, inp((2, 1), (1, 2), {1}, leader=1)).leader == -1, "head not online"
    assert run_elect(p, PREF, inp((), (1,), {1})).leader == -1, "empty assignment"
    assert run_elect(p, PREF, inp((2, 1), (2, 1), {1, 2}, leader=2)).leader == 2, (
        "already preferred: re-chosen"
    )


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_controlled_shutdown(p: Profile) -> None:
    r = run_elect(p, CS, inp((1, 2, 3), (1, 2, 3), {1, 2}, leader=1, sd={1}))
    assert (r.leader, r.isr) == (2, (2, 3)), "dead member 3 stays in the ISR, shutting-down 1 leaves"
    expected = (1, 2) if p.controlled_shutdown_recipients_include_shutting_down else (2,)
    assert r.recipients == expected, "KAFKA-7482: 2.8 tells the shutting-down broker, 1.1 does not"
    stuck = run_elect(p, CS, inp((1, 2), (1, 2), {1, 2}, leader=1, sd={1, 2}))
    assert stuck.leader == -1, "every ISR member shutting down → no leader"
    assert run_elect(p, CS, inp((1, 2), (1, 2), {1, 2}, leader=1)).leader == 1, (
        "leader not shutting down: kept"
    )


def test_election_input_reads_context_and_config() -> None:
    s = cluster(
        brokers=(1, 2, 3),
        shutting_down=(3,),
        assignments={"t-0": ReplicaAssignment((4, 1, 2), adding=(4,), removing=(2,))},
        offline_replicas=[("t-0", 1)],
        legacy_reassignments={"t-0": [2, 1]},
        config=ClusterConfig(unclean_topics=frozenset({"t"})),
    )
    lai = LeaderAndIsr(1, 0, (1, 2), 0)
    el = LeaderElection(OFF, allow_unclean=True)
    i28 = run(election_input(KAFKA_2_8, Var("s"), lit(tp("t-0")), lit(lai), el), s=s)
    i11 = run(election_input(KAFKA_1_1, Var("s"), lit(tp("t-0")), lit(lai), el), s=s)
    assert i28.assignment == (4, 1, 2) and i28.target_replicas == (4, 1), "2.8 TRS = replicas − removing"
    assert i11.target_replicas == (2, 1), "1.1 Reassign candidates = RAR"
    assert i28.online == frozenset({2}), "offline dir and shutting-down brokers are not online"
    assert i28.online_or_shutting_down == frozenset({2, 3})
    assert i28.shutting_down == frozenset({3}) and i28.allow_unclean and i28.unclean_enabled


# ----------------------------------------------------------------------------------------- properties

brokers = st.integers(min_value=0, max_value=5)
seqs = st.lists(brokers, unique=True, max_size=5).map(tuple)
sets = st.frozensets(brokers, max_size=6)


@st.composite
def inputs(draw: st.DrawFn) -> ElectionInput:
    ar, isr, targets = draw(seqs), draw(seqs), draw(seqs)
    online, sd = draw(sets), draw(sets)
    return ElectionInput(
        assignment=ar,
        target_replicas=targets,
        leader_and_isr=LeaderAndIsr(draw(st.sampled_from((-1, *ar, *isr))), 2, isr, 4),
        online=online - sd,
        online_or_shutting_down=online | sd,
        shutting_down=sd,
        allow_unclean=draw(st.booleans()),
        unclean_enabled=draw(st.booleans()),
    )


def _candidates(strategy: ElectionStrategy, i: ElectionInput) -> tuple[tuple[int, ...], object]:
    isr = set(i.leader_and_isr.isr)
    if strategy is OFF:
        return i.assignment, lambda r: r in i.online and r in isr
    if strategy is RE:
        return i.target_replicas, lambda r: r in i.online and r in isr
    if strategy is PREF:
        return i.assignment[:1], lambda r: r in i.online and r in isr
    return i.assignment, lambda r: r in i.online_or_shutting_down and r in isr and r not in i.shutting_down


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("strategy", list(S), ids=lambda s: s.name)
@settings(max_examples=150, deadline=None)
@given(i=inputs())
def test_leader_is_first_candidate_satisfying_predicate(
    p: Profile, strategy: ElectionStrategy, i: ElectionInput
) -> None:
    r = run_elect(p, strategy, i)
    order, pred = _candidates(strategy, i)
    clean = next((c for c in order if pred(c)), -1)  # type: ignore[operator]
    if clean != -1 or strategy is not OFF:
        assert r.leader == clean, f"{strategy.name}: expected first eligible {clean}, got {r} for {i}"
        assert not r.unclean
        return
    live_isr = any(m in i.online for m in i.leader_and_isr.isr)
    allowed = not live_isr and (i.allow_unclean or i.unclean_enabled)
    expected = next((c for c in i.assignment if c in i.online), -1) if allowed else -1
    assert r.leader == expected, f"unclean rule: expected {expected}, got {r} for {i}"
    assert r.unclean == (expected != -1)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("strategy", list(S), ids=lambda s: s.name)
@settings(max_examples=150, deadline=None)
@given(i=inputs())
def test_elected_leader_is_in_a_non_empty_isr_and_online(
    p: Profile, strategy: ElectionStrategy, i: ElectionInput
) -> None:
    r = run_elect(p, strategy, i)
    if r.leader == -1:
        return
    assert r.isr and r.leader in r.isr, f"{strategy.name}: leader {r.leader} not in ISR {r.isr} ({i})"
    assert r.leader not in i.shutting_down, f"{strategy.name} elected a shutting-down broker ({i})"
    assert r.leader in i.online, f"{strategy.name} elected a broker that is not online ({i})"
    assert set(r.isr) <= set(i.leader_and_isr.isr) | {r.leader}, (
        "an election never adds ISR members but the leader"
    )
