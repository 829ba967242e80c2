"""Symmetry over broker ids: rename brokers in a ``ClusterState``, and a canonical representative.

Broker ids are interchangeable in the controller's logic except through their *order* (Kafka picks
the first replica in assignment order, never the smallest id; the spec processes brokers in ascending
id only where Kafka iterates a hash map, docs/contracts.md). So the explorer may treat two states that
differ by a permutation of broker ids as one — the reduction TLC's SYMMETRY does — as long as it is
applied to whole states. Where ascending-id processing makes results order-dependent, symmetry
reduction is an over-approximation of distinctness; the explorer reports it is in use.

The renaming knows which integers are broker ids: replica lists, leaders (sentinels −1/−2 kept),
ISRs, replica keys, registered/live/shutting-down sets and controller ids.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import fields, is_dataclass, replace
from typing import Any

from kcspec.model import fastrec
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
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
    made: ReplicaAssignment = _FA_MAKE(
        _seq(perm, fa.replicas), _seq(perm, fa.adding), _seq(perm, fa.removing)
    )
    return made


def _li(perm: Perm, li: LeaderIsrAndControllerEpoch) -> LeaderIsrAndControllerEpoch:
    lai = li.leader_and_isr
    made: LeaderIsrAndControllerEpoch = _LI_MAKE(
        _LAI_MAKE(_b(perm, lai.leader), lai.leader_epoch, _seq(perm, lai.isr), lai.zk_version),
        li.controller_epoch,
    )
    return made


def _pr(perm: Perm, pr: PartitionReplica) -> PartitionReplica:
    return make_partition_replica(pr.tp, _b(perm, pr.replica))


def permute_brokers(state: ClusterState, perm: Perm) -> ClusterState:
    """The same state with every broker id ``b`` renamed to ``perm[b]`` (ids not in ``perm`` unchanged)."""
    zk, c = state.zk, state.controller
    # records are rebuilt by storing their fields (``model/fastrec.py``), maps adopt fresh dicts: the same values
    # as the dataclasses' constructors and ``replace`` build, without their per-call overhead
    fa_memo: dict[int, ReplicaAssignment] = {}
    li_memo: dict[int, LeaderIsrAndControllerEpoch] = {}

    def fa(x: ReplicaAssignment) -> ReplicaAssignment:
        hit = fa_memo.get(id(x))
        if hit is None:
            hit = fa_memo[id(x)] = _fa(perm, x)
        return hit

    def li(x: LeaderIsrAndControllerEpoch) -> LeaderIsrAndControllerEpoch:
        hit = li_memo.get(id(x))
        if hit is None:
            hit = li_memo[id(x)] = _li(perm, x)
        return hit

    new_zk = _ZK_UPDATE(
        zk,
        _b(perm, zk.controller),
        FMap.adopt({_b(perm, b): e for b, e in zk.brokers.items()}),
        FMap.adopt({k: fa(v) for k, v in zk.assignments.items()}),
        FMap.adopt({k: li(v) for k, v in zk.partition_states.items()}),
        FMap.adopt({k: _seq(perm, v) for k, v in zk.reassign_partitions.items()}),
    )
    new_c = _CONTEXT_UPDATE(
        c,
        _b(perm, c.controller_id),
        FMap.adopt({_b(perm, b): e for b, e in c.live_brokers.items()}),
        _set(perm, c.shutting_down),
        frozenset(_pr(perm, pr) for pr in c.offline_replicas),
        FMap.adopt({k: fa(v) for k, v in c.assignments.items()}),
        FMap.adopt({k: li(v) for k, v in c.leadership.items()}),
        FMap.adopt({k: _seq(perm, v) for k, v in c.legacy_reassignments.items()}),
        FMap.adopt({_pr(perm, pr): s for pr, s in c.replica_states.items()}),
    )
    made: ClusterState = _STATE_MAKE(new_zk, new_c, state.config)
    return made


def _updater(cls: type, names: tuple[str, ...]) -> Callable[..., Any]:
    """``dataclasses.replace(o, **dict(zip(names, values)))`` for records of ``cls``, by storing the fields."""

    def generic(o: Any, *values: Any) -> Any:
        return replace(o, **dict(zip(names, values, strict=True)))

    fast: Callable[..., Any] | None = fastrec.updater(cls, names, generic)
    return fast if fast is not None else generic


def _maker(cls: type, names: tuple[str, ...]) -> Callable[..., Any]:
    """``cls(**dict(zip(names, values)))``, by storing the fields."""
    made = fastrec.maker(cls, names)
    if made is not None:
        return made

    def generic(*values: Any) -> Any:
        return cls(**dict(zip(names, values, strict=True)))

    return generic


_ZK_UPDATE = _updater(
    ZkState, ("controller", "brokers", "assignments", "partition_states", "reassign_partitions")
)
_CONTEXT_UPDATE = _updater(
    ControllerContext,
    (
        "controller_id",
        "live_brokers",
        "shutting_down",
        "offline_replicas",
        "assignments",
        "leadership",
        "legacy_reassignments",
        "replica_states",
    ),
)
_STATE_MAKE = _maker(ClusterState, ("zk", "controller", "config"))
_FA_MAKE = _maker(ReplicaAssignment, ("replicas", "adding", "removing"))
_LAI_MAKE = _maker(LeaderAndIsr, ("leader", "leader_epoch", "isr", "zk_version"))
_LI_MAKE = _maker(LeaderIsrAndControllerEpoch, ("leader_and_isr", "controller_epoch"))


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
    return _signatures(state, (b,))[0]


def _signatures(state: ClusterState, brokers: Iterable[int]) -> list[tuple[Any, ...]]:
    """``_signature(state, b)`` of each of ``brokers``, in order, from one pass over the assignments."""
    zk, c = state.zk, state.controller
    places: dict[int, list[tuple[str, int, int]]] = {}
    for tp, fa in zk.assignments.items():
        for i, r in enumerate(fa.replicas):
            places.setdefault(r, []).append((tp.topic, tp.partition, i))
    registered, live, shutting_down = zk.brokers, c.live_brokers, c.shutting_down
    return [
        (
            registered.get(b, -1),
            live.get(b, -1),
            zk.controller == b,
            c.controller_id == b,
            b in shutting_down,
            tuple(sorted(places.get(b, ()))),
        )
        for b in brokers
    ]


def canonical_state(state: ClusterState, brokers: int) -> ClusterState:
    """A canonical representative of ``state`` up to renaming brokers ``0..brokers-1``: equal for two states exactly
    when they are equal up to such a renaming (the same classes as ``canonical_key``, another representative).

    Brokers are ranked by their signature (a renaming-invariant summary); only renamings that respect that
    ranking are candidates — one unless signatures tie — and among several the least compact encoding wins.
    The set of candidate images is the same for every state of an orbit, hence so is the chosen one."""
    sigs = sorted(zip(_signatures(state, range(brokers)), range(brokers), strict=True))
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
