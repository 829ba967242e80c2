"""Election lemmas (§6, §11 I1–I5): every strategy of ``spec/elections.py``, for *every* input over 1..N brokers.

The input is fully symbolic (``symbolic_election_input``): AR, the reassignment targets and the ISR are
sequences of distinct broker ids in any order and of any length ≤ B (a permutation of 0..B-1 with a
membership flag per slot), the current leader is any broker or −1, the online / online-or-shutting-down /
shutting-down sets are arbitrary subsets with ``online = online_or_shutting_down − shutting_down`` (which
is how ``election_input`` builds them, §3.1), and both unclean flags are free.

Each lemma restates what §6 says in Z3 directly over that input — never through the spec's own rule
trees — and is proved by asserting its negation against the result term the Z3 backend computes from
``elect``. Lemmas that are *known not to hold* are listed with the reason (``EXPECTED``) and reported as
expected counterexamples, with the counterexample, rather than hidden.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.model.z3.results import ProofResult, check_goal
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec import lang as L
from kcspec.spec.elections import elect
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ElectionInput,
    ElectionResult,
    ElectionStrategy,
    LeaderAndIsr,
)

S = ElectionStrategy
Bool = Any

SHORT = {
    S.OfflinePartitionLeaderElectionStrategy: "offline",
    S.ReassignPartitionLeaderElectionStrategy: "reassign",
    S.PreferredReplicaPartitionLeaderElectionStrategy: "preferred",
    S.ControlledShutdownPartitionLeaderElectionStrategy: "controlled-shutdown",
}


# ------------------------------------------------------------------------------------------ the input


def broker_sequence(name: str, brokers: int, constraints: list[Any]) -> V.SColl:
    """Any sequence of distinct broker ids of length ≤ ``brokers``, in any order."""
    values = [z3.Int(f"{name}_{i}") for i in range(brokers)]
    constraints.extend(z3.And(v >= 0, v < brokers) for v in values)
    if brokers > 1:
        constraints.append(z3.Distinct(*values))
    return V.SColl("seq", tuple((z3.Bool(f"{name}_in_{i}"), v) for i, v in enumerate(values)))


def broker_set(name: str, brokers: int) -> V.SColl:
    """Any subset of 0..B-1: one membership flag per broker (a bit-vector of width B)."""
    return V.SColl("set", tuple((z3.Bool(f"{name}_{b}"), b) for b in range(brokers)))


@dataclass(frozen=True)
class SymbolicElectionInput:
    value: V.SRec
    constraints: tuple[Any, ...]
    assignment: V.SColl
    targets: V.SColl
    isr: V.SColl
    leader: Any
    online: V.SColl
    online_or_sd: V.SColl
    shutting_down: V.SColl
    allow_unclean: Any
    unclean_enabled: Any


def renaming_invariant(expr: L.Expr) -> bool:
    """Whether ``expr`` treats broker ids only by identity: no order comparison, arithmetic or sorting, and no
    integer constant other than the sentinels −1/−2. Then renaming brokers commutes with the rule, so AR can
    be fixed to an ascending subset of 0..B-1 without losing any input (ISR, targets and sets stay free)."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, L.Sorted | L.Arith) or (isinstance(e, L.Cmp) and e.op not in ("==", "!=")):
            return False
        value = e.value if isinstance(e, L.Const) else None
        if isinstance(value, int) and not isinstance(value, bool) and value not in (-1, -2):
            return False
        stack.extend(L.children(e))
    return True


def canonical_sequence(name: str, brokers: int) -> V.SColl:
    """Any subset of 0..B-1 in ascending order: with renaming, any sequence of distinct brokers (see
    ``renaming_invariant``)."""
    return V.SColl("seq", tuple((z3.Bool(f"{name}_in_{b}"), b) for b in range(brokers)))


def symbolic_election_input(brokers: int, canonical_assignment: bool = False) -> SymbolicElectionInput:
    cons: list[Any] = []
    ar = canonical_sequence("ar", brokers) if canonical_assignment else broker_sequence("ar", brokers, cons)
    trs = broker_sequence("trs", brokers, cons)
    isr = broker_sequence("isr", brokers, cons)
    leader, epoch, version = z3.Int("leader"), z3.Int("leader_epoch"), z3.Int("zk_version")
    cons += [leader >= NO_LEADER, leader < brokers, epoch >= 0, epoch <= 1, version >= 0, version <= 1]
    online, online_sd, sd = (
        broker_set("online", brokers),
        broker_set("online_or_sd", brokers),
        broker_set("sd", brokers),
    )
    for (po, _), (ps, _), (pd, _) in zip(online.items, online_sd.items, sd.items, strict=True):
        cons.append(po == z3.And(ps, z3.Not(pd)))
    allow, enabled = z3.Bool("allow_unclean"), z3.Bool("unclean_enabled")
    lai = V.SRec(
        LeaderAndIsr, (("leader", leader), ("leader_epoch", epoch), ("isr", isr), ("zk_version", version))
    )
    value = V.SRec(
        ElectionInput,
        (
            ("assignment", ar),
            ("target_replicas", trs),
            ("leader_and_isr", lai),
            ("online", online),
            ("online_or_shutting_down", online_sd),
            ("shutting_down", sd),
            ("allow_unclean", allow),
            ("unclean_enabled", enabled),
        ),
    )
    return SymbolicElectionInput(
        value, tuple(cons), ar, trs, isr, leader, online, online_sd, sd, allow, enabled
    )


# ------------------------------------------------------------------------------------------ §6 restated


def _in(x: Any, coll: V.SColl) -> Bool:
    return V.member(x, coll)


def _exists(coll: V.SColl, pred: Callable[[Any], Bool]) -> Bool:
    return V.b_or(*(V.b_and(p, pred(x)) for p, x in coll.items))


def _is_first(leader: Any, coll: V.SColl, pred: Callable[[Any], Bool]) -> Bool:
    """No candidate before the leader's slot satisfies ``pred``."""
    parts = []
    for i, (p, x) in enumerate(coll.items):
        earlier = _exists(V.SColl("seq", coll.items[:i]), pred)
        parts.append(V.b_implies(V.b_and(p, V.eq(x, leader)), V.b_not(earlier)))
    return V.b_and(*parts)


@dataclass(frozen=True)
class StrategyFacts:
    """What §6 says a strategy may choose: its candidates in order and the predicate on the chosen one."""

    candidates: V.SColl
    predicate: Callable[[Any], Bool]


def strategy_facts(strategy: ElectionStrategy, i: SymbolicElectionInput) -> StrategyFacts:
    def online(r: Any) -> Bool:
        return _in(r, i.online)

    def in_isr(r: Any) -> Bool:
        return _in(r, i.isr)

    if strategy is S.OfflinePartitionLeaderElectionStrategy:
        unclean_ok = V.b_and(V.b_not(_exists(i.isr, online)), V.b_or(i.allow_unclean, i.unclean_enabled))
        return StrategyFacts(
            i.assignment, lambda r: V.b_or(V.b_and(online(r), in_isr(r)), V.b_and(unclean_ok, online(r)))
        )
    if strategy is S.ReassignPartitionLeaderElectionStrategy:
        return StrategyFacts(i.targets, lambda r: V.b_and(online(r), in_isr(r)))
    if strategy is S.PreferredReplicaPartitionLeaderElectionStrategy:
        head = V.SColl("seq", i.assignment.items)

        def is_head(r: Any) -> Bool:
            return _is_first(r, head, lambda _x: True)

        return StrategyFacts(i.assignment, lambda r: V.b_and(is_head(r), online(r), in_isr(r)))
    return StrategyFacts(
        i.assignment,
        lambda r: V.b_and(_in(r, i.online_or_sd), in_isr(r), V.b_not(_in(r, i.shutting_down))),
    )


Goal = Callable[[SymbolicElectionInput, Any, StrategyFacts], Bool]


@dataclass(frozen=True)
class Lemma:
    name: str
    section: str
    strategies: tuple[ElectionStrategy, ...]
    goal: Goal


def _leader(r: Any) -> Any:
    return V.record_fields(r)[1]["leader"]


def _field(r: Any, name: str) -> Any:
    return V.record_fields(r)[1][name]


def _coll(v: Any) -> V.SColl:
    return V.as_coll(v)


def _elected(r: Any) -> Bool:
    return V.b_not(V.eq(_leader(r), NO_LEADER))


ALL = tuple(S)

LEMMAS: tuple[Lemma, ...] = (
    Lemma(
        "the chosen leader is a candidate (AR; TRS/RAR for Reassign)",
        "§6",
        ALL,
        lambda i, r, f: V.b_implies(_elected(r), _in(_leader(r), f.candidates)),
    ),
    Lemma(
        "the chosen leader satisfies the strategy's predicate",
        "§6",
        ALL,
        lambda i, r, f: V.b_implies(_elected(r), f.predicate(_leader(r))),
    ),
    Lemma(
        "the chosen leader is the first candidate satisfying it",
        "§6",
        ALL,
        lambda i, r, f: V.b_implies(_elected(r), _is_first(_leader(r), f.candidates, f.predicate)),
    ),
    Lemma(
        "no leader exactly when no candidate satisfies the predicate",
        "§6",
        ALL,
        lambda i, r, f: V.eq(V.b_not(_elected(r)), V.b_not(_exists(f.candidates, f.predicate))),
    ),
    Lemma(
        "the resulting ISR contains the leader",
        "§11 I1",
        ALL,
        lambda i, r, f: V.b_implies(_elected(r), _in(_leader(r), _coll(_field(r, "isr")))),
    ),
    Lemma(
        "the resulting ISR is never empty when a leader is chosen",
        "§11 I3",
        ALL,
        lambda i, r, f: V.b_implies(_elected(r), V.b_or(*(p for p, _ in _coll(_field(r, "isr")).items))),
    ),
    Lemma(
        "a shutting-down broker is never chosen",
        "§11 I5",
        (S.ControlledShutdownPartitionLeaderElectionStrategy,),
        lambda i, r, f: V.b_not(_in(_leader(r), i.shutting_down)),
    ),
    Lemma(
        "unclean exactly when no online ISR member and unclean is allowed or enabled",
        "§11 I2",
        (S.OfflinePartitionLeaderElectionStrategy,),
        lambda i, r, f: V.eq(
            V.bool_term(_field(r, "unclean")),
            V.bool_term(
                V.b_and(
                    _elected(r),
                    V.b_not(_exists(i.isr, lambda x: _in(x, i.online))),
                    V.b_or(i.allow_unclean, i.unclean_enabled),
                )
            ),
        ),
    ),
    Lemma(
        "an unclean leader's ISR is [leader]; a clean one keeps only online ISR members",
        "§6",
        (S.OfflinePartitionLeaderElectionStrategy,),
        lambda i, r, f: V.b_implies(
            _elected(r),
            V.ite(
                V.bool_term(_field(r, "unclean")),
                V.eq(_field(r, "isr"), V.SColl("seq", ((True, _leader(r)),))),
                V.b_and(*(V.b_implies(p, _in(x, i.online)) for p, x in _coll(_field(r, "isr")).items)),
            ),
        ),
    ),
    Lemma(
        "the ISR is unchanged",
        "§6",
        (S.ReassignPartitionLeaderElectionStrategy, S.PreferredReplicaPartitionLeaderElectionStrategy),
        lambda i, r, f: V.eq(_field(r, "isr"), i.isr),
    ),
    Lemma(
        "the resulting ISR is a subset of AR",
        "§11 I4",
        (S.OfflinePartitionLeaderElectionStrategy,),
        lambda i, r, f: V.b_implies(
            _elected(r),
            V.b_and(*(V.b_implies(p, _in(x, i.assignment)) for p, x in _coll(_field(r, "isr")).items)),
        ),
    ),
    Lemma(
        "every online-or-shutting-down assigned replica receives the LeaderAndIsr",
        "§6",
        (S.ControlledShutdownPartitionLeaderElectionStrategy,),
        lambda i, r, f: V.b_and(
            *(
                V.b_implies(V.b_and(p, _in(x, i.online_or_sd)), _in(x, _coll(_field(r, "recipients"))))
                for p, x in i.assignment.items
            )
        ),
    ),
    Lemma(
        "every online assigned replica receives the LeaderAndIsr",
        "§6",
        (S.OfflinePartitionLeaderElectionStrategy, S.ControlledShutdownPartitionLeaderElectionStrategy),
        lambda i, r, f: V.b_and(
            *(
                V.b_implies(V.b_and(p, _in(x, i.online)), _in(x, _coll(_field(r, "recipients"))))
                for p, x in i.assignment.items
            )
        ),
    ),
)

EXPECTED: dict[tuple[str, str], str] = {
    (
        "*",
        "the resulting ISR is a subset of AR",
    ): "§6 edge cases / §11 I4: the clean Offline ISR keeps live ISR members that are not assigned",
    (
        "kafka-1.1",
        "every online-or-shutting-down assigned replica receives the LeaderAndIsr",
    ): "§6 [1.1] (KAFKA-7482): the shutting-down broker receives no LeaderAndIsr about losing leadership",
}
"""(profile or "*", lemma name) → why the lemma is known not to hold there."""


def expected_reason(profile: Profile, lemma: Lemma) -> str | None:
    return EXPECTED.get((profile.name, lemma.name)) or EXPECTED.get(("*", lemma.name))


# ------------------------------------------------------------------------------------------ running


def describe_input(inp: ElectionInput) -> str:
    lai = inp.leader_and_isr
    return (
        f"AR={list(inp.assignment)} targets={list(inp.target_replicas)} leader={lai.leader} ISR={list(lai.isr)} "
        f"online={sorted(inp.online)} online_or_shutting_down={sorted(inp.online_or_shutting_down)} "
        f"shutting_down={sorted(inp.shutting_down)} allow_unclean={inp.allow_unclean} "
        f"unclean_enabled={inp.unclean_enabled}"
    )


def describe_result(r: ElectionResult) -> str:
    return f"leader={r.leader} ISR={list(r.isr)} recipients={list(r.recipients)} unclean={r.unclean}"


def prove_strategy(profile: Profile, strategy: ElectionStrategy, max_brokers: int) -> list[ProofResult]:
    """Every lemma of ``strategy`` for 1..``max_brokers`` brokers; one result per lemma."""
    lemmas = [lm for lm in LEMMAS if strategy in lm.strategies]
    seconds = dict.fromkeys((lm.name for lm in lemmas), 0.0)
    refuted: dict[str, str] = {}
    expr = elect(profile, strategy, L.var("inp"))
    canonical = renaming_invariant(expr)
    domain = (
        "AR fixed to an ascending subset up to broker renaming (the rule is renaming-invariant)"
        if canonical
        else "AR any permutation"
    )
    for brokers in range(1, max_brokers + 1):
        start = time.perf_counter()
        i = symbolic_election_input(brokers, canonical_assignment=canonical)
        ev = SymbolicEvaluator(Domain.brokers(brokers))
        result = ev.eval(expr, {"inp": i.value})
        facts = strategy_facts(strategy, i)
        solver = z3.SolverFor("QF_FD")  # every integer is bounded: Z3's finite-domain (SAT) engine decides it
        solver.add(*i.constraints)
        setup = time.perf_counter() - start
        for lm in lemmas:
            if lm.name in refuted:
                continue
            t0 = time.perf_counter()
            ref = check_goal(solver, lm.goal(i, result, facts), ev.obligations)
            seconds[lm.name] += time.perf_counter() - t0 + setup / len(lemmas)
            if ref is not None:
                inp = V.concretize(i.value, ref.model)
                out = V.concretize(result, ref.model)
                broken = (
                    f" (encoding obligation broken: {ref.broken_obligation})" if ref.broken_obligation else ""
                )
                refuted[lm.name] = (
                    f"{brokers} broker(s){broken}: input {describe_input(inp)} → result {describe_result(out)}"
                )
    results: list[ProofResult] = []
    for lm in lemmas:
        name = f"election/{SHORT[strategy]}: {lm.name}"
        reason = expected_reason(profile, lm)
        if lm.name in refuted:
            status = "expected-counterexample" if reason else "counterexample"
            detail = refuted[lm.name] + (f" — expected: {reason}" if reason else "")
        elif reason:
            status, detail = "counterexample", f"expected a counterexample ({reason}) but the lemma holds"
        else:
            status, detail = "proved", f"every input over 1..{max_brokers} brokers; {domain}"
        results.append(
            ProofResult(name, lm.section, status, seconds[lm.name], detail, _span(expr, strategy.name))
        )
    return results


def _span(expr: L.Expr, rule: str) -> str:
    """Where the spec writes the rule ``rule`` that ``expr`` (a strategy's election) applies, or ``""``."""
    stack, seen = [expr], set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, L.Rule) and e.name == rule and e.span is not None:
            return str(e.span)
        stack.extend(L.children(e))
    return ""


def prove_elections(profile: Profile, max_brokers: int) -> list[ProofResult]:
    out: list[ProofResult] = []
    for strategy in S:
        out.extend(prove_strategy(profile, strategy, max_brokers))
    return out
