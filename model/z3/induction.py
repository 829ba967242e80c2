"""Inductiveness of the §11 invariants over the spec's actions, for one small fixed configuration.

Configuration: 3 brokers (0, 1, 2), one topic ``t`` with 2 partitions, AR ``[0, 1, 2]`` and ``[1, 2, 0]``,
reached from the empty cluster by the spec itself (registrations, failover, topic creation). In the
pre-state the **leader and ISR of both partitions are symbolic** — any leader in −1..2, any ISR that is a
sequence of distinct brokers — and the controller's leadership cache holds the same record as ZooKeeper;
everything else is that concrete configuration. For each action instance in ``ACTIONS`` (an event of the
spec with concrete parameters) and each invariant, the backend checks

    pre-state in that family ∧ guard ∧ (every state invariant holds in the pre-state) ⇒ invariant after the step

(state invariants: ``Inv ∧ Action ⇒ Inv′``; step invariants: over the step's pre-state, post-state and
requests). A failure is a *counterexample to induction*: printed as the two ``ClusterState``s (canonical
JSON) and the event. What this does **not** prove: inductiveness over every shape of state — assignments,
replica/partition states, liveness and topic sets are the fixed configuration's; only leadership varies.
Counterexamples that are known and explained are listed in ``EXPECTED`` with the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.model.z3.results import ProofResult, check_goal
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec import codec
from kcspec.spec import events as E
from kcspec.spec.lang import Action, Invariant
from kcspec.spec.profiles import Profile
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

BROKERS = 3
TOPIC = "t"
SETUP: tuple[E.ControllerEvent, ...] = (
    E.BrokerStartup(0),
    E.BrokerStartup(1),
    E.BrokerStartup(2),
    E.ControllerFailover(0),
    E.TopicCreation(TOPIC, ((0, 1, 2), (1, 2, 0))),
)
T0, T1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)

ACTIONS: tuple[E.ControllerEvent, ...] = (
    E.BrokerFailure(1),
    E.ControlledShutdown(1),
    E.BrokerStartup(3),
    E.AutoPreferredReplicaLeaderElection(),
)
"""The action instances checked: a failure, a controlled shutdown and a startup (elections through the
partition machine) and the auto preferred election."""

CHECK_TIMEOUT_MS = 10_000

EXPECTED: dict[tuple[str, str, str], str] = {}
"""(profile or "*", invariant name, event kind) → why the counterexample to induction is expected."""


@dataclass(frozen=True)
class Family:
    """The symbolic pre-state and the constraints that delimit it."""

    state: V.SRec
    constraints: tuple[Any, ...]


def _replace(rec: Any, **updates: Any) -> V.SRec:
    return V.SRec(type(rec), tuple((f.name, updates.get(f.name, getattr(rec, f.name))) for f in fields(rec)))


def symbolic_family(base: ClusterState) -> Family:
    cons: list[Any] = []
    entries = []
    for tp, li in base.zk.partition_states.items():
        tag = f"{tp.topic}_{tp.partition}"
        leader = z3.Int(f"leader_{tag}")
        values = [z3.Int(f"isr_{tag}_{i}") for i in range(BROKERS)]
        cons += [
            leader >= -1,
            leader < BROKERS,
            *(z3.And(v >= 0, v < BROKERS) for v in values),
            z3.Distinct(*values),
        ]
        isr = V.SColl("seq", tuple((z3.Bool(f"isr_{tag}_in_{i}"), v) for i, v in enumerate(values)))
        lai = V.SRec(
            LeaderAndIsr,
            (
                ("leader", leader),
                ("leader_epoch", li.leader_and_isr.leader_epoch),
                ("isr", isr),
                ("zk_version", li.leader_and_isr.zk_version),
            ),
        )
        entries.append(
            (
                True,
                tp,
                V.SRec(
                    LeaderIsrAndControllerEpoch,
                    (("leader_and_isr", lai), ("controller_epoch", li.controller_epoch)),
                ),
            )
        )
    states = V.SMap(tuple(entries))
    zk = _replace(base.zk, partition_states=states)
    ctl = _replace(base.controller, leadership=states)
    return Family(
        V.SRec(ClusterState, (("zk", zk), ("controller", ctl), ("config", base.config))), tuple(cons)
    )


@cache
def base_state(profile_name: str) -> ClusterState:
    from kcspec.model.step import SpecMachine

    machine = SpecMachine(profile_name)
    s = ClusterState()
    for ev in SETUP:
        s = machine.step(s, ev).state
    return s


def _bindings(action: Action, event: E.ControllerEvent) -> dict[str, Any]:
    return {p.name: getattr(event, p.name) for p in action.params}


def _show_event(event: E.ControllerEvent) -> str:
    return f"{event.kind} {codec.dumps(event)}"


@dataclass
class _Outcome:
    seconds: float = 0.0
    checked: int = 0
    cti: str | None = None
    cti_event: str = ""
    not_decided: list[str] = field(default_factory=list)


def prove_induction(profile: Profile) -> list[ProofResult]:
    from kcspec.spec.actions import build_actions
    from kcspec.spec.invariants import invariants

    invs = invariants(profile)
    actions = build_actions(profile)
    base = base_state(profile.name)
    outcomes = {inv.name: _Outcome() for inv in invs}
    for event in ACTIONS:
        action = actions.get(event.kind)
        if action is None:
            continue
        start = time.perf_counter()
        fam = symbolic_family(base)
        ev = SymbolicEvaluator(Domain.brokers(BROKERS + 1))
        env = {"s": fam.state, **_bindings(action, event)}
        guard = V.as_bool(ev.eval(action.guard, env))
        work = ev.eval(action.effect, env)
        _, wf = V.record_fields(work)
        post, requests = wf["state"], wf["sent"]
        pre_ok = [V.as_bool(ev.eval(i.expr, {"s": fam.state})) for i in invs if i.kind == "state"]
        solver = z3.SolverFor("QF_FD")
        solver.add(*fam.constraints, V.bool_term(guard), *(V.bool_term(b) for b in pre_ok))
        setup = (time.perf_counter() - start) / max(1, len(invs))
        for inv in invs:
            out = outcomes[inv.name]
            if out.cti is not None:
                continue
            t0 = time.perf_counter()
            values = {"s": fam.state, "s2": post, "requests": requests}
            goal = V.as_bool(ev.eval(inv.expr, values if inv.kind == "step" else {"s": post}))
            try:
                ref = check_goal(solver, goal, ev.obligations, timeout_ms=CHECK_TIMEOUT_MS)
            except TimeoutError as exc:
                out.not_decided.append(f"{event.kind}: {exc}")
                out.seconds += time.perf_counter() - t0 + setup
                continue
            out.seconds += time.perf_counter() - t0 + setup
            if ref is not None and ref.broken_obligation:
                out.not_decided.append(
                    f"{event.kind}: the translation's obligation fails ({ref.broken_obligation})"
                )
                continue
            out.checked += 1
            if ref is not None:
                before = V.concretize(fam.state, ref.model)
                after = V.concretize(post, ref.model)
                out.cti = (
                    f"counterexample to induction: event {_show_event(event)}\n"
                    f"  before: {codec.dumps(before)}\n  after:  {codec.dumps(after)}"
                )
                out.cti_event = event.kind
    return [_result(profile, inv, outcomes[inv.name]) for inv in invs]


def _expected(profile: Profile, inv: Invariant, event_kind: str) -> str | None:
    return EXPECTED.get((profile.name, inv.name, event_kind)) or EXPECTED.get(("*", inv.name, event_kind))


def _result(profile: Profile, inv: Invariant, out: _Outcome) -> ProofResult:
    name = f"induction: {inv.name}"
    if out.cti is not None:
        reason = _expected(profile, inv, out.cti_event)
        if reason:
            return ProofResult(
                name, inv.section, "expected-counterexample", out.seconds, f"{out.cti}\n  expected: {reason}"
            )
        return ProofResult(name, inv.section, "counterexample", out.seconds, out.cti)
    if out.not_decided:
        return ProofResult(
            name,
            inv.section,
            "skipped",
            out.seconds,
            f"not decided for {len(out.not_decided)} action instance(s) (proved for {out.checked}): "
            + "; ".join(out.not_decided),
        )
    kinds = ", ".join(e.kind for e in ACTIONS)
    what = "Inv ∧ Action ⇒ Inv′" if inv.kind == "state" else "Inv ∧ Action ⇒ step property"
    return ProofResult(
        name,
        inv.section,
        "proved",
        out.seconds,
        f"{what} for {out.checked} action instance(s) ({kinds}) on 3 brokers, topic t with 2 partitions, "
        "symbolic leader and ISR of both partitions (not every state shape)",
    )
