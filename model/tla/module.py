"""``generate(profile, config)``: the spec compiled to a TLA+ module and a TLC configuration.

The module has the three state variables of ``ClusterState`` (``zk``, ``controller``, ``config``),
``Init`` (the empty cluster), one operator per spec action (its guard, then its effect's final state;
step invariants are checked with ``Assert`` inside each action so the state space is the same as the
explorer's), ``Next`` (every action over the finite parameter domains of ``ModelConfig``, each conjunct of its
guard checked as soon as the parameters it reads are bound: ``hoisted_guard``), ``Spec``,
the state invariants as named operators and ``StateConstraint`` (the bounds). Everything is generated
from the spec's ``Action`` and ``Invariant`` expressions; the text is deterministic.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kcspec.model.tla import bounds, domains, liveness
from kcspec.model.tla import types as ty
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.emit import STATE_VARIABLES, Emitter, Procedures
from kcspec.model.tla.generalised import Generalised, for_profile, generalise_roots
from kcspec.model.tla.kinds import KindChecker, KindError
from kcspec.model.tla.layout import MAX_LINE, Block, Line, concat, indent, text, vstack
from kcspec.model.tla.order import Orders
from kcspec.model.tla.prelude import PRELUDE, PRELUDE_NAMES
from kcspec.model.tla.sany_checks import check_module
from kcspec.model.tla.share import share
from kcspec.model.tla.syntax import SyntaxCheckUnavailable
from kcspec.model.tla.values import NONE_TEXT, value_block
from kcspec.model.tla.wrap import wrap_module
from kcspec.spec import lang as L
from kcspec.spec.lang import Action, Invariant, Param
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import Request
from kcspec.spec.state import ClusterState

STATE_VARS = STATE_VARIABLES
CONSTANT_NAMES = (
    "Brokers",
    "Topics",
    "PartitionCount",
    "ReplicationFactor",
    "MaxControllerEpoch",
    "MaxLeaderEpoch",
    "MaxZxid",
    "MaxZkVersion",
    NONE_TEXT,
)
DOMAIN_DEFS = r"""TopicPartitions == {[topic |-> t, partition |-> p] : t \in Topics, p \in 0..(PartitionCount - 1)}
ReplicaLists == {q \in UNION {[1..n -> Brokers] : n \in 1..Cardinality(Brokers)} : Cardinality(Range(q)) = Len(q)}
RfLists == {q \in ReplicaLists : Len(q) = ReplicationFactor}
Assignments == UNION {[1..n -> RfLists] : n \in 1..PartitionCount}"""

RESERVED = (
    set(STATE_VARS)
    | set(CONSTANT_NAMES)
    | set(PRELUDE_NAMES)
    | {
        "s",
        "vars",
        "Init",
        "Next",
        "Spec",
        "FairSpec",
        "StateConstraint",
        "StepInvariantsHold",
        "TakeStep",
        "WithinBounds",
        "TopicPartitions",
        "ReplicaLists",
        "RfLists",
    }
    | {p.name for p in liveness.PROPERTIES}
    | {"Assignments", "StrRank", "Head", "Tail", "Len", "Append", "Seq", "SubSeq", "SelectSeq", "Cardinality"}
    | {"Nat", "Int", "Assert", "Print", "Permutations", "ToString", "IsFiniteSet", "BOOLEAN", "DOMAIN"}
)


STEP_CHECK = "StepInvariantsHold"
"""The operator every action calls on its outcome: each step invariant, as an ``Assert`` naming the action."""

TAKE_STEP = "TakeStep"
"""The operator every action ends with: the primed variables from its outcome ``w``, then the step invariants."""


def take_step(step_invariants: Sequence[Invariant]) -> Block:
    """``TakeStep(w, action)``: the next state is the outcome ``w``'s state, and the step invariants hold on ``w``.

    Why an operator and not the same conjuncts after each action's ``LET w == effect IN``: TLC evaluates an
    action's body in its next-state mode, where a ``LET`` binds no value (TLC 2.15 and later, ``Tool.getNextStates``
    on a ``LetInNode`` goes straight to the body); every mention of ``w`` there evaluates the whole effect again,
    once per primed variable and once for the step invariants — four times per successor. An operator's arguments
    are values TLC computes once and keeps (``LazyValue``), so passing the outcome to ``TakeStep`` evaluates the
    effect once. The relation is the same; TLC's time per state is about half (``benchmarks/results/tla_cost.md``).
    """
    updates = [text(f"{v}' = w.state.{v}") for v in STATE_VARS]
    if step_invariants:
        updates.append(text(f"{STEP_CHECK}(w, action)"))
    return vstack(
        _comment(["An action's step: the next state is its outcome w, on which the step invariants hold."]),
        text(f"{TAKE_STEP}(w, action) =="),
        indent(vstack(*(concat(text("/\\ "), u) for u in updates)), 4),
    )


def step_check(step_invariants: Sequence[Invariant]) -> Block:
    """``StepInvariantsHold(w, action)``: the step invariants of the outcome ``w`` of ``action``, each an ``Assert``
    whose message names the invariant, its section and the action (TLC prints it when the check fails). One
    operator instead of the same list in every action; the order of the checks is the order of the list.

    Each check is ``IF holds THEN TRUE ELSE Assert(FALSE, message)``: the message, which names the action, is
    built only when the invariant fails. ``Assert(holds, message)`` built it for every successor TLC generates
    (13 strings joined and interned per successor: about 4 % of TLC's samples). Not ``holds \\/ Assert(…)``: TLC takes
    every disjunct of an action as a way to a next state, so the ``Assert`` would always be reached."""
    checks: list[Block] = []
    for inv in step_invariants:
        message = f'"step invariant {inv.name} ({_ascii(inv.section)}) violated by "'
        tail = " \\o action)"
        head = "   ELSE Assert(FALSE, "
        last = (
            [head + message + tail]
            if len(head + message + tail) + 4 <= MAX_LINE
            else [head + message, "                      \\o action)"]
        )
        checks.append(
            tuple(
                Line(x) for x in [f"/\\ IF StepInv_{ident(inv.name)}(w.state, w.sent)", "   THEN TRUE", *last]
            )
        )
    return vstack(
        _comment(["The step invariants (spec/invariants.py), checked on the outcome of every action."]),
        text(f"{STEP_CHECK}(w, action) =="),
        indent(vstack(*checks), 4),
    )


class ModuleError(ValueError):
    """The spec cannot be compiled to TLA+ for this configuration (the message names the action or invariant)."""


@dataclass(frozen=True)
class LineOrigin:
    """Where a line of the generated module comes from: the top-level definition, the innermost rule and where
    the spec writes that rule (``spec/elections.py:80``)."""

    definition: str
    rule: str | None
    span: str | None = None


@dataclass(frozen=True)
class GeneratedModule:
    name: str
    tla: str
    cfg: str
    origins: tuple[LineOrigin, ...]
    """``origins[n - 1]`` is the origin of line ``n`` of ``tla``."""
    liveness_cfg: str = ""
    """A TLC configuration that checks the liveness ``PROPERTY``s under ``FairSpec`` (``liveness``)."""
    kind_checks: tuple[tuple[str, int], ...] = ()
    """What the static kind check (``kinds``) verified: how many places of each sort, e.g. ``("=", 412)``."""

    def origin(self, line: int) -> LineOrigin | None:
        return self.origins[line - 1] if 1 <= line <= len(self.origins) else None

    def source_map_json(self) -> str:
        return json.dumps(
            {"module": self.name, "lines": [[o.definition, o.rule, o.span] for o in self.origins]},
            indent=None,
        )


def module_name(profile: Profile) -> str:
    return "KafkaController_" + profile.kafka_version.replace(".", "_")


def param_domain(action: str, p: Param) -> str:
    """The TLA+ text of the finite set an action parameter ranges over in ``Next`` (``domains``)."""
    try:
        return domains.param_domain(action, p).tla
    except domains.DomainError as exc:
        raise ModuleError(str(exc)) from None


def check_domain(kinds: KindChecker, action: str, p: Param) -> None:
    """The set a parameter ranges over in ``Next`` must not mix kinds (TLC enumerates and sorts it)."""
    try:
        parts = domains.param_domain(action, p).parts
    except domains.DomainError as exc:
        raise ModuleError(str(exc)) from None
    for other in parts[1:]:
        where = f"operator Next (the domain of {action}'s parameter {p.name})"
        kinds.check("a parameter domain", parts[0], other, where, str(parts[0]), str(other))


def ident(name: str) -> str:
    """``name`` as a TLA+ identifier: every other character becomes ``_``."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name.strip())
    return out if out and not out[0].isdigit() else f"X{out}"


def _ascii(section: str) -> str:
    """A section citation for a TLA+ string literal (kept ASCII)."""
    return section.replace("§", "section ")


def _comment(lines: Sequence[str]) -> Block:
    return tuple(Line(f"(* {line} *)" if line else "") for line in lines)


def _not_in_models_lines(action: str) -> list[str]:
    """Why ``Next`` tries no instance of ``action`` (``domains.NOT_IN_MODELS``), for its definition's comment."""
    reason = domains.NOT_IN_MODELS.get(action)
    if reason is None:
        return []
    return _doc_lines(f"Not in the models: Next quantifies its parameters over {{}}, because {reason}.")


def _next_comment(a: Action) -> Block:
    """The comment above an action's disjunct in ``Next``: its section and name (and, for an action kept out of
    the models, that it is, with the reason at its definition)."""
    if a.name in domains.NOT_IN_MODELS:
        return _comment([f"{a.section} {a.name}: not in the models (no instance; why: at its definition)"])
    return _comment([f"{a.section} {a.name}"])


def _doc_lines(doc: str, width: int = 96) -> list[str]:
    words = " ".join(doc.split()).split(" ")
    out: list[str] = []
    current = ""
    for w in words:
        if current and len(current) + 1 + len(w) > width:
            out.append(current)
            current = w
        else:
            current = f"{current} {w}".strip()
    if current:
        out.append(current)
    return out


class _Builder:
    def __init__(self, profile: Profile, config: ModelConfig) -> None:
        self.profile = profile
        self.config = config
        self.orders = Orders(("", *config.topic_names))
        self.state_t = ty.T("rec", ClusterState)
        self.reserved: set[str] = set(RESERVED)
        self.procedures = Procedures(self.reserved)
        self.sources: dict[str, str] = {}
        """Action name → the spec function that builds it, cited in the action's comment."""
        self.rules = Generalised((), (), (), ())
        self.procedures.rule_defs = self.rules.rule_defs

    def generalise(
        self, actions: Sequence[Action], invariants: Sequence[Invariant], builtin: str | None
    ) -> None:
        """Group the rule copies of every action and invariant into parametrised operators (``generalise``), and
        rewrite every expression the module emits (``generalised``: kept per built-in profile, ``builtin``)."""
        collect: list[L.Expr] = [x for a in actions for x in (a.guard, a.effect)]
        collect += [i.expr for i in invariants]
        # the order in which the builder first asks for them: invariants, actions, then the guards' conjuncts
        roots = [i.expr for i in invariants] + [x for a in actions for x in (a.guard, a.effect)]
        names = [f"invariant {i.name}" for i in invariants] + [
            f"action {a.name} {part}" for a in actions for part in ("guard", "effect")
        ]
        for a in actions:
            conjuncts = _conjuncts(a.guard)
            roots += conjuncts
            names += [f"action {a.name} conjunct {k}" for k in range(len(conjuncts))]
        inline = frozenset(a.name for a in actions)

        def compute() -> Generalised:
            return generalise_roots(collect, roots, inline)

        self.rules = compute() if builtin is None else for_profile(builtin, names, roots, compute)
        self.procedures.rule_defs = self.rules.rule_defs

    def rewrite(self, e: L.Expr) -> L.Expr:
        """``e`` with its rule copies as calls of their generalised operators, its repeats shared (``share``)."""
        return share(self.rules.rewrite(e))

    def emitter(self, free: dict[str, tuple[str, ty.T]]) -> Emitter:
        return Emitter(free, set(self.reserved), self.orders, self.procedures)

    def _guard_and_effect(self, a: Action, operator: str) -> tuple[list[str], Block, str, Block]:
        """The action's parameter names, its guard, the name bound to its outcome and its effect (emitted)."""
        names = [p.name for p in a.params]
        clash = [n for n in names if n in RESERVED]
        if clash:
            raise ModuleError(f"action {a.name}: parameter name(s) {clash} clash with the module's own names")
        free = {"s": ("s", self.state_t), **{p.name: (p.name, ty.from_hint(p.type)) for p in a.params}}
        em = self.emitter(free)
        em.operator = operator
        em.inline_rules.add(a.name)
        em.rules.append(f"{a.name} ({a.section})")
        guard = em.emit(self.rewrite(a.guard))
        w = em.fresh("w")
        effect = em.emit(self.rewrite(a.effect))
        return names, guard.block, w, effect.block

    def successor(self, a: Action) -> tuple[str, Block]:
        """``<A>_Successor(params)``: the state the action leads to when its guard holds, else ``s``.

        The fairness conditions (``liveness.fair_spec``) compare it with ``s`` and the model's bounds: this is
        ``ENABLED <<A>>_vars`` as a state expression, which TLC evaluates like any other, where ``ENABLED`` of
        these actions costs TLC more than the rest of the liveness check."""
        op = f"{a.name}_Successor"
        names, guard, w, effect = self._guard_and_effect(a, op)
        body = vstack(
            concat(text("IF "), guard),
            concat(text("THEN "), vstack(concat(text(f"LET {w} == "), effect), text(f"IN  {w}.state"))),
            text("ELSE s"),
        )
        head = f"{op}({', '.join(names)}) ==" if names else f"{op} =="
        origin = f"{a.name} ({a.section})"
        block = vstack(
            _comment(
                [f"{a.section} The state {a.name} leads to (s when its guard is false), for its fairness."]
            ),
            tuple(Line(line.text, line.origin or origin) for line in vstack(text(head), indent(body, 4))),
        )
        return op, block

    def action(self, a: Action) -> tuple[str, Block]:
        names, guard_block, w, effect_block = self._guard_and_effect(a, a.name)
        body = vstack(
            concat(text("/\\ "), guard_block),
            concat(
                text("/\\ "),
                vstack(concat(text(f"LET {w} == "), effect_block), text(f'IN  {TAKE_STEP}({w}, "{a.name}")')),
            ),
        )
        head = f"{a.name}({', '.join(names)}) ==" if names else f"{a.name} =="
        origin = f"{a.name} ({a.section})"
        if a.span is not None:
            self.procedures.spans.setdefault(origin, a.span)
        where = self.sources.get(a.name) or (str(a.span) if a.span is not None else "")
        block = vstack(
            _comment(
                [
                    f"{a.section} {a.name}" + (f" (spec: {where})" if where else ""),
                    *_doc_lines(a.doc),
                    *_not_in_models_lines(a.name),
                ]
            ),
            tuple(Line(line.text, line.origin or origin) for line in vstack(text(head), indent(body, 4))),
        )
        return a.name, block

    def enumeration(self, a: Action, domains_of: dict[str, str]) -> Block:
        """``a``'s entry of ``Next``: its parameters bound one by one, each conjunct of its guard checked as soon as
        the parameters it reads are bound, then the action itself (``hoisted_guard`` says why and why it is the
        same relation)."""
        conjuncts = _conjuncts(a.guard)
        params = [p.name for p in a.params]
        order, placed = hoisted_guard(params, [L.free_vars(c) for c in conjuncts])
        if "{}" in domains_of.values():  # an action kept out of the models: there is nothing to prune
            order, placed = params, [[] for _ in params] + [list(range(len(conjuncts)))]
        free = {"s": ("s", self.state_t), **{p.name: (p.name, ty.from_hint(p.type)) for p in a.params}}
        call = f"{a.name}({', '.join(params)})"
        inner: Block = text(call)
        for level in range(len(order), -1, -1):
            # the conjuncts that read every parameter stay in the action alone: checked here, they would prune
            # nothing the action does not, and the action would check them again
            checks = [conjuncts[j] for j in placed[level]] if level < len(order) else []
            if checks:
                em = self.emitter(free)
                em.operator = "Next"
                em.inline_rules.add(a.name)
                parts = [em.emit(self.rewrite(c)).block for c in checks]
                inner = vstack(*(concat(text("/\\ "), part) for part in (*parts, inner)))
            if level > 0:
                name = order[level - 1]
                binder = f"\\E {name} \\in {domains_of[name]} :"
                if len(inner) == 1 and len(binder) + len(inner[0].text) < MAX_LINE - 40:
                    inner = concat(text(binder + " "), inner)
                else:
                    inner = vstack(text(binder), indent(inner, 4))
        origin = f"{a.name} ({a.section})"  # TLC may label a step by this entry's lines (counterexample.NEXT_LABEL)
        return tuple(Line(line.text, line.origin or origin) for line in concat(text("\\/ "), inner))

    def invariant(self, inv: Invariant) -> tuple[str, Block]:
        if inv.kind == "state":
            free = {"s": ("s", self.state_t)}
            head = f"Inv_{ident(inv.name)} =="
        elif inv.kind == "step":
            free = {
                "s": ("s", self.state_t),
                "s2": ("s2", self.state_t),
                "requests": ("requests", ty.from_hint(frozenset[Request])),
            }
            head = f"StepInv_{ident(inv.name)}(s2, requests) =="
        else:
            raise ModuleError(f"invariant {inv.name} has unknown kind {inv.kind!r}")
        em = self.emitter(free)
        em.operator = head.split("(")[0].split(" ")[0]
        em.rules.append(f"{inv.name} ({inv.section})")
        body = em.emit(self.rewrite(inv.expr))
        origin = f"{inv.name} ({inv.section})"
        if inv.span is not None:
            self.procedures.spans.setdefault(origin, inv.span)
        where = f" (spec: {inv.span})" if inv.span is not None else ""
        block = vstack(
            _comment([f"{inv.section} {inv.name}{where}", *_doc_lines(inv.doc)]),
            tuple(
                Line(line.text, line.origin or origin) for line in vstack(text(head), indent(body.block, 4))
            ),
        )
        return head.split("(")[0].split(" ")[0], block


def _conjuncts(e: L.Expr) -> list[L.Expr]:
    """The conjuncts of a guard, nested conjunctions flattened, in their order of evaluation."""
    if isinstance(e, L.And):
        return [c for arg in e.args for c in _conjuncts(arg)]
    return [e]


def hoisted_guard(
    params: Sequence[str], reads: Sequence[frozenset[str]]
) -> tuple[list[str], list[list[int]]]:
    """Where each conjunct of an action's guard is checked in ``Next``: the order the parameters are bound in,
    and for each level (0: before the first binder, ``k``: right after the ``k``-th) the conjuncts checked there.

    Why: TLC enumerates ``\\E p1 \\in D1, …, pn \\in Dn : A(p1, …, pn)`` one combination at a time and evaluates
    ``A``'s guard from its start for each; an action such as ``StaleAlterIsrReceived`` has hundreds of
    combinations and a handful enabled. Written ``\\E p1 \\in D1 : /\\ C1 /\\ \\E p2 \\in D2 : …``, a conjunct is
    checked once per combination of the parameters it reads, and a false one prunes every combination below it.

    The same relation, and no new evaluation error: each conjunct checked early is a conjunct of ``A``'s guard,
    which ``A`` still checks whole (``∃p: C(p) ∧ G(p) ∧ E(p)`` is ``∃p: G(p) ∧ E(p)`` when ``C`` is a conjunct of
    ``G``); the conjuncts keep their order of evaluation (a conjunct is placed no earlier than any conjunct before
    it), so a conjunct that relies on an earlier one (``tp \\in DOMAIN m`` before ``m[tp]``) is only evaluated
    where that one held, as in ``A``. Parameters are bound in the order the guard first reads them (those it never
    reads last, in their declared order); which order ``\\E`` binds them in does not change the relation."""
    first = {p: len(reads) for p in params}
    for j, read in enumerate(reads):
        for p in params:
            if p in read and first[p] == len(reads):
                first[p] = j
    order = sorted(params, key=lambda p: (first[p], params.index(p)))
    position = {p: i + 1 for i, p in enumerate(order)}
    placed: list[list[int]] = [[] for _ in range(len(order) + 1)]
    level = 0
    for j, read in enumerate(reads):
        level = max([level, *(position[p] for p in params if p in read)])
        placed[level].append(j)
    return order, placed


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _named_domain(p: Param, domain: str, names: dict[str, str], taken: set[str]) -> str:
    """A parameter domain as a name defined at the constant level (``BrokerEpochValues == {-1} \\cup 1..MaxZxid``):
    TLC evaluates a constant-level definition without arguments once, where an expression written in ``Next``
    would be evaluated again in every state. Names, and the empty set of an action kept out of the models,
    stay as they are."""
    if _IDENT.fullmatch(domain) or domain == "{}":
        return domain
    known = names.get(domain)
    if known is not None:
        return known
    base = "".join(w[:1].upper() + w[1:] for w in p.name.split("_") if w) + "Values"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    names[domain] = name
    return name


def action_order(kind: str) -> tuple[int, str]:
    """Where an action comes in the module (the order of the spec's events)."""
    from kcspec.spec.events import EVENT_TYPES

    kinds = [e.kind for e in EVENT_TYPES]
    return (kinds.index(kind), kind) if kind in kinds else (len(kinds), kind)


def generate_from(
    profile: Profile,
    config: ModelConfig,
    actions: Sequence[Action],
    invariants: Sequence[Invariant] = (),
    initial: ClusterState | None = None,
    sources: dict[str, str] | None = None,
    builtin: str | None = None,
) -> GeneratedModule:
    """The module and configuration for explicitly given actions and invariants (``sources``: action name →
    the spec function that builds it, for the action's comment; ``builtin``: the name of the built-in profile whose
    whole spec these are, so that their generalised rules are kept between models, ``generalised``)."""
    try:
        module = _generate_from(profile, config, actions, invariants, initial, sources or {}, builtin)
    except KindError as exc:
        raise ModuleError(f"static kind check: {exc}") from None
    _check_sany_rules(module)
    return module


def _check_sany_rules(module: GeneratedModule) -> None:
    """The semantic rules SANY checks and tree-sitter does not (``sany_checks``): names defined before use, no
    re-declared names, arities, the configurations' names. Without the parser (the optional ``tla`` extra)
    the check cannot run; ``make test`` runs it on every generated module."""
    try:
        problems = check_module(
            module.tla, {f"{module.name}.cfg": module.cfg, f"{module.name}_liveness.cfg": module.liveness_cfg}
        )
    except SyntaxCheckUnavailable:
        return
    if problems:
        shown = [
            f"{p} (in {module.origins[p.line - 1].definition})"
            if 0 < p.line <= len(module.origins) and p.where == "tla"
            else str(p)
            for p in problems[:5]
        ]
        raise ModuleError("SANY's semantic rules: " + "; ".join(shown))


def _generate_from(
    profile: Profile,
    config: ModelConfig,
    actions: Sequence[Action],
    invariants: Sequence[Invariant],
    initial: ClusterState | None,
    sources: dict[str, str],
    builtin: str | None = None,
) -> GeneratedModule:
    b = _Builder(profile, config)
    b.sources = sources
    name = module_name(profile)
    state_invs = sorted((i for i in invariants if i.kind == "state"), key=lambda i: i.name)
    step_invs = sorted((i for i in invariants if i.kind == "step"), key=lambda i: i.name)
    ordered = sorted(actions, key=lambda a: action_order(a.name))
    b.generalise(ordered, (*state_invs, *step_invs), builtin)
    inv_blocks = [b.invariant(i) for i in (*state_invs, *step_invs)]
    action_blocks = [b.action(a) for a in ordered]
    problems = b.rules.problems  # every rule copy is its operator's instance (generalise.py)
    if problems:
        raise ModuleError("generalised rules: " + "; ".join(problems[:5]))

    init_state = initial if initial is not None else config.initial
    init = vstack(
        text("Init =="),
        indent(
            vstack(*(concat(text(f"/\\ {v} = "), value_block(getattr(init_state, v))) for v in STATE_VARS)),
            4,
        ),
    )
    next_items: list[Block] = []
    taken = b.reserved | b.procedures.op_names | {a.name for a in ordered} | {n for n, _ in inv_blocks}
    domain_defs: dict[str, str] = {}  # TLA+ text of a parameter domain -> its name
    for a in ordered:
        next_items.append(_next_comment(a))
        if a.params:
            for p in a.params:
                check_domain(b.procedures.kinds, a.name, p)
            named = {p.name: _named_domain(p, param_domain(a.name, p), domain_defs, taken) for p in a.params}
            next_items.append(b.enumeration(a, named))
        else:
            next_items.append(text(f"\\/ {a.name}"))
    next_block = vstack(text("Next =="), indent(vstack(*next_items) if next_items else text("FALSE"), 4))
    bound_free = {name: (const, ty.INT) for name, const in bounds.BOUND_CONSTANTS.items()}
    constraint_em = b.emitter({"s": ("s", b.state_t), **bound_free})
    constraint_em.operator = "StateConstraint"
    constraint = vstack(
        _comment(["The model's bounds (model/tla/bounds.py): successors outside them are not explored."]),
        text("StateConstraint =="),
        indent(constraint_em.emit(bounds.STATE_CONSTRAINT).block, 4),
    )
    header = [
        f"Kafka's ZooKeeper-mode controller, profile {profile.name} (Kafka {profile.kafka_version}).",
        "Generated by kcspec from the spec's expressions (spec/); do not edit. Each action and invariant",
        "cites the section of the semantics document it comes from. Model: " + config.describe() + ".",
    ]
    parts: list[tuple[str, Block]] = [
        ("<header>", text(f"{'-' * 28} MODULE {name} {'-' * 28}")),
        ("<header>", _comment(header)),
        ("<header>", text("EXTENDS Integers, Sequences, FiniteSets, TLC")),
        ("<header>", text("")),
        ("<constants>", text("CONSTANTS " + ", ".join(CONSTANT_NAMES))),
        ("<variables>", text("VARIABLES " + ", ".join(STATE_VARS))),
        ("vars", text(f"vars == <<{', '.join(STATE_VARS)}>>")),
        ("s", _comment(["The ClusterState the spec's expressions read (spec/state.py)."])),
        ("s", text("s == [" + ", ".join(f"{v} |-> {v}" for v in STATE_VARS) + "]")),
        ("<prelude>", text("")),
        ("<prelude>", _comment(["Helpers: maps are functions, sequences are Sequences' sequences."])),
        ("<prelude>", tuple(Line(x) for x in PRELUDE.splitlines())),
        ("<domains>", text("")),
        ("<domains>", _comment(["The finite domains of the actions' parameters (ModelConfig)."])),
        ("<domains>", tuple(Line(x) for x in DOMAIN_DEFS.splitlines())),
        ("<domains>", tuple(Line(f"{name} == {dom}") for dom, name in domain_defs.items())),
    ]
    order_defs = b.orders.definitions()
    if order_defs:
        parts.append(("<orders>", text("")))
        parts.append(("<orders>", _comment(["Orders for sorting (TLA+ compares only integers)."])))
        for d in order_defs:
            parts.append((d.split("(")[0].split(" ")[-1], tuple(Line(x) for x in d.splitlines())))
    if b.procedures.constants:
        parts.append(("<literals>", text("")))
        parts.append(
            (
                "<literals>",
                _comment(["Literal sets, defined once: TLC evaluates a constant definition once."]),
            )
        )
        for lit_name, lit in b.procedures.constants.values():
            parts.append((lit_name, vstack(text(f"{lit_name} =="), indent(lit, 4))))
    if b.procedures.definitions:
        parts.append(("<procedures>", text("")))
        parts.append(("<procedures>", _comment(["The spec's procedures, one operator each."])))
    for proc_name, blk in b.procedures.definitions:
        parts.append((proc_name, text("")))
        parts.append((proc_name, blk))
    for inv_name, blk in inv_blocks:
        parts.append((inv_name, text("")))
        parts.append((inv_name, blk))
    if step_invs:
        parts.append((STEP_CHECK, text("")))
        parts.append((STEP_CHECK, step_check(step_invs)))
    parts.append((TAKE_STEP, text("")))
    parts.append((TAKE_STEP, take_step(step_invs)))
    parts.append(("Init", text("")))
    parts.append(("Init", init))
    for a_name, blk in action_blocks:
        parts.append((a_name, text("")))
        parts.append((a_name, blk))
    parts += [
        ("Next", text("")),
        ("Next", next_block),
        ("Spec", text("")),
        ("Spec", text("Spec == Init /\\ [][Next]_vars")),
        *_liveness_parts(b, ordered),
        ("StateConstraint", text("")),
        ("StateConstraint", constraint),
        ("<end>", text("=" * (60 + len(name)))),
    ]
    lines: list[str] = []
    origins: list[LineOrigin] = []
    numbered = [(definition, line) for definition, blk in parts for line in blk]
    for n, piece in wrap_module([line.text.rstrip() for _, line in numbered]):  # at most MAX_LINE characters
        lines.append(piece)
        origin = numbered[n][1].origin
        span = b.procedures.spans.get(origin) if origin is not None else None
        origins.append(LineOrigin(numbered[n][0], origin, None if span is None else str(span)))
    tla = "\n".join(lines) + "\n"
    cfg = _cfg(profile, config, name, [n for n, _ in inv_blocks if n.startswith("Inv_")])
    checks = tuple(sorted(b.procedures.kinds.counts.items()))
    live_cfg = _liveness_cfg(cfg)
    return GeneratedModule(name, tla, cfg, tuple(origins), live_cfg, checks)


def _liveness_parts(b: _Builder, actions: Sequence[Action]) -> list[tuple[str, Block]]:
    """The liveness properties (premise and goal operators, the ``~>`` formula) and ``FairSpec`` with the
    operators its fairness conditions read (``WithinBounds``, ``<A>_Successor``, ``<A>_Due``)."""
    from kcspec.spec.vocabulary import TopicPartition

    fair = {f.action for f in liveness.FAIR_ACTIONS}
    bound_free = {name: (const, ty.INT) for name, const in bounds.BOUND_CONSTANTS.items()}
    within_em = b.emitter({"s": ("s2", b.state_t), **bound_free})
    within_em.operator = "WithinBounds"
    parts: list[tuple[str, Block]] = [
        ("WithinBounds", text("")),
        ("WithinBounds", _comment(["A state within the model's bounds (StateConstraint of the state s2)."])),
        ("WithinBounds", text("WithinBounds(s2) ==")),
        ("WithinBounds", indent(within_em.emit(bounds.STATE_CONSTRAINT).block, 4)),
    ]
    for a in actions:
        if a.name in fair:
            op, blk = b.successor(a)
            parts += [(op, text("")), (op, blk)]
    parts += [
        ("FairSpec", text("")),
        ("FairSpec", _comment(["Weak fairness of the controller's own actions (model/tla/liveness.py)."])),
        (
            "FairSpec",
            tuple(Line(x) for x in liveness.fair_spec(frozenset(a.name for a in actions)).splitlines()),
        ),
    ]
    for prop in liveness.PROPERTIES:
        var_t = ty.T("rec", TopicPartition) if prop.var == "tp" else ty.STR
        rendered: list[Block] = []
        for suffix, build in (("P", prop.premise), ("Q", prop.goal)):
            em = b.emitter({"s": ("s", b.state_t), prop.var: (prop.var, var_t)})
            em.operator = f"{prop.name}_{suffix}"
            em.rules.append(f"{prop.name} ({prop.section})")
            out = em.emit(share(build(L.var(prop.var))))
            rendered.append(vstack(text(f"{prop.name}_{suffix}({prop.var}) =="), indent(out.block, 4)))
        block = vstack(
            _comment(_doc_lines(f"{prop.section} {prop.name}: {prop.doc}")),
            rendered[0],
            rendered[1],
            tuple(Line(x) for x in prop.tla().splitlines()),
        )
        parts += [(prop.name, text("")), (prop.name, block)]
    return parts


def _liveness_cfg(cfg: str) -> str:
    """The safety configuration with ``FairSpec`` and the liveness properties instead of the invariants."""
    out = [line for line in cfg.splitlines() if not line.startswith(("SPECIFICATION", "INVARIANT"))]
    out = [line.replace("TLC configuration of", "TLC liveness configuration of") for line in out]
    out.insert(out.index("CONSTRAINT StateConstraint"), "SPECIFICATION FairSpec")
    out += [f"PROPERTY {p.name}" for p in liveness.PROPERTIES]
    return "\n".join(out) + "\n"


def _cfg(profile: Profile, config: ModelConfig, name: str, invariants: list[str]) -> str:
    values: dict[str, Any] = {
        "Brokers": frozenset(config.broker_ids),
        "Topics": frozenset(config.topic_names),
        "PartitionCount": config.partitions,
        "ReplicationFactor": config.rf,
        "MaxControllerEpoch": config.max_controller_epoch,
        "MaxLeaderEpoch": config.max_leader_epoch,
        "MaxZxid": config.max_zxid,
        "MaxZkVersion": config.max_zk_version,
    }
    out = [
        f"\\* TLC configuration of {name} (profile {profile.name}), generated by kcspec.",
        *(f"\\* {line}" for line in _doc_lines(f"Model: {config.describe()}.", 110)),
        "\\* No SYMMETRY: broker ids are integers that the spec orders (brokers are processed in ascending id,",
        "\\* §2.3), and TLC's symmetry reduction needs sets of model values.",
        "CONSTANTS",
    ]
    out += [f"    {k} = {''.join(line.text for line in value_block(v))}" for k, v in values.items()]
    out.append(
        f"    \\* {NONE_TEXT}: an absent optional value (a cancelled reassignment target), a model value"
    )
    out.append(f"    {NONE_TEXT} = {NONE_TEXT}")
    out += ["SPECIFICATION Spec", "CONSTRAINT StateConstraint"]
    out += [f"INVARIANT {i}" for i in invariants]
    # No CHECK_DEADLOCK here: TLC 2.15 rejects the keyword; the cut-off states at the bounds have no successors
    # by design, so TLC runs with -deadlock (no deadlock check), which every TLC version accepts.
    out.append("\\* Run TLC with -deadlock: a state at the bounds has no successor by design.")
    return "\n".join(out) + "\n"


def spec_available() -> tuple[bool, bool]:
    """Whether the spec's actions and invariants modules exist yet."""
    registry = importlib.util.find_spec("kcspec.spec.actions.registry") is not None
    invariants = importlib.util.find_spec("kcspec.spec.invariants") is not None
    return registry, invariants


def generate(profile: Profile, config: ModelConfig) -> GeneratedModule:
    """The module of the whole spec of ``profile``: every action of ``build_actions`` and every invariant.

    The text of a built-in profile's module is computed once per configuration (it is deterministic)."""
    from kcspec.spec.profiles import PROFILES

    if PROFILES.get(profile.name) is profile:
        return _generate_builtin(profile.name, config)
    return _generate(profile, config)


@functools.lru_cache(maxsize=16)
def _generate_builtin(profile_name: str, config: ModelConfig) -> GeneratedModule:
    """Also saved on disk between processes (``module_cache``: keyed by kcspec's source, the profile and the
    model)."""
    from kcspec.model.tla import module_cache
    from kcspec.spec.profiles import get_profile

    saved = module_cache.load(profile_name, config)
    if saved is not None:
        return saved
    module = _generate(get_profile(profile_name), config)
    module_cache.save(profile_name, config, module)
    return module


def _generate(profile: Profile, config: ModelConfig) -> GeneratedModule:
    has_actions, has_invariants = spec_available()
    if not has_actions:
        raise ModuleError("the spec's actions (kcspec.spec.actions.registry) do not exist yet")
    from kcspec.spec.actions.registry import builders

    invariants: list[Invariant] = []
    if has_invariants:
        spec_invariants = importlib.import_module("kcspec.spec.invariants").invariants
        invariants = [i for i in spec_invariants(profile) if isinstance(i, Invariant)]
    actions: list[Action] = []
    sources: dict[str, str] = {}
    for build in builders(profile):
        action = build(profile)
        actions.append(action)
        where = action.span or build.__module__.replace("kcspec.", "", 1).replace(".", "/") + ".py"
        sources[action.name] = f"{where} {getattr(build, '__qualname__', '?')}"
    from kcspec.spec.profiles import PROFILES

    builtin = profile.name if PROFILES.get(profile.name) is profile else None
    return generate_from(profile, config, actions, invariants, sources=sources, builtin=builtin)


__all__ = [
    "GeneratedModule",
    "LineOrigin",
    "ModuleError",
    "action_order",
    "generate",
    "generate_from",
    "module_name",
    "param_domain",
]
