"""Partition-state znode writes and reads (§3.3): fencing, BADVERSION, NONODE, CONNECTIONLOSS, versions, and the
read-modify-write round both state machines share (``leader_and_isr_round``)."""

from __future__ import annotations

from kcspec.spec import zk as Z
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Expr, Rule, Var, build_map, lit, seq_of
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8
from kcspec.spec.requests import FailureReason
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, ZkFault
from kcspec.spec.work import Work

from tests.support.builders import cluster, li, run, tp

T0, T1, T2 = tp("t-0"), tp("t-1"), tp("t-2")


def state(**kw: object) -> ClusterState:
    return cluster(
        assignments={"t-0": [1, 2], "t-1": [2, 1], "t-2": [1]},
        leadership={"t-0": (1, [1, 2], 3, 5), "t-1": (2, [2, 1], 1, 1)},
        **kw,  # type: ignore[arg-type]
    )


def test_write_bumps_version_and_stores_my_epoch() -> None:
    s = state(epoch=4, zk_controller_epoch=4)
    r = run(Z.update_leader_and_isr(KAFKA_2_8, Var("s"), lit(FMap({T0: LeaderAndIsr(2, 4, (2,), 5)}))), s=s)
    assert r.records == {T0: LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 4, (2,), 6), 4)}
    assert r.state.zk.partition_states[T0] == r.records[T0]
    assert not r.retry and not r.failed and not r.moved


def test_badversion_fault_is_consumed_and_partition_retried() -> None:
    s = state(faults={"t-0": ZkFault.BADVERSION, "t-1": ZkFault.CONNECTIONLOSS})
    ups = FMap({T0: LeaderAndIsr(2, 4, (2,), 5), T1: LeaderAndIsr(1, 2, (1,), 1)})
    r = run(Z.update_leader_and_isr(KAFKA_2_8, Var("s"), lit(ups)), s=s)
    assert r.retry == frozenset({T0}) and set(r.records) == {T1}
    assert r.state.zk.partition_states[T0] == s.zk.partition_states[T0], "a failed set writes nothing"
    assert dict(r.state.zk.faults) == {T1: ZkFault.CONNECTIONLOSS}, "only BADVERSION is consumed by a write"


def test_stale_expected_version_is_a_badversion_and_missing_znode_fails() -> None:
    s = state()
    ups = FMap({T0: LeaderAndIsr(2, 4, (2,), 4), T2: LeaderAndIsr(1, 1, (1,), 0)})
    r = run(Z.update_leader_and_isr(KAFKA_2_8, Var("s"), lit(ups)), s=s)
    assert r.retry == frozenset({T0}) and r.failed == frozenset({T2}) and not r.records


def test_fencing_2_8_moves_without_effect_and_1_1_writes() -> None:
    s = state(zk_epoch_zk_version=2, faults={"t-0": ZkFault.BADVERSION})
    ups = lit(FMap({T0: LeaderAndIsr(2, 4, (2,), 5)}))
    r28 = run(Z.update_leader_and_isr(KAFKA_2_8, Var("s"), ups), s=s)
    assert r28.moved and r28.state == s and not r28.records, (
        "CheckOp failure: nothing written, no fault consumed"
    )
    r11 = run(Z.update_leader_and_isr(KAFKA_1_1, Var("s"), ups), s=s)
    assert not r11.moved and r11.retry == frozenset({T0}), "1.1 has no fencing"
    assert run(Z.fenced_write_ok(KAFKA_2_8, Var("s")), s=s) is False
    assert run(Z.fenced_write_ok(KAFKA_1_1, Var("s")), s=s) is True


def test_empty_write_is_not_fenced() -> None:
    s = state(zk_epoch_zk_version=2)
    r = run(Z.update_leader_and_isr(KAFKA_2_8, Var("s"), lit(FMap())), s=s)
    assert not r.moved and r.state == s


def test_connection_loss_fails_the_whole_read_and_is_consumed() -> None:
    s = state(faults={"t-1": ZkFault.CONNECTIONLOSS, "t-0": ZkFault.BADVERSION})
    tps = lit(frozenset({T0, T1}))
    assert run(Z.read_fails(Var("s"), tps), s=s) is True
    assert run(Z.read_fails(Var("s"), lit(frozenset({T0}))), s=s) is False
    after = run(Z.consume_read_faults(Var("s"), tps), s=s)
    assert dict(after.zk.faults) == {T0: ZkFault.BADVERSION}


def test_create_reports_nodeexists_and_writes_version_zero() -> None:
    s = state()
    recs = FMap(
        {
            T0: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 9), 1),
            T2: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 9), 1),
        }
    )
    r = run(Z.create_partition_states(KAFKA_2_8, Var("s"), lit(recs)), s=s)
    assert r.exists == frozenset({T0}) and r.created == frozenset({T2})
    assert r.state.zk.partition_states[T2].leader_and_isr.zk_version == 0
    fenced = run(Z.create_partition_states(KAFKA_2_8, Var("s"), lit(recs)), s=state(zk_epoch_zk_version=3))
    assert fenced.moved and not fenced.created


def test_read_side_check_compares_stored_controller_epoch() -> None:
    s = cluster(
        assignments={"t-0": [1]},
        leadership={"t-0": (1, [1])},
        zk_leadership={"t-0": LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 0), 2)},
    )
    assert run(Z.written_by_newer_controller(Var("s"), lit(T0)), s=s) is True


def _round(remaining: frozenset[object]) -> Expr:
    """A ``leader_and_isr_round`` that sets every candidate's leader to −1, reporting what each callback saw."""
    return Z.leader_and_isr_round(
        KAFKA_2_8,
        "roundUnderTest",
        "§3.3",
        Var("w"),
        lit(remaining),
        nothing_done=lambda work: seq_of("nothing done", work.f("moved"), work.f("state", "zk", "faults")),
        failed=lambda work, tps, reason: work.with_(
            moved=tps.size().eq(3) & lit(reason is FailureReason.ZkError)
        ),
        updates=lambda s1, b: build_map(
            b.cands, lambda t: s1.f("zk", "partition_states").get(t).f("leader_and_isr").with_(leader=-1)
        ),
        written=lambda s1, b: seq_of(
            "written", b.missing, b.newer, b.wr.f("records").keys(), b.wr.f("retry")
        ),
    )


def test_the_shared_round_sorts_the_read_writes_the_candidates_and_retries_badversion() -> None:
    s = state(
        epoch=4,
        zk_controller_epoch=4,
        zk_leadership={"t-0": li((1, [1, 2], 3, 5), 4), "t-1": li((2, [2, 1], 1, 1), 9)},
        faults={"t-0": ZkFault.BADVERSION},
    )
    got = run(_round(frozenset({T0, T1, T2})), w=Work(s))
    assert got == ("written", frozenset({T2}), frozenset({T1}), frozenset(), frozenset({T0}))


def test_the_round_is_a_rule_written_where_the_caller_builds_it() -> None:
    built = _round(frozenset({T0}))
    assert isinstance(built, Rule) and built.name == "roundUnderTest" and built.section == "§3.3"
    assert built.span is not None and built.span.path == "tests/unit/spec_core/test_zk.py", built.span


def test_a_read_fault_fails_every_partition_of_the_round_and_is_consumed() -> None:
    s = state(faults={"t-1": ZkFault.CONNECTIONLOSS})
    nothing, failed_all, faults = run(_round(frozenset({T0, T1, T2})), w=Work(s))
    assert (nothing, failed_all, dict(faults)) == ("nothing done", True, {})


def test_a_fenced_write_does_nothing_and_sets_moved() -> None:
    s = state(epoch=4, zk_controller_epoch=4, zk_epoch_zk_version=2)
    assert run(_round(frozenset({T0})), w=Work(s))[:2] == ("nothing done", True)
