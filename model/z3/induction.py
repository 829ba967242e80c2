"""Inductiveness of the §11 invariants over every spec action, on a bounded symbolic state space.

For every invariant ``I`` of ``spec/invariants.py`` and every action (each event kind of ``spec/events.py``
the profile has), the backend checks, over every state of the bounded families of ``induction_family``
(brokers 0..1, topic ``t`` with one partition, everything the invariants depend on symbolic) and every
parameter value of ``induction_actions``:

    family constraints ∧ guard ∧ (every state invariant holds before) ⇒ I after the step

— ``Inv ∧ Action ⇒ Inv′`` for state invariants; for step invariants the step property of the pre-state,
the post-state and the requests sent. The assumption "every state invariant holds before" is the
conjunction of *all* state invariants (the §11 ones and the strengthenings, see below), so a verdict
"proved" for every state invariant and every action means their conjunction is inductive on the bounded
space.

Verdicts per (invariant, action): ``proved`` (unsat for every family and instance), ``counterexample`` (a
*counterexample to induction*, CTI: printed as the pre-state and the post-state — canonical JSON of the
pre-state and a diff — and the event), ``expected-counterexample`` (listed in ``EXPECTED`` with the reason:
a weakness Kafka has), ``not-decided`` (Z3 time-out or a term the translation cannot build: never reported
as proved) and ``vacuous`` (the guard never holds on the bounded space).

Decisions (where the time goes and how it was made tractable; measured, see benchmarks/results/prove.md):

* Bounds: 2 brokers, 1 partition (a 3-broker, 2-partition base with symbolic leadership timed out on every
  check). The families split on the registered brokers, the active controller and whether ``t`` is queued
  for deletion (``Shape``, 12 families), so the controller's control flow is mostly concrete; a fully
  symbolic liveness made one broker-failure evaluation take 10–15 s.
* Symbolic evaluation of the action is done once per (family, action instance) and shared by every
  invariant; the assumed pre-state invariants are evaluated once per family. Evaluating the actions (the
  broker events with a topic being deleted: seconds each) and the goals is most of the time now.
* Queries: Z3's default (incremental) solver, one per instance: the guard under the assumed invariants, then
  the step's definedness (the evaluator's obligations) and *all* goals in one query. Only when that is refuted
  are the obligations checked alone and assumed, and the goals the model falsifies split off as
  counterexamples (the rest re-checked together). A goal that is syntactically the invariant's own pre-state
  term (the step did not touch what it reads) needs no query. Where the default solver answers "unknown",
  the same assertions go to the finite-domain pipeline ``simplify; propagate-values; dt2bv; solve-eqs;
  qffd`` (bounded integers, enums as bit-vectors); an answer neither gives is reported as not decided.
  (The pipeline used to come first, but it gives up on most of these queries — an enum equality it cannot
  bit-blast — so every query was solved twice.) Per-query time-out ``CHECK_TIMEOUT_MS``.
* Families are independent jobs: ``prove_induction`` runs them in ``WORKERS`` processes (each rebuilds the
  profile, invariants, actions and family from their names: Z3 terms do not pickle) and combines the results
  in ``shapes`` order, so the verdicts and the counterexample shown do not depend on the scheduling.
* Strengthenings: where a CTI was unreachable, an auxiliary invariant was added to ``spec/invariants.py``
  (W6–W14, docs start with "Strengthening.", checked by every backend). Facts the family's *shape* builds in
  (registered = live brokers, the controller is registered) are such invariants too (W6, W7), so they are
  checked for the post-state like any other. Where a CTI is reachable and the invariant is violated in Kafka
  (a weakness of the profile), it is listed in ``EXPECTED`` with the reaching sequence, which is a regression
  test.

What this does **not** cover: more than 2 brokers or 1 partition per topic in the pre-state, reassignments
in flight, pending admin znodes and armed ZooKeeper faults in the pre-state (the actions that create them
are checked, the states after them are not pre-states of the families).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.model.z3.induction_actions import Instance, instances
from kcspec.model.z3.induction_family import Family, Shape, family, shapes
from kcspec.model.z3.induction_show import show_cti
from kcspec.model.z3.results import ProofResult
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec.lang import Action, Invariant
from kcspec.spec.profiles import Profile

BROKERS = 2
CHECK_TIMEOUT_MS = 5_000
WORKERS = 2
"""Worker processes of ``prove_induction`` (the development machine has 2 cores)."""
TACTIC = ("simplify", "propagate-values", "dt2bv", "solve-eqs", "simplify", "qffd")

DETAILS = "details:"
"""The line of a summary after which the per-action counterexamples and reasons follow."""

VERDICTS = ("proved", "counterexample", "expected-counterexample", "not-decided", "vacuous")

EXPECTED: dict[tuple[str, str, str], str] = {
    ("kafka-1.1", "I13 no elections for topics queued for deletion", "ControlledShutdown"): (
        "1.1 weakness, reachable: 1.1 controlled shutdown moves the partitions whose *cached* leader is the"
        " shutting-down broker, with no deletion filter (§7.10), while I13's 1.1 exemption is stated over the"
        " znode's leader; a zombie controller's write (no fencing in 1.1, KAFKA-6082, §9) can make the two differ."
        " Reached by brokers 0,1,2; failover(0); create t [[0,1,2]]; broker 2 fails; resignation; delete t (queued,"
        " ineligible at the next failover: a replica is offline); failover(0); zombie (epoch 1) writes t-0 leader -1;"
        " ControlledShutdown(0) elects 1 for t-0 (tests/quality/explore/test_regressions.py,"
        " test_kafka_1_1_controlled_shutdown_elects_for_a_topic_queued_for_deletion)"
    ),
}
"""(profile or "*", invariant name, event kind) → why the counterexample to induction is expected."""


@dataclass(frozen=True)
class InductionOutcome:
    """The outcome of the induction check of one (invariant, action) pair over every family and instance (its
    ``status`` is one of the words above; ``summarize`` turns the pairs into ``ProofResult``s)."""

    invariant: str
    section: str
    action: str
    status: str
    checked: int
    seconds: float
    detail: str = ""


@dataclass
class _Pair:
    checked: int = 0
    seconds: float = 0.0
    cti: str | None = None
    undecided: list[str] = field(default_factory=list)

    def absorb(self, other: _Pair) -> None:
        """Add the results of a later job (families later in ``shapes`` order): the first CTI is kept."""
        self.checked += other.checked
        self.seconds += other.seconds
        if self.cti is None:
            self.cti = other.cti
        self.undecided += other.undecided


@dataclass(frozen=True)
class _Pre:
    """A family's pre-state assumption, evaluated once per family: the term of every assumed state invariant
    and the evaluator's obligations for those terms."""

    terms: dict[str, Any]
    obligations: tuple[Any, ...]


def solver() -> z3.Solver:
    """The finite-domain solver of the induction checks (the second opinion of ``_answer``)."""
    return z3.Then(*TACTIC).solver()


def _answer(s: z3.Solver, timeout_ms: int) -> tuple[Any, Any]:
    """The answer of Z3's default (incremental) solver ``s`` and its model; where it gives up or times out, the
    same assertions go to the finite-domain pipeline, and an answer neither gives is "unknown" (never "proved").
    """
    s.set("timeout", timeout_ms)
    answer = s.check()
    if answer != z3.unknown:
        return answer, s.model() if answer == z3.sat else None
    reason = s.reason_unknown()
    second = solver()
    second.set("timeout", timeout_ms)
    second.add(s.assertions())
    answer = second.check()
    if answer == z3.unknown:
        return answer, f"{reason}; finite-domain pipeline: {second.reason_unknown()}"
    return answer, second.model() if answer == z3.sat else None


def _refute(s: z3.Solver, goals: Sequence[Any], timeout_ms: int) -> tuple[str, Any]:
    """Whether the solver's assertions imply every goal: ("proved", None), ("refuted", model) or ("timeout",
    reason)."""
    s.push()
    try:
        s.add(z3.Not(z3.And(*goals)) if len(goals) != 1 else z3.Not(goals[0]))
        answer, model = _answer(s, timeout_ms)
        if answer == z3.unsat:
            return "proved", None
        if answer != z3.sat:
            return "timeout", f"Z3 answered {answer} ({str(model)[:80]})"
        return "refuted", model
    finally:
        s.pop()


def _false_in(model: Any, term: Any) -> bool:
    return bool(z3.is_false(model.eval(term, model_completion=True)))


def _pre(fam: Family, assumed: Sequence[Invariant]) -> _Pre:
    ev = SymbolicEvaluator(Domain.brokers(BROKERS + 1))
    terms = {i.name: V.bool_term(V.as_bool(ev.eval(i.expr, {"s": fam.state}))) for i in assumed}
    return _Pre(terms, tuple(ev.obligations))


def _check_instance(
    fam: Family,
    inst: Instance,
    action: Action,
    invs: Sequence[Invariant],
    pre: _Pre,
    pairs: dict[tuple[str, str], _Pair],
    timeout_ms: int,
) -> None:
    """Check every invariant still open for ``inst`` on ``fam``: that the step is defined (the evaluator's
    obligations) and every goal, first in one query; when that query is refuted, the obligations alone, then all
    goals, and only the goals a model falsifies are split off as counterexamples (the rest re-checked together).
    """
    ev = SymbolicEvaluator(Domain.brokers(BROKERS + 1), list(pre.obligations))
    env = {"s": fam.state, **dict(inst.params)}
    start = time.perf_counter()
    guard = V.as_bool(ev.eval(action.guard, env))
    if isinstance(guard, bool) and not guard:
        return
    s = z3.Solver()
    s.add(*fam.constraints, *inst.constraints, V.bool_term(guard), *pre.terms.values())
    if _answer(s, timeout_ms)[0] == z3.unsat:
        return  # the guard never holds in this family when the invariants do
    open_invs = [i for i in invs if pairs[i.name, inst.kind].cti is None]
    try:
        work = ev.eval(action.effect, env)
        _, wf = V.record_fields(work)
        post, sent = wf["state"], wf["sent"]
        goals = {}
        for inv in open_invs:
            values = {"s": fam.state, "s2": post, "requests": sent} if inv.kind == "step" else {"s": post}
            goals[inv.name] = V.bool_term(V.as_bool(ev.eval(inv.expr, values)))
    except V.SymbolicError as exc:
        for inv in open_invs:
            pairs[inv.name, inst.kind].undecided.append(f"{inst.label}: no Z3 term ({exc})")
        return

    def note(names: Iterable[str], status: str, info: str = "") -> None:
        share = (time.perf_counter() - start) / max(1, len(open_invs))
        for name in names:
            pair = pairs[name, inst.kind]
            pair.seconds += share
            if status == "proved":
                pair.checked += 1
            elif status == "cti":
                pair.checked += 1
                pair.cti = info
            else:
                pair.undecided.append(info)

    obligations = [V.bool_term(o.condition) for o in ev.obligations]
    remaining = {
        n: g for n, g in goals.items() if not (z3.is_true(g) or (n in pre.terms and g.eq(pre.terms[n])))
    }
    if (
        not (obligations or remaining)
        or _refute(s, [*obligations, *remaining.values()], timeout_ms)[0] == "proved"
    ):
        note(goals, "proved")
        return
    if obligations:
        verdict, model = _refute(s, obligations, timeout_ms)
        if verdict != "proved":
            reason = next(
                (
                    o.reason
                    for o in ev.obligations
                    if verdict == "refuted" and _false_in(model, V.bool_term(o.condition))
                ),
                str(model),
            )
            info = (
                f"the step is not defined (the Python backend would fail: {reason}) in\n{show_cti(fam, inst, post, model)}"
                if verdict == "refuted"
                else f"{inst.label} [{fam.shape.label}]: time-out on the step's definedness: {model}"
            )
            note(goals, "undecided", info)
            return
        s.add(*obligations)
    note([n for n in goals if n not in remaining], "proved")
    while remaining:
        verdict, model = _refute(s, list(remaining.values()), timeout_ms)
        if verdict == "proved":
            note(remaining, "proved")
            return
        if verdict == "timeout":
            break
        broken = [n for n, g in remaining.items() if _false_in(model, g)]
        note(broken, "cti", show_cti(fam, inst, post, model))
        remaining = {n: g for n, g in remaining.items() if n not in broken}
    for name, goal in remaining.items():  # the joint query timed out: one query per goal
        verdict, model = _refute(s, [goal], timeout_ms)
        if verdict == "timeout":
            note([name], "undecided", f"{inst.label} [{fam.shape.label}]: time-out: {model}")
        else:
            note(
                [name],
                "proved" if verdict == "proved" else "cti",
                show_cti(fam, inst, post, model) if model is not None and verdict == "refuted" else "",
            )


def _check_family(
    profile: Profile,
    shape: Shape,
    invs: Sequence[Invariant],
    kinds: Sequence[str],
    timeout_ms: int,
) -> dict[tuple[str, str], _Pair]:
    """Every (invariant, action) pair over one family: the unit of work of a worker process."""
    from kcspec.spec.actions import build_actions
    from kcspec.spec.invariants import invariants as all_invariants

    every = all_invariants(profile)
    assumed = list({i.name: i for i in [*every, *invs] if i.kind == "state"}.values())
    actions = build_actions(profile)
    pairs = {(i.name, k): _Pair() for i in invs for k in kinds}
    fam = family(shape, same_epochs=profile.zk_write_fencing, brokers=BROKERS)
    pre = _pre(fam, assumed)
    for inst in instances(BROKERS, profile.kip455_reassignment):
        if inst.kind in kinds:
            _check_instance(fam, inst, actions[inst.kind], invs, pre, pairs, timeout_ms)
    return pairs


def _family_job(job: tuple[str, Shape, tuple[str, ...], int]) -> dict[tuple[str, str], _Pair]:
    """``_check_family`` in a worker process: Z3 terms are not picklable, so the worker rebuilds the profile,
    its invariants, actions and the family from their names and returns plain results."""
    from kcspec.spec.invariants import invariants as all_invariants
    from kcspec.spec.profiles import get_profile

    name, shape, kinds, timeout_ms = job
    profile = get_profile(name)
    return _check_family(profile, shape, all_invariants(profile), kinds, timeout_ms)


def _cost(shape: Shape) -> int:
    """A rough rank of a family's cost (active controller, then ``t`` being deleted), to start the longest first."""
    return 2 * int(shape.controller >= 0) + int(shape.deleting)


def check_profile(
    profile: Profile,
    invariants: Sequence[Invariant] | None = None,
    kinds: Sequence[str] | None = None,
    timeout_ms: int = CHECK_TIMEOUT_MS,
    only: Sequence[Shape] | None = None,
    workers: int = 1,
) -> list[InductionOutcome]:
    """The verdict of every (invariant, action) pair of ``profile`` (restricted to ``invariants``, event
    ``kinds`` and the family shapes ``only`` when given). The pre-state assumption is every state invariant of
    the profile and every state invariant being checked.

    Each family is checked on its own (``workers`` > 1: in that many worker processes, for the profile's own
    invariants only); the results are combined in the order of ``shapes``, so verdicts and the counterexample
    shown do not depend on the scheduling."""
    from kcspec.spec.actions import build_actions
    from kcspec.spec.invariants import invariants as all_invariants

    invs = list(invariants) if invariants is not None else list(all_invariants(profile))
    actions = build_actions(profile)
    chosen = tuple(k for k in actions if kinds is None or k in kinds)
    todo = list(only) if only is not None else shapes(BROKERS)
    if workers > 1 and invariants is None and len(todo) > 1:
        import multiprocessing

        order = sorted(range(len(todo)), key=lambda i: -_cost(todo[i]))
        jobs = [(profile.name, todo[i], chosen, timeout_ms) for i in order]
        from kcspec.model import interrupts

        # Workers ignore Ctrl-C and die with this process; an interrupt terminates the pool (``interrupts``),
        # since a worker that died mid-task would leave ``map`` waiting for ever.
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(min(workers, len(jobs)), initializer=interrupts.worker_initializer)
        with pool, interrupts.stopper(pool.terminate):
            done = pool.map(_family_job, jobs, chunksize=1)
        results = [done[order.index(i)] for i in range(len(todo))]
    else:
        results = [_check_family(profile, shape, invs, chosen, timeout_ms) for shape in todo]
    pairs = {(i.name, k): _Pair() for i in invs for k in chosen}
    for result in results:
        for key, pair in result.items():
            pairs[key].absorb(pair)
    return [_verdict(profile, inv, kind, pairs[inv.name, kind]) for inv in invs for kind in chosen]


def _expected(profile: Profile, inv: str, kind: str) -> str | None:
    return EXPECTED.get((profile.name, inv, kind)) or EXPECTED.get(("*", inv, kind))


def _verdict(profile: Profile, inv: Invariant, kind: str, pair: _Pair) -> InductionOutcome:
    def v(status: str, detail: str = "") -> InductionOutcome:
        return InductionOutcome(inv.name, inv.section, kind, status, pair.checked, pair.seconds, detail)

    if pair.cti is not None:
        reason = _expected(profile, inv.name, kind)
        if reason:
            return v("expected-counterexample", f"{pair.cti}\n  expected: {reason}")
        return v("counterexample", pair.cti)
    if pair.undecided:
        more = f" (and {len(pair.undecided) - 1} more family/instance(s))" if len(pair.undecided) > 1 else ""
        return v("not-decided", pair.undecided[0] + more)
    if pair.checked == 0:
        return v("vacuous", "the action's guard never holds on the bounded space")
    return v("proved", inv.kind)


def summarize(profile: Profile, verdicts: Sequence[InductionOutcome]) -> list[ProofResult]:
    """One ``ProofResult`` per invariant: its worst verdict over the actions, with the per-action verdicts."""
    from kcspec.spec.invariants import invariants as spec_invariants

    spans = {i.name: str(i.span) for i in spec_invariants(profile) if i.span is not None}
    by_inv: dict[str, list[InductionOutcome]] = {}
    for v in verdicts:
        by_inv.setdefault(v.invariant, []).append(v)
    out = []
    for name, vs in by_inv.items():
        groups = {s: [v.action for v in vs if v.status == s] for s in VERDICTS}
        status = (
            "counterexample"
            if groups["counterexample"]
            else "skipped"
            if groups["not-decided"]
            else "expected-counterexample"
            if groups["expected-counterexample"]
            else "proved"
        )
        lines = [f"{s}: {', '.join(kinds)}" for s, kinds in groups.items() if kinds and s != "proved"]
        lines.insert(
            0,
            f"proved for {len(groups['proved'])} of {len(vs)} actions",
        )
        details = [f"{v.action}: {v.detail}" for v in vs if v.status not in ("proved", "vacuous")]
        if details:
            lines += [DETAILS, *details]
        out.append(
            ProofResult(
                f"induction: {name}",
                vs[0].section,
                status,
                sum(v.seconds for v in vs),
                "\n".join(lines),
                spans.get(name, ""),
            )
        )
    return out


def prove_induction(profile: Profile, workers: int = WORKERS) -> list[ProofResult]:
    """The inductiveness part of ``kcspec prove``."""
    return summarize(profile, check_profile(profile, workers=workers))
