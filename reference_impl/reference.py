"""``ReferenceController``: the public face of the reference implementation (the step contract).

``handle(event)`` checks the guard, runs the environment part of the event on the simulated ZooKeeper (and
config), then the controller part on the active ``KafkaController`` (docs/contracts.md table), and returns the
canonical post-state with every request sent and every failure logged during the event.

Exception handling around the controller part follows Kafka's event loop (§7 preamble): a
``ControllerMovedException`` logs ``Controller moved to another broker when processing <event>.`` and the
controller resigns (ZooKeeper keeps what was written); any other modelled exception logs
``Error processing event <event>`` and the rest of the event is dropped. During failover (§7.1 step 3) any
other exception triggers a controller move (resign and delete ``/controller``, fenced in 2.8).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.controller import KafkaController
from kcspec.reference_impl.errors import ControllerMovedException, EventNotEnabled, KafkaThrowable
from kcspec.reference_impl.event_manager import (
    ApiPartitionReassignmentEvent,
    ControlledShutdownEvent,
    ControllerEventManager,
    ListPartitionReassignmentsEvent,
    QueuedEvent,
    ReplicaLeaderElectionEvent,
)
from kcspec.reference_impl.guards import event_enabled
from kcspec.reference_impl.logs import DEFAULT_START, ControllerLog
from kcspec.reference_impl.records import cluster_state, step_result
from kcspec.reference_impl.snapshot import from_canonical, to_canonical
from kcspec.reference_impl.version import (
    KAFKA_2_1,
    KAFKA_2_2,
    KAFKA_2_4,
    KAFKA_2_6,
    is_alter_isr_enabled,
    uses_topic_id,
    version_for_profile,
)
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.events import (
    ApiPartitionReassignment,
    ApiPartitionReassignmentQueued,
    AutoPreferredReplicaLeaderElection,
    BrokerBounce,
    BrokerChange,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControlledShutdownQueued,
    ControllerChange,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrPartitionResultsReceived,
    LeaderAndIsrResponseReceived,
    ListPartitionReassignmentsQueued,
    LogDirEventNotification,
    NewerControllerElected,
    PartitionExpansion,
    QueuedEventProcessed,
    ReplicaLeaderElection,
    ReplicaLeaderElectionQueued,
    StaleAlterIsrReceived,
    StopReplicaPartitionErrorsReceived,
    StopReplicaResponseReceived,
    StopReplicaResponseWithoutDeletionReceived,
    TopicCreation,
    TopicDeletion,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    WHOLE_REQUEST,
    ControllerMetrics,
    ElectionAnswer,
    Request,
    StateChangeFailure,
    StepResult,
)
from kcspec.spec.state import ClusterState, ZkState
from kcspec.spec.state import ControllerContext as CanonicalContext
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ApiError,
    ElectionTrigger,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    QueuedElection,
    QueuedKind,
    ReplicaAssignment,
    TopicPartition,
)

_NOT_BEHIND_THE_QUEUE: frozenset[type[ControllerEvent]] = frozenset(
    {
        ControllerResignation,
        NewerControllerElected,
        ZombieControllerWrite,
        ZkFaultInjection,
        StopReplicaResponseWithoutDeletionReceived,
    }
)
"""Events that do not wait behind the queued requests: ``Expire`` (put with ``clearAndPut``), changes made in
ZooKeeper alone, and a StopReplica response that asked no deletion (its callback keeps only ``deletePartition``
partitions, so it puts no event in the queue, §3.4): no controller event is queued for them."""

_KEEP_CONTEXT_MAX = 4096
"""Contexts of at most this many partitions are kept for reloading (``ReferenceController._context_of``)."""

EVENT_NAMES = {
    BrokerStartup: "BrokerChange",
    BrokerFailure: "BrokerChange",
    BrokerBounce: "BrokerChange",
    BrokerChange: "BrokerChange",
    LogDirEventNotification: "LogDirEventNotification",
    TopicCreation: "TopicChange",
    PartitionExpansion: "PartitionModifications",
    TopicDeletion: "TopicDeletion",
    StopReplicaResponseReceived: "TopicDeletionStopReplicaResponseReceived",
    StopReplicaPartitionErrorsReceived: "TopicDeletionStopReplicaResponseReceived",
    StopReplicaResponseWithoutDeletionReceived: "TopicDeletionStopReplicaResponseReceived",
    ControlledShutdown: "ControlledShutdown",
    ReplicaLeaderElection: "ReplicaLeaderElection",
    AutoPreferredReplicaLeaderElection: "AutoPreferredReplicaLeaderElection",
    LeaderAndIsrResponseReceived: "LeaderAndIsrResponseReceived",
    LeaderAndIsrPartitionResultsReceived: "LeaderAndIsrResponseReceived",
    UncleanLeaderElectionEnable: "UncleanLeaderElectionEnable",
    ApiPartitionReassignment: "ApiPartitionReassignment",
    ZkPartitionReassignment: "ZkPartitionReassignment",
    IsrChange: "AlterIsrReceived",
    StaleAlterIsrReceived: "AlterIsrReceived",
}


class ReferenceController:
    """An imperative Kafka controller (profile ``kafka-2.8`` or ``kafka-1.1``) over a simulated ZooKeeper."""

    def __init__(
        self,
        profile: str = "kafka-2.8",
        state: ClusterState | None = None,
        *,
        trace: bool = False,
        log_start: datetime = DEFAULT_START,
    ) -> None:
        self.profile = profile
        self.version = version_for_profile(profile)
        self.log = ControllerLog(trace=trace, start=log_start)
        self.state_change_log: list[str] = self.log.state_change
        self.controller_log: list[str] = self.log.controller
        self._sent: list[Request] = []
        self._failures: list[StateChangeFailure] = []
        self._answers: list[ElectionAnswer] = []
        self.event_manager = ControllerEventManager()
        """The broker's event queue: it outlives the controller incarnations (``event_manager.py``)."""
        self._idle: dict[int, KafkaController] = {}
        """Incarnations built by ``load``, by controller id, to be reused by later loads (see ``load``)."""
        self._kept_context: tuple[CanonicalContext, ControllerContext] | None = None
        """The canonical context last loaded and, untouched, the context built for it (see ``_context_of``)."""
        self._kept_zookeeper: tuple[ZkState, SimulatedZooKeeper] | None = None
        """The ZooKeeper state last loaded and, untouched, the tree built for it (see ``_zookeeper_of``)."""
        self.load(state if state is not None else ClusterState())

    # ------------------------------------------------------------------------------------ state

    def load(self, state: ClusterState) -> None:
        """Adopt ``state``: the simulated ZooKeeper, the config and the active controller's context.

        Where speed bent the shape: Kafka builds a controller incarnation (state machines, request batches,
        managers) once per election; the explorer loads a state for every transition it checks, and building an
        incarnation was a third of a load. So an incarnation that ``load`` built is kept per controller id and a
        later load of the same controller id hands it the new ZooKeeper, config and context
        (``KafkaController.adopt``) instead of building another. Between events an incarnation holds nothing
        but those (its batches are emptied on adoption), so the two are indistinguishable. Incarnations made by
        events (failover, resignation) are not kept: they are built as Kafka builds them. A subclass or a patch
        of ``_incarnation`` turns the reuse off (every load calls it, as before)."""
        self.zk = self._zookeeper_of(state.zk)
        self.config = state.config
        self.event_manager = ControllerEventManager()
        for queued in state.controller.queued_elections:
            if queued.kind is QueuedKind.ControlledShutdown:
                self.event_manager.put(self._shutdown_event(queued.broker_id, queued.broker_epoch))
            elif queued.kind is QueuedKind.ApiPartitionReassignment:
                targets: dict[TopicPartition, tuple[int, ...] | None] = dict(queued.targets)
                targets.update(dict.fromkeys(queued.cancels))
                self.event_manager.put(ApiPartitionReassignmentEvent(targets, self._answer))
            elif queued.kind is QueuedKind.ListPartitionReassignments:
                self.event_manager.put(self._list_event(queued.partitions or None))
            else:
                self.event_manager.put(
                    ReplicaLeaderElectionEvent(queued.partitions, queued.election_type, self._answer)
                )
        ctx = self._context_of(state.controller)
        if type(self)._incarnation is not _INCARNATION:
            self.kc = self._incarnation(ctx.controller_id, ctx)
            return
        kc = self._idle.get(ctx.controller_id)
        if kc is None:
            kc = self._idle[ctx.controller_id] = self._incarnation(ctx.controller_id, ctx)
        else:
            kc.adopt(self.zk, self.config, ctx)
        self.kc = kc

    def _zookeeper_of(self, zk: ZkState) -> SimulatedZooKeeper:
        """``SimulatedZooKeeper(zk)``. Where speed bent the shape (as ``_context_of``): the tree built for the ZooKeeper
        state last loaded is kept, while small, and a later load of that same object gets a copy of it."""
        kept = self._kept_zookeeper
        if kept is not None and kept[0] is zk:
            return kept[1].copy()
        tree = SimulatedZooKeeper(zk, fencing=self.version >= KAFKA_2_1)
        if len(zk.assignments) <= _KEEP_CONTEXT_MAX:
            self._kept_zookeeper = (zk, tree.copy())
        else:
            self._kept_zookeeper = None
        return tree

    def _context_of(self, canonical: CanonicalContext) -> ControllerContext:
        """``from_canonical(canonical)``. Where speed bent the shape (not Kafka: the explorer loads one state once
        per event it checks there): the context built for the canonical context last loaded is kept, while small,
        and a later load of that same object gets a copy of it (C-level copies of its maps and sets instead of
        rebuilding them entry by entry)."""
        kept = self._kept_context
        if kept is not None and kept[0] is canonical:
            return kept[1].copy()
        ctx = from_canonical(canonical)
        if len(canonical.assignments) <= _KEEP_CONTEXT_MAX:
            self._kept_context = (canonical, ctx.copy())
        else:
            self._kept_context = None
        return ctx

    def snapshot(self) -> ClusterState:
        controller = to_canonical(self.kc.ctx)
        if self.event_manager.queue:
            controller = replace(
                controller,
                queued_elections=tuple(_queued_record(e) for e in self.event_manager.queue),
            )
        return cluster_state(self.zk.snapshot(), controller, self.config)

    def _answer(self, position: int, results: dict[TopicPartition, ApiError | int]) -> None:
        """A callback's answer, kept as the step's ``answers``."""
        for tp, result in results.items():
            if isinstance(result, ApiError):
                self._answers.append(ElectionAnswer(position, tp, result, NO_LEADER))
            else:
                self._answers.append(ElectionAnswer(position, tp, ApiError.NONE, result))

    def _list_event(self, partitions: frozenset[TopicPartition] | None) -> ListPartitionReassignmentsEvent:
        def answer(position: int, result: dict[TopicPartition, ReplicaAssignment] | ApiError) -> None:
            """The listing's callback: ``Right(error)`` for the whole request, or ``Left(reassignments)``: the
            request answered NONE and each listed partition with its assignment (``requests.WHOLE_REQUEST``)."""
            if isinstance(result, ApiError):
                self._answers.append(ElectionAnswer(position, WHOLE_REQUEST, result, NO_LEADER))
                return
            self._answers.append(ElectionAnswer(position, WHOLE_REQUEST, ApiError.NONE, NO_LEADER))
            self._answers.extend(
                ElectionAnswer(position, tp, ApiError.NONE, NO_LEADER, assignment=fa)
                for tp, fa in result.items()
            )

        return ListPartitionReassignmentsEvent(partitions, answer)

    def _shutdown_event(self, broker: int, broker_epoch: int) -> ControlledShutdownEvent:
        def answer(position: int, result: set[TopicPartition] | str) -> None:
            """``controlledShutdownCallback``: ``Success(partitions still led)`` or ``Failure(e)``, written as the
            spec's answers are (``requests.WHOLE_REQUEST``)."""
            if isinstance(result, str):
                error = (
                    ApiError.NOT_CONTROLLER
                    if result == "ControllerMovedException"
                    else ApiError.UNKNOWN_SERVER_ERROR
                )
                self._answers.append(ElectionAnswer(position, WHOLE_REQUEST, error, NO_LEADER, result))
                return
            self._answers.append(ElectionAnswer(position, WHOLE_REQUEST, ApiError.NONE, NO_LEADER))
            self._answers.extend(ElectionAnswer(position, tp, ApiError.NONE, broker) for tp in result)

        return ControlledShutdownEvent(broker, broker_epoch, answer)

    def metrics(self) -> ControllerMetrics:
        """The gauges ``OfflinePartitionsCount`` and ``PreferredReplicaImbalanceCount`` now (§3.1): 2.6+ the
        counters the context keeps (KAFKA-10040); before, ``KafkaController.updateMetrics`` recomputes both after
        every event (1.1.1: offline = cached leader not live-or-shutting-down, imbalance = cached leader not the
        head of the assignment, topics queued for deletion left out, 0 when not active)."""
        ctx = self.kc.ctx
        if self.version >= KAFKA_2_6:
            return ControllerMetrics(ctx.offline_partition_count, ctx.preferred_replica_imbalance_count)
        if ctx.controller_id == -1:
            return ControllerMetrics(0, 0)
        live = ctx.live_broker_epochs
        deleting = ctx.topics_to_be_deleted
        offline = sum(
            1
            for tp, li in ctx.leadership.items()
            if li.leader_and_isr.leader not in live and tp.topic not in deleting
        )
        imbalance = 0
        for tp, fa in ctx.assignments.items():
            li = ctx.leadership.get(tp)
            if li is not None and fa.replicas and li.leader_and_isr.leader != fa.replicas[0]:
                imbalance += tp.topic not in deleting
        return ControllerMetrics(offline, imbalance)

    def _incarnation(self, controller_id: int, ctx: object = None) -> KafkaController:
        return KafkaController(
            self.zk,
            self.config,
            self.version,
            self.log,
            self._sent,
            self._failures,
            controller_id,
            ctx if isinstance(ctx, ControllerContext) else None,
        )

    # ------------------------------------------------------------------------------------ step contract

    def enabled(self, event: ControllerEvent) -> bool:
        """The event's guard (``guards.py``), and the event queue's: an event the controller processes waits
        behind the queued requests, unless it is put with ``clearAndPut`` (``Expire``) or is no controller event
        (a change in ZooKeeper only)."""
        kind = type(event)
        queued = len(self.event_manager)
        if kind in _PUT_IN_THE_QUEUE:
            if not (
                self.kc.active and self.version >= KAFKA_2_4 and queued < self.config.max_queued_requests
            ):
                return False
            if isinstance(event, ReplicaLeaderElectionQueued):
                return bool(event.partitions)
            if isinstance(event, ControlledShutdownQueued):
                return event.broker_id in self.zk.brokers
            if isinstance(event, ListPartitionReassignmentsQueued):
                return True
            assert isinstance(event, ApiPartitionReassignmentQueued)
            return bool(event.targets)
        if kind is QueuedEventProcessed:
            return self.kc.active and queued > 0
        if queued and kind not in _NOT_BEHIND_THE_QUEUE:
            return False
        return event_enabled(self.zk, self.kc.ctx, self.config, event, self.version)

    def handle(
        self, event: ControllerEvent, *, guard_checked: bool = False, sent: list[Request] | None = None
    ) -> StepResult:
        """One step: guard, environment part, controller part; the canonical post-state and what was sent.
        ``guard_checked``: the caller has just found ``enabled(event)`` true in this state (not asked again).
        ``sent``: a list that receives the requests in the order they were sent (§3.4 ``sendRequestsToBrokers``:
        each batch's LeaderAndIsr, UpdateMetadata and StopReplica requests, batch after batch)."""
        requests, failures = self.run(event, guard_checked=guard_checked, sent=sent)
        answers = frozenset(self._answers)
        self._answers.clear()
        return step_result(self.snapshot(), requests, failures, answers)

    def run(
        self, event: ControllerEvent, *, guard_checked: bool = False, sent: list[Request] | None = None
    ) -> tuple[frozenset[Request], frozenset[StateChangeFailure]]:
        """``handle`` without building the post-state snapshot (for bulk runs and benchmarks)."""
        if not guard_checked and not self.enabled(event):
            raise EventNotEnabled(f"{event.kind} is not enabled in this state ({event.section}): {event!r}")
        self._sent.clear()
        self._failures.clear()
        self._answers.clear()
        collecting = gc.isenabled()
        gc.disable()  # one event allocates no garbage cycles worth scanning a million-partition heap for
        try:
            self.zk.deleted_topic_configs.clear()
            self._dispatch(event)
            self._forget_configs_of_deleted_topics()
            requests, failures = frozenset(self._sent), frozenset(self._failures)
            if sent is not None:
                sent.extend(self._sent)
            # the caller owns them now: the controller keeps no reference (no memory pinned until the next event)
            self._sent.clear()
            self._failures.clear()
            return requests, failures
        finally:
            if collecting:
                gc.enable()

    # ------------------------------------------------------------------------------------ helpers

    def _forget_configs_of_deleted_topics(self) -> None:
        """``completeDeleteTopic`` deletes ``/config/topics/<t>`` with the topic (§8, both versions), also for a topic
        that was queued for deletion without existing (its replicas are vacuously all deleted): the topic loses its
        ``unclean.leader.election.enable`` override. The KAFKA-6612 restore, which can leave a deleting topic
        without partitions, deletes no config. (Topic configs live beside the simulated ZooKeeper here, so the
        deletion is mirrored after the event.)"""
        gone = self.zk.deleted_topic_configs & self.config.unclean_topics
        self.zk.deleted_topic_configs.clear()
        if gone:
            self.config = replace(self.config, unclean_topics=self.config.unclean_topics - gone)
            self.kc.set_config(self.config)

    def _resign(self) -> None:
        """``onControllerResignation`` (§7.12): the context is reset."""
        if self.kc.active:
            self.kc.logger.info("Resigned")
        self.kc = self._new_incarnation(-1)

    def _new_incarnation(self, controller_id: int) -> KafkaController:
        """A new incarnation for ``controller_id`` with an empty context, as an election or a resignation makes.

        Where speed bent the shape (not Kafka: the explorer fails over or resigns on about one transition in six,
        and building an incarnation cost about 10 us): an incarnation that ``load`` kept for this controller id
        adopts an empty context instead of another being built, unless it is the one in use. Adoption leaves it
        holding nothing but the ZooKeeper, the config and that context (see ``load``), as a new one would. A
        subclass or a patch of ``_incarnation`` turns the reuse off."""
        if type(self)._incarnation is not _INCARNATION:
            return self._incarnation(controller_id)
        kc = self._idle.get(controller_id)
        if kc is None or kc is self.kc:
            return self._incarnation(controller_id)
        ctx = ControllerContext()
        ctx.controller_id = controller_id
        kc.adopt(self.zk, self.config, ctx)
        return kc

    def _trigger_controller_move(self) -> None:
        """``triggerControllerMove``: resign, then delete ``/controller`` (2.8: fenced by the epoch zk version)."""
        expected = self.kc.ctx.epoch_zk_version
        self._resign()
        try:
            self.zk.delete_controller(expected if self.version >= KAFKA_2_1 else None)
        except ControllerMovedException:
            self.kc.logger.warn("Controller has already moved when trying to trigger controller movement")

    def _run(self, name: str, body: Callable[[], None]) -> None:
        """Kafka's event loop around one controller event (§7 preamble)."""
        if not self.kc.active:
            return
        try:
            body()
        except ControllerMovedException:
            self.kc.logger.info(f"Controller moved to another broker when processing {name}.")
            self._resign()
        except KafkaThrowable as e:
            self.kc.logger.error(f"Error processing event {name}", e)

    # ------------------------------------------------------------------------------------ dispatch

    def _dispatch(self, event: ControllerEvent) -> None:
        """The environment part and the controller part of ``event``: the handler of its exact type in
        ``_HANDLERS`` (not a chain of ``isinstance`` tests, for speed; a subclass's by ``isinstance`` in the table's
        order); an event of no known type does nothing."""
        handler = _HANDLERS.get(type(event))
        if handler is None:
            for kind, candidate in _HANDLERS.items():
                if isinstance(event, kind):
                    handler = candidate
                    break
            else:
                return
        handler(self, event, self.zk, self.kc, EVENT_NAMES.get(type(event), type(event).__name__))

    def _on_controller_failover(
        self, event: ControllerFailover, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._failover(event.broker_id)

    def _on_controller_resignation(
        self, event: ControllerResignation, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.controller = -1
        self.event_manager.clear_and_put()  # Expire is put with clearAndPut: the queued requests are preempted
        self._resign()

    def _on_replica_leader_election_queued(
        self, event: ReplicaLeaderElectionQueued, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self.event_manager.put(
            ReplicaLeaderElectionEvent(event.partitions, event.election_type, self._answer)
        )

    def _on_controlled_shutdown_queued(
        self, event: ControlledShutdownQueued, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self.event_manager.put(self._shutdown_event(event.broker_id, event.broker_epoch))

    def _on_api_partition_reassignment_queued(
        self, event: ApiPartitionReassignmentQueued, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self.event_manager.put(ApiPartitionReassignmentEvent(dict(event.targets), self._answer))

    def _on_list_partition_reassignments_queued(
        self, event: ListPartitionReassignmentsQueued, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        # no partition asked: Kafka's None
        self.event_manager.put(self._list_event(event.partitions or None))

    def _on_queued_event_processed(
        self, event: QueuedEventProcessed, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        """The event thread takes the oldest event and processes it; a resignation while processing it leaves
        the controller inactive, and the events behind are processed in turn before anything else can happen
        (they are ahead of every later event): each answers NOT_CONTROLLER (§7.9)."""
        head = self.event_manager.take()
        self._process_queued(head, 0)
        position = 0
        while self.event_manager.queue and not self.kc.active:
            self._process_queued(self.event_manager.take(), position)
            position += 1

    def _process_queued(self, event: QueuedEvent, position: int) -> None:
        kc = self.kc
        if isinstance(event, ControlledShutdownEvent):
            self._process_controlled_shutdown(event, position)
            return
        if isinstance(event, ApiPartitionReassignmentEvent):
            self._process_api_partition_reassignment(event, position)
            return
        if isinstance(event, ListPartitionReassignmentsEvent):
            # processListPartitionReassignments: not active → Right(ApiError(NOT_CONTROLLER)); reads only
            if not kc.active:
                event.preempt(position)
            else:
                event.answer(position, kc.process_list_partition_reassignments(event.partitions))
            return

        def callback(results: dict[TopicPartition, ApiError | int]) -> None:
            event.answer(position, results)

        if not kc.active:
            kc.process_replica_leader_election(
                event.partitions, event.election_type, ElectionTrigger.AdminClientTriggered, callback
            )
            return
        self._run(
            "ReplicaLeaderElection",
            lambda: kc.process_replica_leader_election(
                event.partitions, event.election_type, ElectionTrigger.AdminClientTriggered, callback
            ),
        )

    def _process_controlled_shutdown(self, event: ControlledShutdownEvent, position: int) -> None:
        """``processControlledShutdown``: ``Try(doControlledShutdown(id, brokerEpoch))`` given to the callback
        (§7.10); not active → ControllerMovedException (step 1). A ControllerMovedException raised by the state
        changes is answered and rethrown: the event loop resigns, as for the unqueued event."""
        kc = self.kc
        if not kc.active:
            event.answer(position, "ControllerMovedException")
            return
        results: list[set[TopicPartition] | str] = []

        def body() -> None:
            try:
                results.append(kc.do_controlled_shutdown(event.broker_id, event.broker_epoch))
            except ControllerMovedException:
                results.append("ControllerMovedException")
                raise
            except KafkaThrowable as e:
                results.append(type(e).__name__)

        self._run("ControlledShutdown", body)
        for result in results:
            event.answer(position, result)

    def _process_api_partition_reassignment(
        self, event: ApiPartitionReassignmentEvent, position: int
    ) -> None:
        """``processApiPartitionReassignment`` (§7.7.1): not active → ``Right(ApiError(NOT_CONTROLLER))``; else the
        results (``Left``). ControllerMovedException leaves before the callback: no answer."""
        kc = self.kc
        if not kc.active:
            event.preempt(position)
            return
        results: list[dict[TopicPartition, str]] = []
        self._run(
            "ApiPartitionReassignment",
            lambda: results.append(kc.process_api_partition_reassignment(event.targets)),
        )
        for result in results:
            event.answer(position, {tp: ApiError[error] for tp, error in result.items()})

    def _on_newer_controller_elected(
        self, event: NewerControllerElected, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.controller = event.broker_id
        zk.controller_epoch += 1
        zk.controller_epoch_zk_version += 1

    def _on_controller_change(
        self, event: ControllerChange, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._resign()

    def _on_zombie_controller_write(
        self, event: ZombieControllerWrite, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._zombie_write(event)

    def _on_broker_startup(
        self, event: BrokerStartup, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.brokers[event.broker_id] = zk.zxid
        zk.zxid += 1
        self._run(name, kc.process_broker_change)

    def _on_broker_failure(
        self, event: BrokerFailure, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        del zk.brokers[event.broker_id]
        if zk.controller == event.broker_id:
            zk.controller = -1
        if kc.active and kc.ctx.controller_id == event.broker_id:
            self.kc = self._new_incarnation(-1)
        else:
            self._run(name, kc.process_broker_change)

    def _on_broker_bounce(
        self, event: BrokerBounce, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.brokers[event.broker_id] = zk.zxid
        zk.zxid += 1
        if self.version >= KAFKA_2_2:
            self._run(name, kc.process_broker_change)

    def _on_broker_change(
        self, event: BrokerChange, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        for b in (*event.new_broker_ids, *event.bounced_broker_ids):
            zk.brokers[b] = zk.zxid
            zk.zxid += 1
        for b in event.dead_broker_ids:
            del zk.brokers[b]
            if zk.controller == b:
                zk.controller = -1
        self._run(name, kc.process_broker_change)

    def _on_log_dir_event_notification(
        self, event: LogDirEventNotification, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._run(name, lambda: kc.process_log_dir_event_notification(event.broker_ids))

    def _on_controlled_shutdown(
        self, event: ControlledShutdown, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._run(name, lambda: self._controlled_shutdown(event))

    def _on_topic_creation(
        self, event: TopicCreation, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.create_topic(
            event.topic,
            {
                TopicPartition(event.topic, i): ReplicaAssignment(replicas)
                for i, replicas in enumerate(event.replicas)
            },
            with_topic_id=uses_topic_id(self.version, self.config),
        )
        self._run(name, kc.process_topic_change)

    def _on_partition_expansion(
        self, event: PartitionExpansion, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        start = len(zk.partitions_by_topic[event.topic])
        for i in range(start, len(event.replicas)):
            zk.add_assignment(TopicPartition(event.topic, i), ReplicaAssignment(event.replicas[i]))
        self._run(name, lambda: kc.process_partition_modifications(event.topic))

    def _on_topic_deletion(
        self, event: TopicDeletion, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.delete_topics.update(event.topics)
        self._run(name, kc.process_topic_deletion)

    def _on_stop_replica_response_received(
        self, event: StopReplicaResponseReceived, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._run(
            name, lambda: kc.process_stop_replica_response(event.broker_id, event.partitions, event.error)
        )

    def _on_stop_replica_response_without_deletion_received(
        self,
        event: StopReplicaResponseWithoutDeletionReceived,
        zk: SimulatedZooKeeper,
        kc: KafkaController,
        name: str,
    ) -> None:
        # the channel manager's callback sees every partition of the response with its request's flag (§3.4)
        asked = dict.fromkeys(event.partitions, False)
        self._run(name, lambda: kc.stop_replica_response_callback(event.broker_id, asked, event.error))

    def _on_api_partition_reassignment(
        self, event: ApiPartitionReassignment, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        def body() -> None:
            kc.process_api_partition_reassignment(
                dict(event.targets)
            )  # no callback: its results are not kept

        self._run(name, body)

    def _on_zk_partition_reassignment(
        self, event: ZkPartitionReassignment, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.reassign_partitions = dict(event.targets)
        if self.version >= KAFKA_2_4:
            self._run(name, lambda: self._discard(kc.process_zk_partition_reassignment()))
        else:
            self._run("PartitionReassignment", kc.process_partition_reassignment_legacy)

    def _on_replica_leader_election(
        self, event: ReplicaLeaderElection, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._replica_leader_election(event)

    def _on_auto_preferred_replica_leader_election(
        self,
        event: AutoPreferredReplicaLeaderElection,
        zk: SimulatedZooKeeper,
        kc: KafkaController,
        name: str,
    ) -> None:
        self._run(name, kc.check_and_trigger_auto_leader_rebalance)

    def _on_isr_change(
        self, event: IsrChange, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._isr_change(event)

    def _on_leader_and_isr_response_received(
        self, event: LeaderAndIsrResponseReceived, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._run(name, lambda: kc.process_leader_and_isr_response(event.broker_id, event.storage_errors))

    def _on_unclean_leader_election_enable(
        self, event: UncleanLeaderElectionEnable, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        self._unclean_enable(event)

    def _on_zk_fault_injection(
        self, event: ZkFaultInjection, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        zk.faults[event.tp] = event.fault

    def _on_stop_replica_partition_errors_received(
        self,
        event: StopReplicaPartitionErrorsReceived,
        zk: SimulatedZooKeeper,
        kc: KafkaController,
        name: str,
    ) -> None:
        self._run(
            name,
            lambda: kc.process_stop_replica_partition_errors(
                event.broker_id, event.partitions, event.partition_errors
            ),
        )

    def _on_stale_alter_isr_received(
        self, event: StaleAlterIsrReceived, zk: SimulatedZooKeeper, kc: KafkaController, name: str
    ) -> None:
        proposed = LeaderAndIsr(event.broker_id, event.leader_epoch, event.isr, event.zk_version)
        self._run(
            name,
            lambda: kc.process_alter_isr(event.broker_id, event.broker_epoch, event.tp, proposed),
        )

    def _on_leader_and_isr_partition_results_received(
        self,
        event: LeaderAndIsrPartitionResultsReceived,
        zk: SimulatedZooKeeper,
        kc: KafkaController,
        name: str,
    ) -> None:
        self._run(
            name,
            lambda: kc.process_leader_and_isr_partition_results(
                event.broker_id, event.online, event.storage_errors
            ),
        )

    @staticmethod
    def _discard(_value: object) -> None:
        return None

    def _failover(self, broker: int) -> None:
        zk = self.zk
        if self.kc.active:
            self._resign()
        zk.controller = broker
        zk.controller_epoch += 1
        zk.controller_epoch_zk_version += 1
        self.kc = self._new_incarnation(broker)
        ctx = self.kc.ctx
        ctx.epoch = zk.controller_epoch
        ctx.epoch_zk_version = zk.controller_epoch_zk_version
        self.kc.log_elected()
        try:
            self.kc.on_controller_failover()
        except ControllerMovedException:
            self._resign()
        except KafkaThrowable as e:
            self.kc.logger.error(
                f"Error while electing or becoming controller on broker {broker}. Trigger controller movement "
                "immediately",
                e,
            )
            self._trigger_controller_move()

    def _zombie_write(self, event: ZombieControllerWrite) -> None:
        if self.version >= KAFKA_2_1:
            return
        old = self.zk.partition_states[event.tp].leader_and_isr
        self.zk.partition_states[event.tp] = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(event.leader, old.leader_epoch + 1, event.isr, old.zk_version + 1),
            event.controller_epoch,
        )

    def _controlled_shutdown(self, event: ControlledShutdown) -> None:
        try:
            self.kc.do_controlled_shutdown(event.broker_id, event.broker_epoch)
        except ControllerMovedException:
            raise
        except KafkaThrowable:
            return

    def _replica_leader_election(self, event: ReplicaLeaderElection) -> None:
        from kcspec.spec.vocabulary import ElectionTrigger

        kc = self.kc
        if event.trigger is ElectionTrigger.ZkTriggered:
            self.zk.preferred_replica_election = set(event.partitions)
            if self.version >= KAFKA_2_4:
                self._run(
                    "ReplicaLeaderElection",
                    lambda: kc.process_replica_leader_election(
                        event.partitions, event.election_type, event.trigger
                    ),
                )
            else:
                self._run(
                    "PreferredReplicaLeaderElection", kc.process_preferred_replica_leader_election_legacy
                )
        else:
            self._run(
                "ReplicaLeaderElection",
                lambda: kc.process_replica_leader_election(
                    event.partitions, event.election_type, event.trigger
                ),
            )

    def _isr_change(self, event: IsrChange) -> None:
        zk = self.zk
        kc = self.kc
        stored = zk.partition_states[event.tp]
        lai = stored.leader_and_isr
        if is_alter_isr_enabled(self.version, self.config):
            proposed = LeaderAndIsr(lai.leader, lai.leader_epoch, event.isr, lai.zk_version)
            self._run(
                "AlterIsrReceived",
                lambda: kc.process_alter_isr(lai.leader, zk.brokers[lai.leader], event.tp, proposed),
            )
            return
        zk.partition_states[event.tp] = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(lai.leader, lai.leader_epoch, event.isr, lai.zk_version + 1), stored.controller_epoch
        )
        zk.isr_change_notifications.add(event.tp)
        self._run("IsrChangeNotification", kc.process_isr_change_notification)
        if self.version >= KAFKA_2_4:
            # the data watch on the state znode of a partition being reassigned, registered while AlterIsr is off
            if event.tp in kc.ctx.partitions_being_reassigned:
                self._run("PartitionReassignmentIsrChange", lambda: kc.maybe_complete_reassignment(event.tp))
        elif event.tp in self.kc.ctx.legacy_reassignments:
            self._run(
                "PartitionReassignmentIsrChange",
                lambda: self.kc.process_partition_reassignment_isr_change_legacy(event.tp),
            )

    def _unclean_enable(self, event: UncleanLeaderElectionEnable) -> None:
        if event.topic == "":
            self.config = replace(self.config, unclean_leader_election_enable=True)
        else:
            self.config = replace(self.config, unclean_topics=self.config.unclean_topics | {event.topic})
        self.kc.set_config(self.config)
        if self.version < KAFKA_2_1:
            return
        kc = self.kc
        if event.topic == "":

            def body() -> None:
                kc.logger.info("Unclean leader election has been enabled by default")
                kc.partition_sm.trigger_online_partition_state_change()
        else:

            def body() -> None:
                kc.logger.info(f"Unclean leader election has been enabled for topic {event.topic}")
                kc.partition_sm.trigger_online_partition_state_change(event.topic)

        self._run("UncleanLeaderElectionEnable", body)


_PUT_IN_THE_QUEUE: frozenset[type[ControllerEvent]] = frozenset(
    {
        ReplicaLeaderElectionQueued,
        ControlledShutdownQueued,
        ApiPartitionReassignmentQueued,
        ListPartitionReassignmentsQueued,
    }
)
"""The events that put a request in the event queue (``ControllerEventManager.put``): enabled while a controller
is active (2.4+, KIP-460) and fewer than ``config.max_queued_requests`` wait, if the request itself is."""

_INCARNATION = ReferenceController._incarnation
"""The unpatched ``_incarnation``: ``load`` reuses incarnations only while it is the one in use."""


_HANDLERS: dict[
    type[ControllerEvent],
    Callable[[ReferenceController, Any, SimulatedZooKeeper, KafkaController, str], None],
] = {
    ControllerFailover: ReferenceController._on_controller_failover,
    ControllerResignation: ReferenceController._on_controller_resignation,
    NewerControllerElected: ReferenceController._on_newer_controller_elected,
    ControllerChange: ReferenceController._on_controller_change,
    ZombieControllerWrite: ReferenceController._on_zombie_controller_write,
    BrokerStartup: ReferenceController._on_broker_startup,
    BrokerFailure: ReferenceController._on_broker_failure,
    BrokerBounce: ReferenceController._on_broker_bounce,
    BrokerChange: ReferenceController._on_broker_change,
    LogDirEventNotification: ReferenceController._on_log_dir_event_notification,
    ControlledShutdown: ReferenceController._on_controlled_shutdown,
    TopicCreation: ReferenceController._on_topic_creation,
    PartitionExpansion: ReferenceController._on_partition_expansion,
    TopicDeletion: ReferenceController._on_topic_deletion,
    StopReplicaResponseReceived: ReferenceController._on_stop_replica_response_received,
    ApiPartitionReassignment: ReferenceController._on_api_partition_reassignment,
    ZkPartitionReassignment: ReferenceController._on_zk_partition_reassignment,
    ReplicaLeaderElection: ReferenceController._on_replica_leader_election,
    AutoPreferredReplicaLeaderElection: ReferenceController._on_auto_preferred_replica_leader_election,
    IsrChange: ReferenceController._on_isr_change,
    LeaderAndIsrResponseReceived: ReferenceController._on_leader_and_isr_response_received,
    UncleanLeaderElectionEnable: ReferenceController._on_unclean_leader_election_enable,
    ZkFaultInjection: ReferenceController._on_zk_fault_injection,
    StopReplicaPartitionErrorsReceived: ReferenceController._on_stop_replica_partition_errors_received,
    StaleAlterIsrReceived: ReferenceController._on_stale_alter_isr_received,
    LeaderAndIsrPartitionResultsReceived: ReferenceController._on_leader_and_isr_partition_results_received,
    StopReplicaResponseWithoutDeletionReceived: (
        ReferenceController._on_stop_replica_response_without_deletion_received
    ),
    ReplicaLeaderElectionQueued: ReferenceController._on_replica_leader_election_queued,
    ControlledShutdownQueued: ReferenceController._on_controlled_shutdown_queued,
    ApiPartitionReassignmentQueued: ReferenceController._on_api_partition_reassignment_queued,
    ListPartitionReassignmentsQueued: ReferenceController._on_list_partition_reassignments_queued,
    QueuedEventProcessed: ReferenceController._on_queued_event_processed,
}
"""Each event type's handler, in the order they were once tested one by one with ``isinstance``."""


def _queued_record(event: QueuedEvent) -> QueuedElection:
    """The canonical record of a queued event (``QueuedElection``)."""
    if isinstance(event, ControlledShutdownEvent):
        return QueuedElection(
            frozenset(),
            kind=QueuedKind.ControlledShutdown,
            broker_id=event.broker_id,
            broker_epoch=event.broker_epoch,
        )
    if isinstance(event, ApiPartitionReassignmentEvent):
        return QueuedElection(
            frozenset(),
            kind=QueuedKind.ApiPartitionReassignment,
            targets=FMap({tp: t for tp, t in event.targets.items() if t is not None}),
            cancels=frozenset(tp for tp, t in event.targets.items() if t is None),
        )
    if isinstance(event, ListPartitionReassignmentsEvent):
        return QueuedElection(event.partitions or frozenset(), kind=QueuedKind.ListPartitionReassignments)
    return QueuedElection(event.partitions, event.election_type)
