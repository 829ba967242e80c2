"""The request batch (§3.4): overwrite with sticky isNew, implicit UMR, UMR computed at add time, drop at send."""

from __future__ import annotations

import pytest
from kcspec.spec import batch as B
from kcspec.spec.lang import Expr, lit
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, PartitionReplica
from kcspec.spec.work import Work

from tests.support.builders import cluster, describe, lair_partitions, run_work, stop, tp, umr, with_ctx

PROFILES = [KAFKA_2_8, KAFKA_1_1]
T0, T1 = tp("t-0"), tp("t-1")


def base() -> ClusterState:
    return cluster(
        brokers=(1, 2, 3),
        assignments={"t-0": [1, 2, 3], "t-1": [2, 3], "u-0": [3, 1]},
        leadership={"t-0": (1, [1, 2, 3], 5, 7), "t-1": (2, [2, 3], 2, 4)},
    )


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_lair_is_new_is_sticky_and_later_entries_overwrite(p: Profile) -> None:
    s = base()

    def build(w: Expr) -> Expr:
        w1 = B.add_leader_and_isr(p, w, lit((1, 2)), lit(T0), lit(True))
        s_bumped = with_ctx(
            s,
            leadership=s.controller.leadership.set(
                T0, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 6, (2, 3), 8), 1)
            ),
        )
        w2 = w1.with_(state=lit(s_bumped))
        return B.send(p, B.add_leader_and_isr(p, w2, lit((2, 3)), lit(T0), lit(False)))

    w = run_work(build, s)
    parts = lair_partitions(w)
    assert set(parts) == {1, 2, 3}, describe(w)
    assert parts[1][T0].leader_epoch == 5 and parts[1][T0].is_new, "broker 1 keeps the first entry"
    assert parts[2][T0].leader_epoch == 6, "broker 2's entry is overwritten by the later addition"
    assert parts[2][T0].is_new, "isNew is sticky: the earlier entry for broker 2 had isNew = true"
    assert not parts[3][T0].is_new, "broker 3 only got the isNew = false entry"
    states = {ps.tp: ps for r in umr(w).values() for ps in r.partition_states}
    assert states[T0].leader_epoch == 6, "the implicit UMR is recomputed at the second addition"
    assert set(umr(w)) == {1, 2, 3}, "implicit UMR goes to every live-or-shutting-down broker"


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_requests_to_brokers_not_registered_at_send_are_dropped(p: Profile) -> None:
    s = base()
    w = run_work(lambda w: B.send(p, B.add_leader_and_isr(p, w, lit((1, 4, -1)), lit(T0), lit(False))), s)
    assert set(lair_partitions(w)) == {1}, f"broker 4 is not registered, -1 is ignored: {describe(w)}"
    assert w.batch == B.EMPTY_BATCH, "send clears the batch"
    for r in w.sent:
        assert (r.controller_id, r.controller_epoch) == (1, 1)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_shutting_down_brokers_still_receive_requests(p: Profile) -> None:
    s = with_ctx(base(), shutting_down=frozenset({3}))
    w = run_work(lambda w: B.send(p, B.add_leader_and_isr(p, w, lit((3,)), lit(T0), lit(False))), s)
    assert set(lair_partitions(w)) == {3}
    assert all(r.live_brokers == frozenset({1, 2, 3}) for r in umr(w).values())
    (state,) = {ps for r in umr(w).values() for ps in r.partition_states if ps.tp == T0}
    assert state.offline_replicas == (3,), "a shutting-down replica is not online: listed offline"


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_umr_during_delete_uses_sentinels(p: Profile) -> None:
    s = with_ctx(base(), topics_to_be_deleted=frozenset({"t"}))
    w = run_work(lambda w: B.send(p, B.add_update_metadata(p, w, lit((1,)), lit(frozenset({T0})))), s)
    states = {ps.tp: ps for r in umr(w).values() for ps in r.partition_states}
    assert (states[T0].leader, states[T0].leader_epoch, states[T0].zk_version) == (-2, 0, 0)
    assert states[T0].isr == (1, 2, 3) and states[T0].controller_epoch == 1
    if p is KAFKA_1_1:
        assert T1 in states and states[T1].leader == -2, "1.1 appends every partition queued for deletion"
    else:
        assert T1 not in states


def test_umr_empty_partition_set_is_profile_specific() -> None:
    s = base()
    w28 = run_work(
        lambda w: B.send(KAFKA_2_8, B.add_update_metadata(KAFKA_2_8, w, lit((1, 2)), lit(frozenset()))), s
    )
    w11 = run_work(
        lambda w: B.send(KAFKA_1_1, B.add_update_metadata(KAFKA_1_1, w, lit((1, 2)), lit(frozenset()))), s
    )
    assert set(umr(w28)) == {1, 2} and all(not r.partition_states for r in umr(w28).values())
    assert {ps.tp for ps in umr(w11)[1].partition_states} == {T0, T1}, (
        "1.1: empty means every cached partition"
    )


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_umr_skips_partitions_without_leadership(p: Profile) -> None:
    s = base()
    w = run_work(lambda w: B.send(p, B.add_update_metadata(p, w, lit((1,)), lit(frozenset({tp("u-0")})))), s)
    assert set(umr(w)) == {1}
    assert not umr(w)[1].partition_states, describe(w)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_stop_replica_delete_is_sticky_and_epoch_is_profile_specific(p: Profile) -> None:
    s = base()

    def build(w: Expr) -> Expr:
        w1 = B.add_stop_replica(p, w, lit((2,)), lit(T0), lit(True))
        return B.send(p, B.add_stop_replica(p, w1, lit((2, 3)), lit(T0), lit(False)))

    w = run_work(build, s)
    by_broker = {b: {ps.tp: ps for ps in r.partition_states} for b, r in stop(w).items()}
    assert by_broker[2][T0].delete_partition and not by_broker[3][T0].delete_partition
    expected = 5 if p.stop_replica_leader_epoch else -1
    assert by_broker[2][T0].leader_epoch == expected
    sd = with_ctx(s, topics_to_be_deleted=frozenset({"t"}))
    w2 = run_work(lambda w: B.send(p, B.add_stop_replica(p, w, lit((1,)), lit(tp("u-0")), lit(False))), sd)
    w3 = run_work(lambda w: B.send(p, B.add_stop_replica(p, w, lit((1,)), lit(T0), lit(False))), sd)
    (no_li,) = stop(w2)[1].partition_states
    (deleting,) = stop(w3)[1].partition_states
    assert no_li.leader_epoch == -1
    assert deleting.leader_epoch == (-2 if p.stop_replica_leader_epoch else -1)


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_moved_work_is_left_untouched(p: Profile) -> None:
    s = base()
    w = run_work(
        lambda w: B.send(p, B.add_leader_and_isr(p, w.with_(moved=True), lit((1,)), lit(T0), lit(True))), s
    )
    assert w == Work(state=s, moved=True)


def test_keys_variant_matches_per_partition_calls() -> None:
    p = KAFKA_2_8
    s = base()
    keys = frozenset({PartitionReplica(T0, 1), PartitionReplica(T1, 3)})
    a = run_work(lambda w: B.send(p, B.add_leader_and_isr_keys(p, w, lit(keys), lit(True))), s)
    b = run_work(
        lambda w: B.send(
            p,
            B.add_leader_and_isr(
                p, B.add_leader_and_isr(p, w, lit((1,)), lit(T0), lit(True)), lit((3,)), lit(T1), lit(True)
            ),
        ),
        s,
    )
    assert a.sent == b.sent
