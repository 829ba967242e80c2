"""Symmetry over broker ids: rename brokers in a ``ClusterState``, and a canonical representative.

Broker ids are interchangeable in the controller's logic except through their *order* (Kafka picks
the first replica in assignment order, never the smallest id; the spec processes brokers in ascending
id only where Kafka iterates a hash map, ARCHITECTURE.md). So the explorer may treat two states that
differ by a permutation of broker ids as one — the reduction TLC's SYMMETRY does — as long as it is
applied to whole states. Where ascending-id processing makes results order-dependent, symmetry
reduction is an over-approximation of distinctness; the explorer reports it is in use.

The renaming knows which integers are broker ids: replica lists, leaders (sentinels −1/−2 kept),
ISRs, replica keys, registered/live/shutting-down sets and controller ids.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import fields, is_dataclass, replace
from typing import Any

from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaAssignment,
    TopicPartition,
    make_partition_replica,
)

Perm = Mapping[int, int]


def _b(perm: Perm, b: int) -> int:
    return perm.get(b, b) if b >= 0 else b


def _seq(perm: Perm, xs: Iterable[int]) -> tuple[int, ...]:
    return tuple(_b(perm, x) for x in xs)


def _set(perm: Perm, xs: Iterable[int]) -> frozenset[int]:
    return frozenset(_b(perm, x) for x in xs)


def _fa(perm: Perm, fa: ReplicaAssignment) -> ReplicaAssignment:
    return ReplicaAssignment(_seq(perm, fa.replicas), _seq(perm, fa.adding), _seq(perm, fa.removing))


def _li(perm: Perm, li: LeaderIsrAndControllerEpoch) -> LeaderIsrAndControllerEpoch:
    lai = li.leader_and_isr
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(_b(perm, lai.leader), lai.leader_epoch, _seq(perm, lai.isr), lai.zk_version),
        li.controller_epoch,
    )


def _pr(perm: Perm, pr: PartitionReplica) -> PartitionReplica:
    return make_partition_replica(pr.tp, _b(perm, pr.replica))


def permute_brokers(state: ClusterState, perm: Perm) -> ClusterState:
    """The same state with every broker id ``b`` renamed to ``perm[b]`` (ids not in ``perm`` unchanged)."""
    zk, c = state.zk, state.controller
    new_zk = replace(
        zk,
        controller=_b(perm, zk.controller),
        brokers=FMap({_b(perm, b): e for b, e in zk.brokers.items()}),
        assignments=zk.assignments.map_values(lambda fa: _fa(perm, fa)),
        partition_states=zk.partition_states.map_values(lambda li: _li(perm, li)),
        reassign_partitions=zk.reassign_partitions.map_values(lambda rs: _seq(perm, rs)),
    )
    new_c = replace(
        c,
        controller_id=_b(perm, c.controller_id),
        live_brokers=FMap({_b(perm, b): e for b, e in c.live_brokers.items()}),
        shutting_down=_set(perm, c.shutting_down),
        offline_replicas=frozenset(_pr(perm, pr) for pr in c.offline_replicas),
        assignments=c.assignments.map_values(lambda fa: _fa(perm, fa)),
        leadership=c.leadership.map_values(lambda li: _li(perm, li)),
        legacy_reassignments=c.legacy_reassignments.map_values(lambda rs: _seq(perm, rs)),
        replica_states=FMap({_pr(perm, pr): s for pr, s in c.replica_states.items()}),
    )
    return ClusterState(zk=new_zk, controller=new_c, config=state.config)


def permutations(brokers: int) -> list[dict[int, int]]:
    return [dict(zip(range(brokers), p, strict=True)) for p in itertools.permutations(range(brokers))]


def compact(value: object) -> Hashable:
    """A compact, hashable, totally ordered encoding of a data-model value (the explorer's state key)."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, enum.Enum):
        code: Hashable = value.value
        return code
    if isinstance(value, TopicPartition):
        return (value.topic, value.partition)
    if isinstance(value, PartitionReplica):
        return (value.tp.topic, value.tp.partition, value.replica)
    if isinstance(value, tuple):
        return tuple(compact(v) for v in value)
    if isinstance(value, frozenset):
        return tuple(sorted((compact(v) for v in value), key=_order))
    if isinstance(value, Mapping):
        return tuple(sorted(((compact(k), compact(v)) for k, v in value.items()), key=_order))
    if is_dataclass(value):
        return tuple(compact(getattr(value, f.name)) for f in fields(value))
    raise TypeError(f"cannot encode {type(value).__name__}")


def _order(item: Hashable) -> Any:
    """Sort key of compact encodings (they are totally ordered within one collection)."""
    return item


def canonical_key(state: ClusterState, perms: list[dict[int, int]]) -> Hashable:
    """The least compact encoding over all broker renamings: equal for states equal up to symmetry."""
    return min((compact(permute_brokers(state, p)) for p in perms), key=_order)


def exact_key(state: ClusterState) -> Hashable:
    return compact(state)


def _signature(state: ClusterState, b: int) -> tuple[Any, ...]:
    """What ``state`` says about broker ``b`` without naming any broker id: equal for ``b`` in ``state`` and
    ``perm[b]`` in ``permute_brokers(state, perm)``. Registered brokers differ by their registration zxid."""
    zk, c = state.zk, state.controller
    places = sorted(
        (tp.topic, tp.partition, i)
        for tp, fa in zk.assignments.items()
        for i, r in enumerate(fa.replicas)
        if r == b
    )
    return (
        zk.brokers.get(b, -1),
        c.live_brokers.get(b, -1),
        zk.controller == b,
        c.controller_id == b,
        b in c.shutting_down,
        tuple(places),
    )


def canonical_state(state: ClusterState, brokers: int) -> ClusterState:
    """A canonical representative of ``state`` up to renaming brokers ``0..brokers-1``: equal for two states exactly
    when they are equal up to such a renaming (the same classes as ``canonical_key``, another representative).

    Brokers are ranked by their signature (a renaming-invariant summary); only renamings that respect that
    ranking are candidates — one unless signatures tie — and among several the least compact encoding wins.
    The set of candidate images is the same for every state of an orbit, hence so is the chosen one."""
    sigs = sorted((_signature(state, b), b) for b in range(brokers))
    groups: list[list[int]] = []
    last: object = object()
    for sig, b in sigs:
        if sig != last:
            groups.append([])
            last = sig
        groups[-1].append(b)
    if all(len(g) == 1 for g in groups):
        perm = {g[0]: rank for rank, g in enumerate(groups)}
        if all(b == r for b, r in perm.items()):
            return state
        return permute_brokers(state, perm)
    images: list[ClusterState] = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        perm = {b: rank for rank, b in enumerate(b for order in orders for b in order)}
        images.append(state if all(b == r for b, r in perm.items()) else permute_brokers(state, perm))
    return min(images, key=compact)  # type: ignore[arg-type]
