"""The finite domains that the actions' parameters range over in a bounded model, written once.

Each ``Domain`` has two renderings of the same set: its TLA+ text over the module's constants (used in
``Next``: ``\\E broker_id \\in Brokers : BrokerStartup(broker_id)``) and its Python values for a
``ModelConfig`` (used by the explorer's TLA+-model mode, ``conformance/selfcheck/explore/tla_model.py``). Because both
come from the one ``param_domain`` below, TLC and the explorer try exactly the same event instances in
every state — the precondition for their distinct-state counts to be comparable (``kcspec tla crosscheck``).
What each parameter ranges over (its ``ParamKind``) and the finite sets themselves come from
``model/event_domains.py``, which the explorer, the simulator and Z3 induction use too; this module adds the TLA+
text of each set.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcspec.model import event_domains as ed
from kcspec.model.event_domains import DomainError, ParamKind
from kcspec.model.tla import types as ty
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.values import NONE_TEXT
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Param
from kcspec.spec.vocabulary import TopicPartition


@dataclass(frozen=True)
class Domain:
    """One finite set: its TLA+ text and a function giving its elements for a configuration."""

    tla: str
    elements: Callable[[ModelConfig], tuple[Any, ...]]
    parts: tuple[ty.T, ...] = ()
    """The element types of the sets the TLA+ text joins with ``\\cup`` (for the static kind check): TLC
    sorts a set's elements, so they must all be of one kind (or a model value)."""

    def values(self, config: ModelConfig) -> tuple[Any, ...]:
        return self.elements(config)


def topic_partitions(c: ModelConfig) -> tuple[TopicPartition, ...]:
    """``TopicPartitions``: every partition 0..PartitionCount-1 of every topic."""
    return ed.topic_partitions(c.topic_names, c.partitions)


def replica_lists(c: ModelConfig) -> tuple[tuple[int, ...], ...]:
    """``ReplicaLists``: every non-empty sequence of distinct brokers."""
    return ed.replica_lists(c.broker_ids)


def rf_lists(c: ModelConfig) -> tuple[tuple[int, ...], ...]:
    """``RfLists``: the replica lists of length ReplicationFactor."""
    return ed.rf_lists(c.broker_ids, c.rf)


def assignments(c: ModelConfig) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``Assignments``: a replica list of length RF for each of 1..PartitionCount partitions."""
    return ed.assignments(c.broker_ids, c.rf, c.partitions)


def _non_empty_subsets(c: ModelConfig) -> tuple[frozenset[TopicPartition], ...]:
    return ed.partition_sets(topic_partitions(c))


BROKERS = Domain("Brokers", lambda c: c.broker_ids)
TOPICS = Domain("Topics", lambda c: c.topic_names)
BOOLEANS = Domain("BOOLEAN", lambda c: (False, True))
TOPIC_PARTITIONS = Domain("TopicPartitions", topic_partitions)
REPLICA_LISTS = Domain("ReplicaLists", replica_lists)
ASSIGNMENTS = Domain("Assignments", assignments)
CONTROLLER_EPOCHS = Domain("1..MaxControllerEpoch", lambda c: tuple(range(1, c.max_controller_epoch + 1)))
LEADER_EPOCHS = Domain("0..MaxLeaderEpoch", lambda c: tuple(range(c.max_leader_epoch + 1)))
"""A stale AlterIsr's leader epoch: its guard bounds it by the partition's (``le <= leader_epoch``), which the
``StateConstraint`` bounds by ``MaxLeaderEpoch``, so this set holds every value that can be enabled."""
ZK_VERSIONS = Domain("0..MaxZkVersion", lambda c: tuple(range(c.max_zk_version + 1)))
"""A stale AlterIsr's znode version: bounded by the partition's (``zv <= zk_version <= MaxZkVersion``).

Both once fell back to ``Brokers`` (in the module and, through this same ``Domain``, in the explorer). The recorded
counts of ``state_counts.json`` stay, recomputed by the explorer for every kafka-2.8 model (kafka-1.1 has no
AlterIsr): in the 1-broker models a stale AlterIsr changes no counted state, and in the 2-broker models the enabled
instances are the same ones (``Brokers = 0..1 = 0..MaxLeaderEpoch``; ``zv = 1`` fails ``zv <= zk_version <=
MaxZkVersion = 0``)."""
BROKER_EPOCHS = Domain("{-1} \\cup 1..MaxZxid", lambda c: (-1, *range(1, c.max_zxid + 1)), (ty.INT, ty.INT))
TOPICS_OR_ALL = Domain('Topics \\cup {""}', lambda c: ("", *c.topic_names), (ty.STR, ty.STR))
ONE_TOPIC = Domain("{<<t>> : t \\in Topics}", lambda c: tuple((t,) for t in c.topic_names))
ONE_PARTITION = Domain(
    "{<<p>> : p \\in TopicPartitions}", lambda c: tuple((tp,) for tp in topic_partitions(c))
)
PARTITION_SETS = Domain("SUBSET TopicPartitions \\ {{}}", _non_empty_subsets)

EMPTY = Domain("{}", lambda c: ())
"""No instance: the action is in the module but never in ``Next`` (``NOT_IN_MODELS``)."""

NOT_IN_MODELS: dict[str, str] = {
    "BrokerChange": (
        "several brokers in one watch firing need at least two brokers that are not the controller to change "
        "together, which the 1- and 2-broker models barely have, while its three broker lists would add dozens of "
        "instances to every state of every model (and to kcspec verify's 2-broker exploration); it is checked "
        "by the explorer's own candidates, Z3 induction, the broker-batches scenario and its vectors"
    ),
    "LogDirEventNotification": (
        "it resends LeaderAndIsr to replicas that are online already, so in these models it only matters after "
        "a storage error; it is checked with the explorer's --faults logdir, Z3 induction, the broker-batches "
        "scenario and its vectors, and leaving it out keeps the recorded state counts"
    ),
    "StopReplicaResponseWithoutDeletionReceived": (
        "the response to a StopReplica(delete=false) changes nothing in either profile (Kafka's callback counts "
        "only deletePartition=true partitions, §3.4), so it adds no state to any model; leaving it out keeps the "
        "recorded state counts and TLC's work. It is checked by the explorer's candidates (refinement of the "
        "reference's step), its vectors, differential testing and the kafka-9946 mutant of the bug zoo"
    ),
}
"""Actions whose parameters get the empty domain, with the reason: the generated module defines them, ``Next``
tries no instance of them, and the explorer's TLA+-model mode neither (so the two counts stay comparable)."""


def _enum_domain(cls: type[enum.Enum]) -> Domain:
    members = tuple(cls)
    return Domain("{" + ", ".join(f'"{m.name}"' for m in members) + "}", lambda c: members)


def _one_target_domain(optional: bool) -> Domain:
    targets = f"RfLists \\cup {{{NONE_TEXT}}}" if optional else "RfLists"

    def elements(c: ModelConfig) -> tuple[FMap[TopicPartition, Any], ...]:
        lists: tuple[Any, ...] = (*rf_lists(c), None) if optional else rf_lists(c)
        return tuple(FMap({tp: r}) for tp in topic_partitions(c) for r in lists)

    parts = (ty.seq_of(ty.INT), ty.NONE) if optional else (ty.seq_of(ty.INT),)
    return Domain(f"{{(p :> r) : p \\in TopicPartitions, r \\in {targets}}}", elements, parts)


BY_KIND: dict[ParamKind, Domain] = {
    ParamKind.BROKER_ID: BROKERS,
    ParamKind.BROKER_EPOCH: BROKER_EPOCHS,
    ParamKind.CONTROLLER_EPOCH: CONTROLLER_EPOCHS,
    ParamKind.LEADER_EPOCH: LEADER_EPOCHS,
    ParamKind.ZK_VERSION: ZK_VERSIONS,
    ParamKind.FLAG: BOOLEANS,
    ParamKind.TOPIC: TOPICS,
    ParamKind.TOPIC_OR_ALL: TOPICS_OR_ALL,
    ParamKind.TOPIC_PARTITION: TOPIC_PARTITIONS,
    ParamKind.REPLICA_LIST: REPLICA_LISTS,
    ParamKind.ASSIGNMENT: ASSIGNMENTS,
    ParamKind.TOPIC_LIST: ONE_TOPIC,
    ParamKind.PARTITION_LIST: ONE_PARTITION,
    ParamKind.PARTITION_SET: PARTITION_SETS,
    ParamKind.TARGETS: _one_target_domain(optional=False),
    ParamKind.TARGETS_OR_CANCEL: _one_target_domain(optional=True),
}
"""The set each parameter kind of ``model/event_domains.py`` ranges over in the bounded models (enumerations:
every member, ``_enum_domain``). Every kind but ``ENUM`` is listed: ``param_domain`` has no fallback."""


def param_domain(action: str, p: Param) -> Domain:
    """The finite set the parameter ``p`` of ``action`` ranges over in ``Next`` and in the explorer."""
    if action in NOT_IN_MODELS:
        return EMPTY
    kind = ed.param_kind(action, p.name, p.type)
    if kind is ParamKind.ENUM:
        hint, _ = ed.strip_optional(p.type)
        return _enum_domain(hint)
    if kind not in BY_KIND:
        raise DomainError(
            f"action {action}: parameter {p.name} of kind {kind.value!r} has no TLA+ domain (BY_KIND)"
        )
    return BY_KIND[kind]


__all__ = [
    "BY_KIND",
    "NOT_IN_MODELS",
    "Domain",
    "DomainError",
    "param_domain",
    "replica_lists",
    "rf_lists",
    "topic_partitions",
]
