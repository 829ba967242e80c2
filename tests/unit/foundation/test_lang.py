"""The expression language's Python evaluator: each construct's meaning, including order and scoping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kcspec.model.evaluate import EvalError, compile_expr, evaluate
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import LeaderAndIsr

ints = st.lists(st.integers(min_value=-3, max_value=9), max_size=8).map(tuple)


@given(ints, st.frozensets(st.integers(min_value=-3, max_value=9)))
def test_first_is_the_first_element_in_sequence_order_satisfying_the_predicate(
    seq: tuple[int, ...], good: frozenset[int]
) -> None:
    expr = L.var("seq").first(lambda r: L.var("good").contains(r), -1)
    expected = next((x for x in seq if x in good), -1)
    assert evaluate(expr, seq=seq, good=good) == expected


@given(ints)
def test_sequence_operations_keep_order(seq: tuple[int, ...]) -> None:
    s = L.var("s")
    assert evaluate(s.filter(lambda x: x.gt(2)), s=seq) == tuple(x for x in seq if x > 2)
    assert evaluate(s.distinct(), s=seq) == tuple(dict.fromkeys(seq))
    assert evaluate(s.minus(L.set_of(1, 2)), s=seq) == tuple(x for x in seq if x not in (1, 2))
    assert evaluate(s.map(lambda x: x + 1), s=seq) == tuple(x + 1 for x in seq)
    assert evaluate(s.head(-7), s=seq) == (seq[0] if seq else -7)
    assert evaluate(s.to_set().sorted(), s=seq) == tuple(sorted(set(seq)))


@given(ints)
def test_fold_applies_effects_in_order(seq: tuple[int, ...]) -> None:
    expr = L.var("s").fold(L.seq_of(), lambda acc, x: L.seq_of(x).concat(acc))
    assert evaluate(expr, s=seq) == tuple(reversed(seq))


def test_nested_binders_shadow_lexically() -> None:
    expr = L.let(L.lit(1), lambda x: L.let(x + 10, lambda y: L.seq_of(x, y)))
    assert evaluate(expr) == (1, 11)


def test_quantifiers_over_empty_and_non_empty_collections() -> None:
    assert evaluate(L.var("s").all(lambda x: x.gt(100)), s=()) is True
    assert evaluate(L.var("s").any(lambda x: x.gt(100)), s=()) is False
    assert evaluate(L.var("s").all(lambda x: x.gt(0)), s=(1, 2)) is True
    assert evaluate(L.var("s").any(lambda x: x.gt(1)), s=frozenset({1, 2})) is True


def test_maps_are_finite_functions() -> None:
    m = L.build_map(L.set_of(1, 2, 3), lambda k: k + k)
    assert evaluate(m) == FMap({1: 2, 2: 4, 3: 6})
    assert evaluate(m.put(4, 0).delete(1).keys()) == frozenset({2, 3, 4})
    assert evaluate(m.merge(L.lit(FMap({1: 9}))).get(1)) == 9
    assert evaluate(m.get_or(7, -1)) == -1
    assert evaluate(m.has(2) & ~m.has(7)) is True


def test_records_are_built_and_updated_functionally() -> None:
    rec = L.rec(LeaderAndIsr, leader=1, leader_epoch=0, isr=(1, 2), zk_version=0)
    out = evaluate(rec.with_(leader_epoch=rec.f("leader_epoch") + 1))
    assert out == LeaderAndIsr(1, 1, (1, 2), 0)


def test_conditionals_and_cond_chains() -> None:
    expr = L.cond((L.var("x").lt(0), "neg"), (L.var("x").eq(0), "zero"), otherwise="pos")
    assert [evaluate(expr, x=v) for v in (-1, 0, 5)] == ["neg", "zero", "pos"]


def test_missing_map_key_names_the_rule() -> None:
    expr = L.rule("leader of p", "§3.1", L.var("m").get(3))
    with pytest.raises(EvalError, match=r"key 3 is not in the map \(rule leader of p\)"):
        evaluate(expr, m=FMap({1: 1}))


def test_compiled_expressions_are_reusable() -> None:
    fn = compile_expr(L.var("a") + L.var("b"), ("a", "b"))
    assert [fn({"a": i, "b": 1}) for i in range(3)] == [1, 2, 3]


def test_spec_rules_are_data_not_closures() -> None:
    expr = L.var("s").filter(lambda x: x.gt(1))
    assert isinstance(expr, L.Filter)
    assert isinstance(expr.pred, L.Cmp)
    assert expr == L.Filter(expr.var, L.var("s"), L.Cmp(">", L.Var(expr.var), L.Const(1)))


@L.procedure("add_then", "§0")
def _add_then(a: L.Expr, b: L.Expr, k: int) -> L.Expr:
    return a + b + k


def test_procedures_are_defined_once_and_called_with_arguments() -> None:
    first = _add_then(L.var("x"), L.lit(2), 3)
    second = _add_then(L.lit(5), L.var("x"), 3)
    other = _add_then(L.lit(5), L.var("x"), 4)
    assert isinstance(first, L.Call) and isinstance(second, L.Call) and isinstance(other, L.Call)
    assert first.fn is second.fn, "the same static arguments must share one definition"
    assert other.fn is not first.fn, "a different static argument selects a different body"
    nested = L.let(L.lit(1), lambda x: _add_then(x, _add_then(x, L.lit(2), 3), 10))
    assert evaluate(nested) == 17
    assert evaluate(L.inline_calls(nested)) == 17


def test_a_procedure_whose_body_is_not_closed_is_rejected() -> None:
    outer = L.var("outer")

    @L.procedure("leaky", "§0")
    def leaky(a: L.Expr) -> L.Expr:
        return a + outer

    with pytest.raises(ValueError, match=r"procedure leaky .* is not closed: its body reads \['outer'\]"):
        leaky(L.lit(1))


def test_a_call_with_a_builder_callback_is_expanded_in_place() -> None:
    @L.procedure("apply_fn", "§0")
    def apply_fn(a: L.Expr, fn: object) -> L.Expr:
        return fn(a)  # type: ignore[operator, no-any-return]

    expr = L.let(L.lit(4), lambda y: apply_fn(L.lit(1), lambda a: a + y))
    assert not isinstance(expr.body, L.Call)  # type: ignore[attr-defined]
    assert evaluate(expr) == 5
