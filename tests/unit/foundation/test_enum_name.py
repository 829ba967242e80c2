"""The enum-name operator (``lang.enum_name``, node ``EnumName``): the name of an enum member, as Kafka logs it,
means the chain of ``IF``s it replaces, in every backend — the Python evaluator, the generated Python code, Z3 and
TLA+ — and the diagrams' pretty-printer prints it."""

from __future__ import annotations

import pytest
import z3
from kcspec.model.codegen import compile_fast
from kcspec.model.diagrams.pretty import pretty
from kcspec.model.evaluate import EvalError, evaluate
from kcspec.model.tla.emit import Emitter
from kcspec.model.tla.layout import render
from kcspec.model.tla.order import Orders
from kcspec.model.tla.types import STR, T
from kcspec.model.z3 import values as V
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec import lang as L
from kcspec.spec.vocabulary import PartitionState, ReplicaState

x = L.var("x")


@pytest.mark.parametrize("member", [*ReplicaState, *PartitionState], ids=lambda m: m.name)
def test_the_python_backends_give_the_name_the_if_chain_gives(member: ReplicaState | PartitionState) -> None:
    op = L.enum_name(x, type(member))
    assert isinstance(op, L.EnumName)
    assert evaluate(op, x=member) == member.name == evaluate(op.expanded(), x=member)
    assert compile_fast(op, ("x",))({"x": member}) == member.name


def test_a_value_outside_the_enum_is_an_error_naming_the_enum() -> None:
    with pytest.raises(EvalError, match="the name of a ReplicaState applied to 'OnlineReplica'"):
        evaluate(L.enum_name(x, ReplicaState), x="OnlineReplica")


def test_the_z3_term_is_the_name_for_every_member_and_nothing_else() -> None:
    sort, consts = V.enum_sort(ReplicaState)
    sym = z3.Const("rs", sort)
    term = SymbolicEvaluator(Domain.brokers(1)).eval(L.enum_name(x, ReplicaState), {"x": sym})
    for member, const in consts.items():
        solver = z3.Solver()
        solver.add(sym == const, term != z3.StringVal(member.name))
        assert solver.check() == z3.unsat, f"the term admits another name than {member.name!r} for {member}"
    concrete = SymbolicEvaluator(Domain.brokers(1)).eval(
        L.enum_name(x, ReplicaState), {"x": ReplicaState.NewReplica}
    )
    assert concrete == "NewReplica"


def test_tla_prints_the_value_itself_since_a_member_is_its_name_there() -> None:
    em = Emitter({"x": ("x", T("enum", ReplicaState))}, set(), Orders(("a", "b")))
    out = em.emit(L.enum_name(x, ReplicaState).eq("OnlineReplica"))
    assert render(out.block) == 'x = "OnlineReplica"'
    named = Emitter({}, set(), Orders(("a", "b"))).emit(
        L.enum_name(PartitionState.NewPartition, PartitionState)
    )
    assert render(named.block) == '"NewPartition"' and named.type == STR


def test_the_diagrams_print_the_operator() -> None:
    assert pretty(L.enum_name(x, ReplicaState)) == "name(x)"
