"""Building blocks shared by the controller actions (§7, §8): ``Work`` plumbing, procedures that can throw,
fenced writes of ZooKeeper znodes other than partition states, and the action constructor.

* ``pipe`` threads a ``Work`` through procedures with ``let`` so that trees stay small.
* ``Attempt`` is a ``Work`` plus "a non-ControllerMoved exception was thrown" (§7 preamble: the rest of the
  event is dropped, partial effects remain). Procedures that Kafka lets throw (``updateLeaderEpoch``,
  ``updateReplicaAssignmentForPartition``, ``moveReassignedPartitionLeaderIfRequired`` …) return an
  ``Attempt``; callers either catch it (``maybeTriggerPartitionReassignment``) or stop the event.
* ``fenced_zk`` is one fenced controller write of a non-partition-state znode (topic assignment,
  ``/admin/reassign_partitions``, deletion znodes, ``/admin/preferred_replica_election``): in 2.8 a CheckOp on
  the ``/controller_epoch`` version that fails with ControllerMovedException (§3.3, KAFKA-6082); in 1.1 an
  unconditional write.
* ``controller_action`` builds an ``Action`` whose effect is "environment part, then — if a controller is
  active — the controller part, then resignation if ControllerMovedException was raised" (docs/contracts.md,
  the step contract).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass

from kcspec.spec import batch, spans, zk
from kcspec.spec.events import ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import (
    Action,
    Block,
    Expr,
    Param,
    Var,
    and_,
    build_map,
    cond,
    if_,
    let,
    lift,
    or_,
    rec,
    rule,
    set_of,
)
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import WHOLE_REQUEST, ElectionAnswer, RequestBatch
from kcspec.spec.state import NO_CONTROLLER, ControllerContext
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ApiError,
    InterBrokerProtocol,
    QueuedKind,
    ReplicaAssignment,
    TopicPartition,
)
from kcspec.spec.work import Work

Step = Callable[[Expr], Expr]
"""A procedure: an ``Expr[Work]`` (or ``Expr[Attempt]``) in, the next one out."""
Step2 = Callable[[Expr, Expr], Expr]
"""A procedure of a ``Work`` and one more value (a fold body, a continuation)."""


@dataclass(frozen=True)
class Attempt:
    """A ``Work`` and whether a non-ControllerMoved exception ended the procedure that produced it (§7)."""

    work: Work
    error: bool = False


@dataclass(frozen=True)
class Indexed:
    """Accumulator of a left fold that numbers the elements of a sequence (partition ids, §7.6)."""

    assignments: FMap[TopicPartition, ReplicaAssignment]
    next_index: int


# ------------------------------------------------------------------------------------------------ Work plumbing


def st(w: Expr) -> Expr:
    """The ``ClusterState`` of a ``Work``."""
    return w.f("state")


def ctx(w: Expr) -> Expr:
    """The controller context of a ``Work``."""
    return w.f("state", "controller")


def zk_of(w: Expr) -> Expr:
    """The ZooKeeper tree of a ``Work``."""
    return w.f("state", "zk")


def set_ctx(w: Expr, **updates: object) -> Expr:
    """Functional update of fields of the controller context."""
    return w.with_at("state", "controller", **updates)


def set_zk(w: Expr, **updates: object) -> Expr:
    """Functional update of fields of the ZooKeeper tree (no fencing: environment parts only)."""
    return w.with_at("state", "zk", **updates)


def set_config(w: Expr, **updates: object) -> Expr:
    """Functional update of the cluster configuration."""
    return w.with_at("state", "config", **updates)


def active(s: Expr) -> Expr:
    """A controller is active in ``s``: ``controller.controller_id != -1``."""
    return s.f("controller", "controller_id").ne(NO_CONTROLLER)


def ibp_at_least(s: Expr, version: InterBrokerProtocol) -> Expr:
    """``config.interBrokerProtocolVersion >= version`` in the ``ClusterState`` ``s``: the IBP is ``version`` or one
    of the ``InterBrokerProtocol`` members after it (they are declared oldest first)."""
    members = list(InterBrokerProtocol)
    ibp = s.f("config", "inter_broker_protocol")
    return or_(*(ibp.eq(v) for v in members[members.index(version) :]))


def start_work(s: object) -> Expr:
    """``Work(state=s)`` with an empty batch, nothing sent, no failures."""
    return rec(
        Work,
        state=s,
        batch=RequestBatch(),
        sent=frozenset(),
        failures=frozenset(),
        moved=False,
        answers=frozenset(),
    )


def pipe(w: object, *steps: Step) -> Expr:
    """``steps[-1](… steps[0](w))``, naming every intermediate ``Work`` with ``let``."""
    if not steps:
        return lift(w)
    head, *rest = steps
    return let(head(lift(w)), lambda v: pipe(v, *rest))


def unless_moved(w: Expr, body: Step) -> Expr:
    """``body(w)`` unless ControllerMovedException was raised already (then ``w`` unchanged)."""
    return let(w, lambda x: if_(x.f("moved"), x, body(x)))


def when(cond: Callable[[Expr], Expr], body: Step) -> Step:
    """The step ``w ↦ if cond(w) then body(w) else w``."""
    return lambda w: let(w, lambda x: if_(cond(x), body(x), x))


def resign(w: Expr) -> Expr:
    """``onControllerResignation`` + ``resetContext`` (§7.12): the context is cleared; ZooKeeper keeps its data.

    The requests queued behind the event are answered NOT_CONTROLLER (``not_controller_answers``): Kafka answers
    them so either by preempting them (``Expire``'s ``clearAndPut``) or by processing them after the resignation,
    when the controller is no longer active (§7.9 "not active", before any other event of the queue: they are
    ahead of it). Decision: both happen within the resigning step, so the queue is empty whenever no controller is
    active."""
    return rule(
        "onControllerResignation",
        "§7.12",
        let(
            w,
            lambda x: x.with_(
                state=st(x).with_(controller=ControllerContext()),
                answers=x.f("answers").union(not_controller_answers(ctx(x).f("queued_elections"))),
            ),
        ),
    )


@dataclass(frozen=True)
class Answering:
    """Accumulator of the fold that answers the queued requests one by one: the next one's place in the queue and
    the answers so far (``not_controller_answers``)."""

    next_request: int
    answers: frozenset[ElectionAnswer]


def not_controller_answers(queue: Expr) -> Expr:
    """``preempt`` of every request of ``queue`` (§7.9, §7.10, §7.12), the requests numbered from the head: an admin
    election's every requested partition answered NOT_CONTROLLER (``ReplicaLeaderElection.preempt``), a controlled
    shutdown answered ``Failure(ControllerMovedException)`` (``ControlledShutdown.preempt``), an admin reassignment
    or reassignment listing ``Right(ApiError(NOT_CONTROLLER))`` for the whole request
    (``ApiPartitionReassignment.preempt``, ``ListPartitionReassignments.preempt``, §7.7.1)."""
    return rule(
        "preempt",
        "§7.12",
        queue.fold(
            rec(Answering, next_request=0, answers=frozenset()),
            lambda acc, q: rec(
                Answering,
                next_request=acc.f("next_request") + 1,
                answers=acc.f("answers").union(
                    cond(
                        (
                            q.f("kind").eq(QueuedKind.ControlledShutdown),
                            set_of(moved_answer(acc.f("next_request"))),
                        ),
                        (
                            q.f("kind").eq(QueuedKind.ApiPartitionReassignment)
                            | q.f("kind").eq(QueuedKind.ListPartitionReassignments),
                            set_of(whole_request_answer(acc.f("next_request"), ApiError.NOT_CONTROLLER, "")),
                        ),
                        otherwise=q.f("partitions").map(
                            lambda tp: partition_answer(acc.f("next_request"), tp, ApiError.NOT_CONTROLLER)
                        ),
                    )
                ),
            ),
        ).f("answers"),
    )


CONTROLLER_MOVED = "ControllerMovedException"


def moved_answer(request: object) -> Expr:
    """A controlled shutdown's ``Failure(ControllerMovedException)`` as request ``request`` (§7.10)."""
    return whole_request_answer(request, ApiError.NOT_CONTROLLER, CONTROLLER_MOVED)


def partition_answer(
    request: object, tp: object, error: object, leader: object = NO_LEADER, assignment: object = None
) -> Expr:
    """A callback's answer for ``tp`` of request ``request`` (``requests.ElectionAnswer``, no exception): ``leader``
    the elected leader, ``assignment`` a listed reassignment (an empty one when not given)."""
    return rec(
        ElectionAnswer,
        request=request,
        tp=tp,
        error=error,
        leader=leader,
        exception="",
        assignment=ReplicaAssignment(()) if assignment is None else assignment,
    )


def whole_request_answer(request: object, error: object, exception: object) -> Expr:
    """An answer about the whole request ``request`` (``requests.WHOLE_REQUEST``)."""
    return rec(
        ElectionAnswer,
        request=request,
        tp=WHOLE_REQUEST,
        error=error,
        leader=NO_LEADER,
        exception=exception,
        assignment=ReplicaAssignment(()),
    )


def nothing_queued(s: Expr) -> Expr:
    """No request waits in the event queue: an event the controller processes is queued behind the waiting ones
    (``ControllerEventManager.put``), so it can happen only once they have been processed (§7.12)."""
    return s.f("controller", "queued_elections").is_empty()


def finish(w: Expr) -> Expr:
    """End of an event: ControllerMovedException ⇒ ``maybeResign`` (§7 preamble, §2.3 step 7)."""
    return let(w, lambda x: if_(x.f("moved"), resign(x), x))


# ------------------------------------------------------------------------------------------------ Attempt plumbing


def ok(w: object) -> Expr:
    """An ``Attempt`` that did not throw."""
    return rec(Attempt, work=w, error=False)


def thrown(w: object) -> Expr:
    """An ``Attempt`` that threw (partial effects in ``w`` remain)."""
    return rec(Attempt, work=w, error=True)


def stopped(a: Expr) -> Expr:
    """The attempt threw or raised ControllerMovedException: nothing more of it runs."""
    return a.f("error") | a.f("work", "moved")


def then(a: Expr, step: Step) -> Expr:
    """Run the ``Attempt``-returning ``step`` on the work of ``a`` unless ``a`` is stopped."""
    return let(a, lambda x: if_(stopped(x), x, step(x.f("work"))))


def then_work(a: Expr, step: Step) -> Expr:
    """Run the ``Work``-returning ``step`` on the work of ``a`` unless ``a`` is stopped."""
    return then(a, lambda w: ok(step(w)))


def attempt_pipe(a: object, *steps: Step) -> Expr:
    """Thread an ``Attempt`` through ``Attempt``-returning steps, stopping at the first throw or move."""
    if not steps:
        return lift(a)
    head, *rest = steps
    return let(then(lift(a), head), lambda v: attempt_pipe(v, *rest))


def as_attempt(step: Step) -> Step:
    """A ``Work``-returning step seen as an ``Attempt``-returning one (it never throws)."""
    return lambda w: ok(step(w))


def attempt_fold(items: Expr, a: object, step: Callable[[Expr, Expr], Expr]) -> Expr:
    """For each element ``x`` of the sequence ``items`` in order: ``step(work, x)`` (an ``Attempt``), stopping
    at the first throw or move — Kafka's ``foreach`` without a ``try`` around the body."""
    return items.fold(a, lambda acc, x: if_(stopped(acc), acc, step(acc.f("work"), x)))


def work_fold(items: Expr, w: object, step: Callable[[Expr, Expr], Expr]) -> Expr:
    """For each element ``x`` of the sequence ``items`` in order: ``step(work, x)`` (a ``Work``)."""
    return items.fold(w, lambda acc, x: step(acc, x))


# ------------------------------------------------------------------------------------------------ fenced ZK writes


def fenced_zk(p: Profile, w: Expr, update: Callable[[Expr], Expr]) -> Expr:
    """One fenced controller write of a non-partition-state znode (§3.3, §9): ``update`` maps the ZooKeeper tree
    to the new tree. A failed CheckOp (2.8) raises ControllerMovedException (``moved``); nothing is written."""
    return unless_moved(
        w,
        lambda x: if_(
            zk.fenced_write_ok(p, st(x)),
            x.with_(state=st(x).with_(zk=update(zk_of(x)))),
            x.with_(moved=True),
        ),
    )


def topic_assignment_in_zk(zkt: Expr, topic: object) -> Expr:
    """The partitions of ``topic`` in the topic znode ``/brokers/topics/<t>``."""
    return zkt.f("assignments").keys().filter(lambda tp: tp.f("topic").eq(topic))


def topic_znode_exists(zkt: Expr, topic: object) -> Expr:
    """The topic znode ``/brokers/topics/<t>`` exists (with or without partitions)."""
    return zkt.f("topics").contains(topic)


def write_topic_assignment(p: Profile, w: Expr, topic: object, assignment: object) -> Expr:
    """``setTopicAssignmentRaw`` (§7.7.2 U1/B6, §7.8.2 steps 1/10, §7.6): replace the topic znode's partition map
    by ``assignment`` (an ``FMap`` partition → ``ReplicaAssignment``). An ``Attempt``: NONODE (the topic znode
    does not exist — a topic znode without partitions exists) throws IllegalStateException; a failed CheckOp
    raises ControllerMovedException. The znode's topic ID is the context's (``setTopicAssignment(topic,
    controllerContext.topicIds.get(topic), ...)``, KIP-516): none when the context has none."""
    return rule(
        "setTopicAssignment",
        "§7.7.2",
        let(
            w,
            lambda x: if_(
                ~topic_znode_exists(zk_of(x), topic),
                thrown(x),
                ok(
                    fenced_zk(
                        p,
                        x,
                        lambda z: z.with_(
                            topic_ids=if_(
                                ctx(x).f("topic_ids").has(topic),
                                z.f("topic_ids").put(topic, ctx(x).f("topic_ids").get(topic)),
                                z.f("topic_ids").delete_all(set_of(topic)),
                            ),
                            assignments=z.f("assignments")
                            .delete_all(topic_assignment_in_zk(z, topic))
                            .merge(assignment),
                        ),
                    )
                ),
            ),
        ),
    )


def context_topic_assignment(w: Expr, topic: object) -> Expr:
    """``partitionFullReplicaAssignmentForTopic(t)``: the in-memory assignment of every partition of ``topic``."""
    return let(
        ctx(w).f("assignments"),
        lambda fa: fa.delete_all(fa.keys().filter(lambda tp: tp.f("topic").ne(topic))),
    )


def update_replica_assignment_for_partition(p: Profile, w: Expr, tp: object, fa: object) -> Expr:
    """``updateReplicaAssignmentForPartition(tp, fa)`` (§7.7.2 U1/B6): the topic znode := the in-memory assignment of
    the topic with ``tp ↦ fa``. An ``Attempt``."""
    return let(
        tp,
        lambda t: write_topic_assignment(
            p, w, t.f("topic"), context_topic_assignment(w, t.f("topic")).put(t, fa)
        ),
    )


def send_update_metadata(p: Profile, w: Expr, brokers: object, tps: object) -> Expr:
    """KafkaController's ``sendUpdateMetadataRequest(brokers, partitions)``: one batch with one UMR, sent (§3.4)."""
    return pipe(w, lambda x: batch.add_update_metadata(p, x, brokers, tps), lambda x: batch.send(p, x))


def trigger_controller_move(p: Profile, w: Expr) -> Expr:
    """``triggerControllerMove`` (§7.1 step 3, §7.12): if ``/controller`` still names this broker, resign and delete
    ``/controller`` (2.8: fenced by the epoch zk version, a failed check is ignored); otherwise nothing (2.8: the
    controller has already moved). 1.1 resigns and deletes ``/controller`` unconditionally."""
    if p.zk_write_fencing:
        body = lambda x: if_(  # noqa: E731 - a named sub-tree
            zk_of(x).f("controller").eq(ctx(x).f("controller_id")),
            resign(
                if_(
                    zk.fenced_write_ok(p, st(x)),
                    set_zk(x, controller=NO_CONTROLLER),
                    x,
                )
            ),
            x,
        )
    else:
        body = lambda x: resign(set_zk(x, controller=NO_CONTROLLER))  # noqa: E731
    return rule("triggerControllerMove", "§7.12", let(w, body))


# ------------------------------------------------------------------------------------------------ actions


def params_of(event: type[ControllerEvent]) -> tuple[Param, ...]:
    """One ``Param`` per field of the event dataclass, with its name and type hint."""
    hints = typing.get_type_hints(event)
    return tuple(Param(f.name, hints[f.name]) for f in dataclasses.fields(event))


def param_vars(event: type[ControllerEvent]) -> dict[str, Var]:
    """The parameters of ``event`` as variables."""
    return {f.name: Var(f.name) for f in dataclasses.fields(event)}


S = Var("s")
"""The ``ClusterState`` before the step."""


@spans.builder
def event_action(event: type[ControllerEvent], doc: str, guard: Expr, effect: Expr) -> Action:
    """The action of ``event`` with its guard and its whole effect (a ``Work``) given as they are, named by the
    event's kind and section: for the actions that are not "environment, then controller" (``controller_action``)."""
    return Action(
        name=event.kind,
        section=event.section,
        doc=doc,
        params=params_of(event),
        guard=guard,
        effect=rule(event.kind, event.section, effect),
    )


@spans.builder
def controller_action(
    event: type[ControllerEvent],
    doc: str,
    guard: Expr,
    environment: Callable[[Expr], Expr] | None,
    controller: Step | None,
    section: str | None = None,
    preempts: bool = False,
) -> Action:
    """The action of ``event``: ``environment`` maps ``Work(state=s)`` to the work after the ZooKeeper / config
    change; then, only if a controller is active, ``controller`` (a ``Work`` step); ControllerMovedException
    ends the event with the controller's resignation.

    An event with a controller part waits for the requests queued before it (``nothing_queued``), unless it
    ``preempts`` them (``clearAndPut``, §7.12); an environment-only change (``controller`` None) is no event of
    the controller's queue and can happen at any time."""
    if controller is not None and not preempts:
        guard = and_(guard, nothing_queued(S))
    w0 = start_work(S)
    w1 = environment(w0) if environment is not None else w0
    body = w1 if controller is None else let(w1, lambda w: if_(active(st(w)), finish(controller(w)), w))
    return Action(
        name=event.kind,
        section=section or event.section,
        doc=doc,
        params=params_of(event),
        guard=guard,
        effect=rule(event.kind, section or event.section, body),
    )


# ------------------------------------------------------------------------------------------------ state znode reads


def read_state_znodes(w: Expr, tps: object) -> Expr:
    """A controller read of the state znodes of ``tps`` (``getTopicPartitionStates``) as an ``Attempt``: it throws
    when a CONNECTIONLOSS fault is armed on one of them (the faults are consumed, ``zk.read_fails``)."""
    b = Block()
    b.x = w
    b.ts = tps
    failed = thrown(b.x.with_(state=zk.consume_read_faults(st(b.x), b.ts)))
    return b.in_(if_(zk.read_fails(st(b.x), b.ts), failed, ok(b.x)))


def refresh_leadership_cache(w: Expr, tps: object) -> Expr:
    """``updateLeaderAndIsrCache(P)`` after a successful read: LI(p) := the znode exactly as stored (its controller
    epoch kept) for every p ∈ P whose znode exists (§7.1 step 4, §7.11)."""
    b = Block()
    b.x = w
    b.states = zk_of(b.x).f("partition_states")
    read = build_map(lift(tps).filter(lambda tp: b.states.has(tp)), lambda tp: b.states.get(tp))
    return b.in_(set_ctx(b.x, leadership=ctx(b.x).f("leadership").merge(read)))


def _update_leader_epoch_once(p: Profile, w: Expr, tp: Expr, cache: bool, retries: int) -> Expr:
    def write(x: Expr) -> Expr:
        s = st(x)
        b = Block()
        b.zw = zk.update_leader_and_isr(
            p,
            s,
            build_map(
                set_of(tp),
                lambda t: (
                    zk.znode(s, t)
                    .f("leader_and_isr")
                    .with_(leader_epoch=zk.znode(s, t).f("leader_and_isr", "leader_epoch") + 1)
                ),
            ),
        )
        written = Block()
        written.y = x.with_(state=b.zw.f("state"))
        cached = written.in_(
            set_ctx(written.y, leadership=ctx(written.y).f("leadership").put(tp, b.zw.f("records").get(tp)))
            if cache
            else written.y
        )
        retried = (
            _update_leader_epoch_once(p, x.with_(state=b.zw.f("state")), tp, cache, retries - 1)
            if retries > 0
            else thrown(x.with_(state=b.zw.f("state")))
        )
        return b.in_(
            cond(
                (b.zw.f("moved"), ok(x.with_(moved=True))),
                (b.zw.f("failed").contains(tp), thrown(x.with_(state=b.zw.f("state")))),
                (b.zw.f("retry").contains(tp), retried),
                otherwise=ok(cached),
            )
        )

    return then(
        read_state_znodes(w, set_of(tp)),
        lambda x: cond(
            (~zk.znode_exists(st(x), tp), thrown(x)),
            (zk.written_by_newer_controller(st(x), tp), thrown(x)),
            otherwise=write(x),
        ),
    )


def update_leader_epoch(p: Profile, w: Expr, tp: object, cache: bool) -> Expr:
    """``updateLeaderEpoch(tp)`` (§7.7.2 A1, §7.8.2 step 2) as an ``Attempt``: read the state znode (CONNECTIONLOSS
    throws; absent → IllegalStateException; stored controller epoch newer → StateChangeFailedException), write it
    back with leader epoch +1 (``newEpochAndZkVersion``) conditionally; BADVERSION → re-read and retry (faults are
    one-shot, so one retry always suffices); a failed CheckOp → ControllerMovedException. On success the znode
    holds the new record; ``cache`` (2.8, KAFKA-9212) also puts it in the leadership cache (1.1 does not)."""
    b = Block()
    b.t = tp
    return rule(
        "updateLeaderEpoch", "§7.7.2", b.in_(_update_leader_epoch_once(p, lift(w), b.t, cache, retries=1))
    )


def indexed_assignments(topic: object, replicas: object) -> Expr:
    """``{topic-i ↦ ReplicaAssignment(replicas[i])}`` for the sequence of replica lists ``replicas`` (§7.6)."""
    return (
        lift(replicas)
        .fold(
            rec(Indexed, assignments=FMap(), next_index=0),
            lambda acc, r: acc.with_(
                assignments=acc.f("assignments").put(
                    rec(TopicPartition, topic=topic, partition=acc.f("next_index")),
                    rec(ReplicaAssignment, replicas=r, adding=(), removing=()),
                ),
                next_index=acc.f("next_index") + 1,
            ),
        )
        .f("assignments")
    )


def valid_replica_list(replicas: Expr) -> Expr:
    """A replica list an admin tool may write: non-empty, distinct, ids ≥ 0 (docs/contracts.md event table)."""
    return (
        replicas.non_empty() & replicas.to_set().size().eq(replicas.size()) & replicas.all(lambda r: r.ge(0))
    )
