"""``ControllerEventManager``: the controller's event queue, as Kafka 2.8.2 keeps it (§7.9, §7.12).

Kafka puts every controller event in one queue that its event thread processes one at a time; the reference
controller processes the model's other events at once (each arrives on an empty queue), and queues only the events
that carry a callback answering a client: the admin ``ReplicaLeaderElection``, the ``ControlledShutdown`` and the
``ApiPartitionReassignment`` and the ``ListPartitionReassignments``, in one first-in-first-out queue. The manager belongs to the broker,
not to a controller incarnation: it outlives a resignation (``ReferenceController`` holds it).

* ``put`` appends an event; ``take`` removes the oldest.
* ``clear_and_put`` drains the queue, calls ``preempt`` on each drained event (its callback answered without
  processing), then appends the new one: ``Expire`` and ``ShutdownEventThread`` are put this way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kcspec.reference_impl.mirrors import mirrors
from kcspec.spec.requests import WHOLE_REQUEST
from kcspec.spec.vocabulary import ApiError, ElectionType, ReplicaAssignment, TopicPartition

Answer = Callable[[int, dict[TopicPartition, ApiError | int]], None]
"""Where a callback's answer goes: the request's place in the queue when it is answered, and per partition
``Right(leader)`` (an int) or ``Left(error)``."""


@dataclass
class ReplicaLeaderElectionEvent:
    """``ReplicaLeaderElection(partitionsFromAdminClientOpt, electionType, AdminClientTriggered, callback)``."""

    partitions: frozenset[TopicPartition]
    election_type: ElectionType
    answer: Answer

    @mirrors("preempt")
    def preempt(self, position: int) -> None:
        """``preempt``: every requested partition answered NOT_CONTROLLER."""
        self.answer(position, {tp: ApiError.NOT_CONTROLLER for tp in self.partitions})


ShutdownAnswer = Callable[[int, "set[TopicPartition] | str"], None]
"""Where a controlled shutdown's callback answer goes: the request's place in the queue when it is answered, and
``Success(partitions still led)`` (a set) or ``Failure(e)`` (e's class name)."""


@dataclass
class ControlledShutdownEvent:
    """``ControlledShutdown(id, brokerEpoch, controlledShutdownCallback)`` (§7.10)."""

    broker_id: int
    broker_epoch: int
    answer: ShutdownAnswer

    @mirrors("preempt")
    def preempt(self, position: int) -> None:
        """``preempt``: the callback gets ``Failure(ControllerMovedException)``."""
        self.answer(position, "ControllerMovedException")


@dataclass
class ApiPartitionReassignmentEvent:
    """``ApiPartitionReassignment(reassignments, callback)`` (§7.7.1): the callback gets per partition an error
    (``Left``) or, for the whole request, NOT_CONTROLLER (``Right``)."""

    targets: dict[TopicPartition, tuple[int, ...] | None]
    answer: Answer

    @mirrors("preempt")
    def preempt(self, position: int) -> None:
        """``preempt``: ``Right(ApiError(NOT_CONTROLLER))``, written as the answer for ``WHOLE_REQUEST``."""
        self.answer(position, {WHOLE_REQUEST: ApiError.NOT_CONTROLLER})


ListAnswer = Callable[[int, "dict[TopicPartition, ReplicaAssignment] | ApiError"], None]
"""Where a reassignment listing's callback answer goes: the request's place in the queue when it is answered, and
``Left(reassignments)`` (a map) or ``Right(error)``."""


@dataclass
class ListPartitionReassignmentsEvent:
    """``ListPartitionReassignments(partitionsOpt, callback)`` (§7.7.1); ``partitions`` None lists every partition
    being reassigned."""

    partitions: frozenset[TopicPartition] | None
    answer: ListAnswer

    @mirrors("preempt")
    def preempt(self, position: int) -> None:
        """``preempt``: ``Right(ApiError(NOT_CONTROLLER))``."""
        self.answer(position, ApiError.NOT_CONTROLLER)


QueuedEvent = (
    ReplicaLeaderElectionEvent
    | ControlledShutdownEvent
    | ApiPartitionReassignmentEvent
    | ListPartitionReassignmentsEvent
)


class ControllerEventManager:
    """The queue of events waiting for the event thread (``ControllerEventManager.queue``)."""

    def __init__(self) -> None:
        self.queue: deque[QueuedEvent] = deque()

    def __len__(self) -> int:
        return len(self.queue)

    @mirrors("ControllerEventManager.put")
    def put(self, event: QueuedEvent) -> None:
        self.queue.append(event)

    def take(self) -> QueuedEvent:
        return self.queue.popleft()

    def clear_and_put(self) -> None:
        """``clearAndPut(event)``: the queued events are drained and preempted, in order. The event put instead
        (``Expire``, ``ShutdownEventThread``) is processed by the caller at once, so it is not kept here."""
        drained = list(self.queue)
        self.queue.clear()
        for position, event in enumerate(drained):
            event.preempt(position)
