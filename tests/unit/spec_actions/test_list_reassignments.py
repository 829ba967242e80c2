"""``ListPartitionReassignments`` in the controller's event queue (§7.7.1, §7.12; Kafka 2.8.2
``KafkaController.processListPartitionReassignments``): a read-only request, answered from the controller's context.

Every run goes through the spec and the reference controller (``run_on_both_engines``: each step agrees, answers
included, and every invariant holds); the assertions are on the spec's answers. The ported
``ControllerIntegrationTest.testPreemptionWithCallbacks`` and the plain processing are conformance vectors
(``tests/unit/conformance/test_event_queue_vectors.py``).
"""

from __future__ import annotations

from kcspec.model.step import SpecMachine
from kcspec.spec.events import (
    ApiPartitionReassignment,
    ApiPartitionReassignmentQueued,
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    ListPartitionReassignmentsQueued,
    NewerControllerElected,
    QueuedEventProcessed,
    TopicCreation,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import WHOLE_REQUEST, ElectionAnswer
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ApiError, ClusterConfig, ReplicaAssignment

from tests.support.spec_scenarios import run_on_both_engines, tp

T0, T1 = tp("t", 0), tp("t", 1)
INITIAL = ClusterState(config=ClusterConfig(max_queued_requests=2))
SETUP: tuple[ControllerEvent, ...] = (
    BrokerStartup(0),
    BrokerStartup(1),
    ControllerFailover(0),
    TopicCreation("t", ((0,), (0,))),
    ApiPartitionReassignment(FMap({T0: (1,)})),
)
"""Two brokers, t-0 being moved from broker 0 to broker 1 (its follower has not caught up), t-1 not reassigned."""
ONGOING = ReplicaAssignment((1, 0), (1,), (0,))


def _last_answers(*events: ControllerEvent) -> frozenset[ElectionAnswer]:
    run_on_both_engines("list-reassignments", INITIAL, events)
    machine, state = SpecMachine("kafka-2.8"), INITIAL
    answers: frozenset[ElectionAnswer] = frozenset()
    for event in events:
        result = machine.step(state, event)
        state, answers = result.state, result.answers
    return answers


def test_a_fenced_controller_still_answers_a_listing() -> None:
    """The listing writes nothing, so a controller whose epoch is stale (a newer controller elected behind its
    back, §9) answers it from its context like an active one: ``Left`` with t-0's ongoing reassignment."""
    answers = _last_answers(
        *SETUP,
        ListPartitionReassignmentsQueued(frozenset({T0, T1})),
        NewerControllerElected(1),
        QueuedEventProcessed(),
    )
    assert {(a.tp, a.error, a.assignment) for a in answers} == {
        (WHOLE_REQUEST, ApiError.NONE, ReplicaAssignment(())),
        (T0, ApiError.NONE, ONGOING),
    }, answers


def test_a_listing_behind_a_fenced_write_is_answered_not_controller() -> None:
    """A queued reassignment processed by a fenced controller raises ControllerMovedException (its write of the
    topic assignment is fenced, §3.3) and gets no answer; the controller resigns, and the listing waiting behind
    it, now the queue's head (request 0), is answered NOT_CONTROLLER for the whole request (§7.7.1, §7.12)."""
    answers = _last_answers(
        *SETUP,
        ApiPartitionReassignmentQueued(FMap({T1: (1,)})),
        ListPartitionReassignmentsQueued(),
        NewerControllerElected(1),
        QueuedEventProcessed(),
    )
    assert answers == {ElectionAnswer(0, WHOLE_REQUEST, ApiError.NOT_CONTROLLER)}, answers
