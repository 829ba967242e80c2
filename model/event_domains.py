"""The parameter domains of every controller event, in one place, for every tool that generates events.

Each parameter of each event of ``spec/events.py`` has a ``ParamKind`` (``EVENT_PARAMS``), read off its type hint
by ``param_kind``: a broker id, a broker epoch, a topic, a replica list, a reassignment target… The finite sets of
a bounded configuration are built here from broker ids, topic names, partitions and the replication factor
(``replica_lists``, ``rf_lists``, ``assignments``, ``topic_partitions``, ``partition_sets``, ``broker_groups``),
together with the event shapes the explorer and the simulator share (``topic_names``, ``round_robin_assignment``,
``bootstrap``, ``reassignment_target``).

Who uses what:

* the TLA+ model (``model/tla/domains.py``) renders each kind as a set over the module's constants and as Python
  values for a ``ModelConfig`` (the explorer's TLA+-model mode enumerates the same values);
* the explorer (``model/event_candidates.py``) draws its state-dependent candidates from the same
  shapes, and the simulator (``conformance/selfcheck/simulate.py``) samples them at random;
* Z3 induction (``model/z3/induction_actions.py``) keeps symbolic integers where the guard bounds a value by the
  state, but enumerates broker ids, replica lists and broker groups from here, and accounts for every event kind.

A new event whose parameters have a type no kind covers fails ``param_kind`` with the event and the field named
(``tests/unit/foundation/test_event_domains.py`` checks every event).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kcspec.spec.events import EVENT_TYPES, BrokerStartup, ControllerEvent, ControllerFailover, TopicCreation
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import TopicPartition


class DomainError(ValueError):
    """A parameter whose type has no finite domain (the message names the event and the parameter)."""


class ParamKind(enum.Enum):
    """What an event parameter ranges over."""

    BROKER_ID = "broker id"
    """A broker id ``0..brokers-1`` (also a zombie write's ``leader``)."""
    BROKER_EPOCH = "broker epoch"
    CONTROLLER_EPOCH = "controller epoch"
    LEADER_EPOCH = "leader epoch"
    """A partition's leader epoch ``0..max_leader_epoch`` (a stale AlterIsr's)."""
    ZK_VERSION = "znode version"
    """A partition znode's version ``0..max_zk_version`` (a stale AlterIsr's)."""
    FLAG = "flag"
    TOPIC = "topic"
    TOPIC_OR_ALL = "topic, or every topic"
    """``UncleanLeaderElectionEnable``'s topic: ``""`` stands for the broker-wide setting."""
    ENUM = "enumeration"
    TOPIC_PARTITION = "partition"
    REPLICA_LIST = "replica list"
    """A non-empty sequence of distinct brokers (an ISR, a reassignment target, a group of brokers)."""
    ASSIGNMENT = "assignment"
    """One replica list per partition of a topic."""
    TOPIC_LIST = "topics"
    PARTITION_LIST = "partitions (a sequence)"
    PARTITION_SET = "partitions (a set)"
    TARGETS = "reassignment targets"
    TARGETS_OR_CANCEL = "reassignment targets or cancellations"


INT_KINDS: dict[str, ParamKind] = {
    "broker_id": ParamKind.BROKER_ID,
    "leader": ParamKind.BROKER_ID,
    "controller_epoch": ParamKind.CONTROLLER_EPOCH,
    "broker_epoch": ParamKind.BROKER_EPOCH,
    "leader_epoch": ParamKind.LEADER_EPOCH,
    "zk_version": ParamKind.ZK_VERSION,
}
"""Every integer parameter's kind, by name. There is no default: an integer parameter not listed here is a
``DomainError`` (an unlisted one once fell back to the broker ids, so a stale AlterIsr's leader epoch and znode
version ranged over ``Brokers`` instead of their own bounds)."""


@dataclass(frozen=True)
class EventParam:
    """One parameter of an event: its field name, its type hint and what it ranges over."""

    name: str
    hint: Any
    kind: ParamKind
    enum_cls: type[enum.Enum] | None = None


def strip_optional(hint: Any) -> tuple[Any, bool]:
    """``X | None`` → ``(X, True)``; anything else → ``(hint, False)``."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(inner) == 1:
            return inner[0], True
    return hint, False


def param_kind(event: str, name: str, hint: Any) -> ParamKind:
    """The kind of the parameter ``name`` of ``event`` (the type hint decides; names only split the integers)."""
    hint, _ = strip_optional(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return ParamKind.FLAG
    if hint is int:
        if name not in INT_KINDS:
            raise DomainError(
                f"event {event}: no finite domain for integer parameter {name} "
                f"(name it in INT_KINDS of model/event_domains.py: one of {', '.join(INT_KINDS)})"
            )
        return INT_KINDS[name]
    if hint is str:
        return ParamKind.TOPIC_OR_ALL if event == "UncleanLeaderElectionEnable" else ParamKind.TOPIC
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return ParamKind.ENUM
    if hint is TopicPartition:
        return ParamKind.TOPIC_PARTITION
    if origin is tuple and args:
        inner, _ = strip_optional(args[0])
        if inner is int:
            return ParamKind.REPLICA_LIST
        if typing.get_origin(inner) is tuple and typing.get_args(inner)[:1] == (int,):
            return ParamKind.ASSIGNMENT
        if inner is str:
            return ParamKind.TOPIC_LIST
        if inner is TopicPartition:
            return ParamKind.PARTITION_LIST
    if origin in (frozenset, set) and args and args[0] is TopicPartition:
        return ParamKind.PARTITION_SET
    if origin is FMap and args and args[0] is TopicPartition:
        _, optional = strip_optional(args[1])
        return ParamKind.TARGETS_OR_CANCEL if optional else ParamKind.TARGETS
    raise DomainError(f"event {event}: no finite domain for parameter {name}: {hint}")


def event_params(cls: type[ControllerEvent]) -> tuple[EventParam, ...]:
    """The parameters of one event class, in field order."""
    hints = typing.get_type_hints(cls)
    out: list[EventParam] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        kind = param_kind(cls.kind, f.name, hint)
        enum_cls = hint if kind is ParamKind.ENUM else None
        out.append(EventParam(f.name, hint, kind, enum_cls))
    return tuple(out)


EVENT_PARAMS: dict[str, tuple[EventParam, ...]] = {cls.kind: event_params(cls) for cls in EVENT_TYPES}
"""Every event kind of ``spec/events.py`` (in ``EVENT_TYPES`` order) with its parameters."""


# --- the finite sets of a bounded configuration ----------------------------------------------------------------


def topic_names(topics: int) -> tuple[str, ...]:
    """Topics are named ``t0``, ``t1``, … in every bounded configuration."""
    return tuple(f"t{i}" for i in range(topics))


def topic_partitions(topics: Sequence[str], partitions: int) -> tuple[TopicPartition, ...]:
    """Every partition ``0..partitions-1`` of every topic."""
    return tuple(TopicPartition(t, p) for t in topics for p in range(partitions))


def replica_lists(broker_ids: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Every non-empty sequence of distinct brokers, shortest first."""
    return tuple(q for n in range(1, len(broker_ids) + 1) for q in itertools.permutations(broker_ids, n))


def rf_lists(broker_ids: Sequence[int], rf: int) -> tuple[tuple[int, ...], ...]:
    """The replica lists of length ``rf``."""
    return tuple(itertools.permutations(broker_ids, rf))


def assignments(
    broker_ids: Sequence[int], rf: int, partitions: int
) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """A replica list of length ``rf`` for each of ``1..partitions`` partitions."""
    lists = rf_lists(broker_ids, rf)
    return tuple(a for n in range(1, partitions + 1) for a in itertools.product(lists, repeat=n))


def partition_sets(tps: Sequence[TopicPartition]) -> tuple[frozenset[TopicPartition], ...]:
    """Every non-empty set of the given partitions, smallest first."""
    return tuple(frozenset(x) for n in range(1, len(tps) + 1) for x in itertools.combinations(tps, n))


def broker_groups(
    broker_ids: Sequence[int],
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """Every split of at least two of the brokers into new, dead and bounced groups (each sorted): the
    ``BrokerChange`` shapes with several brokers (one broker is a single-broker event)."""
    for roles in itertools.product(range(4), repeat=len(broker_ids)):
        groups = tuple(tuple(b for b, r in zip(broker_ids, roles, strict=True) if r == g) for g in (1, 2, 3))
        if sum(len(g) for g in groups) >= 2:
            yield groups[0], groups[1], groups[2]


# --- event shapes shared by the explorer and the simulator ------------------------------------------------------


def round_robin_assignment(
    brokers: int, rf: int, partitions: int, topic_index: int
) -> tuple[tuple[int, ...], ...]:
    """Round-robin assignment, as Kafka's admin tools lay replicas out (partition p starts at broker p+t)."""
    return tuple(tuple((p + topic_index + k) % brokers for k in range(rf)) for p in range(partitions))


def bootstrap(
    brokers: int, topics: Sequence[str], assignment: Callable[[int], tuple[tuple[int, ...], ...]]
) -> tuple[ControllerEvent, ...]:
    """Every broker registers, broker 0 becomes controller, every topic is created with ``assignment(index)``."""
    return (
        *(BrokerStartup(b) for b in range(brokers)),
        ControllerFailover(0),
        *(TopicCreation(t, assignment(i)) for i, t in enumerate(topics)),
    )


def reassignment_target(replicas: tuple[int, ...], brokers: int) -> tuple[int, ...]:
    """The explored reassignment target: every replica moved to the next broker id."""
    return tuple((r + 1) % brokers for r in replicas)
