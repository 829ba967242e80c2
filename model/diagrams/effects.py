"""What each transition of the two state machines does, read off the spec by running it on small probe states.

For every valid edge (from, to) of a profile's table, the spec's own ``replica_state_change`` /
``partition_state_change`` call is evaluated on a few probe situations in which the element is in state
``from``, and the difference between the state before and the ``Work`` after is described in a few words:
requests sent (kind, flags, recipients named relative to the probe), ZooKeeper partition-state writes
(leader, ISR, leader epoch), assignment changes and refusals. Effects shared by every situation are listed
once; the rest are prefixed with the situation. Nothing here restates a rule: change a rule in the spec and
the label changes with it.

The probe (``PROBE_NOTE``): partition t-0 with assignment AR = [1, 2, 3], brokers 1–4 registered and live,
broker 4 the controller (epoch 1); the replica machine moves replica r = 3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache

from kcspec.model.diagrams.machines import EdgeKey, valid_edges
from kcspec.model.evaluate import compile_expr
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import PROFILES, Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)
from kcspec.spec.work import Work

TP = TopicPartition("t", 0)
AR = (1, 2, 3)
CONTROLLER = 4
R = 3
PROBE_NOTE = (
    "Effects as the spec computes them on a probe: partition t-0, AR = [1,2,3], brokers 1-4 live, "
    "controller 4; replica r = 3; LI = leader and ISR (leader epoch 5)."
)
MACHINE_NOTES = {
    "replica": (
        PROBE_NOTE,
        "Situations: r follower (leader 1), r leader, no LI (no leadership info, no state znode).",
    ),
    "partition": (
        PROBE_NOTE,
        "→ OnlinePartition from Online/Offline: one line per election strategy the caller passes (§6); "
        "Offline probe: broker 1 (the leader) dead; ControlledShutdown probe: broker 1 shutting down.",
    ),
}
"""Legend notes saying which probe situations the labels describe."""
SHORT_STRATEGY = {
    ElectionStrategy.OfflinePartitionLeaderElectionStrategy: "Offline",
    ElectionStrategy.ReassignPartitionLeaderElectionStrategy: "Reassign",
    ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy: "Preferred",
    ElectionStrategy.ControlledShutdownPartitionLeaderElectionStrategy: "ControlledShutdown",
}


@dataclass(frozen=True)
class Situation:
    """A named probe: the state before the call, and the election to use (partition machine only)."""

    name: str
    state: ClusterState
    election: LeaderElection | None = None


def probe_state(
    leader: int | None,
    isr: tuple[int, ...] = AR,
    live: tuple[int, ...] = (1, 2, 3, 4),
    shutting_down: frozenset[int] = frozenset(),
    replica_states: Mapping[PartitionReplica, ReplicaState] | None = None,
    partition_state: PartitionState | None = None,
    legacy_targets: tuple[int, ...] = (),
) -> ClusterState:
    """The probe cluster; ``leader`` ``None`` means no leadership info and no state znode."""
    brokers = FMap({b: 10 + b for b in live})
    assignments = FMap({TP: ReplicaAssignment(AR)})
    li = None if leader is None else LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 5, isr, 7), 1)
    states = (
        FMap({PartitionReplica(TP, b): ReplicaState.OnlineReplica for b in AR})
        if replica_states is None
        else FMap(replica_states)
    )
    zk = ZkState(
        controller=CONTROLLER,
        controller_epoch=1,
        controller_epoch_zk_version=1,
        brokers=brokers,
        topics=frozenset({"t"}),
        assignments=assignments,
        partition_states=FMap({TP: li}) if li else FMap(),
        zxid=20,
    )
    ctx = ControllerContext(
        controller_id=CONTROLLER,
        epoch=1,
        epoch_zk_version=1,
        live_brokers=brokers,
        shutting_down=shutting_down,
        all_topics=frozenset({"t"}),
        assignments=assignments,
        leadership=FMap({TP: li}) if li else FMap(),
        legacy_reassignments=FMap({TP: legacy_targets}) if legacy_targets else FMap(),
        replica_states=states,
        partition_states=FMap({TP: partition_state}) if partition_state else FMap(),
    )
    return ClusterState(zk=zk, controller=ctx)


# --------------------------------------------------------------------------------------------- describing


def _names(before: ClusterState, after: ClusterState, r: int | None) -> list[tuple[str, frozenset[int]]]:
    live = frozenset(before.controller.live_brokers) - before.controller.shutting_down
    ar = frozenset(before.controller.assignments[TP].replicas)
    out: list[tuple[str, frozenset[int]]] = []
    if r is not None:
        out += [("r", frozenset({r})), ("AR − r", ar - {r})]
    out += [("AR", ar), ("live AR", ar & live), ("all brokers", frozenset(before.controller.live_brokers))]
    li = after.controller.leadership.get(TP)
    if li is not None:
        out.append(("ISR", frozenset(li.leader_and_isr.isr)))
    return out


def _who(brokers: frozenset[int], names: list[tuple[str, frozenset[int]]]) -> str:
    for name, members in names:
        if brokers == members:
            return name
    return "{" + ",".join(str(b) for b in sorted(brokers)) + "}"


def _requests(before: ClusterState, work: Work, r: int | None) -> list[str]:
    names = _names(before, work.state, r)
    lair: dict[bool, set[int]] = {}
    stop: dict[bool, set[int]] = {}
    umr: set[int] = set()
    for req in work.sent:
        if isinstance(req, LeaderAndIsrRequest):
            for ps in req.partition_states:
                lair.setdefault(ps.is_new, set()).add(req.broker)
        elif isinstance(req, StopReplicaRequest):
            for sr in req.partition_states:
                stop.setdefault(sr.delete_partition, set()).add(req.broker)
        elif isinstance(req, UpdateMetadataRequest):
            umr.add(req.broker)
    out = [f"SR(delete={str(d).lower()}) → {_who(frozenset(b), names)}" for d, b in sorted(stop.items())]
    out += [f"LAIR(isNew={str(n).lower()}) → {_who(frozenset(b), names)}" for n, b in sorted(lair.items())]
    if umr:
        out.append(f"UMR → {_who(frozenset(umr), names)}")
    return out


def _isr_text(old: tuple[int, ...], new: tuple[int, ...], r: int | None) -> str | None:
    if old == new:
        return None
    if r is not None and new == tuple(x for x in old if x != r):
        return "ISR − r"
    return "ISR := [" + ",".join(map(str, new)) + "]"


def _zk(before: ClusterState, after: ClusterState, r: int | None) -> list[str]:
    old = before.zk.partition_states.get(TP)
    new = after.zk.partition_states.get(TP)
    if new is None or old == new:
        return []
    n = new.leader_and_isr
    if old is None:
        return [f"ZK: create leader {n.leader}, ISR [{','.join(map(str, n.isr))}], epoch {n.leader_epoch}"]
    o = old.leader_and_isr
    parts = []
    if n.leader != o.leader:
        parts.append("leader −1" if n.leader == NO_LEADER else f"leader := {n.leader}")
    elif n.leader_epoch != o.leader_epoch:
        parts.append("same leader")
    isr = _isr_text(o.isr, n.isr, r)
    if isr:
        parts.append(isr)
    if n.leader_epoch != o.leader_epoch:
        parts.append(
            f"epoch {'+' if n.leader_epoch > o.leader_epoch else ''}{n.leader_epoch - o.leader_epoch}"
        )
    return ["ZK: " + ", ".join(parts)]


def _assignment(before: ClusterState, after: ClusterState) -> list[str]:
    old = before.controller.assignments.get(TP)
    new = after.controller.assignments.get(TP)
    if old == new or old is None or new is None:
        return []
    added = [b for b in new.replicas if b not in old.replicas]
    removed = [b for b in old.replicas if b not in new.replicas]
    if added and not removed:
        return [f"AR += {','.join(map(str, added))}"]
    if removed and not added:
        return ["AR − r" if removed == [R] else f"AR − {','.join(map(str, removed))}"]
    return [f"AR := [{','.join(map(str, new.replicas))}]"]


def describe(before: ClusterState, work: Work, r: int | None, reached: bool) -> tuple[str, ...]:
    """The effects of one call, in a fixed order: refusals, ZK, assignment, requests."""
    out = [
        f"refused: {f.reason.value.replace('_', ' ')}"
        for f in sorted(work.failures, key=lambda f: f.reason.value)
    ]
    if not reached and not out:
        out.append("no change")
    out += _zk(before, work.state, r)
    out += _assignment(before, work.state)
    out += _requests(before, work, r)
    return tuple(out)


def merge(per_situation: list[tuple[str, tuple[str, ...]]]) -> tuple[str, ...]:
    """Effects common to every situation once, then the rest prefixed with the situations that share it."""
    if not per_situation:
        return ()
    common = [x for x in per_situation[0][1] if all(x in effs for _, effs in per_situation)]
    differ = any(len(effs) != len(common) for _, effs in per_situation)
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, effs in per_situation:
        rest = tuple(x for x in effs if x not in common)
        if rest or (differ and not common):
            groups.setdefault(rest or ("state only",), []).append(name)
    lines = list(common)
    lines += [f"{', '.join(names)}: " + "; ".join(rest) for rest, names in groups.items()]
    return tuple(lines) if lines else ("state only",)


# --------------------------------------------------------------------------------------------- the machines


def _replica_situations(source: ReplicaState) -> list[Situation]:
    pr = PartitionReplica(TP, R)
    others = {PartitionReplica(TP, b): ReplicaState.OnlineReplica for b in AR if b != R}
    states = others if source is ReplicaState.NonExistentReplica else {**others, pr: source}
    return [
        Situation(
            "r follower",
            probe_state(1, replica_states=states, partition_state=PartitionState.OnlinePartition),
        ),
        Situation(
            "r leader", probe_state(R, replica_states=states, partition_state=PartitionState.OnlinePartition)
        ),
        Situation(
            "no LI", probe_state(None, replica_states=states, partition_state=PartitionState.NewPartition)
        ),
    ]


def _partition_situations(
    profile: Profile, source: PartitionState, target: PartitionState
) -> list[Situation]:
    if target is not PartitionState.OnlinePartition:
        leader = None if source in (PartitionState.NonExistentPartition, PartitionState.NewPartition) else 1
        return [Situation("any", probe_state(leader, partition_state=_present(source)))]
    if source is PartitionState.NewPartition:
        return [
            Situation("replicas live", probe_state(None, partition_state=source)),
            Situation("no replica live", probe_state(None, live=(4,), partition_state=source)),
        ]
    out = []
    for strategy, short in SHORT_STRATEGY.items():
        live = (2, 3, 4) if source is PartitionState.OfflinePartition else (1, 2, 3, 4)
        sd = (
            frozenset({1})
            if strategy is ElectionStrategy.ControlledShutdownPartitionLeaderElectionStrategy
            else frozenset()
        )
        if sd:
            live = (1, 2, 3, 4)
        legacy = AR if strategy is ElectionStrategy.ReassignPartitionLeaderElectionStrategy else ()
        state = probe_state(1, live=live, shutting_down=sd, partition_state=source, legacy_targets=legacy)
        if profile.kip455_reassignment:
            state = replace(state, controller=replace(state.controller, legacy_reassignments=FMap()))
        out.append(Situation(short, state, LeaderElection(strategy)))
    return out


def _present(state: PartitionState) -> PartitionState | None:
    return None if state is PartitionState.NonExistentPartition else state


@cache
def _compiled(
    profile_name: str, machine: str, target: str, election: LeaderElection | None
) -> Callable[..., object]:
    return compile_expr(_build(PROFILES[profile_name], machine, target, election), ("w", "elems"))


def _build(profile: Profile, machine: str, target: str, election: LeaderElection | None) -> L.Expr:
    """The spec's whole ``handleStateChanges(elems, target)`` call on ``Work`` ``w``."""
    w, elems = L.var("w"), L.var("elems")
    if machine == "replica":
        return replica_state_change(profile, w, elems, ReplicaState[target])
    return partition_state_change(profile, w, elems, PartitionState[target], election)


def _run(profile: Profile, machine: str, target: str, sit: Situation) -> Work:
    fn = _compiled(profile.name, machine, target, sit.election)
    elems = frozenset({PartitionReplica(TP, R)}) if machine == "replica" else frozenset({TP})
    work = fn({"w": Work(state=sit.state), "elems": elems})
    if not isinstance(work, Work):
        raise TypeError(f"{machine} state change to {target} evaluated to {type(work).__name__}, not Work")
    return work


def _reached(machine: str, work: Work, target: str) -> bool:
    if machine == "replica":
        got = work.state.controller.replica_states.get(PartitionReplica(TP, R))
        return (got is None and target == ReplicaState.NonExistentReplica.name) or (
            got is not None and got.name == target
        )
    pstate = work.state.controller.partition_states.get(TP)
    return pstate is not None and pstate.name == target


def target_rules(profile: Profile, machine: str) -> dict[str, L.Rule]:
    """The ``Rule`` node named after each target state in the spec's tree of the state change (its § and span)."""
    out: dict[str, L.Rule] = {}
    enum = ReplicaState if machine == "replica" else PartitionState
    for target in enum:
        election = (
            None
            if machine == "replica"
            else LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy)
        )
        expr = _build(profile, machine, target.name, election)
        stack: list[L.Expr] = [expr]
        while stack:
            e = stack.pop()
            if isinstance(e, L.Rule) and e.name == target.name:
                out[target.name] = e
                break
            stack.extend(L.children(e))
    return out


def target_sections(profile: Profile, machine: str) -> dict[str, str]:
    """The § of each target's rule."""
    return {name: r.section for name, r in target_rules(profile, machine).items()}


def target_tooltips(profile: Profile, machine: str) -> dict[str, str]:
    """Per target state, the edge tooltip that says where the spec writes the transition's rule: its §, the
    rule's name and its span (``§5.2 OnlinePartition, spec/partition_machine.py:337``)."""
    return {
        name: f"{r.section} {r.name}" + (f", {r.span}" if r.span is not None else "")
        for name, r in target_rules(profile, machine).items()
    }


def machine_effects(profile: Profile, machine: str) -> dict[EdgeKey, tuple[str, ...]]:
    """Effect lines for every valid edge of ``machine`` in ``profile``, the last line citing the target's §."""
    out: dict[EdgeKey, tuple[str, ...]] = {}
    sections = target_sections(profile, machine)
    for source, target in valid_edges(profile, machine):
        if machine == "replica":
            sits = _replica_situations(ReplicaState[source])
        else:
            sits = _partition_situations(profile, PartitionState[source], PartitionState[target])
        results = []
        for sit in sits:
            work = _run(profile, machine, target, sit)
            r = R if machine == "replica" else None
            results.append((sit.name, describe(sit.state, work, r, _reached(machine, work, target))))
        if target not in sections:
            raise ValueError(
                f"{profile.name}: the spec's {machine} state change has no Rule named {target!r}"
            )
        out[(source, target)] = (*merge(results), sections[target])
    return out
