"""Topic IDs (KIP-516): the topic-ID test methods of Kafka 2.8.2's ``ControllerIntegrationTest`` as kcspec sequences.

Each test runs its events on the spec and on the reference controller (``crosscheck``: every step agrees and keeps
every invariant) and then asserts what the Kafka test asserts on the final state, which both engines reached. An IBP
upgrade or downgrade (Kafka restarts the brokers with another ``inter.broker.protocol.version``) is the state of
the first phase with its config changed, loaded for the second phase. Kafka's tests use IBP 2.7-IV0 for "before
topic IDs"; the model's oldest value is 2.7-IV2, the same for topic IDs (``InterBrokerProtocol``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.model.step import SpecMachine
from kcspec.spec.events import (
    ApiPartitionReassignment,
    BrokerFailure,
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    TopicCreation,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig, InterBrokerProtocol, TopicPartition

from tests.support.spec_scenarios import run_on_both_engines

IBP_2_7 = InterBrokerProtocol.KAFKA_2_7_IV2
IBP_2_8 = InterBrokerProtocol.KAFKA_2_8_IV1
T1 = TopicPartition("t1", 0)


def _initial(ibp: InterBrokerProtocol) -> ClusterState:
    return ClusterState(config=ClusterConfig(inter_broker_protocol=ibp))


def _run(initial: ClusterState, *events: ControllerEvent, profile: str = "kafka-2.8") -> ClusterState:
    return run_on_both_engines("topic-ids", initial, events, profile)


def _upgraded(state: ClusterState, ibp: InterBrokerProtocol) -> ClusterState:
    return replace(state, config=replace(state.config, inter_broker_protocol=ibp))


def test_topic_ids_are_added() -> None:
    """``ControllerIntegrationTest.testTopicIdsAreAdded``: each created topic has an ID, the same in the controller's
    context and in its topic znode, and two topics have different IDs."""
    s = _run(
        _initial(IBP_2_8),
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t1", ((0,),)),
        TopicCreation("t2", ((0,),)),
    )
    ids = s.controller.topic_ids
    assert set(ids) == {"t1", "t2"} and ids["t1"] != ids["t2"], s
    assert s.zk.topic_ids == ids, s


def test_topic_ids_are_not_added() -> None:
    """``ControllerIntegrationTest.testTopicIdsAreNotAdded``: under an IBP before 2.8 no topic gets an ID."""
    s = _run(_initial(IBP_2_7), BrokerStartup(0), ControllerFailover(0), TopicCreation("t1", ((0,),)))
    assert not s.controller.topic_ids and not s.zk.topic_ids, s


def test_topic_id_persists_through_controller_reelection() -> None:
    """``ControllerIntegrationTest.testTopicIdPersistsThroughControllerReelection``: the ID a topic had under the
    first controller is the one the re-elected controller reads."""
    created = _run(_initial(IBP_2_8), BrokerStartup(0), ControllerFailover(0), TopicCreation("t1", ((0,),)))
    s = _run(created, ControllerResignation(), ControllerFailover(0))
    assert s.controller.topic_ids == created.controller.topic_ids == FMap({"t1": 1}), s


def test_no_topic_id_persists_through_controller_reelection() -> None:
    """``ControllerIntegrationTest.testNoTopicIdPersistsThroughControllerReelection``: under IBP 2.7 a topic still
    has no ID after a re-election."""
    created = _run(_initial(IBP_2_7), BrokerStartup(0), ControllerFailover(0), TopicCreation("t1", ((0,),)))
    s = _run(created, ControllerResignation(), ControllerFailover(0))
    assert not s.controller.topic_ids and not s.zk.topic_ids, s


def test_topic_id_persists_through_controller_restart() -> None:
    """``ControllerIntegrationTest.testTopicIdPersistsThroughControllerRestart``: the controller's broker dies and
    comes back (another controller in between); the topic keeps its ID."""
    created = _run(
        _initial(IBP_2_8),
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(0),
        TopicCreation("t1", ((0, 1),)),
    )
    s = _run(created, BrokerFailure(0), ControllerFailover(1), BrokerStartup(0), ControllerFailover(0))
    assert s.controller.topic_ids == created.zk.topic_ids == s.zk.topic_ids == FMap({"t1": 1}), s


def test_topic_id_created_on_upgrade() -> None:
    """``ControllerIntegrationTest.testTopicIdCreatedOnUpgrade``: a topic created under IBP 2.7 has no ID; after the
    upgrade to 2.8 the new controller writes one into its znode and its context."""
    old = _run(_initial(IBP_2_7), BrokerStartup(0), ControllerFailover(0), TopicCreation("t1", ((0,),)))
    assert not old.zk.topic_ids
    s = _run(_upgraded(old, IBP_2_8), ControllerResignation(), ControllerFailover(0))
    assert s.zk.topic_ids == s.controller.topic_ids == FMap({"t1": 1}), s


@pytest.mark.parametrize(("created_under", "reassigned_under"), [(IBP_2_7, IBP_2_8), (IBP_2_8, IBP_2_7)])
def test_topic_id_migration_and_handling(
    created_under: InterBrokerProtocol, reassigned_under: InterBrokerProtocol
) -> None:
    """``ControllerIntegrationTest.testTopicIdMigrationAndHandling`` (created under 2.7, upgraded to 2.8: the new
    controller gives the topic an ID) and ``testTopicIdMigrationAndHandlingWithOlderVersion`` (created under 2.8,
    downgraded to 2.7: the controller still reads the znode's ID into its context, "If we don't have IBP 2.8, but
    are running 2.8 code, put any topic IDs from the ZNode in controller context"). Either way a reassignment then
    rewrites the topic znode with that ID (``setTopicAssignment`` writes the context's ID)."""
    first = _run(
        _initial(created_under),
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(0),
        TopicCreation("t1", ((0,),)),
    )
    s = _run(
        _upgraded(first, reassigned_under),
        ControllerResignation(),
        ControllerFailover(0),
        ApiPartitionReassignment(FMap({T1: (1,)})),
    )
    assert s.zk.assignments[T1].adding == (1,), s  # the znode was rewritten: the reassignment is in flight
    assert s.zk.topic_ids == s.controller.topic_ids == FMap({"t1": 1}), s


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


def test_kafka_1_1_has_no_topic_ids() -> None:
    """The kafka-1.1 profile ignores the IBP setting: no topic gets an ID."""
    s = _run(
        _initial(IBP_2_8),
        BrokerStartup(0),
        ControllerFailover(0),
        TopicCreation("t1", ((0,),)),
        profile="kafka-1.1",
    )
    assert not s.controller.topic_ids and not s.zk.topic_ids, s
