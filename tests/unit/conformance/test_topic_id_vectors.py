"""The topic-ID vectors (``conformance/vectors/inputs.py`` ``TOPIC_ID_TESTS``): every step of the ported Kafka 2.8.2
``ControllerIntegrationTest`` topic-ID methods becomes a vector, answered the same by both oracles (the spec and the
reference controller), so a SUT is checked on them through the protocol.

What each Kafka test asserts on the states is checked in ``tests/unit/spec_actions/test_topic_ids.py``; here: that
the vectors exist step for step, that each phase runs under its IBP, and that the requests of the IBP 2.8-IV0 vector
carry no topic ID while those of 2.8-IV1 do.
"""

from __future__ import annotations

import pytest
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.vectors import inputs
from kcspec.spec.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from kcspec.spec.vocabulary import InterBrokerProtocol

from tests.support.kafka_test_vectors import settled


def _settled(profile: str) -> dict[str, tuple[inputs.Case, m.StepReply]]:
    return settled(profile, inputs.TOPIC_ID_TESTS)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_every_step_of_every_sequence_is_a_vector_both_oracles_answer_alike(profile: str) -> None:
    settled = _settled(profile)
    for sequence in inputs.TOPIC_ID_TESTS:
        ours = sorted(i for i in settled if i.startswith(f"event.kafka-test.{sequence.name}."))
        events = [e for _ibp, phase in sequence.phases for e in phase]
        expected = len(events) if profile in sequence.profiles else 0
        assert len(ours) == expected, (sequence.name, ours)
        if not expected:
            continue
        n = 0
        for ibp, phase in sequence.phases:
            for event in phase:
                case, _reply = settled[f"event.kafka-test.{sequence.name}.{n:02d}.{event.kind}"]
                assert case.state is not None and case.state.config.inter_broker_protocol is ibp, case.id
                n += 1


def _topic_ids_sent(settled: dict[str, tuple[inputs.Case, m.StepReply]], name: str) -> list[bool]:
    _case, reply = settled[f"event.kafka-test.{name}.02.TopicCreation"]
    sent = [r for r in reply.requests if isinstance(r, LeaderAndIsrRequest | UpdateMetadataRequest)]
    assert sent, (name, reply.requests)
    return [bool(r.topic_ids) for r in sent]


def test_requests_carry_topic_ids_from_2_8_iv1_only() -> None:
    settled = _settled("kafka-2.8")
    assert not any(_topic_ids_sent(settled, "ibp-2_8-IV0"))
    (case, reply) = settled["event.kafka-test.ibp-2_8-IV0.02.TopicCreation"]
    assert (
        case.state is not None
        and case.state.config.inter_broker_protocol is InterBrokerProtocol.KAFKA_2_8_IV0
    )
    assert reply.state.zk.topic_ids, reply.state.zk  # the ID exists: only the wire lacks it
    assert all(_topic_ids_sent(settled, "testTopicIdsAreAdded"))
