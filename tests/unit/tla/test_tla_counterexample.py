"""TLC counterexamples back to canonical kcspec traces: a state written as TLA+ text (as TLC prints it) and
as ``-dumpTrace json`` data decodes to the same ``ClusterState``; actions become events."""

from __future__ import annotations

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.counterexample import CounterexampleError, StateDecoder, state_of, to_trace
from kcspec.model.tla.module import STATE_VARS
from kcspec.model.tla.values import value_text
from kcspec.model.tlc.trace import (
    TlcAction,
    TlcTraceState,
    TraceFormatError,
    parse_state_text,
    variable_texts,
)
from kcspec.model.tlc.values import parse_value
from kcspec.spec.events import BrokerStartup, TopicCreation
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

TP = TopicPartition("t0", 0)
STATE = ClusterState(
    zk=ZkState(
        controller=1,
        controller_epoch=1,
        brokers=FMap({0: 1, 1: 2}),
        topics=frozenset({TP.topic}),
        assignments=FMap({TP: ReplicaAssignment((1, 0))}),
        partition_states=FMap({TP: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 0), 0), 1)}),
        delete_topics=frozenset({"t0"}),
        zxid=3,
    ),
    controller=ControllerContext(
        controller_id=1,
        epoch=1,
        live_brokers=FMap({1: 2, 0: 1}),
        replica_states=FMap({PartitionReplica(TP, 1): ReplicaState.OnlineReplica}),
    ),
)


def tlc_text(state: ClusterState, number: int = 1, header: str = "<Initial predicate>") -> str:
    lines = [f"{number}: {header}"]
    lines += [f"/\\ {v} = {value_text(getattr(state, v))}" for v in STATE_VARS]
    return "\n".join(lines)


def test_state_round_trips_through_tla_text() -> None:
    st = parse_state_text(tlc_text(STATE))
    assert state_of(st) == STATE


def test_sequence_shaped_maps_and_text_keys() -> None:
    # TLC prints a function with domain 1..n as a sequence; -dumpTrace json writes record keys as text
    text = tlc_text(STATE)
    assert "brokers |-> (0 :> 1 @@ 1 :> 2)" in text
    st = parse_state_text(text.replace("(0 :> 1 @@ 1 :> 2)", "<<2>>", 1))
    assert state_of(st).zk.brokers == FMap({1: 2})


def test_the_decoder_of_many_states_agrees_with_state_of_and_decodes_each_text_once() -> None:
    """``StateDecoder`` (the crosscheck's reader of TLC's dump): the states ``state_of`` gives, each distinct variable
    text decoded once and shared, also after its bound made it forget; bad input named as ``state_of`` names it."""
    other = ClusterState(zk=STATE.zk, controller=ControllerContext(), config=STATE.config)
    texts = [tlc_text(s, n) for n, s in enumerate((STATE, other, ClusterState(), STATE), 1)]
    for limit in (20_000, 1):
        decode = StateDecoder(limit)
        decoded = [decode(n, variable_texts(t.split("\n", 1)[1], n)) for n, t in enumerate(texts, 1)]
        assert decoded == [state_of(parse_state_text(t)) for t in texts]
        assert decoded[0].zk is decoded[1].zk and decoded[0].controller is not decoded[1].controller
        assert (decoded[0].zk is decoded[3].zk) == (limit > 1)  # limit 1: forgotten when state 3 came
    decode = StateDecoder()
    body = tlc_text(STATE, 5).split("\n", 1)[1]
    with pytest.raises(CounterexampleError, match=r"state 5: zk\.zxid: expected int"):
        decode(5, variable_texts(body.replace("zxid |-> 3", 'zxid |-> "x"'), 5))
    with pytest.raises(TraceFormatError, match="state 6, variable controller"):
        decode(6, variable_texts(body.replace("controller = [", "controller = [[", 1), 6))
    with pytest.raises(CounterexampleError, match="state 7 has no variable 'config'"):
        decode(7, [(v, t) for v, t in variable_texts(body, 7) if v != "config"])


def test_trace_with_events() -> None:
    s0 = parse_state_text(tlc_text(ClusterState()))
    s1 = parse_state_text(tlc_text(STATE, 2, "<BrokerStartup(0) line 1, col 1 to line 2, col 2 of module M>"))
    creation = TlcTraceState(
        3,
        TlcAction("TopicCreation", ("t0", parse_value("<<<<1, 0>>>>"))),
        parse_state_text(tlc_text(STATE)).variables,
    )
    trace = to_trace(
        (s0, s1, creation),
        "kafka-2.8",
        {"BrokerStartup": ("broker_id",), "TopicCreation": ("topic", "replicas")},
    )
    assert trace.initial == ClusterState()
    assert trace.events == (BrokerStartup(0), TopicCreation("t0", ((1, 0),)))
    assert "BrokerStartup" in trace.to_json()


def test_bad_traces_name_the_place() -> None:
    bad = parse_state_text(tlc_text(STATE).replace("zxid |-> 3", 'zxid |-> "x"'))
    with pytest.raises(CounterexampleError, match=r"state 1: zk\.zxid: expected int"):
        state_of(bad)
    s1 = TlcTraceState(2, TlcAction("NoSuchEvent", ()), ())
    with pytest.raises(CounterexampleError, match="not a kcspec event"):
        to_trace((parse_state_text(tlc_text(ClusterState())), s1), "kafka-2.8", {})


ONE_BROKER = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)


def test_steps_printed_without_arguments_are_recovered_by_matching_states() -> None:
    from kcspec.model.step import SpecMachine

    started = SpecMachine("kafka-2.8").step(ClusterState(), BrokerStartup(0)).state
    s0 = parse_state_text(tlc_text(ClusterState()))
    s1 = parse_state_text(
        tlc_text(started, 2, "<BrokerStartup line 3878, col 5 to line 3878, col 30 of module M>")
    )
    trace = to_trace((s0, s1), "kafka-2.8", config=ONE_BROKER)
    assert trace.events == (BrokerStartup(0),)
    # without the model there is nothing to match against: the missing arguments are named
    with pytest.raises(
        CounterexampleError, match=r"BrokerStartup has 0 argument\(s\), expected parameters \('broker_id',\)"
    ):
        to_trace((s0, s1), "kafka-2.8")
    # a step that no instance of the labelled action explains names its state
    same = parse_state_text(
        tlc_text(ClusterState(), 2, "<BrokerStartup line 1, col 1 to line 1, col 2 of module M>")
    )
    with pytest.raises(CounterexampleError, match=r"state 2: none of the 1 instance\(s\) of BrokerStartup"):
        to_trace((s0, same), "kafka-2.8", config=ONE_BROKER)


def test_steps_labelled_next_are_recovered_from_every_action() -> None:
    # an action whose Next entry checks part of its guard first is labelled "Next" by TLC (it does not split a
    # conjunction): its event is looked for among the instances of every action of the model
    from kcspec.model.step import SpecMachine

    spec = SpecMachine("kafka-2.8")
    started = spec.step(ClusterState(), BrokerStartup(0)).state
    created = spec.step(started, TopicCreation("t0", ((0,),))).state
    s0 = parse_state_text(tlc_text(ClusterState()))
    s1 = parse_state_text(
        tlc_text(started, 2, "<BrokerStartup line 3878, col 5 to line 3878, col 30 of module M>")
    )
    s2 = parse_state_text(tlc_text(created, 3, "<Next line 5018, col 12 to line 5020, col 48 of module M>"))
    trace = to_trace((s0, s1, s2), "kafka-2.8", config=ONE_BROKER)
    assert trace.events == (BrokerStartup(0), TopicCreation("t0", ((0,),)))
    from_started = parse_state_text(tlc_text(started))
    next_step = parse_state_text(
        tlc_text(created, 2, "<Next line 5018, col 12 to line 5020, col 48 of module M>")
    )
    # without the model, a Next step cannot be told: it is no kcspec event
    with pytest.raises(CounterexampleError, match="action Next is not a kcspec event"):
        to_trace((from_started, next_step), "kafka-2.8")
    # a Next step that no instance explains names its state
    same = parse_state_text(tlc_text(started, 2, "<Next line 1, col 1 to line 1, col 2 of module M>"))
    with pytest.raises(CounterexampleError, match=r"state 2: none of the \d+ instance\(s\) of any action"):
        to_trace((from_started, same), "kafka-2.8", config=ONE_BROKER)
