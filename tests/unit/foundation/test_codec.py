"""The canonical JSON form: lossless round-trip, determinism, and errors that name the offending field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from kcspec.spec import codec
from kcspec.spec.events import EVENT_TYPES, EVENTS_BY_KIND, ControllerEvent, TopicCreation
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    FailureReason,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StateChangeFailure,
    StepResult,
    StopReplicaPartitionState,
    StopReplicaRequest,
)
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import TopicPartition

from tests.support.strategies import cluster_states


@given(cluster_states)
def test_cluster_state_round_trips_losslessly(state: ClusterState) -> None:
    text = codec.dumps(state)
    back = codec.loads(text, ClusterState)
    assert back == state, f"round trip changed the state:\n{text}\n{codec.dumps(back)}"
    assert codec.dumps(back) == text, "encoding is not deterministic"


def test_partitions_render_as_kafka_does() -> None:
    tp = TopicPartition("my-topic", 10)
    assert codec.encode(tp) == "my-topic-10"
    assert codec.decode("my-topic-10", TopicPartition) == tp


def test_maps_sort_keys_numerically() -> None:
    m = FMap({TopicPartition("t", 10): 1, TopicPartition("t", 9): 2, TopicPartition("s", 1): 3})
    assert list(codec.encode(m)) == ["s-1", "t-9", "t-10"]


def test_sets_are_ordered_by_the_json_text_of_their_elements() -> None:
    # The canonical text of "é" is "\u00e9" (escaped): its backslash sorts before "a"; ints sort as text too.
    assert codec.encode(frozenset({"z", "é", 'a"b'})) == ["é", 'a"b', "z"]
    assert codec.encode(frozenset({10, 9, 100})) == [10, 100, 9]
    assert codec.encode(frozenset({(2, 1), (10,)})) == [[10], [2, 1]]


def test_keys_with_non_ascii_digits_sort_as_text() -> None:
    # str.isdigit() accepts "²" and "٣", which int() refuses: the encoder used to raise ValueError on them.
    m = FMap({"t-²": 1, "²": 2, "t-1": 3, "٣": 4})
    assert list(codec.encode(m)) == ["t-1", "t-²", "²", "٣"]


def test_events_round_trip_with_their_kind() -> None:
    event = TopicCreation(topic="foo", replicas=((1, 2), (2, 3)))
    data = codec.encode(event)
    assert data["kind"] == "TopicCreation"
    assert codec.decode(data, ControllerEvent) == event


def test_every_event_type_is_decodable_by_kind() -> None:
    assert {cls.kind for cls in EVENT_TYPES} == set(EVENTS_BY_KIND)  # the table that codec.decode reads


def test_step_results_round_trip_requests_as_a_tagged_union() -> None:
    tp = TopicPartition("foo", 0)
    lair = LeaderAndIsrRequest(
        broker=1,
        controller_id=0,
        controller_epoch=3,
        partition_states=frozenset(
            {LeaderAndIsrPartitionState(tp, 3, 1, 4, (1, 2), 5, (1, 2), (), (), False)}
        ),
    )
    sr = StopReplicaRequest(1, 0, 3, frozenset({StopReplicaPartitionState(tp, True, -2)}))
    failure = StateChangeFailure(
        "replica", tp, 2, "NonExistentReplica", "OfflineReplica", FailureReason.NewReplicaIsLeader
    )
    result = StepResult(state=ClusterState(), requests=frozenset({lair, sr}), failures=frozenset({failure}))
    data = json.loads(codec.dumps(result))
    assert {r["type"] for r in data["requests"]} == {"LeaderAndIsr", "StopReplica"}
    back = codec.decode(data, StepResult)
    assert back.requests == result.requests and back.failures == result.failures


@pytest.mark.parametrize(
    ("mutate", "path", "words"),
    [
        (lambda d: d["controller"].__setitem__("epoch", "3"), "$.controller.epoch", "expected an integer"),
        (
            lambda d: d["zk"]["partition_states"].__setitem__(
                "foo-0",
                {
                    "leader_and_isr": {"leader": 1, "leader_epoch": 0, "isr": [1, "x"], "zk_version": 0},
                    "controller_epoch": 1,
                },
            ),
            '$.zk.partition_states["foo-0"].leader_and_isr.isr[1]',
            "expected an integer",
        ),
        (
            lambda d: d["controller"]["replica_states"].__setitem__("foo-0/1", "Online"),
            '$.controller.replica_states["foo-0/1"]',
            "OnlineReplica",
        ),
        (
            lambda d: d["controller"]["partition_states"].__setitem__("foo", "NewPartition"),
            '$.controller.partition_states["foo"]',
            'like "topic-0"',
        ),
        (lambda d: d["zk"].__setitem__("brokerz", {}), "$.zk.brokerz", "unknown field of ZkState"),
        (
            lambda d: d["controller"]["shutting_down"].extend([1, 1]),
            "$.controller.shutting_down",
            "same element twice",
        ),
    ],
)
def test_bad_input_names_the_offending_field(mutate: object, path: str, words: str) -> None:
    data = codec.encode(ClusterState())
    mutate(data)  # type: ignore[operator]
    with pytest.raises(codec.CodecError) as err:
        codec.decode(data, ClusterState)
    assert err.value.path == path, str(err.value)
    assert words in str(err.value)


def test_missing_required_field_is_named() -> None:
    with pytest.raises(codec.CodecError, match=r"\$\.topic: missing required field of TopicCreation"):
        codec.decode({"kind": "TopicCreation", "replicas": []}, ControllerEvent)


def test_unknown_event_kind_lists_the_known_ones() -> None:
    with pytest.raises(codec.CodecError, match=r'unknown event kind "Nope".*BrokerStartup'):
        codec.decode({"kind": "Nope"}, ControllerEvent)


def test_invalid_json_text_names_the_source_and_position() -> None:
    with pytest.raises(codec.CodecError, match=r"state\.json: not valid JSON: .* line 1 column 2"):
        codec.loads("{nope", ClusterState, source="state.json")
