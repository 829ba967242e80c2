"""Topic IDs (KIP-516): the topic-ID test methods of Kafka 2.8.2's ``ControllerIntegrationTest`` as kcspec sequences.

Each test runs the events of its sequence (``conformance/vectors/inputs.py`` ``TOPIC_ID_TESTS``, which also become
conformance vectors, step by step) on the spec and on the reference controller (every step agrees and keeps every
invariant), and then asserts what the Kafka test asserts on the states both engines reached at the end of each
phase. An IBP upgrade or downgrade (Kafka restarts the brokers with another ``inter.broker.protocol.version``) is
the state of one phase with its config changed, loaded for the next.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.conformance.vectors.inputs import TOPIC_ID_TESTS
from kcspec.model.step import SpecMachine
from kcspec.spec.events import (
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    TopicCreation,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig, InterBrokerProtocol, TopicPartition

from tests.support.spec_scenarios import run_on_both_engines

IBP_2_8 = InterBrokerProtocol.KAFKA_2_8_IV1
T1_1 = TopicPartition("t1", 1)
SEQUENCES = {sequence.name: sequence for sequence in TOPIC_ID_TESTS}


def _initial(ibp: InterBrokerProtocol) -> ClusterState:
    return ClusterState(config=ClusterConfig(inter_broker_protocol=ibp))


def _run(initial: ClusterState, *events: ControllerEvent, profile: str = "kafka-2.8") -> ClusterState:
    return run_on_both_engines("topic-ids", initial, events, profile)


def _phases(name: str) -> list[ClusterState]:
    """The states both engines reach at the end of each phase of the sequence ``name``."""
    sequence = SEQUENCES[name]
    (profile,) = sequence.profiles
    state, ends = ClusterState(), []
    for ibp, events in sequence.phases:
        state = _run(
            replace(state, config=replace(state.config, inter_broker_protocol=ibp)), *events, profile=profile
        )
        ends.append(state)
    return ends


def test_every_sequence_is_asserted_on() -> None:
    """Each ported sequence has its test here (a sequence added without one is a vector with no Kafka assertion)."""
    asserted = {
        "testTopicIdsAreAdded",
        "testTopicIdsAreNotAdded",
        "testTopicIdPersistsThroughControllerReelection",
        "testNoTopicIdPersistsThroughControllerReelection",
        "testTopicIdPersistsThroughControllerRestart",
        "testTopicIdCreatedOnUpgrade",
        "testTopicIdMigrationAndHandling",
        "testTopicIdMigrationAndHandlingWithOlderVersion",
        "ibp-2_8-IV0",
        "kafka-1_1-no-topic-ids",
    }
    assert set(SEQUENCES) == asserted, sorted(set(SEQUENCES) ^ asserted)


def test_topic_ids_are_added() -> None:
    """``ControllerIntegrationTest.testTopicIdsAreAdded``: each created topic has an ID, the same in the controller's
    context and in its topic znode, and two topics have different IDs."""
    (s,) = _phases("testTopicIdsAreAdded")
    ids = s.controller.topic_ids
    assert set(ids) == {"t1", "t2"} and ids["t1"] != ids["t2"], s
    assert s.zk.topic_ids == ids, s


def test_topic_ids_are_not_added() -> None:
    """``ControllerIntegrationTest.testTopicIdsAreNotAdded``: under an IBP before 2.8 no topic gets an ID."""
    (s,) = _phases("testTopicIdsAreNotAdded")
    assert set(s.zk.topics) == {"t1", "t2"} and not s.controller.topic_ids and not s.zk.topic_ids, s


@pytest.mark.parametrize(
    ("name", "with_ids"),
    [("testTopicIdMigrationAndHandling", True), ("testTopicIdMigrationAndHandlingWithOlderVersion", False)],
)
def test_topic_id_migration_and_handling(name: str, with_ids: bool) -> None:
    """``ControllerIntegrationTest.testTopicIdMigrationAndHandling`` and ``...WithOlderVersion``: the ID the created
    topic has in its znode (2.8) or none (2.7) is the one in the controller's context; adding a partition keeps it;
    after the deletion the controller's context no longer knows the topic (nor its ID)."""
    created, added, deleted = _phases(name)
    expected = FMap({"t1": 1}) if with_ids else FMap()
    assert created.zk.topic_ids == created.controller.topic_ids == expected, created
    assert added.zk.topic_ids == added.controller.topic_ids == expected, added
    assert T1_1 in added.controller.assignments, added  # the partition was added
    assert "t1" not in deleted.controller.topic_ids and "t1" not in deleted.zk.topics, deleted
    assert not any(tp.topic == "t1" for tp in deleted.controller.assignments), deleted


def test_topic_id_persists_through_controller_reelection() -> None:
    """``ControllerIntegrationTest.testTopicIdPersistsThroughControllerReelection``: the controller's broker shuts
    down; the ID the other broker's controller reads is the first controller's."""
    created, s = _phases("testTopicIdPersistsThroughControllerReelection")
    assert s.zk.controller == 1, s
    assert s.controller.topic_ids == created.controller.topic_ids == FMap({"t1": 1}), s


def test_no_topic_id_persists_through_controller_reelection() -> None:
    """``ControllerIntegrationTest.testNoTopicIdPersistsThroughControllerReelection``: under IBP 2.7 the topic still
    has no ID after the other broker becomes the controller."""
    _created, s = _phases("testNoTopicIdPersistsThroughControllerReelection")
    assert s.zk.controller == 1, s
    assert not s.controller.topic_ids and not s.zk.topic_ids, s


def test_topic_id_persists_through_controller_restart() -> None:
    """``ControllerIntegrationTest.testTopicIdPersistsThroughControllerRestart``: the only broker (the controller)
    shuts down and starts again; the topic keeps its ID."""
    created, s = _phases("testTopicIdPersistsThroughControllerRestart")
    assert s.controller.topic_ids == created.zk.topic_ids == s.zk.topic_ids == FMap({"t1": 1}), s


def test_topic_id_created_on_upgrade() -> None:
    """``ControllerIntegrationTest.testTopicIdCreatedOnUpgrade``: a topic created under IBP 2.7 has no ID; the broker
    restarted with IBP 2.8 becomes the controller and writes one into the znode and its context; after the
    deletion the context no longer knows the topic."""
    old, upgraded, deleted = _phases("testTopicIdCreatedOnUpgrade")
    assert not old.zk.topic_ids and not old.controller.topic_ids, old
    assert upgraded.zk.topic_ids == upgraded.controller.topic_ids == FMap({"t1": 1}), upgraded
    assert "t1" not in deleted.controller.topic_ids and "t1" not in deleted.zk.topics, deleted


def test_requests_carry_topic_ids_from_ibp_2_8_iv1() -> None:
    """LeaderAndIsr v5 and UpdateMetadata v7 (IBP 2.8-IV1) carry each topic's ID; under 2.8-IV0 topics have IDs but
    the requests (v4, v6) do not; kafka-1.1 has neither."""

    def requests(ibp: InterBrokerProtocol, profile: str) -> list[LeaderAndIsrRequest | UpdateMetadataRequest]:
        s = _run(_initial(ibp), BrokerStartup(0), ControllerFailover(0), profile=profile)
        result = SpecMachine(profile).step(s, TopicCreation("t1", ((0,),)))
        return [r for r in result.requests if isinstance(r, LeaderAndIsrRequest | UpdateMetadataRequest)]

    carried = requests(InterBrokerProtocol.KAFKA_2_8_IV1, "kafka-2.8")
    assert carried and all(r.topic_ids == FMap({"t1": 1}) for r in carried), carried
    for ibp, profile in ((InterBrokerProtocol.KAFKA_2_8_IV0, "kafka-2.8"), (IBP_2_8, "kafka-1.1")):
        sent = requests(ibp, profile)
        assert sent and all(not r.topic_ids for r in sent), (ibp, profile, sent)
    (iv0,) = _phases("ibp-2_8-IV0")  # the IDs exist under 2.8-IV0: only the wire lacks them
    assert iv0.zk.topic_ids == iv0.controller.topic_ids == FMap({"t1": 1}), iv0


def test_kafka_1_1_has_no_topic_ids() -> None:
    """The kafka-1.1 profile ignores the IBP setting: no topic gets an ID."""
    (s,) = _phases("kafka-1_1-no-topic-ids")
    assert not s.controller.topic_ids and not s.zk.topic_ids, s
