"""The partition state machine (§5, §2.3): every valid and invalid transition per profile, initialisation,
elections with ZK faults and the 1.1 retry bug, fencing, startup helpers."""

from __future__ import annotations

import functools

import pytest
from kcspec.model.evaluate import Compiled, compile_expr
from kcspec.spec.lang import Var, lit
from kcspec.spec.partition_machine import (
    initialize_partition_state,
    partition_state_change,
    trigger_online_partition_state_change,
)
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ZkFault,
)
from kcspec.spec.work import Work

from tests.support.builders import cluster, describe, failures_of, lair_partitions, run_work, tp, umr

P = PartitionState
PROFILES = [KAFKA_2_8, KAFKA_1_1]
T0, T1, T2 = tp("t-0"), tp("t-1"), tp("t-2")
OFFLINE = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy)
PREFERRED = LeaderElection(ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy)

# §2.2, written out independently of spec/tables.py (identical in both profiles).
VALID = {
    P.NewPartition: {P.NonExistentPartition},
    P.OnlinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.OfflinePartition: {P.NewPartition, P.OnlinePartition, P.OfflinePartition},
    P.NonExistentPartition: {P.OfflinePartition},
}


@functools.cache
def _compiled(profile: str, target: PartitionState, election: LeaderElection | None) -> Compiled:
    p = KAFKA_2_8 if profile == KAFKA_2_8.name else KAFKA_1_1
    return compile_expr(partition_state_change(p, Var("w"), Var("ps"), target, election), ("w", "ps"))


def change(
    p: Profile,
    s: ClusterState,
    tps: set[object],
    target: PartitionState,
    election: LeaderElection | None = OFFLINE,
) -> Work:
    result = _compiled(p.name, target, election)({"w": Work(s), "ps": frozenset(tps)})
    assert isinstance(result, Work)
    return result


def one_partition(state: PartitionState | None, **kw: object) -> ClusterState:
    args: dict[str, object] = {
        "assignments": {"t-0": [1, 2, 3]},
        "partition_states": {} if state is None else {"t-0": state},
    }
    if state is not P.NewPartition:
        args["leadership"] = {"t-0": (1, [1, 2, 3], 4, 6)}
    args.update(kw)
    return cluster(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("target", list(P), ids=lambda x: x.name)
@pytest.mark.parametrize("source", list(P), ids=lambda x: x.name)
def test_transition_validity(p: Profile, source: PartitionState, target: PartitionState) -> None:
    s = one_partition(None if source is P.NonExistentPartition else source)
    w = change(p, s, {T0}, target)
    if source in VALID[target]:
        assert not w.failures, f"{source.name}→{target.name}: {describe(w)}"
        assert w.state.controller.partition_states[T0] == target
    else:
        assert failures_of(w) == {("t-0", -1, source.name, target.name, "invalid_transition")}, describe(w)
        assert w.sent == frozenset() and w.state.zk == s.zk
        assert w.state.controller.partition_states[T0] == source


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_new_to_online_initialises(p: Profile) -> None:
    s = cluster(
        brokers=(2, 3, 4),
        shutting_down=(4,),
        assignments={"t-0": [1, 4, 3, 2], "t-1": [1], "t-2": [2]},
        partition_states={"t-0": P.NewPartition, "t-1": P.NewPartition, "t-2": P.NewPartition},
        zk_leadership={"t-2": LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 0, (2,), 0), 1)},
        epoch=3,
        zk_controller_epoch=3,
    )
    w = change(p, s, {T0, T1, T2}, P.OnlinePartition)
    assert w.state.zk.partition_states[T0] == LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 0, (3, 2), 0), 3)
    assert w.state.controller.leadership[T0] == w.state.zk.partition_states[T0]
    assert failures_of(w) == {
        ("t-1", -1, "NewPartition", "OnlinePartition", "no_assigned_replica_alive"),
        ("t-2", -1, "NewPartition", "OnlinePartition", "node_exists"),
    }
    ps = w.state.controller.partition_states
    assert (ps[T0], ps[T1], ps[T2]) == (P.OnlinePartition, P.NewPartition, P.NewPartition)
    parts = lair_partitions(w)
    assert set(parts) == {2, 3} and all(parts[b][T0].is_new for b in (2, 3)), "LAIR(isNew) to the ISR"
    assert set(umr(w)) == {2, 3, 4}


def election_state(**kw: object) -> ClusterState:
    args: dict[str, object] = {
        "brokers": (2, 3),
        "assignments": {"t-0": [1, 2, 3], "t-1": [2, 1], "t-2": [1]},
        "leadership": {"t-0": (1, [1, 2, 3], 4, 6), "t-1": (2, [2, 1], 2, 2), "t-2": (1, [1], 1, 1)},
        "partition_states": {"t-0": P.OfflinePartition, "t-1": P.OnlinePartition, "t-2": P.OfflinePartition},
    }
    args.update(kw)
    return cluster(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_election(p: Profile) -> None:
    w = change(p, election_state(), {T0, T1, T2}, P.OnlinePartition)
    zk = w.state.zk.partition_states
    assert zk[T0].leader_and_isr == LeaderAndIsr(2, 5, (2, 3), 7)
    assert zk[T1].leader_and_isr == LeaderAndIsr(2, 3, (2,), 3), "current leader re-chosen: epoch still +1"
    assert failures_of(w) == {("t-2", -1, "OfflinePartition", "OnlinePartition", "no_eligible_leader")}
    ps = w.state.controller.partition_states
    assert (ps[T0], ps[T1], ps[T2]) == (P.OnlinePartition, P.OnlinePartition, P.OfflinePartition)
    parts = lair_partitions(w)
    assert set(parts) == {2, 3} and set(parts[2]) == {T0, T1} and not parts[2][T0].is_new


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_election_zk_read_failures(p: Profile) -> None:
    newer = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 9, (1, 2), 9), 7)
    w = change(p, election_state(zk_leadership={"t-0": None, "t-1": newer}), {T0, T1}, P.OnlinePartition)
    assert failures_of(w) == {
        ("t-0", -1, "OfflinePartition", "OnlinePartition", "leader_and_isr_missing"),
        ("t-1", -1, "OnlinePartition", "OnlinePartition", "written_by_newer_controller"),
    }
    lost = change(p, election_state(faults={"t-1": ZkFault.CONNECTIONLOSS}), {T0, T1}, P.OnlinePartition)
    assert {f[4] for f in failures_of(lost)} == {"zk_error"} and len(lost.failures) == 2
    assert not lost.state.zk.faults and lost.sent == frozenset()


def test_badversion_retry_2_8_retries_remaining_1_1_reelects_all() -> None:
    s = election_state(faults={"t-1": ZkFault.BADVERSION})
    w28 = change(KAFKA_2_8, s, {T0, T1}, P.OnlinePartition)
    w11 = change(KAFKA_1_1, s, {T0, T1}, P.OnlinePartition)
    for w in (w28, w11):
        assert w.state.zk.partition_states[T1].leader_and_isr == LeaderAndIsr(2, 3, (2,), 3), describe(w)
        assert not w.state.zk.faults
    assert w28.state.zk.partition_states[T0].leader_and_isr.leader_epoch == 5
    assert w11.state.zk.partition_states[T0].leader_and_isr == LeaderAndIsr(2, 6, (2, 3), 8), (
        "1.1 re-runs the election on the full list: t-0 is elected twice"
    )
    assert lair_partitions(w11)[2][T0].leader_epoch == 6


def test_fencing_2_8_moves_and_sends_nothing() -> None:
    s = election_state(zk_epoch_zk_version=9)
    w = change(KAFKA_2_8, s, {T0, T1}, P.OnlinePartition)
    assert w.moved and w.sent == frozenset() and w.state.zk == s.zk, describe(w)
    w11 = change(KAFKA_1_1, s, {T0, T1}, P.OnlinePartition)
    assert not w11.moved and w11.state.zk.partition_states[T0].leader_and_isr.leader == 2


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_preferred_election_and_missing_strategy(p: Profile) -> None:
    s = election_state(brokers=(1, 2, 3))
    w = change(p, s, {T1}, P.OnlinePartition, PREFERRED)
    assert w.state.zk.partition_states[T1].leader_and_isr == LeaderAndIsr(2, 3, (2, 1), 3)
    assert set(lair_partitions(w)) == {1, 2}, "Preferred sends to all of AR"
    none = change(p, s, {T1}, P.OnlinePartition, None)
    assert none.sent == frozenset() and none.state.zk == s.zk and not none.failures


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_and_non_existent_change_only_the_state(p: Profile) -> None:
    s = election_state()
    w = change(p, s, {T1}, P.OfflinePartition)
    assert w.state.controller.partition_states[T1] == P.OfflinePartition
    assert (
        w.sent == frozenset()
        and w.state.zk == s.zk
        and w.state.controller.leadership == s.controller.leadership
    )
    w2 = change(p, s, {T0}, P.NonExistentPartition)
    assert w2.state.controller.partition_states[T0] == P.NonExistentPartition, "the entry is kept (§2.2)"


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_trigger_online_skips_deleting_topics_and_online_partitions(p: Profile) -> None:
    s = cluster(
        brokers=(1, 2),
        assignments={"t-0": [1, 2], "t-1": [2], "d-0": [1]},
        leadership={"t-0": (-1, [1], 1, 1), "t-1": (2, [2], 0, 0), "d-0": (-1, [1], 0, 0)},
        partition_states={"t-0": P.OfflinePartition, "t-1": P.OnlinePartition, "d-0": P.OfflinePartition},
        queued=["d"],
    )
    w = run_work(lambda w: trigger_online_partition_state_change(p, w), s)
    zk = w.state.zk.partition_states
    assert zk[T0].leader_and_isr.leader == 1 and zk[T1] == s.zk.partition_states[T1]
    assert zk[tp("d-0")] == s.zk.partition_states[tp("d-0")], "topics queued for deletion are skipped"
    only_d = run_work(lambda w: trigger_online_partition_state_change(p, w, lit("d")), s)
    assert only_d.state == s and only_d.sent == frozenset()


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_unclean_election_follows_topic_config(p: Profile) -> None:
    s = election_state(
        brokers=(3,), leadership={"t-0": (-1, [1], 4, 6)}, partition_states={"t-0": P.OfflinePartition}
    )
    clean = run_work(lambda w: trigger_online_partition_state_change(p, w), s)
    assert clean.state.zk.partition_states[T0] == s.zk.partition_states[T0]
    cfg = s.config.__class__(unclean_topics=frozenset({"t"}))
    unclean = run_work(
        lambda w: trigger_online_partition_state_change(p, w), s.__class__(s.zk, s.controller, cfg)
    )
    assert unclean.state.zk.partition_states[T0].leader_and_isr == LeaderAndIsr(3, 5, (3,), 7)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_initialize_partition_state(p: Profile) -> None:
    s = cluster(
        brokers=(1, 2),
        shutting_down=(2,),
        assignments={"t-0": [1], "t-1": [2], "t-2": [1]},
        leadership={"t-0": (1, [1]), "t-1": (2, [2])},
    )
    w = run_work(lambda w: initialize_partition_state(p, w), s)
    assert dict(w.state.controller.partition_states) == {
        T0: P.OnlinePartition,
        T1: P.OfflinePartition,
        T2: P.NewPartition,
    }
