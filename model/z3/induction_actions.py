"""The action instances of the induction checks: every event kind of ``spec/events.py`` with its parameters
ranging over the bounded domain of ``induction_family`` (brokers ``0..B-1``, topic ``t`` with partition
``t-0``, a second topic ``u`` for creation).

Integer parameters that the guard bounds by the state (a broker epoch, a zombie's controller epoch, a
zombie's leader) are **symbolic**: one instance stands for every value. Broker ids, partition sets and
replica lists are enumerated: every broker, every non-empty sequence of distinct brokers, both unclean
flags, both faults, and so on, so each action is checked for every parameter value of the domain. The event
kinds, replica lists and broker groups come from ``model/event_domains.py`` (the explorer's and the TLA+ model's
source too); ``WITHOUT_INSTANCE`` names the kinds left out, with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import z3
from kcspec.model import event_domains
from kcspec.model.z3 import values as V
from kcspec.model.z3.induction_family import EPOCHS, TOPIC, TP
from kcspec.spec import events as E
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, ZkFault

NEW_TOPIC = "u"


@dataclass(frozen=True)
class Instance:
    """One action instance: the event kind, its parameter bindings (concrete or symbolic), the constraints on the
    symbolic ones and a readable label."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    constraints: tuple[Any, ...]
    label: str


WITHOUT_INSTANCE: dict[str, str] = {
    "StopReplicaPartitionErrorsReceived": (
        "it needs two partitions of one broker, so it is never enabled on this one-partition domain"
    ),
    "ReplicaLeaderElectionQueued": (
        "the induction states keep the event queue's model bound at its default, 0 (config.max_queued_requests): "
        "no request is ever queued, so it is never enabled"
    ),
    "ControlledShutdownQueued": (
        "the induction states keep the event queue's model bound at its default, 0 (config.max_queued_requests): "
        "no request is ever queued, so it is never enabled"
    ),
    "ApiPartitionReassignmentQueued": (
        "the induction states keep the event queue's model bound at its default, 0 (config.max_queued_requests): "
        "no request is ever queued, so it is never enabled"
    ),
    "ListPartitionReassignmentsQueued": (
        "the induction states keep the event queue's model bound at its default, 0 (config.max_queued_requests): "
        "no request is ever queued, so it is never enabled"
    ),
    "QueuedEventProcessed": "the induction states' event queue is empty (its model bound is 0): never enabled",
}
"""Event kinds of ``model/event_domains.EVENT_PARAMS`` that ``instances`` does not yield, with the reason
(``tests/z3`` checks that every other kind has an instance)."""


def replica_lists(brokers: int) -> tuple[tuple[int, ...], ...]:
    """Every non-empty sequence of distinct brokers (``event_domains.replica_lists``)."""
    return event_domains.replica_lists(range(brokers))


def _event(ev: E.ControllerEvent) -> Instance:
    from kcspec.spec import codec

    params = tuple((f.name, getattr(ev, f.name)) for f in dataclasses.fields(ev))
    return Instance(ev.kind, params, (), f"{ev.kind} {codec.dumps(ev)}")


def _symbolic(kind: str, label: str, constraints: list[Any], **params: Any) -> Instance:
    return Instance(kind, tuple(params.items()), tuple(constraints), f"{kind} {label}")


def _zombie_isr(brokers: int, cons: list[Any]) -> V.SColl:
    values = [z3.Int(f"p_isr_{i}") for i in range(brokers)]
    cons += [z3.And(v >= 0, v < brokers) for v in values]
    if brokers > 1:
        cons.append(z3.Distinct(*values))
    return V.SColl("seq", tuple((z3.Bool(f"p_isr_in_{i}"), v) for i, v in enumerate(values)))


def instances(brokers: int, kip455: bool) -> Iterator[Instance]:
    """Every action instance over the domain, in the order of ``EVENT_TYPES``."""
    bs = range(brokers)
    lists = replica_lists(brokers)
    for b in bs:
        yield _event(E.ControllerFailover(b))
    yield _event(E.ControllerResignation())
    for b in bs:
        yield _event(E.NewerControllerElected(b))
    yield _event(E.ControllerChange())
    cons: list[Any] = []
    leader, ce = z3.Int("p_leader"), z3.Int("p_controller_epoch")
    cons += [leader >= -1, leader < brokers, ce >= 0, ce <= EPOCHS]
    isr = _zombie_isr(brokers, cons)
    yield _symbolic(
        "ZombieControllerWrite",
        "(t-0, any leader, any ISR, any controller epoch)",
        cons,
        tp=TP,
        leader=leader,
        isr=isr,
        controller_epoch=ce,
    )
    for b in bs:
        yield _event(E.BrokerStartup(b))
    for b in bs:
        yield _event(E.BrokerFailure(b))
    for b in bs:
        yield _event(E.BrokerBounce(b))
    for b in bs:
        epoch = z3.Int(f"p_broker_epoch_{b}")
        yield _symbolic(
            "ControlledShutdown",
            f'{{"broker_id": {b}, "broker_epoch": any}}',
            [epoch >= -1, epoch <= EPOCHS],
            broker_id=b,
            broker_epoch=epoch,
        )
    for r in lists:
        yield _event(E.TopicCreation(NEW_TOPIC, (r,)))
    for r in lists:
        yield _event(E.PartitionExpansion(TOPIC, (tuple(bs), r)))
    yield _event(E.TopicDeletion((TOPIC,)))
    for b in bs:
        for err in (False, True):
            yield _event(E.StopReplicaResponseReceived(b, (TP,), err))
            yield _event(E.StopReplicaResponseWithoutDeletionReceived(b, (TP,), err))
    targets: list[tuple[int, ...] | None] = [None, *lists]
    if kip455:
        for target in targets:
            yield _event(E.ApiPartitionReassignment(FMap({TP: target})))
    for r in lists:
        yield _event(E.ZkPartitionReassignment(FMap({TP: r})))
    for etype, trigger in (
        (ElectionType.PREFERRED, ElectionTrigger.ZkTriggered),
        (ElectionType.PREFERRED, ElectionTrigger.AdminClientTriggered),
        (ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered),
    ):
        yield _event(E.ReplicaLeaderElection(frozenset({TP}), etype, trigger))
    yield _event(E.AutoPreferredReplicaLeaderElection())
    for r in lists:
        yield _event(E.IsrChange(TP, r))
    for b in bs:
        for errors in ((), (TP,)):
            yield _event(E.LeaderAndIsrResponseReceived(b, errors))
    for t in ("", TOPIC):
        yield _event(E.UncleanLeaderElectionEnable(t))
    for f in ZkFault:
        yield _event(E.ZkFaultInjection(TP, f))
    # StopReplicaPartitionErrorsReceived: no instance (WITHOUT_INSTANCE).
    for b in bs:
        yield _event(E.LeaderAndIsrPartitionResultsReceived(b, (TP,)))
    for b in bs:
        for r in lists:
            if b not in r:
                continue
            stale = {
                name: z3.Int(f"p_stale_{name}_{b}") for name in ("broker_epoch", "leader_epoch", "zk_version")
            }
            yield _symbolic(
                "StaleAlterIsrReceived",
                f'{{"broker_id": {b}, "tp": "t-0", "isr": {list(r)}, broker epoch, leader epoch, zk version: any}}',
                [v >= 0 for v in stale.values()],
                broker_id=b,
                tp=TP,
                isr=r,
                **stale,
            )
    for new, dead, bounced in event_domains.broker_groups(bs):
        yield _event(E.BrokerChange(new, dead, bounced))
    for ids in ((b,) for b in bs):
        yield _event(E.LogDirEventNotification(ids))
    yield _event(E.LogDirEventNotification(tuple(bs)))
