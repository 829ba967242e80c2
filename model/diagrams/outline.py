"""Reading the structure of a spec procedure out of its expression tree, in evaluation order.

``outline(expr)`` walks a procedure's tree the way the evaluator runs it (a ``let`` value before its body,
arguments before the call that uses them) and returns the steps it finds: state-machine calls (the
``Rule`` nodes ``ReplicaStateMachine.handleStateChanges(<target>)`` / ``PartitionStateMachine…``, with the
election strategy found inside), named procedures (other ``Rule`` nodes of §7/§8, with their own steps
inside), loops (a left fold over a sequence) and decisions (an ``if`` whose two branches both do something;
an ``if`` with one inert branch — error and fencing checks — is shown as its other branch).  ``calls_in(expr)`` is the set of
state-machine calls and strategies anywhere in a tree (used by the event map).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kcspec.model.diagrams.pretty import pretty, var_name
from kcspec.spec import lang as L

CALL = re.compile(r"^(Replica|Partition)StateMachine\.handleStateChanges\((\w+)\)$")
STRATEGY_SUFFIX = "LeaderElectionStrategy"
NOTATION: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\(\w+\.state\)\.controller\."), "ctx."),
    (re.compile(r"\b\w+\.state\.controller\."), "ctx."),
    (re.compile(r"\(\w+\.state\)\.zk\."), "zk."),
    (re.compile(r"\b\w+\.state\.zk\."), "zk."),
    (re.compile(r"\b\w+\.(ctx|zk)\."), r"\1."),
    (re.compile(r"\(ctx\.assignments\[(\w+)\] or ReplicaAssignment\(…\)\)\.replicas"), r"AR(\1)"),
    (re.compile(r"\(ctx\.assignments\[(\w+)\] or ReplicaAssignment\(…\)\)"), r"FA(\1)"),
    (re.compile(r"PartitionReplica\(tp=(\w+), replica=(\w+)\)"), r"(\1,\2)"),
)
"""Short forms of context paths, as the semantics document writes them (AR, FA, ctx, zk)."""
MAX_TEXT = 120


def notation(text: str) -> str:
    for pattern, repl in NOTATION:
        text = pattern.sub(repl, text)
    return text


@dataclass(frozen=True)
class Call:
    machine: str
    target: str
    strategy: str
    elements: str


@dataclass(frozen=True)
class Proc:
    name: str
    section: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Loop:
    over: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Decision:
    cond: str
    yes: tuple[Step, ...]
    no: tuple[Step, ...]


Step = Call | Proc | Loop | Decision


def is_procedure(rule: L.Rule) -> bool:
    """Named steps worth drawing: §7/§8 procedures and the §4.8/§5.4 helpers."""
    return rule.section.startswith(("§7", "§8", "§4.8", "§5.4"))


@dataclass
class _Walker:
    env: dict[str, str] = field(default_factory=dict)
    memo: dict[int, list[Step]] = field(default_factory=dict)

    def text(self, e: L.Expr) -> str:
        t = notation(pretty(e, self.env, inline_lets=size_at_most(e, 60), depth=1))
        return t if len(t) <= MAX_TEXT else t[: MAX_TEXT - 1] + "…"

    def walk(self, e: L.Expr) -> list[Step]:
        """Steps of ``e``; computed once per node object (shared sub-trees reuse the same step objects)."""
        key = id(e)
        if key not in self.memo:
            self.memo[key] = self._walk(e)
        return self.memo[key]

    def _walk(self, e: L.Expr) -> list[Step]:
        if isinstance(e, L.Rule):
            m = CALL.match(e.name)
            if m:
                return [*self._call_inputs(e), self._call(e, m.group(1).lower(), m.group(2))]
            if is_procedure(e):
                return [Proc(e.name, e.section, tuple(self.walk(e.body)))]
            return self.walk(e.body)
        if isinstance(e, L.Let):
            before = self.walk(e.value)
            text = notation(pretty(e.value, self.env, depth=1)) if size_at_most(e.value, 25) else ""
            self.env[e.name] = text if text and len(text) <= 60 and not before else var_name(e.name)
            return before + self.walk(e.body)
        if isinstance(e, L.If) and isinstance(e.cond, L.Const):
            return self.walk(e.then if e.cond.value else e.els)
        if isinstance(e, L.If):
            cond = self.walk(e.cond)
            yes, no = self.walk(e.then), self.walk(e.els)
            if yes and no:
                return [*cond, Decision(self.text(e.cond), tuple(yes), tuple(no))]
            return cond + yes + no
        if isinstance(e, L.Fold):
            before = self.walk(e.seq) + self.walk(e.init)
            self.env[e.var] = var_name(e.var)
            self.env[e.acc] = var_name(e.acc)
            body = self.walk(e.body)
            if not body:
                return before
            return [*before, Loop(f"for each {var_name(e.var)} ∈ {self.text(e.seq)}", tuple(body))]
        out: list[Step] = []
        for c in L.children(e):
            out += self.walk(c)
        return out

    def _call_inputs(self, rule: L.Rule) -> list[Step]:
        """Steps inside the Work handed to the call (they run before it)."""
        body = rule.body
        return self.walk(body.value) if isinstance(body, L.Let) else []

    def _call(self, rule: L.Rule, machine: str, target: str) -> Call:
        strategies = sorted({r.name for r in rules_in(rule) if r.name.endswith(STRATEGY_SUFFIX)})
        elements = _elements(rule)
        return Call(
            machine,
            target,
            ", ".join(s.removesuffix(STRATEGY_SUFFIX).removesuffix("Partition") for s in strategies),
            self.text(elements) if elements is not None else "",
        )


def _elements(rule: L.Rule) -> L.Expr | None:
    """The element set of a handleStateChanges call: the ``E`` of its "``E`` empty → no-op" test (§2.3 step 1),
    or the value its ``let`` binds to ``E``."""
    bound: dict[str, L.Expr] = {}
    e: L.Expr = rule.body
    while True:
        if isinstance(e, L.Let):
            bound[e.name] = e.value
            e = e.body
        elif isinstance(e, L.If):
            c = e.cond
            if isinstance(c, L.Cmp) and c.op == "==" and isinstance(c.lhs, L.Size):
                coll = c.lhs.coll
                return bound.get(coll.name, coll) if isinstance(coll, L.Var) else coll
            e = e.els
        else:
            return None


def size_at_most(e: L.Expr, limit: int) -> bool:
    """Whether the tree ``e`` has at most ``limit`` nodes (counting stops early)."""
    count = 0
    stack = [e]
    while stack:
        count += 1
        if count > limit:
            return False
        stack.extend(L.children(stack.pop()))
    return True


def outline(e: L.Expr) -> tuple[Step, ...]:
    """The steps of a procedure tree in evaluation order (procedure calls inlined first)."""
    return tuple(_Walker().walk(L.inline_calls(e)))


def rules_in(e: L.Expr) -> list[L.Rule]:
    """Every distinct ``Rule`` object in a tree (shared sub-trees visited once)."""
    seen: set[int] = set()
    out: list[L.Rule] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, L.Rule):
            out.append(x)
        stack.extend(L.children(x))
    return out


def calls_in(e: L.Expr) -> tuple[set[tuple[str, str]], set[str]]:
    """(machine, target) of every state-machine call and the name of every strategy anywhere in ``e``."""
    calls: set[tuple[str, str]] = set()
    strategies: set[str] = set()
    for r in rules_in(e):
        m = CALL.match(r.name)
        if m:
            calls.add((m.group(1).lower(), m.group(2)))
        elif r.name.endswith(STRATEGY_SUFFIX):
            strategies.add(r.name)
    return calls, strategies
