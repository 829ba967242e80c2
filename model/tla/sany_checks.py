"""The semantic rules of SANY (TLC's parser) that the tree-sitter grammar does not check, on the module's text.

tree-sitter (``syntax``) only says that a module parses. SANY, before TLC explores a state, also resolves every
name and rejects the module on:

1. a name used before its definition (module-level operators are not hoisted) that is no declared CONSTANT or
   VARIABLE, bound variable or parameter in scope, nor an operator of an EXTENDS'd standard module
   (``STANDARD_OPERATORS``, listed explicitly) — SANY: "Unknown operator";
2. a bound variable, parameter or LET definition that re-declares a name of an enclosing scope, of the module
   or of an EXTENDS'd module (a parameter ``Len``), or a reserved word — SANY: "Multiply-defined symbol";
3. an operator applied with another number of arguments than its definition has (a bound variable takes
   none; an argument for a parameter ``F(_)`` is an operator or LAMBDA of that arity, and only such a
   parameter takes one), and a recursive operator not declared ``RECURSIVE`` before its definition with the
   same arity;
4. a level error: a primed expression that already is an action (``x''``), and (TLC) an INIT, INVARIANT or
   CONSTRAINT that is not a state predicate or a NEXT that is temporal;
5. a ``.cfg`` naming an operator or constant the module does not define, or leaving a declared constant
   without a value.

Decision: the check works on the generated text (parsed by tree-sitter), not on the emitter's structures:
the text is what SANY reads, so line breaking (``wrap``), sharing (``share``) and anti-unification
(``generalise``) are all covered by one check, and a problem is reported with the line SANY would report.
Record field names (``r.f``, ``[r EXCEPT !.f = …]``, ``[f |-> …]``) are not names and are not resolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kcspec.model.tla.syntax import _parser

# The operators (by name; infix symbols are not identifiers) each standard module defines, with their arity.
# Sequences and TLC extend Naturals; Integers extends Naturals.
_NATURALS = {"Nat": 0}
STANDARD_OPERATORS: dict[str, dict[str, int]] = {
    "Naturals": dict(_NATURALS),
    "Integers": {**_NATURALS, "Int": 0},
    "Sequences": {
        **_NATURALS,
        "Seq": 1,
        "Len": 1,
        "Head": 1,
        "Tail": 1,
        "Append": 2,
        "SubSeq": 3,
        "SelectSeq": 2,
    },
    "FiniteSets": {**_NATURALS, "IsFiniteSet": 1, "Cardinality": 1},
    "TLC": {
        **_NATURALS,
        "Print": 2,
        "PrintT": 1,
        "Assert": 2,
        "JavaTime": 0,
        "TLCGet": 1,
        "TLCSet": 2,
        "Permutations": 1,
        "SortSeq": 2,
        "RandomElement": 1,
        "Any": 0,
        "ToString": 1,
        "TLCEval": 1,
    },
}

# Built into TLA+ itself (no module needed).
BUILTIN_OPERATORS = {"BOOLEAN": 0, "STRING": 0, "TRUE": 0, "FALSE": 0}

RESERVED_WORDS = frozenset(
    [
        "ASSUME",
        "ASSUMPTION",
        "AXIOM",
        "CASE",
        "CHOOSE",
        "CONSTANT",
        "CONSTANTS",
        "DOMAIN",
        "ELSE",
        "ENABLED",
        "EXCEPT",
        "EXTENDS",
        "IF",
        "IN",
        "INSTANCE",
        "LET",
        "LOCAL",
        "MODULE",
        "OTHER",
        "SF_",
        "SUBSET",
        "THEN",
        "THEOREM",
        "UNCHANGED",
        "UNION",
        "VARIABLE",
        "VARIABLES",
        "WF_",
        "WITH",
        "BOOLEAN",
        "STRING",
        "TRUE",
        "FALSE",
        "LAMBDA",
        "RECURSIVE",
    ]
)

_CFG_OPERATOR_KEYWORDS = {
    "INIT",
    "NEXT",
    "SPECIFICATION",
    "INVARIANT",
    "INVARIANTS",
    "PROPERTY",
    "PROPERTIES",
    "CONSTRAINT",
    "CONSTRAINTS",
    "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS",
}
_CFG_KEYWORDS = _CFG_OPERATOR_KEYWORDS | {"CONSTANT", "CONSTANTS", "CHECK_DEADLOCK", "SYMMETRY", "VIEW"}


@dataclass(frozen=True)
class SanyProblem:
    line: int
    rule: str
    name: str
    message: str
    where: str = "tla"

    def __str__(self) -> str:
        return f"{self.where} line {self.line}: {self.rule}: {self.name!r}: {self.message}"


@dataclass
class _Scope:
    names: dict[str, int] = field(default_factory=dict)
    """Name -> arity (-1: a bound variable)."""
    recursive: dict[str, int] = field(default_factory=dict)
    signatures: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Operator name -> the arity of each of its parameters (0: an ordinary one, n: an operator ``P(_, …)``)."""
    """The names declared ``RECURSIVE`` in this scope (a LET): their definition may follow."""


def _named(node: Any, name: str) -> list[Any]:
    """The named children of field ``name`` (the grammar also puts the parentheses and commas in the field)."""
    return [c for c in node.children_by_field_name(name) if c.is_named]


class _Checker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.problems: list[SanyProblem] = []
        self.module: dict[str, int] = dict(BUILTIN_OPERATORS)
        self.standard: set[str] = set(BUILTIN_OPERATORS)
        self.recursive: dict[str, int] = {}
        self.signatures: dict[str, tuple[int, ...]] = {"SelectSeq": (0, 1)}
        self.constants: list[str] = []
        self.levels: dict[str, int] = {}
        """Module-level name -> its level (0 constant, 1 state, 2 action, 3 temporal)."""

    def text(self, node: Any) -> str:
        return str(self.source[node.start_byte : node.end_byte].decode("utf-8"))

    def report(self, node: Any, rule: str, name: str, message: str) -> None:
        self.problems.append(SanyProblem(node.start_point[0] + 1, rule, name, message))

    # --- names -------------------------------------------------------------------------------------------------
    def signature(self, name: str, scopes: list[_Scope]) -> tuple[int, ...] | None:
        for scope in reversed(scopes):
            if name in scope.names:
                return scope.signatures.get(name)
        return self.signatures.get(name)

    def argument(self, node: Any, op: str, i: int, expected: int, scopes: list[_Scope]) -> None:
        """Argument ``i`` of ``op`` is an operator of arity ``expected`` exactly when ``expected > 0``."""
        if node.type == "lambda":
            got = len([c for c in node.named_children if c.type == "identifier"])
        elif node.type == "identifier_ref":
            got = max(self.lookup(self.text(node), scopes) or 0, 0)
        else:
            got = 0
        if got != expected:
            self.report(
                node,
                "arity",
                op,
                f"argument {i + 1} of {op} must be an operator of {expected} argument(s), not of {got}"
                if expected
                else f"argument {i + 1} of {op} must be an expression, not an operator of {got} argument(s)",
            )

    def lookup(self, name: str, scopes: list[_Scope]) -> int | None:
        for scope in reversed(scopes):
            if name in scope.names:
                return scope.names[name]
        return self.module.get(name)

    def declare(self, node: Any, name: str, arity: int, scopes: list[_Scope], what: str) -> None:
        if name in RESERVED_WORDS:
            self.report(node, "reserved word", name, f"{what} {name} is a TLA+ reserved word")
        elif self.lookup(name, scopes) is not None and name not in (
            scopes[-1].recursive if scopes else self.recursive
        ):
            origin = (
                "an EXTENDS'd standard module"
                if name in self.standard
                else "an enclosing scope or the module"
            )
            self.report(
                node, "multiply-defined symbol", name, f"{what} {name} re-declares a name of {origin}"
            )
        (scopes[-1].names if scopes else self.module)[name] = arity

    def use(self, node: Any, name: str, arity: int, scopes: list[_Scope], operand: bool = False) -> None:
        known = self.lookup(name, scopes)
        if known is None:
            self.report(node, "unknown operator", name, f"{name} is used before (or without) a definition")
        elif known < 0 and arity > 0:
            self.report(node, "arity", name, f"{name} is a bound variable, applied to {arity} argument(s)")
        elif known >= 0 and known != arity and not (operand and arity == 0):
            self.report(
                node, "arity", name, f"{name} is defined with {known} argument(s) but applied to {arity}"
            )

    # --- module ------------------------------------------------------------------------------------------------
    def run(self, root: Any) -> None:
        module = next((c for c in root.children if c.type == "module"), None)
        if module is None:
            return
        for unit in module.named_children:
            if unit.type == "extends":
                for ref in unit.named_children:
                    ops = STANDARD_OPERATORS.get(self.text(ref))
                    if ops is None:
                        self.report(
                            ref, "unknown module", self.text(ref), "not a standard module this check knows"
                        )
                        continue
                    self.module.update(ops)
                    self.standard.update(ops)
            elif unit.type in ("constant_declaration", "variable_declaration"):
                for decl in unit.named_children:
                    if decl.type == "identifier":
                        self.declare(decl, self.text(decl), 0, [], "declared name")
                        self.levels[self.text(decl)] = 1 if unit.type == "variable_declaration" else 0
                        if unit.type == "constant_declaration":
                            self.constants.append(self.text(decl))
                    elif decl.type == "operator_declaration":
                        name = decl.child_by_field_name("name")
                        n = len(_named(decl, "parameter"))
                        self.declare(name, self.text(name), n, [], "declared operator")
                        self.constants.append(self.text(name))
            elif unit.type == "recursive_declaration":
                for decl in unit.named_children:
                    name = decl.child_by_field_name("name")
                    self.recursive[self.text(name)] = len(_named(decl, "parameter"))
                    self.module[self.text(name)] = self.recursive[self.text(name)]
            elif unit.type == "operator_definition":
                self.definition(unit, [])
                name, body = unit.child_by_field_name("name"), unit.child_by_field_name("definition")
                if body is not None:
                    self.levels[self.text(name)] = self.level(body, {})
            elif unit.type in ("block_comment", "comment", "single_line", "header_line", "double_line"):
                continue
            elif unit.type != "identifier":
                self.walk(unit, [])

    def definition(self, node: Any, scopes: list[_Scope]) -> None:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node)
        params = _named(node, "parameter")
        inner = _Scope()
        for p in params:
            if p.type == "identifier":
                self.declare(p, self.text(p), 0, [*scopes, inner], "parameter")
            elif p.type == "operator_declaration":
                pn = p.child_by_field_name("name")
                self.declare(pn, self.text(pn), len(_named(p, "parameter")), [*scopes, inner], "parameter")
        recursive = scopes[-1].recursive if scopes else self.recursive
        if name in recursive and recursive[name] != len(params):
            self.report(
                name_node,
                "RECURSIVE arity",
                name,
                f"declared RECURSIVE with {recursive[name]} argument(s), defined with {len(params)}",
            )
        body = node.child_by_field_name("definition")
        if body is not None:
            self.walk(body, [*scopes, inner])
        if name_node.type == "identifier":  # defined after its body: a non-RECURSIVE self-use is unknown
            self.declare(name_node, name, len(params), scopes, "operator")
            shape = tuple(
                len(_named(p, "parameter")) if p.type == "operator_declaration" else 0 for p in params
            )
            (scopes[-1].signatures if scopes else self.signatures)[name] = shape

    # --- levels ------------------------------------------------------------------------------------------------
    def level(self, node: Any, local: dict[str, int]) -> int:
        """The level of an expression. Decision: parameters and bound variables count as constants and an
        application as the maximum of the operator's and its arguments' levels (SANY's computation is finer);
        this can only under-estimate, so a level error reported here is one SANY or TLC reports too."""
        t = node.type
        if t == "identifier_ref":
            name = self.text(node)
            return local.get(name, self.levels.get(name, 0))
        if t == "record_value":
            return self.level(node.named_children[0], local)
        if t == "fairness":
            return 3
        if t == "let_in":
            scope = dict(local)
            for d in node.children_by_field_name("definitions"):
                body = d.child_by_field_name("definition") if d.type == "operator_definition" else None
                if body is not None:
                    scope[self.text(d.child_by_field_name("name"))] = self.level(body, scope)
            expr = node.child_by_field_name("expression")
            return self.level(expr, scope) if expr is not None else 0
        symbol = node.child_by_field_name("symbol")
        parts = [c for c in node.named_children if "comment" not in c.type]
        operand = max((self.level(c, local) for c in parts if symbol is None or c.id != symbol.id), default=0)
        if symbol is not None and symbol.type in ("always", "eventually", "leads_to"):
            return 3
        if t == "bound_postfix_op" and symbol is not None and symbol.type == "prime":
            if operand >= 2:
                self.report(node, "level", self.text(node)[:40], "a primed expression is already an action")
            return 2 if operand >= 1 else 0
        if t == "bound_prefix_op" and symbol is not None and symbol.type == "unchanged":
            return 2
        if t == "bound_prefix_op" and symbol is not None and symbol.type == "enabled":
            return 1
        if t in ("step_expr_or_stutter", "step_expr_no_stutter"):
            return 2
        return operand

    # --- expressions -------------------------------------------------------------------------------------------
    def bound_names(self, node: Any) -> list[Any]:
        if node.type == "identifier":
            return [node]
        return [c for c in node.named_children if c.type == "identifier"]

    def walk(self, node: Any, scopes: list[_Scope]) -> None:
        t = node.type
        if t == "identifier_ref":
            parent = node.parent
            operand = parent is not None and parent.type == "bound_op"
            self.use(node, self.text(node), 0, scopes, operand)
            return
        if t in ("record_value",):  # r.f: only r is a name
            self.walk(node.named_children[0], scopes)
            return
        if t in ("except_update_record_field", "record_literal", "set_of_records"):
            for c in node.named_children:
                if c.type not in ("identifier", "identifier_ref"):
                    self.walk(c, scopes)
            return
        if t == "bound_op":
            name = node.child_by_field_name("name")
            args = _named(node, "parameter")
            if name is not None and name.type == "identifier_ref":
                self.use(name, self.text(name), len(args), scopes)
                shape = self.signature(self.text(name), scopes)
                if shape is not None and len(shape) == len(args):
                    for i, (a, expected) in enumerate(zip(args, shape, strict=True)):
                        self.argument(a, self.text(name), i, expected, scopes)
            for a in args:
                self.walk(a, scopes)
            return
        if t == "let_in":
            inner = _Scope()
            for d in node.children_by_field_name("definitions"):
                if d.type == "operator_definition":
                    self.definition(d, [*scopes, inner])
                elif d.type == "recursive_declaration":
                    for decl in d.named_children:
                        rn = decl.child_by_field_name("name")
                        self.declare(
                            rn, self.text(rn), len(_named(decl, "parameter")), [*scopes, inner], "RECURSIVE"
                        )
                        inner.recursive[self.text(rn)] = inner.names[self.text(rn)]
                else:
                    self.walk(d, [*scopes, inner])
            expr = node.child_by_field_name("expression")
            if expr is not None:
                self.walk(expr, [*scopes, inner])
            return
        if t == "lambda":
            inner = _Scope()
            ids = [c for c in node.named_children if c.type == "identifier"]
            for i in ids:
                self.declare(i, self.text(i), 0, [*scopes, inner], "LAMBDA parameter")
            for c in node.named_children:
                if c.type != "identifier":
                    self.walk(c, [*scopes, inner])
            return
        bounds = [c for c in node.named_children if c.type == "quantifier_bound"]
        intros = node.children_by_field_name("intro")
        if bounds or intros:
            inner = _Scope()
            # The sets are evaluated outside the bound names (SANY: x \in S with S not seeing x).
            for b in bounds:
                s = b.child_by_field_name("set")
                if s is not None:
                    self.walk(s, scopes)
            if node.child_by_field_name("set") is not None:
                self.walk(node.child_by_field_name("set"), scopes)
            for b in bounds:
                for intro in b.children_by_field_name("intro"):
                    for i in self.bound_names(intro):
                        self.declare(i, self.text(i), -1, [*scopes, inner], "bound variable")
            for intro in intros:
                for i in self.bound_names(intro):
                    self.declare(i, self.text(i), -1, [*scopes, inner], "bound variable")
            skip = {id(b) for b in bounds} | {id(i) for i in intros}
            own_set = node.child_by_field_name("set")
            for c in node.named_children:
                if id(c) in skip or (own_set is not None and c.id == own_set.id):
                    continue
                self.walk(c, [*scopes, inner])
            return
        for c in node.named_children:
            if "comment" not in c.type:
                self.walk(c, scopes)


def check_tla(tla: str) -> tuple[list[SanyProblem], dict[str, int], list[str]]:
    """The problems of one module's text, with its module-level names (name -> arity) and declared constants."""
    checker = _check(tla)
    return checker.problems, checker.module, checker.constants


def _check(tla: str) -> _Checker:
    source = tla.encode("utf-8")
    checker = _Checker(source)
    checker.run(_parser().parse(source).root_node)
    checker.problems.sort(key=lambda p: (p.line, p.name))
    return checker


_MAX_LEVEL = {"INIT": 1, "INVARIANT": 1, "INVARIANTS": 1, "CONSTRAINT": 1, "CONSTRAINTS": 1, "NEXT": 2}
_MAX_LEVEL |= {"ACTION_CONSTRAINT": 2, "ACTION_CONSTRAINTS": 2}


def check_cfg(
    cfg: str,
    names: dict[str, int],
    constants: list[str],
    where: str = "cfg",
    levels: dict[str, int] | None = None,
) -> list[SanyProblem]:
    """Rule 4: every operator a configuration names is defined (without arguments), every declared constant has
    a value and every assigned name is a declared constant; a model value (``X = X``) needs no definition."""
    problems: list[SanyProblem] = []
    assigned: set[str] = set()
    section = ""
    for n, raw in enumerate(cfg.splitlines(), 1):
        line = raw.split("\\*", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] in _CFG_KEYWORDS:
            section = words[0]
            words = words[1:]
            line = " ".join(words)
            if not words:
                continue
        if section in ("CONSTANT", "CONSTANTS"):
            m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=|<-)\s*(.*)$", line)
            if m is None:
                problems.append(SanyProblem(n, "cfg", line, "not a constant assignment", where))
                continue
            name, _, value = m.groups()
            assigned.add(name)
            if name not in constants:
                problems.append(SanyProblem(n, "cfg", name, "assigned but not a declared CONSTANT", where))
            if m.group(2) == "<-" and names.get(value.strip(), -1) < 0:
                problems.append(
                    SanyProblem(n, "cfg", value.strip(), "substituted operator is not defined", where)
                )
        elif section in _CFG_OPERATOR_KEYWORDS:
            for w in words:
                if names.get(w) != 0 or w in constants:
                    problems.append(
                        SanyProblem(
                            n, "cfg", w, f"{section} names no operator without arguments of the module", where
                        )
                    )
                elif levels is not None and levels.get(w, 0) > _MAX_LEVEL.get(section, 3):
                    most = _MAX_LEVEL[section]
                    message = f"{section} {w} has level {levels[w]}, at most {most} allowed"
                    problems.append(
                        SanyProblem(n, "level", w, message + " (1 state, 2 action, 3 temporal)", where)
                    )
    for c in constants:
        if c not in assigned:
            problems.append(SanyProblem(0, "cfg", c, "declared CONSTANT without a value", where))
    return problems


def check_module(tla: str, cfgs: dict[str, str]) -> list[SanyProblem]:
    """Rules 1-4 on a module's text and its configurations (``{"KafkaController.cfg": text, …}``)."""
    checker = _check(tla)
    problems = list(checker.problems)
    for where, cfg in cfgs.items():
        problems += check_cfg(cfg, checker.module, checker.constants, where, checker.levels)
    return problems


__all__ = ["STANDARD_OPERATORS", "SanyProblem", "check_cfg", "check_module", "check_tla"]
