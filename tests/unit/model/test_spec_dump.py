"""The spec's canonical dump (``kcspec.model.spec_dump``): equal trees print equal text whatever the order they
were built in, and different trees print different text."""

from __future__ import annotations

from kcspec.model import spec_dump
from kcspec.spec import lang as L
from kcspec.spec.vocabulary import ReplicaState


def _text(e: L.Expr) -> str:
    return spec_dump.expr_text(e)


def _tree() -> L.Expr:
    s = L.var("s")
    return L.let(s.f("brokers"), lambda live: live.filter(lambda b: b.gt(0)).map(lambda b: b + 1))


def test_fresh_variables_are_renumbered_in_order_of_appearance() -> None:
    first = _tree()
    for _ in range(7):  # move the fresh-name counter on: the next tree's names have other numbers
        L.let(1, lambda x: x)
    second = _tree()
    assert first != second, "the trees differ in their fresh names (the dump must not)"
    assert _text(first) == _text(second)
    assert "live_1" in _text(first) and "b_2" in _text(first) and "b_3" in _text(first)


def test_a_different_tree_prints_differently() -> None:
    s = L.var("s")
    a = L.let(s.f("brokers"), lambda live: live.filter(lambda b: b.gt(0)))
    b = L.let(s.f("brokers"), lambda live: live.filter(lambda b: b.ge(0)))
    assert _text(a) != _text(b)


def test_sets_print_sorted_and_enums_by_name() -> None:
    text = _text(L.lit(frozenset({"b", "a", "c"})).contains(L.lit(ReplicaState.OnlineReplica)))
    assert "{'a', 'b', 'c'}" in text and "ReplicaState.OnlineReplica" in text


def test_expand_prints_the_enum_name_operator_as_the_if_chain_it_stands_for() -> None:
    op = L.enum_name(L.var("st"), ReplicaState)
    assert isinstance(op, L.EnumName)
    assert "(EnumName enum_type=ReplicaState" in _text(op)
    assert spec_dump.expr_text(op, expand=True) == _text(op.expanded())
    assert "EnumName" not in spec_dump.expr_text(op, expand=True)
