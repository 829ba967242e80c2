"""§3.3 and §3.4: the request batch (sticky flags, implicit and computed UpdateMetadata, dropping at send) and the
simulated ZooKeeper (conditional writes, fencing, one-shot faults)."""

from __future__ import annotations

import pytest
from kcspec.reference_impl.errors import ControllerMovedException, KeeperException
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.events import BrokerFailure, NewerControllerElected, TopicDeletion, ZkFaultInjection
from kcspec.spec.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from kcspec.spec.state import ZkState
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, ZkFault

from tests.support.reference_scenarios import PROFILES, cluster, lair, stop_replica, tp, umr


def _batch(profile: str = "kafka-2.8"):  # type: ignore[no-untyped-def]
    rc = cluster(profile, topics={"foo": ((1, 2, 3),), "bar": ((2, 3),)})
    rc._sent.clear()
    return rc, rc.kc.batch


@pytest.mark.parametrize("profile", PROFILES)
def test_lair_overwrite_keeps_isnew_sticky_and_adds_umr_for_all_live(profile: str) -> None:
    rc, batch = _batch(profile)
    ctx = rc.kc.ctx
    li, fa = ctx.leadership[tp("foo-0")], ctx.assignment(tp("foo-0"))
    batch.add_leader_and_isr([2], tp("foo-0"), li, fa, True)
    batch.add_leader_and_isr([2, -1], tp("foo-0"), li, fa, False)
    batch.send(ctx.epoch)
    (request,) = lair(rc._sent, 2)
    (state,) = request.partition_states
    assert state.is_new, "isNew is sticky within a batch"
    assert {r.broker for r in rc._sent if isinstance(r, UpdateMetadataRequest)} == {1, 2, 3}
    assert all(r.controller_id == 1 and r.controller_epoch == 1 for r in rc._sent)


@pytest.mark.parametrize("profile", PROFILES)
def test_stop_replica_delete_is_sticky(profile: str) -> None:
    rc, batch = _batch(profile)
    batch.add_stop_replica([3], tp("foo-0"), True)
    batch.add_stop_replica([3], tp("foo-0"), False)
    batch.send(1)
    ((state,),) = [r.partition_states for r in stop_replica(rc._sent, 3)]
    assert state.delete_partition


def test_umr_empty_set_28_is_broker_list_only_11_is_everything() -> None:
    for profile, expected in (("kafka-2.8", 0), ("kafka-1.1", 2)):
        rc, batch = _batch(profile)
        batch.add_update_metadata([1], [])
        batch.send(1)
        (request,) = umr(rc._sent, 1)
        assert len(request.partition_states) == expected, profile
        assert request.live_brokers == frozenset({1, 2, 3})


@pytest.mark.parametrize("profile", PROFILES)
def test_umr_for_deleting_topics_uses_during_delete(profile: str) -> None:
    rc, batch = _batch(profile)
    rc.kc.ctx.topics_to_be_deleted.add("bar")
    batch.add_update_metadata([1], [tp("foo-0")] if profile == "kafka-1.1" else [tp("bar-0")])
    batch.send(1)
    (request,) = umr(rc._sent, 1)
    bar = [s for s in request.partition_states if s.tp == tp("bar-0")]
    assert [(s.leader, s.leader_epoch, s.zk_version) for s in bar] == [(-2, 0, 0)], (
        "1.1 appends it to every UMR"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_umr_offline_replicas_and_missing_leadership_line(profile: str) -> None:
    rc, batch = _batch(profile)
    rc.kc.ctx.remove_live_brokers([3])
    rc.kc.ctx.remove_leadership(tp("bar-0"))
    batch.add_update_metadata([1], [tp("foo-0"), tp("bar-0")])
    batch.send(1)
    (request,) = umr(rc._sent, 1)
    assert [(s.tp, s.offline_replicas) for s in request.partition_states] == [(tp("foo-0"), (3,))]
    assert any(
        "Leader not yet assigned for partition bar-0. Skip sending UpdateMetadataRequest." in line
        for line in rc.controller_log
    )


def test_stop_replica_leader_epoch_28_and_11() -> None:
    for profile in PROFILES:
        rc, batch = _batch(profile)
        epoch = rc.kc.ctx.leadership[tp("foo-0")].leader_and_isr.leader_epoch
        batch.add_stop_replica([1], tp("foo-0"), False)
        rc.kc.ctx.topics_to_be_deleted.add("bar")
        batch.add_stop_replica([1], tp("bar-0"), True)
        batch.send(1)
        states = {s.tp: s.leader_epoch for r in stop_replica(rc._sent, 1) for s in r.partition_states}
        assert states == (
            {tp("foo-0"): epoch, tp("bar-0"): -2}
            if profile == "kafka-2.8"
            else {tp("foo-0"): -1, tp("bar-0"): -1}
        ), profile


@pytest.mark.parametrize("profile", PROFILES)
def test_requests_to_dead_brokers_are_dropped(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    result = rc.handle(BrokerFailure(3))
    assert 3 not in {r.broker for r in result.requests}
    warned = [line for line in rc.controller_log if "since it is offline" in line]
    assert bool(warned) == (profile == "kafka-1.1"), "1.1 logs a WARN per dropped request, 2.8 is silent"


def test_new_batch_refuses_a_non_empty_batch() -> None:
    from kcspec.reference_impl.errors import IllegalStateException

    _rc, batch = _batch()
    batch.add_stop_replica([1], tp("foo-0"), False)
    with pytest.raises(IllegalStateException):
        batch.new_batch()


def _zk(fencing: bool) -> SimulatedZooKeeper:
    record = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 0), 1)
    from kcspec.spec.fmap import FMap

    return SimulatedZooKeeper(
        ZkState(
            controller=1,
            controller_epoch=1,
            controller_epoch_zk_version=1,
            partition_states=FMap({tp("foo-0"): record, tp("foo-1"): record}),
        ),
        fencing=fencing,
    )


def test_conditional_write_increments_version_and_stores_controller_epoch() -> None:
    zk = _zk(True)
    finished, retry = zk.update_leader_and_isr({tp("foo-0"): LeaderAndIsr(2, 1, (2,), 0)}, 1, 1)
    assert finished == {tp("foo-0"): LeaderAndIsr(2, 1, (2,), 1)} and retry == []
    finished, retry = zk.update_leader_and_isr({tp("foo-0"): LeaderAndIsr(2, 2, (2,), 0)}, 1, 1)
    assert retry == [tp("foo-0")], "stale expected version is a BADVERSION"


def test_fencing_raises_and_consumes_nothing() -> None:
    zk = _zk(True)
    zk.faults[tp("foo-0")] = ZkFault.BADVERSION
    with pytest.raises(ControllerMovedException):
        zk.update_leader_and_isr({tp("foo-0"): LeaderAndIsr(2, 1, (2,), 0)}, 1, 0)
    assert zk.faults == {tp("foo-0"): ZkFault.BADVERSION}
    zk.update_leader_and_isr({}, 1, 0)  # an empty write is not sent, hence not fenced
    _zk(False).update_leader_and_isr({tp("foo-0"): LeaderAndIsr(2, 1, (2,), 0)}, 1, 0)  # 1.1: no fencing


def test_faults_are_one_shot() -> None:
    zk = _zk(True)
    zk.faults[tp("foo-0")] = ZkFault.BADVERSION
    zk.faults[tp("foo-1")] = ZkFault.CONNECTIONLOSS
    zk.get_topic_partition_states([tp("foo-0")])  # a read does not consume BADVERSION
    _, retry = zk.update_leader_and_isr({tp("foo-0"): LeaderAndIsr(2, 1, (2,), 0)}, 1, 1)
    assert retry == [tp("foo-0")] and tp("foo-0") not in zk.faults
    with pytest.raises(KeeperException):
        zk.get_topic_partition_states([tp("foo-0"), tp("foo-1")])
    assert not zk.faults
    assert zk.get_topic_partition_states([tp("foo-1")])


def test_zombie_controller_write_fails_then_resigns_28() -> None:
    rc = cluster("kafka-2.8", topics={"foo": ((1, 2, 3),)})
    rc.handle(NewerControllerElected(2))
    before = rc.zk.partition_states[tp("foo-0")]
    result = rc.handle(BrokerFailure(3))
    assert result.state.controller.controller_id == -1, "ControllerMovedException → resign"
    assert rc.zk.partition_states[tp("foo-0")] == before, "nothing written"
    assert any(
        "Controller moved to another broker when processing BrokerChange." in line
        for line in rc.controller_log
    )


def test_zombie_controller_writes_go_through_11() -> None:
    rc = cluster("kafka-1.1", topics={"foo": ((1, 2, 3),)})
    rc.handle(NewerControllerElected(2))
    result = rc.handle(BrokerFailure(3))
    assert result.state.controller.controller_id == 1
    assert rc.zk.partition_states[tp("foo-0")].leader_and_isr.isr == (1, 2)
    assert rc.zk.partition_states[tp("foo-0")].controller_epoch == 1


def test_read_side_check_aborts_isr_removal() -> None:
    for profile, text in (("kafka-2.8", "This probably means"), ("kafka-1.1", "This probablymeans")):
        rc = cluster(profile, controller=1, topics={"foo": ((1, 2, 3),)})
        stored = rc.zk.partition_states[tp("foo-0")]
        rc.zk.partition_states[tp("foo-0")] = LeaderIsrAndControllerEpoch(stored.leader_and_isr, 5)
        result = rc.handle(BrokerFailure(3))
        assert [f.reason.name for f in result.failures] == ["WrittenByNewerController"], profile
        assert any(text in line for line in rc.state_change_log), profile


@pytest.mark.parametrize("profile", PROFILES)
def test_fault_injection_and_deletion_removes_the_fault(profile: str) -> None:
    rc = cluster(profile, brokers=(1, 2), topics={"foo": ((1, 2),)})
    rc.handle(ZkFaultInjection(tp("foo-0"), ZkFault.CONNECTIONLOSS))
    assert rc.zk.faults == {tp("foo-0"): ZkFault.CONNECTIONLOSS}
    result = rc.handle(TopicDeletion(("foo",)))
    assert any(f.reason.name == "ZkError" for f in result.failures), "the ISR removal read hit the fault"
    assert not rc.zk.faults
    assert not [r for r in result.requests if isinstance(r, LeaderAndIsrRequest)]
