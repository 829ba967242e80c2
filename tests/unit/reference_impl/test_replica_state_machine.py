"""§4 and §2.1/§2.3: every replica transition, valid and invalid, in both profiles, and the target rules."""

from __future__ import annotations

import pytest
from kcspec.spec.events import BrokerFailure, TopicDeletion
from kcspec.spec.requests import MACHINE_REPLICA, FailureReason, LeaderAndIsrRequest, StateChangeFailure
from kcspec.spec.vocabulary import LeaderAndIsr, ReplicaState

from tests.support.reference_scenarios import (
    PROFILES,
    cluster,
    explain,
    lair,
    leader_and_isr,
    replica_state,
    stop_replica,
    tp,
    umr,
)

R = ReplicaState
ALL = list(ReplicaState)
MOVABLE = [R.OnlineReplica, R.OfflineReplica, R.ReplicaDeletionIneligible]
VALID = {
    R.NewReplica: {R.NonExistentReplica},
    R.OnlineReplica: {R.NewReplica, *MOVABLE},
    R.OfflineReplica: {R.NewReplica, *MOVABLE},
    R.ReplicaDeletionStarted: {R.OfflineReplica},
    R.ReplicaDeletionSuccessful: {R.ReplicaDeletionStarted},
    R.ReplicaDeletionIneligible: {R.OfflineReplica, R.ReplicaDeletionStarted},
    R.NonExistentReplica: {R.ReplicaDeletionSuccessful},
}


def valid(profile: str, current: ReplicaState, target: ReplicaState) -> bool:
    if profile == "kafka-1.1" and target is R.ReplicaDeletionIneligible:
        return current is R.ReplicaDeletionStarted  # KAFKA-8237 is 2.3.0
    return current in VALID[target]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("current", ALL, ids=lambda s: s.name)
@pytest.mark.parametrize("target", ALL, ids=lambda s: s.name)
def test_transition_table(profile: str, current: ReplicaState, target: ReplicaState) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    ctx = rc.kc.ctx
    states = ctx.replica_states[2]
    if current is R.NonExistentReplica:
        del states[tp("foo-0")]
    else:
        states[tp("foo-0")] = current
    rc._failures.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, target)
    after = ctx.replica_states[2].get(tp("foo-0"))
    failures = list(rc._failures)
    where = f"{profile}: {current.name} -> {target.name}\n" + explain(rc)
    if valid(profile, current, target):
        assert not failures, where
        if target is R.NonExistentReplica:
            assert after is None, where
            assert 2 not in ctx.assignment(tp("foo-0")).replicas, where
        else:
            assert after is target, where
    else:
        expected = StateChangeFailure(
            MACHINE_REPLICA, tp("foo-0"), 2, current.name, target.name, FailureReason.InvalidTransition
        )
        assert failures == [expected], where
        assert after is current, where  # the implicit NonExistentReplica entry stays
        assert "should be in the" in rc.state_change_log[-1], where


@pytest.mark.parametrize("profile", PROFILES)
def test_new_replica_for_the_leader_fails_logged_as_offline_replica(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    del rc.kc.ctx.replica_states[1][tp("foo-0")]
    rc.kc.replica_sm.handle_state_changes({1: [tp("foo-0")]}, R.NewReplica)
    assert rc._failures == [
        StateChangeFailure(
            MACHINE_REPLICA,
            tp("foo-0"),
            1,
            "NonExistentReplica",
            "OfflineReplica",
            FailureReason.NewReplicaIsLeader,
        )
    ], explain(rc)
    assert replica_state(rc, "foo-0", 1) is R.NonExistentReplica
    assert rc.state_change_log[-1] == (
        "kafka.common.StateChangeFailedException: Replica 1 for partition foo-0 cannot be moved to NewReplica state "
        "as it is being requested to become leader"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_new_replica_with_leadership_sends_isnew_lair_to_that_replica_only(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    del rc.kc.ctx.replica_states[2][tp("foo-0")]
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, R.NewReplica)
    sent = list(rc._sent)
    assert {r.broker for r in sent if isinstance(r, LeaderAndIsrRequest)} == {2}
    (state,) = lair(sent, 2)[0].partition_states
    assert state.is_new and state.leader == 1
    assert {r.broker for r in sent if r not in lair(sent, 2)} == {1, 2, 3}, "implicit UMR to all live brokers"


@pytest.mark.parametrize("profile", PROFILES)
def test_online_from_new_appends_unassigned_replica_without_request(profile: str) -> None:
    rc = cluster(profile, brokers=(1, 2, 3, 4), topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.replica_states.setdefault(4, {})[tp("foo-0")] = R.NewReplica
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({4: [tp("foo-0")]}, R.OnlineReplica)
    assert rc.kc.ctx.replicas(tp("foo-0")) == (1, 2, 3, 4)
    assert not rc._sent
    errors = [line for line in rc.controller_log if "Adding replica (4)" in line]
    assert bool(errors) == (profile == "kafka-2.8"), "2.8 logs an ERROR, 1.1 is silent"


@pytest.mark.parametrize("profile", PROFILES)
def test_offline_replica_shrinks_isr_bumps_epoch_and_never_empties_it(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    before = leader_and_isr(rc, "foo-0")
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, R.OfflineReplica)
    after = leader_and_isr(rc, "foo-0")
    assert after == LeaderAndIsr(1, before.leader_epoch + 1, (1,), before.zk_version + 1), explain(rc)
    assert [s.delete_partition for r in stop_replica(rc._sent, 2) for s in r.partition_states] == [False]
    assert {s.leader_epoch for r in lair(rc._sent, 1) for s in r.partition_states} == {after.leader_epoch}
    # the last ISR member going offline stays in the ISR, leader -1
    rc.kc.replica_sm.handle_state_changes({1: [tp("foo-0")]}, R.OfflineReplica)
    last = leader_and_isr(rc, "foo-0")
    assert (last.leader, last.isr) == (-1, (1,)), explain(rc)


@pytest.mark.parametrize("profile", PROFILES)
def test_offline_replica_not_in_isr_keeps_zk_and_resends_unchanged_epoch(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    rc.kc.replica_sm.handle_state_changes({3: [tp("foo-0")]}, R.OfflineReplica)
    zk_before = leader_and_isr(rc, "foo-0")
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({3: [tp("foo-0")]}, R.OfflineReplica)
    assert leader_and_isr(rc, "foo-0") == zk_before
    assert {s.leader_epoch for r in lair(rc._sent, 1) for s in r.partition_states} == {zk_before.leader_epoch}


@pytest.mark.parametrize("profile", PROFILES)
def test_offline_replica_without_leadership(profile: str) -> None:
    """§4.3 step 5: 2.8 transitions and sends a UMR; 1.1 leaves the replica untouched (KAFKA-6650/KAFKA-3143)."""
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.kc.ctx.remove_leadership(tp("foo-0"))
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, R.OfflineReplica)
    if profile == "kafka-2.8":
        assert replica_state(rc, "foo-0", 2) is R.OfflineReplica
        assert umr(rc._sent, 1), "broker-list UMR"
    else:
        assert replica_state(rc, "foo-0", 2) is R.OnlineReplica
        assert not umr(rc._sent, 1)


@pytest.mark.parametrize("profile", PROFILES)
def test_offline_replica_of_a_deleting_topic_sends_no_lair(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.topics_to_be_deleted.add("foo")
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, R.OfflineReplica)
    assert not [r for r in rc._sent if isinstance(r, LeaderAndIsrRequest)]
    assert leader_and_isr(rc, "foo-0").isr == (1, 3)


@pytest.mark.parametrize("profile", PROFILES)
def test_deletion_started_sends_stop_replica_with_delete(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    rc.kc.ctx.replica_states[2][tp("foo-0")] = R.OfflineReplica
    rc._sent.clear()
    rc.kc.replica_sm.handle_state_changes({2: [tp("foo-0")]}, R.ReplicaDeletionStarted)
    (request,) = stop_replica(rc._sent, 2)
    (state,) = request.partition_states
    expected_epoch = leader_and_isr(rc, "foo-0").leader_epoch if profile == "kafka-2.8" else -1
    assert state.delete_partition and state.leader_epoch == expected_epoch


@pytest.mark.parametrize("profile", PROFILES)
def test_startup_moves_dead_replicas_offline_only_in_28(profile: str) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
    rc.handle(BrokerFailure(3))
    rc.kc.ctx.replica_states[3][tp("foo-0")] = R.OnlineReplica
    from kcspec.spec.events import ControllerFailover

    rc.handle(ControllerFailover(2))
    expected = R.OfflineReplica if profile == "kafka-2.8" else R.ReplicaDeletionIneligible
    assert replica_state(rc, "foo-0", 3) is expected, explain(rc)
    assert replica_state(rc, "foo-0", 1) is R.OnlineReplica


@pytest.mark.parametrize("profile", PROFILES)
def test_brokers_are_processed_in_ascending_order(profile: str) -> None:
    rc = cluster(profile, trace=True, topics={"foo": ((1, 2, 3),)})
    rc.state_change_log.clear()
    rc.kc.replica_sm.handle_state_changes({3: [tp("foo-0")], 2: [tp("foo-0")]}, R.OnlineReplica)
    changed = [line for line in rc.state_change_log if "Changed state of replica" in line]
    assert [line.split("replica ")[1][0] for line in changed] == ["2", "3"], changed


def test_deletion_of_topic_with_dead_replica_28_vs_11() -> None:
    for profile, expected in (("kafka-2.8", R.ReplicaDeletionIneligible), ("kafka-1.1", R.OfflineReplica)):
        rc = cluster(profile, topics={"foo": ((1, 2, 3),)})
        rc.handle(BrokerFailure(3))
        rc.handle(TopicDeletion(("foo",)))
        assert replica_state(rc, "foo-0", 3) is expected, f"{profile}\n{explain(rc)}"
        assert replica_state(rc, "foo-0", 1) is R.ReplicaDeletionStarted
