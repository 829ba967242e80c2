"""The replica state machine (§4, §2.3): every valid and invalid transition per profile, and each target's rule."""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet

import pytest
from kcspec.model.evaluate import Compiled, compile_expr
from kcspec.spec.lang import Var, lit
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.replica_machine import initialize_replica_state, replica_state_change
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaState,
    ZkFault,
)
from kcspec.spec.work import Work

from tests.support.builders import (
    cluster,
    describe,
    failures_of,
    lair_partitions,
    pr,
    run_work,
    stop,
    tp,
    umr,
)

R = ReplicaState
PROFILES = [KAFKA_2_8, KAFKA_1_1]
T0, T1 = tp("t-0"), tp("t-1")

# §2.1, written out independently of spec/tables.py.
VALID_2_8 = {
    R.NewReplica: {R.NonExistentReplica},
    R.OnlineReplica: {R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible},
    R.OfflineReplica: {R.NewReplica, R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible},
    R.ReplicaDeletionStarted: {R.OfflineReplica},
    R.ReplicaDeletionSuccessful: {R.ReplicaDeletionStarted},
    R.ReplicaDeletionIneligible: {R.OfflineReplica, R.ReplicaDeletionStarted},
    R.NonExistentReplica: {R.ReplicaDeletionSuccessful},
}
VALID = {
    KAFKA_2_8.name: VALID_2_8,
    KAFKA_1_1.name: {**VALID_2_8, R.ReplicaDeletionIneligible: {R.ReplicaDeletionStarted}},
}


@functools.cache
def _compiled(profile: str, target: ReplicaState) -> Compiled:
    p = KAFKA_2_8 if profile == KAFKA_2_8.name else KAFKA_1_1
    return compile_expr(replica_state_change(p, Var("w"), Var("rs"), target), ("w", "rs"))


def change(
    p: Profile, s: ClusterState, replicas: AbstractSet[PartitionReplica], target: ReplicaState
) -> Work:
    """One compiled ``handleStateChanges(replicas, target)`` call on ``Work(s)``."""
    result = _compiled(p.name, target)({"w": Work(s), "rs": frozenset(replicas)})
    assert isinstance(result, Work)
    return result


def one_replica(state: ReplicaState | None, **kw: object) -> ClusterState:
    rs = {} if state is None else {("t-0", 1): state}
    args: dict[str, object] = {
        "assignments": {"t-0": [1, 2, 3]},
        "leadership": {"t-0": (2, [2, 1, 3], 4, 6)},
        "replica_states": rs,
    }
    args.update(kw)
    return cluster(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("target", list(R), ids=lambda r: r.name)
@pytest.mark.parametrize("source", list(R), ids=lambda r: r.name)
def test_transition_validity(p: Profile, source: ReplicaState, target: ReplicaState) -> None:
    s = one_replica(None if source is R.NonExistentReplica else source)
    w = change(p, s, {pr("t-0", 1)}, target)
    valid = source in VALID[p.name][target]
    invalid_failures = {f for f in failures_of(w) if f[4] == "invalid_transition"}
    if valid:
        assert not invalid_failures, f"{source.name}→{target.name} should be valid in {p.name}: {describe(w)}"
        got = w.state.controller.replica_states.get(pr("t-0", 1))
        expected = None if target is R.NonExistentReplica else target
        assert got == expected, f"{source.name}→{target.name}: state {got}: {describe(w)}"
    else:
        assert invalid_failures == {("t-0", 1, source.name, target.name, "invalid_transition")}, describe(w)
        assert w.sent == frozenset(), "an invalid transition sends nothing"
        assert w.state.zk == s.zk and w.state.controller.leadership == s.controller.leadership
        assert w.state.controller.replica_states[pr("t-0", 1)] == source, "state unchanged (entry inserted)"


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_empty_call_and_moved_are_no_ops(p: Profile) -> None:
    s = one_replica(R.OnlineReplica)
    assert change(p, s, set(), R.OfflineReplica) == Work(s)
    w = run_work(
        lambda w: replica_state_change(
            p, w.with_(moved=True), lit(frozenset({pr("t-0", 1)})), R.OfflineReplica
        ),
        s,
    )
    assert w == Work(s, moved=True)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_new_replica(p: Profile) -> None:
    s = one_replica(
        None,
        assignments={"t-0": [1, 2, 3], "t-1": [2, 3]},
        leadership={"t-0": (2, [2, 1], 4, 6), "t-1": (3, [3])},
    )
    s = s.__class__(zk=s.zk, controller=s.controller, config=s.config)
    w = change(p, s, {pr("t-0", 1), pr("t-0", 2), pr("t-1", 3), pr("u-0", 1)}, R.NewReplica)
    assert failures_of(w) == {
        ("t-0", 2, "NonExistentReplica", "OfflineReplica", "new_replica_is_leader"),
        ("t-1", 3, "NonExistentReplica", "OfflineReplica", "new_replica_is_leader"),
    }, "the leader is refused and logged with target OfflineReplica (§4.1 quirk)"
    rs = w.state.controller.replica_states
    assert rs[pr("t-0", 1)] == R.NewReplica and rs[pr("u-0", 1)] == R.NewReplica
    assert rs[pr("t-0", 2)] == R.NonExistentReplica
    parts = lair_partitions(w)
    assert set(parts) == {1} and parts[1][T0].is_new, "LAIR(isNew) to the new replica only, when LI exists"
    assert {ps.tp for r in umr(w).values() for ps in r.partition_states} == {T0}


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_online_replica(p: Profile) -> None:
    s = cluster(
        assignments={"t-0": [2, 3], "t-1": [1, 2]},
        leadership={"t-0": (2, [2, 3]), "t-1": (2, [2, 1])},
        replica_states={("t-0", 1): R.NewReplica, ("t-1", 1): R.OfflineReplica, ("t-1", 2): R.OnlineReplica},
    )
    w = change(p, s, {pr("t-0", 1), pr("t-1", 1), pr("t-1", 2)}, R.OnlineReplica)
    assert w.state.controller.assignments[T0].replicas == (2, 3, 1), "New→Online appends r to AR"
    parts = lair_partitions(w)
    assert set(parts) == {1, 2} and set(parts[1]) == {T1}, "New→Online sends nothing; others get LAIR"
    assert not parts[1][T1].is_new and parts[2][T1].replicas == (1, 2)
    assert all(st == R.OnlineReplica for st in w.state.controller.replica_states.values())


def test_online_replica_brokers_in_ascending_order() -> None:
    """Broker 1's New→Online appends to AR before broker 2's LAIR for the same partition is built."""
    s = cluster(
        assignments={"t-0": [2, 3]},
        leadership={"t-0": (2, [2, 3])},
        replica_states={("t-0", 1): R.NewReplica, ("t-0", 2): R.OnlineReplica},
    )
    w = change(KAFKA_2_8, s, {pr("t-0", 1), pr("t-0", 2)}, R.OnlineReplica)
    assert lair_partitions(w)[2][T0].replicas == (2, 3, 1), describe(w)


def offline_state(**kw: object) -> ClusterState:
    args: dict[str, object] = {
        "assignments": {"t-0": [1, 2, 3], "t-1": [2, 1], "t-2": [1, 3], "t-3": [1, 2]},
        "leadership": {"t-0": (1, [1, 2, 3], 4, 6), "t-1": (2, [2], 1, 1), "t-2": (1, [1], 2, 2)},
        "replica_states": {(t, r): R.OnlineReplica for t in ("t-0", "t-1", "t-2", "t-3") for r in (1, 2, 3)},
    }
    args.update(kw)
    return cluster(**args)  # type: ignore[arg-type]


OFF1 = {pr("t-0", 1), pr("t-1", 1), pr("t-2", 1), pr("t-3", 1)}


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_replica_removes_from_isr(p: Profile) -> None:
    s = offline_state()
    w = change(p, s, OFF1, R.OfflineReplica)
    zk = w.state.zk.partition_states
    assert zk[T0].leader_and_isr == LeaderAndIsr(-1, 5, (2, 3), 7), "leader leaves: −1, epoch+1, version+1"
    assert zk[T1] == s.zk.partition_states[T1], "ISR without r: not rewritten (§4.3 3c)"
    assert zk[tp("t-2")].leader_and_isr == LeaderAndIsr(-1, 3, (1,), 3), "the last ISR member is kept"
    assert w.state.controller.leadership[T1] == LeaderIsrAndControllerEpoch(
        s.zk.partition_states[T1].leader_and_isr, 1
    )
    assert {b: set(ps) for b, ps in lair_partitions(w).items()} == {2: {T0, T1}, 3: {T0, tp("t-2")}}
    assert {ps.tp for ps in stop(w)[1].partition_states} == {T0, T1, tp("t-2"), tp("t-3")}
    assert not any(ps.delete_partition for ps in stop(w)[1].partition_states)
    rs = w.state.controller.replica_states
    for t in ("t-0", "t-1", "t-2"):
        assert rs[pr(t, 1)] == R.OfflineReplica
    # t-3 has no leadership info: §4.3 step 5 is 2.8 only (KAFKA-6650)
    assert rs[pr("t-3", 1)] == (R.OfflineReplica if p.offline_replica_without_leadership else R.OnlineReplica)
    assert not w.failures, describe(w)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_replica_for_topic_queued_for_deletion_sends_no_lair(p: Profile) -> None:
    s = offline_state(queued=["t"], zk_leadership={"t-1": None})
    w = change(p, s, OFF1, R.OfflineReplica)
    assert lair_partitions(w) == {}, describe(w)
    assert w.state.controller.replica_states[pr("t-1", 1)] == R.OnlineReplica, (
        "missing znode, deleting: dropped"
    )
    assert not w.failures


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_replica_zk_failures(p: Profile) -> None:
    newer = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 9, (1, 2), 9), 5)
    s = offline_state(zk_leadership={"t-1": None, "t-0": newer})
    w = change(p, s, OFF1, R.OfflineReplica)
    assert failures_of(w) == {
        ("t-0", 1, "OnlineReplica", "OfflineReplica", "written_by_newer_controller"),
        ("t-1", 1, "OnlineReplica", "OfflineReplica", "leader_and_isr_path_empty"),
    }
    assert w.state.controller.replica_states[pr("t-0", 1)] == R.OnlineReplica, "failed: state unchanged"
    lost = change(p, offline_state(faults={"t-2": ZkFault.CONNECTIONLOSS}), OFF1, R.OfflineReplica)
    assert {f[0] for f in failures_of(lost)} == {"t-0", "t-1", "t-2"}, "connection loss fails the whole read"
    assert not lost.state.zk.faults


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_offline_replica_badversion_is_retried(p: Profile) -> None:
    w = change(p, offline_state(faults={"t-0": ZkFault.BADVERSION}), OFF1, R.OfflineReplica)
    assert w.state.zk.partition_states[T0].leader_and_isr == LeaderAndIsr(-1, 5, (2, 3), 7), describe(w)
    assert not w.state.zk.faults and not w.failures


def test_offline_replica_fencing_2_8_moves() -> None:
    s = offline_state(zk_epoch_zk_version=7)
    w = change(KAFKA_2_8, s, OFF1, R.OfflineReplica)
    assert w.moved and w.sent == frozenset() and w.state.zk == s.zk, describe(w)
    w11 = change(KAFKA_1_1, s, OFF1, R.OfflineReplica)
    assert not w11.moved and w11.state.zk.partition_states[T0].leader_and_isr.leader == -1


def test_offline_replica_two_brokers_of_one_partition_in_order() -> None:
    s = offline_state()
    w = change(KAFKA_2_8, s, {pr("t-0", 1), pr("t-0", 3)}, R.OfflineReplica)
    assert w.state.zk.partition_states[T0].leader_and_isr == LeaderAndIsr(-1, 6, (2,), 8)
    parts = lair_partitions(w)
    assert parts[2][T0].leader_epoch == 6 and parts[3][T0].leader_epoch == 5, (
        "per-(broker, partition) overwrite"
    )


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_deletion_targets(p: Profile) -> None:
    s = offline_state(
        replica_states={
            ("t-0", 1): R.OfflineReplica,
            ("t-0", 2): R.ReplicaDeletionStarted,
            ("t-0", 3): R.ReplicaDeletionSuccessful,
        },
        queued=["t"],
    )
    started = change(p, s, {pr("t-0", 1)}, R.ReplicaDeletionStarted)
    (sr,) = stop(started)[1].partition_states
    assert sr.delete_partition and sr.leader_epoch == (-2 if p.stop_replica_leader_epoch else -1)
    assert (
        change(p, s, {pr("t-0", 2)}, R.ReplicaDeletionSuccessful).state.controller.replica_states[
            pr("t-0", 2)
        ]
        == R.ReplicaDeletionSuccessful
    )
    gone = change(p, s, {pr("t-0", 3)}, R.NonExistentReplica)
    assert pr("t-0", 3) not in gone.state.controller.replica_states
    assert gone.state.controller.assignments[T0].replicas == (1, 2), "NonExistentReplica removes r from FA"
    assert gone.sent == frozenset()


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_initialize_replica_state(p: Profile) -> None:
    s = cluster(brokers=(1, 2), shutting_down=(2,), assignments={"t-0": [1, 2, 3]}, offline_replicas=[])
    w = run_work(lambda w: initialize_replica_state(p, w), s)
    assert dict(w.state.controller.replica_states) == {
        pr("t-0", 1): R.OnlineReplica,
        pr("t-0", 2): R.ReplicaDeletionIneligible,
        pr("t-0", 3): R.ReplicaDeletionIneligible,
    }
