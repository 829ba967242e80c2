"""The controller's event queue (``ControllerEventManager``, §7.7.1, §7.9, §7.10, §7.12): admin elections,
controlled shutdowns, admin reassignments and reassignment listings that wait while the event thread is busy,
processed one at a time, preempted on resignation.

Kafka puts every controller event in one queue and processes them one by one. The model's other events arrive on an
empty queue and are processed at once; only requests that carry a callback answering a client are queued here, and
the admin election (``ReplicaLeaderElection(partitions, type, AdminClientTriggered, callback)``), the controlled
shutdown (``ControlledShutdown(id, brokerEpoch, callback)``) and the admin reassignment
(``ApiPartitionReassignment(reassignments, callback)``) and the listing of reassignments
(``ListPartitionReassignments(partitionsOpt, callback)``, read-only), in one first-in-first-out queue (a controlled
shutdown queued after an election is answered after it).

* ``ReplicaLeaderElectionQueued``, ``ControlledShutdownQueued``, ``ApiPartitionReassignmentQueued`` and
  ``ListPartitionReassignmentsQueued`` put a request in ``controller.queued_elections`` (at most ``config.max_queued_requests``; 0 by default, so that a model without
  the bound has the states it had).
* While a request waits, every event with a controller part waits behind it (``common.nothing_queued``: Kafka's
  queue is first in, first out), except ``ControllerResignation``: ``Expire`` and controller shutdown are put with
  ``clearAndPut``, which preempts what is queued. Environment-only changes (a newer controller elected, a zombie
  write, an armed fault) are no events of this queue and happen at any time.
* ``QueuedEventProcessed`` processes the oldest request exactly as a ``ReplicaLeaderElection`` event is processed
  (``elections.process_replica_leader_election``), a ``ControlledShutdown`` (``shutdown.do_controlled_shutdown``),
  an ``ApiPartitionReassignment`` (``reassignment_kip455.process_api_partition_reassignment``) or a
  ``ListPartitionReassignments`` (which changes nothing), and answers its callback (``election_answers``,
  ``shutdown_answers``, ``reassignment_answers``, ``list_reassignments_answers``).
* Every resignation answers each queued request (``common.resign``): preempted (``clearAndPut``) or processed while
  the controller is not active (§7.9 "not active → every requested partition NOT_CONTROLLER", §7.10 step 1
  ControllerMovedException, §7.7.1 NOT_CONTROLLER for the whole reassignment or listing).

Answers are output of the step (``Work.answers``, ``StepResult.answers``), not state.

Decision (one record shape): a queue of one record shape, folded over as a TLA+ sequence, fits every backend, so a
queued request is a ``QueuedElection`` with a ``kind`` and the union of the kinds' fields; an answer keeps the
``ElectionAnswer`` shape, a controlled shutdown's ``Success``/``Failure`` written with ``requests.WHOLE_REQUEST``
and ``exception``, a reassignment's or listing's top-level NOT_CONTROLLER with ``requests.WHOLE_REQUEST`` too, a
listed reassignment in the answer's ``assignment``. Z3's induction
leaves the queue's events out (its states keep the bound at 0, ``model/z3/induction_actions.py``); the explorer's
TLA+-model mode and TLC explore them on the manifest model ``one-broker-queue-2.8`` (bound 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.spec import context
from kcspec.spec.actions import common, elections, reassignment_kip455, shutdown
from kcspec.spec.events import (
    ApiPartitionReassignmentQueued,
    ControlledShutdownQueued,
    ControllerEvent,
    ListPartitionReassignmentsQueued,
    QueuedEventProcessed,
    ReplicaLeaderElectionQueued,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Action, Block, Expr, and_, build_map, cond, if_, lift, rec, rule, set_of
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import MACHINE_PARTITION, FailureReason
from kcspec.spec.vocabulary import (
    NO_LEADER,
    UNKNOWN_BROKER_EPOCH,
    ApiError,
    ElectionTrigger,
    ElectionType,
    QueuedElection,
    QueuedKind,
)


@dataclass(frozen=True)
class Dequeued:
    """Accumulator of the fold that removes the head of the queue: whether the head was passed, and the rest."""

    passed_head: bool
    rest: tuple[QueuedElection, ...]


def queue_of(s: Expr) -> Expr:
    """``controller.queued_elections`` of a ``ClusterState``."""
    return s.f("controller", "queued_elections")


def without_head(queue: Expr) -> Expr:
    """The queue without its oldest request (``queue.take()``)."""
    return queue.fold(
        rec(Dequeued, passed_head=False, rest=()),
        lambda acc, q: rec(
            Dequeued,
            passed_head=True,
            rest=if_(acc.f("passed_head"), acc.f("rest").append(q), acc.f("rest")),
        ),
    ).f("rest")


def put_action(event: type[ControllerEvent], description: str, accepted: Expr, **fields: object) -> Action:
    """The action of an event that puts a request in the queue (``ControllerEventManager.put``, §7.12): enabled
    while a controller is active, the request is ``accepted`` and fewer than ``config.max_queued_requests`` wait; the
    request is a ``QueuedElection`` with ``fields`` and the other fields' defaults (its one record shape)."""
    s = common.S
    record = dict(
        partitions=frozenset(),
        election_type=ElectionType.PREFERRED,
        broker_id=-1,
        broker_epoch=-1,
        targets=FMap(),
        cancels=frozenset(),
    )
    record.update(fields)
    put = common.set_ctx(
        common.start_work(s), queued_elections=queue_of(s).append(rec(QueuedElection, **record))
    )
    return common.event_action(
        event,
        description,
        guard=and_(common.active(s), accepted, queue_of(s).size().lt(s.f("config", "max_queued_requests"))),
        effect=rule("ControllerEventManager.put", "§7.12", put),
    )


def replica_leader_election_queued_action(p: Profile) -> Action:
    """``ReplicaLeaderElectionQueued(P, type)``: ``ControllerEventManager.put`` of an admin election (§7.9)."""
    v = common.param_vars(ReplicaLeaderElectionQueued)
    ps = v["partitions"]
    return put_action(
        ReplicaLeaderElectionQueued,
        "An admin client's leader election waits in the controller's event queue (§7.9, §7.12).",
        ps.non_empty(),
        kind=QueuedKind.ReplicaLeaderElection,
        partitions=ps,
        election_type=v["election_type"],
    )


def controlled_shutdown_queued_action(p: Profile) -> Action:
    """``ControlledShutdownQueued(b, epoch)``: ``ControllerEventManager.put`` of a controlled shutdown (§7.10)."""
    v = common.param_vars(ControlledShutdownQueued)
    b = v["broker_id"]
    return put_action(
        ControlledShutdownQueued,
        "A broker's controlled shutdown waits in the controller's event queue (§7.10, §7.12).",
        common.S.f("zk", "brokers").has(b),
        kind=QueuedKind.ControlledShutdown,
        broker_id=b,
        broker_epoch=v["broker_epoch"],
    )


def api_partition_reassignment_queued_action(p: Profile) -> Action:
    """``ApiPartitionReassignmentQueued(M)``: ``ControllerEventManager.put`` of an admin reassignment (§7.7.1); the
    targets are kept as the target lists and the cancelled partitions (``QueuedElection``)."""
    targets = common.param_vars(ApiPartitionReassignmentQueued)["targets"]
    cancels = targets.keys().filter(lambda tp: targets.get(tp).eq(None))
    return put_action(
        ApiPartitionReassignmentQueued,
        "An admin client's partition reassignment waits in the controller's event queue (§7.7.1, §7.12).",
        targets.non_empty(),
        kind=QueuedKind.ApiPartitionReassignment,
        targets=build_map(targets.keys().minus(cancels), lambda tp: targets.get(tp)),
        cancels=cancels,
    )


def list_partition_reassignments_queued_action(p: Profile) -> Action:
    """``ListPartitionReassignmentsQueued(P)``: ``ControllerEventManager.put`` of a reassignment listing (§7.7.1); no
    partition asked stands for Kafka's ``None``."""
    return put_action(
        ListPartitionReassignmentsQueued,
        "An admin client's listing of the ongoing partition reassignments waits in the controller's event queue "
        "(§7.7.1, §7.12).",
        lift(True),
        kind=QueuedKind.ListPartitionReassignments,
        partitions=common.param_vars(ListPartitionReassignmentsQueued)["partitions"],
    )


def list_reassignments_answers(s: Expr, asked: Expr) -> Expr:
    """The callback's answer of ``processListPartitionReassignments`` (§7.7.1) by an active controller, as request 0
    of the step: ``Left(results)``, the full replica assignment of every partition asked (none asked: every
    partition of ``partitionsBeingReassigned``) whose assignment is being reassigned — one answer per partition with
    its ``assignment`` — and the request answered NONE (``WHOLE_REQUEST``: an empty map told from no answer).
    ``s`` is the state the request was processed in; the listing changes nothing."""
    b = Block()
    b.listed = if_(asked.is_empty(), s.f("controller", "partitions_being_reassigned"), asked)
    ongoing = b.listed.filter(lambda tp: reassignment_kip455.being_reassigned(context.assignment(s, tp)))
    listed = ongoing.map(
        lambda tp: common.partition_answer(0, tp, ApiError.NONE, NO_LEADER, context.assignment(s, tp))
    )
    whole = common.whole_request_answer(0, ApiError.NONE, "")
    return rule("processListPartitionReassignments", "§7.7.1", b.in_(set_of(whole).union(listed)))


def reassignment_targets(head: Expr) -> Expr:
    """The ``ApiPartitionReassignment`` map of a queued reassignment: every target list, and ``None`` for every
    cancelled partition."""
    given, cancels = head.f("targets"), head.f("cancels")
    return build_map(given.keys().union(cancels), lambda tp: if_(cancels.contains(tp), None, given.get(tp)))


def reassignment_answers(s: Expr, targets: Expr, triggered: Expr) -> Expr:
    """The callback's answer of ``processApiPartitionReassignment`` (§7.7.1), as request 0 of the step: per
    partition, a cancel without a reassignment in progress → NO_REASSIGNMENT_IN_PROGRESS; a target list failing
    ``validateReplicas`` → INVALID_REPLICA_ASSIGNMENT; topic queued for deletion or no such partition →
    UNKNOWN_TOPIC_OR_PARTITION; ``onPartitionReassignment`` threw → UNKNOWN_SERVER_ERROR; else NONE.

    ``s`` is the state the request was processed in, ``triggered`` the ``Triggered`` of processing. Decision (as
    Kafka: ControllerMovedException leaves ``processApiPartitionReassignment`` before the callback): no answer when
    it was raised."""
    failed = triggered.f("failed")

    def answer(tp: Expr) -> Expr:
        target = targets.get(tp)
        accepted_error = cond(
            (
                context.queued_for_deletion(s, tp.f("topic")) | context.replicas(s, tp).is_empty(),
                ApiError.UNKNOWN_TOPIC_OR_PARTITION,
            ),
            (failed.contains(tp), ApiError.UNKNOWN_SERVER_ERROR),
            otherwise=ApiError.NONE,
        )
        error = if_(
            target.eq(None),
            if_(
                reassignment_kip455.being_reassigned(context.assignment(s, tp)),
                accepted_error,
                ApiError.NO_REASSIGNMENT_IN_PROGRESS,
            ),
            if_(
                reassignment_kip455.validate_replicas(s, tp, target),
                accepted_error,
                ApiError.INVALID_REPLICA_ASSIGNMENT,
            ),
        )
        return common.partition_answer(0, tp, error)

    return rule(
        "reassignmentCallback",
        "§7.7.1",
        if_(triggered.f("work").f("moved"), frozenset(), targets.keys().map(answer)),
    )


def shutdown_failure(p: Profile, s: Expr, broker: Expr, epoch: Expr, after: Expr) -> Expr:
    """The exception ``doControlledShutdown(id, brokerEpoch)`` ends with (§7.10), "" when it returns: a stale epoch
    of an unknown broker (the cache lookup, ``NoSuchElementException``), a stale epoch
    (``StaleBrokerEpochException``, 2.8), a broker neither live nor shutting down
    (``BrokerNotAvailableException``), or ControllerMovedException raised while the state changes were written.
    ``s`` is the state the request was processed in, ``after`` the ``Work`` after processing."""
    live = s.f("controller", "live_brokers")
    b = Block()
    b.unchecked = if_(
        ~live.has(broker),
        "BrokerNotAvailableException",
        if_(after.f("moved"), common.CONTROLLER_MOVED, ""),
    )
    if not p.controlled_shutdown_epoch_and_deletion_checks:
        return b.in_(b.unchecked)
    return b.in_(
        if_(
            epoch.eq(UNKNOWN_BROKER_EPOCH),
            b.unchecked,
            if_(
                ~live.has(broker),
                "NoSuchElementException",
                if_(epoch.lt(live.get(broker)), "StaleBrokerEpochException", b.unchecked),
            ),
        )
    )


def shutdown_answers(p: Profile, s: Expr, broker: Expr, epoch: Expr, after: Expr) -> Expr:
    """The callback's answer of ``processControlledShutdown`` (§7.10 step 9), as request 0 of the step:
    ``Success(partitionLeadersOnBroker(id))`` — the request answered NONE (``WHOLE_REQUEST``) and every partition
    the broker still leads (|AR| > 1, topic not deleting) answered NONE with the broker as leader — or ``Failure(e)``
    (``shutdown_failure``; ``requests.WHOLE_REQUEST`` says how it is written).

    Decision: a ControllerMovedException raised by the state changes is answered ``Failure`` (Kafka's ``Try``
    around ``doControlledShutdown``) and the controller resigns as when the event is not queued (``finish``)."""
    b = Block()
    b.exception = shutdown_failure(p, s, broker, epoch, after)
    error = if_(
        b.exception.eq(""),
        ApiError.NONE,
        if_(b.exception.eq(common.CONTROLLER_MOVED), ApiError.NOT_CONTROLLER, ApiError.UNKNOWN_SERVER_ERROR),
    )
    whole = common.whole_request_answer(0, error, b.exception)
    after_state = common.st(after)
    still_led = shutdown.partitions_to_act_on(p, after_state, broker).filter(
        lambda tp: context.leader_of(after_state, tp).eq(broker)
    )
    led = still_led.map(lambda tp: common.partition_answer(0, tp, ApiError.NONE, broker))
    return rule(
        "controlledShutdownCallback",
        "§7.10",
        b.in_(if_(b.exception.eq(""), set_of(whole).union(led), set_of(whole))),
    )


def election_answers(p: Profile, s: Expr, requested: Expr, etype: Expr, after: Expr) -> Expr:
    """The callback's answer of ``processReplicaLeaderElection`` for every requested partition (§7.9), as request 0
    of the step: unknown → UNKNOWN_TOPIC_OR_PARTITION; topic queued for deletion → INVALID_TOPIC_EXCEPTION; no
    election needed → ELECTION_NOT_NEEDED; elected → NONE with the leader; a failed state change (a
    StateChangeFailedException) → PREFERRED_LEADER_NOT_AVAILABLE (PREFERRED) or ELIGIBLE_LEADERS_NOT_AVAILABLE
    (UNCLEAN); a ZooKeeper error → UNKNOWN_SERVER_ERROR (``ApiError.fromThrowable``).

    ``s`` is the state the request was processed in, ``after`` the ``Work`` after processing. Decisions (Kafka's
    callback is never called in these cases, so the client times out): no answer when the event threw (a
    partition to elect without leadership information, ``LI(p).get``) or raised ControllerMovedException (rethrown
    by ``handleStateChanges``; the event loop resigns)."""
    b = Block()
    b.known = elections.known_partitions(s, requested)
    b.live = elections.not_deleting(s, b.known)
    # evaluated only when the event did not throw: the electable filter reads LI(p) of every live partition
    r = Block()
    r.electable = b.live.filter(lambda tp: elections.election_needed(p, s, tp, etype))
    r.failed = (
        after.f("failures").filter(lambda f: f.f("machine").eq(MACHINE_PARTITION)).map(lambda f: f.f("tp"))
    )
    r.zk_failed = (
        after.f("failures")
        .filter(lambda f: f.f("machine").eq(MACHINE_PARTITION) & f.f("reason").eq(FailureReason.ZkError))
        .map(lambda f: f.f("tp"))
    )
    unavailable = if_(
        etype.eq(ElectionType.PREFERRED),
        ApiError.PREFERRED_LEADER_NOT_AVAILABLE,
        ApiError.ELIGIBLE_LEADERS_NOT_AVAILABLE,
    )

    def answer(tp: Expr) -> Expr:
        error = if_(
            ~b.known.contains(tp),
            ApiError.UNKNOWN_TOPIC_OR_PARTITION,
            if_(
                ~b.live.contains(tp),
                ApiError.INVALID_TOPIC_EXCEPTION,
                if_(
                    ~r.electable.contains(tp),
                    ApiError.ELECTION_NOT_NEEDED,
                    if_(
                        r.zk_failed.contains(tp),
                        ApiError.UNKNOWN_SERVER_ERROR,
                        if_(r.failed.contains(tp), unavailable, ApiError.NONE),
                    ),
                ),
            ),
        )
        c = Block()
        c.error = error
        leader = if_(c.error.eq(ApiError.NONE), context.leader_of(common.st(after), tp), NO_LEADER)
        return c.in_(common.partition_answer(0, tp, c.error, leader))

    threw = ~b.live.all(lambda tp: context.has_leadership(s, tp))
    return rule(
        "electionCallback",
        "§7.9",
        b.in_(if_(threw | after.f("moved"), frozenset(), r.in_(requested.map(answer)))),
    )


def queued_event_processed_action(p: Profile) -> Action:
    """``QueuedEventProcessed()``: the event thread processes the oldest queued request: an admin
    ``ReplicaLeaderElection`` (§7.9), a ``ControlledShutdown`` (§7.10), an ``ApiPartitionReassignment`` or a
    ``ListPartitionReassignments`` (§7.7.1), then its callback; ControllerMovedException ends it with the resignation, which answers the rest of the
    queue."""
    s = common.S
    b = Block()
    b.head = queue_of(s).head(QueuedElection(frozenset()))
    b.w = common.set_ctx(common.start_work(s), queued_elections=without_head(queue_of(s)))
    b.before = common.st(b.w)
    b.broker = b.head.f("broker_id")
    b.epoch = b.head.f("broker_epoch")
    b.kind = b.head.f("kind")
    b.targets = reassignment_targets(b.head)
    b.reassigned = reassignment_kip455.api_reassignment_triggered(p, b.w, b.targets)
    b.after = cond(
        (
            b.kind.eq(QueuedKind.ControlledShutdown),
            shutdown.do_controlled_shutdown(p, b.w, b.broker, b.epoch),
        ),
        (b.kind.eq(QueuedKind.ApiPartitionReassignment), b.reassigned.f("work")),
        (b.kind.eq(QueuedKind.ListPartitionReassignments), b.w),
        otherwise=elections.process_replica_leader_election(
            p,
            b.w,
            b.head.f("partitions"),
            b.head.f("election_type"),
            lift(ElectionTrigger.AdminClientTriggered),
        ),
    )
    answered = b.after.with_(
        answers=cond(
            (
                b.kind.eq(QueuedKind.ControlledShutdown),
                shutdown_answers(p, b.before, b.broker, b.epoch, b.after),
            ),
            (
                b.kind.eq(QueuedKind.ApiPartitionReassignment),
                reassignment_answers(b.before, b.targets, b.reassigned),
            ),
            (
                b.kind.eq(QueuedKind.ListPartitionReassignments),
                list_reassignments_answers(b.before, b.head.f("partitions")),
            ),
            otherwise=election_answers(
                p, b.before, b.head.f("partitions"), b.head.f("election_type"), b.after
            ),
        )
    )
    return common.event_action(
        QueuedEventProcessed,
        "The controller's event thread processes the oldest queued request (an admin election, a controlled "
        "shutdown, an admin reassignment or a reassignment listing) and answers its callback (§7.7.1, §7.9, "
        "§7.10).",
        guard=and_(common.active(s), queue_of(s).non_empty()),
        effect=b.in_(common.finish(answered)),
    )
