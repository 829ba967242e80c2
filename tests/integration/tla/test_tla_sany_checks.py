"""The static SANY checks (``sany_checks``): each rule rejects a small bad module with a message naming the
identifier, its line and the rule, and every generated module (both profiles, the default model and every model
of the manifest) passes all of them, with both of its configurations."""

from __future__ import annotations

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.sany_checks import SanyProblem, check_cfg, check_module, check_tla
from kcspec.model.tla.syntax import SyntaxCheckUnavailable, check_syntax

from tests.support.paths import SHARED
from tests.support.tla_modules import generated, models


@pytest.fixture(autouse=True)
def _parser_installed() -> None:
    try:
        check_syntax("---- MODULE M ----\n====\n")
    except SyntaxCheckUnavailable as exc:
        pytest.skip(str(exc))


HEADER = "---- MODULE M ----\nEXTENDS Integers, Sequences, FiniteSets, TLC\nCONSTANT C\nVARIABLE v\n"


def _problems(body: str) -> list[SanyProblem]:
    text = HEADER + body + "\n====\n"
    assert check_syntax(text) == [], "the bad module must parse: only the semantic rule may reject it"
    return check_tla(text)[0]


def _only(body: str, rule: str, name: str, line: int) -> None:
    problems = _problems(body)
    assert [(p.rule, p.name, p.line) for p in problems] == [(rule, name, line)], "\n".join(map(str, problems))
    message = str(problems[0])
    assert name in message and rule in message and f"line {line}" in message, message


def test_a_well_formed_module_passes() -> None:
    body = """Max(a, b) == IF a >= b THEN a ELSE b
RECURSIVE Sum(_)
Sum(S) == IF S = {} THEN 0 ELSE LET m == CHOOSE x \\in S : TRUE IN m + Sum(S \\ {m})
Apply(F(_), x) == F(x)
Ok == /\\ \\A <<p, q>> \\in C \\X C, w \\in C : Max(p, q) >= w
      /\\ LET RECURSIVE f(_) f(n) == IF n = 0 THEN 0 ELSE f(n - 1) IN f(3) = Len(<<1>>)
      /\\ [r \\in C |-> r.x][1] = Cardinality({[x |-> 1].x}) /\\ Apply(LAMBDA y : y + 1, 1) = 2
      /\\ v' = [v EXCEPT !.x = @ + 1] /\\ Print(Sum({1}), TRUE)"""
    assert _problems(body) == []


def test_a_name_used_before_its_definition_is_rejected() -> None:
    _only("G == Later + 1\nLater == 2", "unknown operator", "Later", 5)


def test_an_undefined_name_and_an_operator_of_a_module_not_extended_are_rejected() -> None:
    _only("G == {x \\in C : x = y}", "unknown operator", "y", 5)
    text = "---- MODULE M ----\nEXTENDS Integers\nG == Len(<<>>)\n====\n"
    assert [(p.rule, p.name, p.line) for p in check_tla(text)[0]] == [("unknown operator", "Len", 3)]


def test_a_bound_variable_is_not_in_scope_outside_its_binder() -> None:
    _only("G == (\\E x \\in C : x = 1) /\\ x = 2", "unknown operator", "x", 5)


def test_a_parameter_named_like_a_standard_operator_is_multiply_defined() -> None:
    for name in ("Len", "Head", "Seq", "Nat", "Cardinality", "Print"):
        _only(f"F({name}) == {name}", "multiply-defined symbol", name, 5)


def test_a_bound_variable_redeclaring_an_enclosing_name_is_multiply_defined() -> None:
    _only("H(x) == \\E x \\in C : x", "multiply-defined symbol", "x", 5)
    _only("K == 1\nH == {K : K \\in C}", "multiply-defined symbol", "K", 6)
    _only("H == {y \\in C : \\A v \\in C : y = v}", "multiply-defined symbol", "v", 5)


def test_a_let_definition_redeclaring_a_name_is_multiply_defined() -> None:
    _only("L == LET Head == 1 IN Head", "multiply-defined symbol", "Head", 5)
    _only("L(a) == LET a == 1 IN a", "multiply-defined symbol", "a", 5)
    _only("F == 1\nF == 2", "multiply-defined symbol", "F", 6)


def test_an_application_with_the_wrong_arity_is_rejected() -> None:
    _only("P(a, b) == a + b\nQ == P(1)", "arity", "P", 6)
    _only("Q == Len(<<1>>, 2)", "arity", "Len", 5)
    _only("P(a) == a\nQ == P + 1", "arity", "P", 6)
    _only("Q == \\E x \\in C : x(1)", "arity", "x", 5)


def test_a_recursive_operator_needs_a_recursive_declaration_of_its_arity() -> None:
    _only("Rec(n) == IF n = 0 THEN 0 ELSE Rec(n - 1)", "unknown operator", "Rec", 5)
    problems = _problems("RECURSIVE R(_)\nR(a, b) == a")
    assert [(p.rule, p.name, p.line) for p in problems] == [("RECURSIVE arity", "R", 6)]


def test_the_configurations_name_only_defined_operators_and_declared_constants() -> None:
    text = HEADER + "Init == v = 0\nNext == v' = v\nInv(x) == x\n====\n"
    _, names, constants = check_tla(text)
    good = "CONSTANTS\n    C = {1}\n    NoValue = NoValue\nINIT Init\nNEXT Next\n"
    assert [p.name for p in check_cfg(good, names, [*constants, "NoValue"])] == []
    bad = "CONSTANTS\n    D = 2\nINIT Init\nNEXT Nxt\nINVARIANT Inv\nPROPERTY Live\n"
    got = [(p.line, p.name) for p in check_cfg(bad, names, constants, "M.cfg")]
    assert got == [(2, "D"), (4, "Nxt"), (5, "Inv"), (6, "Live"), (0, "C")], got
    assert "M.cfg line 4" in str(check_cfg(bad, names, constants, "M.cfg")[1])


@pytest.mark.parametrize(("profile", "config"), models())
def test_every_generated_module_passes_the_sany_checks(profile: str, config: ModelConfig) -> None:
    module = generated(profile, config)
    assert module.liveness_cfg
    problems = check_module(
        module.tla, {f"{module.name}.cfg": module.cfg, f"{module.name}_liveness.cfg": module.liveness_cfg}
    )
    assert problems == [], "\n".join(map(str, problems[:20]))


def test_a_reserved_word_is_no_name() -> None:
    # The grammar does not parse a reserved word as a name, so the rule is exercised on the checker directly.
    from kcspec.model.tla.sany_checks import _Checker

    class _Node:
        start_point = (4, 0)

    checker = _Checker(b"")
    checker.declare(_Node(), "CHOOSE", 0, [], "parameter")
    assert [str(p) for p in checker.problems] == [
        "tla line 5: reserved word: 'CHOOSE': parameter CHOOSE is a TLA+ reserved word"
    ]


TOY = SHARED / "tlc-fixtures"


@pytest.mark.skipif(not (TOY / "Toy.tla").exists(), reason="the recorded real-TLC fixtures are not here")
def test_a_module_that_real_tlc_accepted_passes() -> None:
    # Toy.tla and its configurations ran under a real TLC (shared/tlc-fixtures/README.md): no false alarm.
    cfgs = {p.name: p.read_text(encoding="utf-8") for p in sorted(TOY.glob("Toy_*.cfg"))}
    assert cfgs
    problems = check_module((TOY / "Toy.tla").read_text(encoding="utf-8"), cfgs)
    assert problems == [], "\n".join(map(str, problems))


def test_an_operator_argument_must_have_the_arity_of_the_parameter() -> None:
    _only("Q == SelectSeq(<<1>>, LAMBDA a, b : a = b)", "arity", "SelectSeq", 5)
    _only("Apply(F(_), x) == F(x)\nQ == Apply(1, 2)", "arity", "Apply", 6)
    _only("Apply(F(_), x) == F(x)\nP2(a, b) == a\nQ == Apply(P2, 1)", "arity", "Apply", 7)
    _only("Id(x) == x\nP(a) == a\nQ == Id(P)", "arity", "Id", 7)
    _only("Id(x) == x\nQ == Id(LAMBDA a : a)", "arity", "Id", 6)


def test_level_errors_are_rejected() -> None:
    _only("A == (v' = 1)'", "level", "(v' = 1)'", 5)
    text = HEADER + "Init == v = 0\nNext == v' = v + 1\nInv == v' > 0\nSpec == Init /\\ [][Next]_v\n====\n"
    cfg = "CONSTANTS\n    C = 1\nINIT Init\nNEXT Spec\nINVARIANT Inv\nPROPERTY Spec\n"
    got = [(p.line, p.rule, p.name) for p in check_module(text, {"M.cfg": cfg})]
    assert got == [(4, "level", "Spec"), (5, "level", "Inv")], got
    assert (
        check_module(text, {"M.cfg": cfg.replace("NEXT Spec", "NEXT Next").replace("Inv\n", "Init\n")}) == []
    )
