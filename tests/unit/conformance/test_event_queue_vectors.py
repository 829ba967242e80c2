"""The event-queue vectors (``conformance/vectors/inputs.py``, ``EVENT_QUEUE_CASES``): Kafka 2.8.2's
``ControllerIntegrationTest.testPreemptionOnControllerShutdown`` and ``testPreemptionWithCallbacks``, ported, and a
queued election, controlled shutdown, reassignment and reassignment listing processed normally (§7.7.1, §7.9,
§7.10), through the protocol on both oracles (the spec and the reference
controller).

Each run is replayed step by step on both oracles: every reply must agree, and the last step's ``answers`` and
requests must be what the Kafka test (or §7.9) asserts.
"""

from __future__ import annotations

import pytest
from kcspec.conformance.adapters.inprocess import dispatch
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.vectors import inputs
from kcspec.conformance.vectors.generate import event_queue_cases
from kcspec.spec.events import ControllerResignation, QueuedEventProcessed
from kcspec.spec.requests import WHOLE_REQUEST
from kcspec.spec.vocabulary import ApiError, TopicPartition

PROFILE = "kafka-2.8"
RUNS = {r.name: r for r in inputs.EVENT_QUEUE_CASES}
T0, T1, T2, U0 = (
    TopicPartition("t", 0),
    TopicPartition("t", 1),
    TopicPartition("t", 2),
    TopicPartition("u", 0),
)
NOT_CONTROLLER = ApiError.NOT_CONTROLLER


def _replies(run: inputs.QueueCase) -> list[tuple[m.StepReply, m.StepReply]]:
    """Both oracles' replies to every step of ``run``, each loaded with the state before the step."""
    spec, reference = SpecSut(), ReferenceSut()
    for oracle in (spec, reference):
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, PROFILE))
    out = []
    state = run.initial
    for event in run.events:
        pair = []
        for oracle in (spec, reference):
            assert isinstance(dispatch(oracle, m.Load(state)), m.Ok)
            reply = dispatch(oracle, m.Event(event))
            assert isinstance(reply, m.StepReply), (run.name, event, reply)
            pair.append(reply)
        differences = diff_replies(pair[0], pair[1])
        assert not differences, (run.name, event, differences)
        out.append((pair[0], pair[1]))
        state = pair[0].state
    return out


def _answers(reply: m.StepReply) -> set[tuple[int, TopicPartition, ApiError, int]]:
    return {(a.request, a.tp, a.error, a.leader) for a in reply.answers if not a.exception}


def _failures(reply: m.StepReply) -> set[tuple[int, TopicPartition, ApiError, str]]:
    return {(a.request, a.tp, a.error, a.exception) for a in reply.answers if a.exception}


@pytest.mark.parametrize(
    ("name", "queued", "expected"),
    [
        # testPreemptionOnControllerShutdown: both queued events preempted
        ("preemption-on-controller-shutdown", 2, {(0, T0, NOT_CONTROLLER, -1), (1, T0, NOT_CONTROLLER, -1)}),
        # testPreemptionWithCallbacks: the election's callback gets NOT_CONTROLLER for t-0 and t-1 (the
        # shutdown's Failure is checked by test_a_queued_controlled_shutdown_is_preempted_after_the_election)
        # and the reassignment's and the listing's NOT_CONTROLLER for the whole request (Right(ApiError(...)))
        (
            "preemption-with-callbacks",
            4,
            {
                (0, T0, NOT_CONTROLLER, -1),
                (0, T1, NOT_CONTROLLER, -1),
                (2, WHOLE_REQUEST, NOT_CONTROLLER, -1),
                (3, WHOLE_REQUEST, NOT_CONTROLLER, -1),
            },
        ),
    ],
)
def test_a_controller_shutdown_preempts_the_queued_elections(
    name: str, queued: int, expected: set[object]
) -> None:
    run = RUNS[name]
    assert isinstance(run.events[-1], ControllerResignation)
    replies = _replies(run)
    before_last = replies[-2][0].state
    last = replies[-1][0]
    assert len(before_last.controller.queued_elections) == queued
    assert _answers(last) == expected
    # nothing elected: no request sent, no leadership written
    assert not last.requests
    assert last.state.zk.partition_states == before_last.zk.partition_states
    assert last.state.controller.queued_elections == ()


def test_while_requests_wait_other_controller_events_wait_behind_them() -> None:
    """The queue is first in, first out: with an election queued, a broker's failure is not processed before it
    (the event is not enabled), on both oracles."""
    from kcspec.spec.events import BrokerFailure

    run = RUNS["preemption-with-callbacks"]
    queued = _replies(run)[-2][0].state
    for oracle in (SpecSut(), ReferenceSut()):
        dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, PROFILE))
        dispatch(oracle, m.Load(queued))
        reply = dispatch(oracle, m.Event(BrokerFailure(0)))
        assert isinstance(reply, m.ErrorReply) and reply.code is m.ErrorCode.not_enabled, (oracle, reply)


def test_a_queued_election_processed_answers_what_section_7_9_says() -> None:
    run = RUNS["processed"]
    replies = _replies(run)
    first, second = replies[-2][0], replies[-1][0]
    assert isinstance(run.events[-1], QueuedEventProcessed)
    assert _answers(first) == {
        (0, T0, ApiError.NONE, 1),  # the preferred replica 1 is in the ISR: elected
        (0, T1, ApiError.ELECTION_NOT_NEEDED, -1),  # already led by its preferred replica
        (0, U0, ApiError.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    assert first.state.controller.leadership[T0].leader_and_isr.leader == 1
    assert first.requests, "the election sends LeaderAndIsr and UpdateMetadata"
    # the unclean election of t-0 (now led by live broker 1) is not needed
    assert _answers(second) == {(0, T0, ApiError.ELECTION_NOT_NEEDED, -1)}
    assert second.state.controller.queued_elections == ()


def test_every_queue_vector_needs_the_callbacks_capability() -> None:
    cases = list(event_queue_cases(PROFILE, SpecSut()))
    assert len(cases) == sum(len(r.events) for r in inputs.EVENT_QUEUE_CASES)
    assert all(m.Capability.callbacks in c.capabilities for c in cases)


def test_a_queued_controlled_shutdown_is_preempted_after_the_election() -> None:
    """testPreemptionWithCallbacks: the controlled shutdown queued behind the election gets
    Failure(ControllerMovedException), as the queue's second request; nothing is shut down."""
    replies = _replies(RUNS["preemption-with-callbacks"])
    last = replies[-1][0]
    assert _failures(last) == {(1, WHOLE_REQUEST, NOT_CONTROLLER, "ControllerMovedException")}
    assert not last.state.controller.shutting_down


def test_queued_controlled_shutdowns_processed_answer_the_partitions_still_led() -> None:
    """§7.10 step 9: broker 1's shutdown moves its leadership of t-0 away (Success, nothing still led); broker 0's,
    with no other live broker, leaves it leading both partitions (Success with both)."""
    run = RUNS["controlled-shutdown-processed"]
    replies = _replies(run)
    first, second = replies[-2][0], replies[-1][0]
    assert _answers(first) == {(0, WHOLE_REQUEST, ApiError.NONE, -1)}
    assert first.state.controller.leadership[T0].leader_and_isr.leader == 0
    assert _answers(second) == {
        (0, WHOLE_REQUEST, ApiError.NONE, -1),
        (0, T0, ApiError.NONE, 0),
        (0, T1, ApiError.NONE, 0),
    }
    assert second.state.controller.shutting_down == frozenset({0, 1})
    assert second.state.controller.queued_elections == ()


def test_a_queued_controlled_shutdown_with_a_stale_epoch_fails_after_the_election_before_it() -> None:
    """§7.10 step 2 (KAFKA-7235): Failure(StaleBrokerEpochException), nothing changed; the election queued
    before it is answered first (first in, first out)."""
    replies = _replies(RUNS["controlled-shutdown-stale-epoch"])
    first, second = replies[-2][0], replies[-1][0]
    assert {a.tp for a in first.answers} == {T0}
    assert _failures(second) == {
        (0, WHOLE_REQUEST, ApiError.UNKNOWN_SERVER_ERROR, "StaleBrokerEpochException")
    }
    assert second.state.controller.shutting_down == frozenset()
    assert not second.requests


def test_a_queued_reassignment_processed_answers_what_section_7_7_1_says() -> None:
    replies = _replies(RUNS["reassignment-processed"])
    last = replies[-1][0]
    assert _answers(last) == {
        (0, T0, ApiError.NONE, -1),  # broker 1 is live: the reassignment starts
        (0, T1, ApiError.NO_REASSIGNMENT_IN_PROGRESS, -1),  # a cancel with nothing to cancel
        (0, T2, ApiError.INVALID_REPLICA_ASSIGNMENT, -1),  # broker 5 is not alive
        (0, U0, ApiError.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    assert last.state.zk.assignments[T0].adding == (1,)
    assert last.state.controller.queued_elections == ()


def test_queued_reassignment_listings_processed_answer_the_ongoing_reassignments() -> None:
    """§7.7.1 ``processListPartitionReassignments``: the partitions asked whose assignment is being reassigned,
    each with its full assignment (t-0: replicas 1, 0, adding 1, removing 0); t-1 (not being reassigned) and u-0
    (no such partition) are left out; a listing of all (``None``) answers the same; the listing changes nothing."""
    from kcspec.spec.vocabulary import ReplicaAssignment

    run = RUNS["list-reassignments-processed"]
    replies = _replies(run)
    ongoing = ReplicaAssignment((1, 0), (1,), (0,))
    for reply, _ in replies[-2:]:
        assert {(a.request, a.tp, a.error, a.assignment) for a in reply.answers} == {
            (0, WHOLE_REQUEST, ApiError.NONE, ReplicaAssignment(())),
            (0, T0, ApiError.NONE, ongoing),
        }, reply.answers
        assert not reply.requests
    queued = replies[-3][0].state
    assert len(queued.controller.queued_elections) == 2
    last = replies[-1][0].state
    assert last.controller.queued_elections == ()
    assert (last.zk, last.controller.assignments) == (queued.zk, queued.controller.assignments)
