"""Stale-context probes: a controller whose in-memory context disagrees with ZooKeeper must not carry it over.

ZooKeeper can change behind an active controller's back (an administrator deletes ``/admin/reassign_partitions``
or ``/admin/delete_topics``, a broker re-registers unnoticed): its context then holds entries ZooKeeper does not
back. Resignation resets the context and the next controller rebuilds it from ZooKeeper alone (§7.1, §7.12), so
the spec's result of a resignation and a failover does not depend on that context. The event model has no
"edited behind the controller's back" event, so these states are reached by loading them: from states the
built-in scenarios pass through, one context field at a time gets an entry ZooKeeper does not back, and the
controller resigns and fails over (the same broker, then another).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from kcspec.spec.events import ControllerEvent, ControllerFailover, ControllerResignation
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext


def stale_variants(state: ClusterState) -> Iterator[tuple[str, ClusterState]]:
    """``state`` with one context field holding an entry ZooKeeper does not back (active controller only)."""
    ctx, zk = state.controller, state.zk
    if ctx.controller_id == -1 or not ctx.assignments:
        return
    tp = sorted(ctx.assignments, key=lambda p: (p.topic, p.partition))[0]
    replicas = tuple(reversed(ctx.assignments[tp].replicas))
    stale: list[tuple[str, ControllerContext]] = []
    if tp not in zk.reassign_partitions:
        legacy = FMap({**ctx.legacy_reassignments, tp: replicas})
        stale.append(("legacy_reassignments", dataclasses.replace(ctx, legacy_reassignments=legacy)))
        reassigning = ctx.partitions_being_reassigned | {tp}
        stale.append(
            ("partitions_being_reassigned", dataclasses.replace(ctx, partitions_being_reassigned=reassigning))
        )
    if tp.topic not in zk.delete_topics:
        deleting = ctx.topics_to_be_deleted | {tp.topic}
        stale.append(("topics_to_be_deleted", dataclasses.replace(ctx, topics_to_be_deleted=deleting)))
    for name, context in stale:
        yield name, dataclasses.replace(state, controller=context)


def probe_events(state: ClusterState) -> list[tuple[ControllerEvent, ...]]:
    """Resign and fail over to the same broker; fail over to another registered broker."""
    me = state.controller.controller_id
    others = sorted(b for b in state.zk.brokers if b != me)
    out: list[tuple[ControllerEvent, ...]] = [(ControllerResignation(), ControllerFailover(me))]
    if others:
        out.append((ControllerFailover(others[0]),))
    return out


def probe_states(profile: str, events: tuple[ControllerEvent, ...]) -> list[ClusterState]:
    """The spec's states after the middle and the last event of a scenario."""
    from kcspec.model.step import SpecMachine

    spec = SpecMachine(profile)
    state = ClusterState()
    states: list[ClusterState] = []
    for event in events:
        if not spec.enabled(state, event):
            break
        state = spec.step(state, event).state
        states.append(state)
    if not states:
        return []
    return [states[len(states) // 2], states[-1]]
