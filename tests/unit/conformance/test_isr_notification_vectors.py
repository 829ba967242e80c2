"""The vectors of ISR changes without AlterIsr (``conformance/vectors/inputs.py`` ``ISR_NOTIFICATION_TESTS``): every
step of the IBP 2.6-IV0 and 2.7-IV0 runs becomes a vector, answered the same by both oracles (the spec and the
reference controller), so that a SUT is checked through the protocol on the ZooKeeper-notification path (§7.11).
"""

from __future__ import annotations

import pytest
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.vectors import inputs
from kcspec.spec.requests import UpdateMetadataRequest
from kcspec.spec.vocabulary import FeatureZNodeStatus, ReplicaAssignment, TopicPartition

from tests.support.kafka_test_vectors import settled

T1_0 = TopicPartition("t1", 0)


def _settled(profile: str) -> dict[str, tuple[inputs.Case, m.StepReply]]:
    return settled(profile, inputs.ISR_NOTIFICATION_TESTS)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_every_step_is_a_vector_both_oracles_answer_alike(profile: str) -> None:
    settled = _settled(profile)
    for sequence in inputs.ISR_NOTIFICATION_TESTS:
        ours = [i for i in settled if i.startswith(f"event.kafka-test.{sequence.name}.")]
        expected = sum(len(events) for _ibp, events in sequence.phases) if profile in sequence.profiles else 0
        assert len(ours) == expected, (sequence.name, sorted(ours))


def test_isr_change_under_ibp_2_6_is_written_by_the_leader_and_notified() -> None:
    settled = _settled("kafka-2.8")
    name = "event.kafka-test.ibp-2_6-IV0-isr-notification"
    case, reply = settled[f"{name}.04.IsrChange"]
    assert case.state is not None
    before = case.state.zk.partition_states[T1_0]
    after = reply.state.zk.partition_states[T1_0]
    assert (after.leader_and_isr.isr, after.leader_and_isr.zk_version) == (
        (0,),
        before.leader_and_isr.zk_version + 1,
    ), reply.state.zk
    assert after.leader_and_isr.leader_epoch == before.leader_and_isr.leader_epoch
    assert reply.state.zk.isr_change_notifications == frozenset(), reply.state.zk
    assert {r.broker for r in reply.requests if isinstance(r, UpdateMetadataRequest)} == {0, 1}, (
        reply.requests
    )
    # without a controller the notification waits; the failover deletes it
    _case, waiting = settled[f"{name}.07.IsrChange"]
    assert waiting.state.zk.isr_change_notifications == frozenset({T1_0}), waiting.state.zk
    _case, failover = settled[f"{name}.08.ControllerFailover"]
    assert failover.state.zk.isr_change_notifications == frozenset()
    assert failover.state.zk.feature_znode is FeatureZNodeStatus.Disabled


def test_reassignment_completes_through_the_notification() -> None:
    settled = _settled("kafka-2.8")
    _case, reply = settled["event.kafka-test.ibp-2_7-IV0-reassignment-isr-notification.06.IsrChange"]
    assert T1_0 not in reply.state.controller.partitions_being_reassigned, reply.state.controller
    assert reply.state.zk.assignments[T1_0] == ReplicaAssignment((1, 2)), reply.state.zk
    assert reply.state.zk.feature_znode is FeatureZNodeStatus.Enabled
