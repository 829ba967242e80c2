"""The Z3 backend means what the Python evaluator means: for random concrete inputs made symbolic, the term
is forced to the Python evaluator's result, for every node kind of the expression language."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.model.evaluate import evaluate
from kcspec.model.z3 import values as V
from kcspec.model.z3.abstract import Abstractor
from kcspec.model.z3.symbolic import Domain, SymbolicEvaluator
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import LeaderAndIsr, ReplicaState

small = st.integers(min_value=-2, max_value=6)
inputs = st.fixed_dictionaries(
    {
        "seq": st.lists(small, max_size=4).map(tuple),
        "st": st.frozensets(small, max_size=4),
        "n": small,
        "b": st.booleans(),
        "m": st.dictionaries(small, small, max_size=3).map(FMap),
        "lai": st.builds(
            LeaderAndIsr, small, small, st.lists(small, max_size=3, unique=True).map(tuple), small
        ),
        "rs": st.sampled_from(ReplicaState),
        "t": st.sampled_from(["a", "b-1"]),
    }
)

seq, sset, n, b, m, lai, rs, t = (L.var(x) for x in ("seq", "st", "n", "b", "m", "lai", "rs", "t"))


def _twice_plus_body(x: L.Expr, y: L.Expr) -> L.Expr:
    return L.let(x + x, lambda d: d + y)


_twice_plus: Callable[[L.Expr, L.Expr], L.Expr] = L.procedure("twicePlus", "§0")(_twice_plus_body)

CASES: dict[str, Callable[[], L.Expr]] = {
    "const-var": lambda: L.seq_of(L.lit(3), n, b, t),
    "field": lambda: lai.f("isr"),
    "rec": lambda: L.rec(LeaderAndIsr, leader=n, leader_epoch=1, isr=seq, zk_version=n + 1),
    "with": lambda: lai.with_(leader=n, isr=lai.f("isr").append(n)),
    "let": lambda: L.let(n + 1, lambda x: L.seq_of(x, x + x)),
    "if": lambda: L.if_(b, seq, L.seq_of(n)),
    "if-records": lambda: L.if_(b, lai, lai.with_(isr=seq)),
    "not-and-or-implies": lambda: L.seq_of(~b, b & n.gt(0), b | n.lt(0), b.implies(n.eq(1))),
    "cmp": lambda: L.seq_of(n.eq(1), n.ne(1), n.lt(2), n.le(2), n.gt(2), n.ge(2)),
    "cmp-structures": lambda: L.seq_of(
        seq.eq(L.seq_of(1, 2)), sset.eq(seq.to_set()), lai.eq(lai.with_(leader=n))
    ),
    "cmp-strings-enums": lambda: L.seq_of(t.eq("a"), rs.eq(ReplicaState.OnlineReplica), rs.ne(rs)),
    "enum-name": lambda: L.seq_of(
        L.enum_name(rs, ReplicaState),
        L.enum_name(ReplicaState.OfflineReplica, ReplicaState),
        L.enum_name(rs, ReplicaState).eq("OnlineReplica"),
    ),
    "arith": lambda: L.seq_of(n + 2, n - seq.size(), L.maximum(n, 3), L.Arith("min", n, L.lit(1))),
    "set-seq-literals": lambda: L.seq_of(L.set_of(n, 1, n), L.seq_of(n, n).size(), L.set_of(n, 1).size()),
    "member": lambda: L.seq_of(seq.contains(n), sset.contains(n), L.set_of(1, 2).contains(n)),
    "set-ops": lambda: L.seq_of(sset.union(seq), sset.inter(seq), sset.minus(seq)),
    "seq-ops": lambda: L.seq_of(seq.inter(sset), seq.minus(sset), seq.minus(L.seq_of(n))),
    "subset": lambda: L.seq_of(sset.subset_of(seq), seq.to_set().subset_of(sset)),
    "size": lambda: L.seq_of(seq.size(), sset.size(), m.size(), seq.is_empty(), sset.non_empty()),
    "to-set": lambda: seq.to_set(),
    "filter": lambda: L.seq_of(seq.filter(lambda x: x.gt(n)), sset.filter(lambda x: x.le(n))),
    "image": lambda: L.seq_of(seq.map(lambda x: x + 1), sset.map(lambda x: x.lt(n))),
    "big-union": lambda: sset.flat_map(lambda x: L.set_of(x, x + 1).union(seq)),
    "quantifiers": lambda: L.seq_of(
        seq.all(lambda x: x.gt(n)), sset.any(lambda x: x.eq(n)), m.all(lambda k: k.ge(0))
    ),
    "first": lambda: L.seq_of(seq.first(lambda x: sset.contains(x), -9), seq.first(lambda x: x.gt(n), n)),
    "sorted": lambda: L.seq_of(sset.sorted(), seq.sorted(), seq.map(lambda x: x + n).sorted()),
    "fold": lambda: seq.fold(L.seq_of(), lambda acc, x: L.seq_of(x).concat(acc)),
    "fold-records": lambda: sset.sorted().fold(
        lai, lambda acc, x: acc.with_(leader=x, isr=acc.f("isr").append(x))
    ),
    "head": lambda: L.seq_of(seq.head(-7), seq.filter(lambda x: x.gt(n)).head(n)),
    "append-concat": lambda: L.seq_of(seq.append(n), seq.concat(lai.f("isr")), seq.concat(seq)),
    "distinct": lambda: seq.concat(lai.f("isr")).distinct(),
    "map-get": lambda: L.if_(m.has(n), m.get(n), -5),
    "map-get-or-has": lambda: L.seq_of(m.get_or(n, -5), m.has(n), m.has(1)),
    "map-put-delete": lambda: L.seq_of(m.put(n, 7), m.delete(n), m.delete_all(sset), m.put(1, n).delete(n)),
    "map-keys": lambda: m.keys(),
    "map-build": lambda: L.build_map(seq, lambda k: k + n),
    "map-merge": lambda: L.seq_of(m.merge(L.build_map(sset, lambda k: k)), L.lit(FMap({1: 1})).merge(m)),
    "map-equality": lambda: L.seq_of(m.eq(m.put(n, 0)), m.delete(n).eq(m)),
    "rule": lambda: L.rule("someRule", "§0", seq.size() + 1),
    "call": lambda: L.seq_of(_twice_plus(n, seq.size()), _twice_plus(seq.head(0), n)),
}


def _check(expr: L.Expr, values: dict[str, Any]) -> None:
    expected = evaluate(expr, **values)
    ab = Abstractor()
    env = {k: ab.abstract(v, k) for k, v in values.items()}
    ev = SymbolicEvaluator(Domain(tuple(range(-4, 13))))
    result = ev.eval(expr, env)
    solver = z3.Solver()
    solver.add(*ab.constraints)
    assert solver.check() == z3.sat
    got = V.concretize(result, solver.model())
    assert got == expected, f"model value {got!r} != Python value {expected!r}"
    solver.push()
    solver.add(z3.Not(V.bool_term(V.eq(result, expected))))
    assert solver.check() == z3.unsat, f"the term admits a value other than {expected!r}: {solver.model()}"
    solver.pop()
    for ob in ev.obligations:
        solver.push()
        solver.add(z3.Not(ob.condition))
        assert solver.check() == z3.unsat, ob.reason
        solver.pop()


@pytest.mark.parametrize("case", sorted(CASES))
@settings(max_examples=10, deadline=None)
@given(values=inputs)
def test_term_equals_python_value(case: str, values: dict[str, Any]) -> None:
    _check(CASES[case](), values)


def test_every_node_kind_is_covered() -> None:
    seen: set[type] = set()

    def walk(e: L.Expr) -> None:
        seen.add(type(e))
        for c in L.children(e):
            walk(c)

    for make in CASES.values():
        walk(make())
    nodes = {
        cls
        for cls in vars(L).values()
        if isinstance(cls, type) and issubclass(cls, L.Expr) and cls is not L.Expr
    }
    assert nodes - seen == set()


def test_concrete_operands_stay_concrete() -> None:
    ev = SymbolicEvaluator(Domain.brokers(3))
    expr = L.var("s").filter(lambda x: x.gt(0)).sorted()
    assert ev.eval(expr, {"s": frozenset({2, 0, 1})}) == (1, 2)
    x = z3.Int("x")
    assert isinstance(ev.eval(L.var("s").contains(L.var("x")), {"s": (1, 2), "x": x}), z3.BoolRef)


def test_missing_key_becomes_an_obligation_under_its_path() -> None:
    ev = SymbolicEvaluator(Domain.brokers(3))
    x = z3.Int("x")
    m = FMap({0: 10, 1: 11})
    ev.eval(L.var("m").get(L.var("x")), {"m": m, "x": x})
    assert len(ev.obligations) == 1
    solver = z3.Solver()
    solver.add(z3.Not(ev.obligations[0].condition))
    assert solver.check() == z3.sat
    assert solver.model().eval(x).as_long() not in (0, 1)


def test_sorting_symbolic_ints_obliges_the_domain() -> None:
    ev = SymbolicEvaluator(Domain((0, 1, 2)))
    x = z3.Int("x")
    out = ev.eval(L.var("s").sorted(), {"s": V.SColl("set", ((True, x),))})
    solver = z3.Solver()
    solver.add(x == 1)
    assert solver.check() == z3.sat
    assert V.concretize(out, solver.model()) == (1,)
    solver = z3.Solver()
    solver.add(z3.Not(ev.obligations[0].condition))
    assert solver.check() == z3.sat and solver.model().eval(x).as_long() not in (0, 1, 2)
