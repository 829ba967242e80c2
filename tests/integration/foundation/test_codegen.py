"""The generated-code backend (model/codegen.py) against the closure evaluator (model/evaluate.py), the oracle:
every construct on random inputs, the whole spec (guards, effects, invariants) along random walks, and errors."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.model.codegen import compile_fast
from kcspec.model.evaluate import EvalError, compile_expr
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.fmap import FMap
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import LeaderAndIsr, ReplicaAssignment

ints = st.lists(st.integers(min_value=-3, max_value=9), max_size=8).map(tuple)
sets = st.frozensets(st.integers(min_value=-3, max_value=9), max_size=6)
maps = st.dictionaries(st.integers(min_value=-3, max_value=9), st.integers(min_value=-3, max_value=9)).map(
    FMap
)

s, t, m, n = L.var("s"), L.var("t"), L.var("m"), L.var("n")
EXPRS: list[L.Expr] = [
    s.filter(lambda x: x.gt(2)),
    t.filter(lambda x: L.or_(x.gt(2), x.eq(-1))),
    s.distinct(),
    s.minus(t),
    t.minus(s.to_set()),
    s.inter(t),
    t.inter(s.to_set()),
    s.to_set().union(t),
    s.to_set().subset_of(t),
    s.map(lambda x: x + 1),
    t.map(lambda x: x - 1),
    s.head(-7),
    s.head(m.get(100)),  # the default is evaluated only for an empty sequence
    s.to_set().sorted(),
    s.first(lambda x: t.contains(x), -1),
    s.first(lambda x: x.eq(4), m.get(100)),
    s.fold(L.seq_of(), lambda acc, x: L.seq_of(x).concat(acc)),
    s.fold(0, lambda acc, x: L.if_(x.gt(acc), x, acc)),
    s.all(lambda x: x.ge(0)),
    s.any(lambda x: t.contains(x)),
    t.all(lambda x: s.any(lambda y: y.eq(x))),
    s.flat_map(lambda x: L.set_of(x, x + 1)),
    s.append(n).size(),
    L.if_(s.size().gt(2), s.head(0), m.get(100)),
    L.and_(s.size().gt(0), m.get(100).eq(1)),
    L.or_(s.size().eq(0), t.contains(1), m.get(100).eq(1)),
    L.let(s.size(), lambda k: L.let(k + k, lambda k2: L.seq_of(k, k2, n))),
    L.let(s.size(), lambda k: L.if_(k.gt(3), L.let(k + 1, lambda k1: k1 + n), k)),
    m.has(n),
    m.get_or(n, -5),
    m.get_or(n, L.let(m.get(100), lambda v: v + 1)),
    L.if_(m.has(n), m.get(n), -4),
    m.put(n, 1).keys(),
    m.delete(n),
    m.merge(m.put(n, 7)),
    L.build_map(t, lambda k: k + 1),
    L.build_map(t, lambda k: L.let(k + 1, lambda k1: L.if_(k1.gt(2), k1, n))),
    L.rec(LeaderAndIsr, leader=n, leader_epoch=1, isr=s, zk_version=0).with_(leader=n + 1).f("leader"),
    L.not_(L.set_of(n, 1).contains(2)),
    s.size().gt(1).implies(s.head(0).eq(n)),
    s.size().gt(1).implies(L.let(s.head(0), lambda h: h.eq(n))),
    m.delete_all(t),
    L.and_(),
    L.or_(),
]


def _both(expr: L.Expr, values: dict[str, Any]) -> tuple[Any, Any]:
    free = tuple(values)
    results = []
    for backend in (compile_expr, compile_fast):
        fn: Callable[[dict[str, Any]], Any] = backend(expr, free)
        try:
            results.append(("value", fn(values)))
        except EvalError as exc:
            results.append(("error", str(exc)))
    return results[0], results[1]


# No deadline: each example evaluates every construct twice, and on a loaded machine that can take longer than
# Hypothesis's 200 ms default; the test is about agreement, not speed.
@settings(max_examples=60, deadline=None)
@given(ints, sets, maps, st.integers(min_value=-3, max_value=9))
def test_every_construct_evaluates_as_the_interpreter(
    seq: tuple[int, ...], good: frozenset[int], mp: FMap[int, int], k: int
) -> None:
    values = {"s": seq, "t": good, "m": mp, "n": k}
    for expr in EXPRS:
        oracle, fast = _both(expr, values)
        assert fast == oracle, expr
        assert type(fast[1]) is type(oracle[1]), expr


def test_errors_read_exactly_as_the_interpreter_s() -> None:
    expr = L.rule("leader of p", "§3.1", L.var("m").get(3))
    with pytest.raises(EvalError, match=r"key 3 is not in the map \(rule leader of p\)"):
        compile_fast(expr, ("m",))({"m": FMap({1: 1})})
    with pytest.raises(EvalError, match=r"unbound variable 'zz'"):
        compile_fast(L.rule("r", "§1", L.var("zz") + 1), ("m",))
    with pytest.raises(EvalError, match="has no field 'nope'"):
        compile_fast(L.var("m").f("nope"), ("m",))({"m": 1})


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_the_whole_spec_evaluates_as_the_interpreter_along_random_walks(profile: str) -> None:
    """Every action's guard and effect, every invariant, on the states of seeded random walks."""
    cfg = ExploreConfig(
        profile=profile, brokers=3, topics=1, partitions=2, rf=2, faults=frozenset({"zk", "controller"})
    )
    actions = build_actions(get_profile(profile))
    compiled = {}
    for name, action in actions.items():
        free = ("s", *(p.name for p in action.params))
        compiled[name] = tuple(
            (compile_expr(x, free), compile_fast(x, free)) for x in (action.guard, action.effect)
        )
    invs = [
        (inv, compile_expr(inv.expr, free), compile_fast(inv.expr, free))
        for inv in invariants(get_profile(profile))
        for free in [("s",) if inv.kind == "state" else ("s", "s2", "requests")]
    ]
    rng = random.Random(7)
    checked = 0
    for _walk in range(4):
        state = ClusterState()
        events = list(bootstrap(cfg))
        for _step in range(30):
            options = [events[0]] if events else list(candidates(state, cfg))
            rng.shuffle(options)
            moved = False
            for ev in options:
                (guard, fast_guard), (effect, fast_effect) = compiled[ev.kind]
                values = {"s": state, **{p.name: getattr(ev, p.name) for p in actions[ev.kind].params}}
                enabled = guard(values)
                assert fast_guard(values) == enabled, ev
                if not enabled:
                    continue
                work = effect(values)
                assert fast_effect(values) == work, ev
                step_values = {"s": state, "s2": work.state, "requests": work.sent}
                for inv, slow, fast in invs:
                    vals = {"s": work.state} if inv.kind == "state" else step_values
                    assert fast(vals) == slow(vals), inv.name
                checked += 1
                state = work.state
                moved = True
                if events:
                    events.pop(0)
                break
            if not moved:
                break
    assert checked > 40


def test_fast_records_equal_the_constructor_and_replace() -> None:
    import dataclasses

    from kcspec.model import fastrec

    make = fastrec.maker(LeaderAndIsr, ("isr", "leader", "zk_version", "leader_epoch"))
    assert make is not None
    built = make((1, 2), 1, 0, 5)
    assert built == LeaderAndIsr(leader=1, leader_epoch=5, isr=(1, 2), zk_version=0)
    assert repr(built) == repr(LeaderAndIsr(leader=1, leader_epoch=5, isr=(1, 2), zk_version=0))
    assert fastrec.maker(LeaderAndIsr, ("leader",)) is None  # not every field: the constructor fills defaults
    # a tuple record offering ``_fields_maker``: its updater gives it every field, the others read from the record
    lair = fastrec.updater(LeaderAndIsr, ("zk_version", "leader"), lambda o, *v: ("other", o, *v))
    assert lair is not None
    old = LeaderAndIsr(leader=1, leader_epoch=5, isr=(1, 2), zk_version=0)
    new = lair(old, 3, 2)
    assert new == dataclasses.replace(old, zk_version=3, leader=2) and type(new) is LeaderAndIsr
    assert repr(new) == repr(dataclasses.replace(old, zk_version=3, leader=2))
    assert lair(7, 3, 2) == ("other", 7, 3, 2)
    # a plain record (instances with a ``__dict__``)
    fa = ReplicaAssignment((1, 2), (3,), ())
    update = fastrec.updater(ReplicaAssignment, ("adding",), lambda o, v: ("other", o, v))
    assert update is not None
    assert update(fa, (4,)) == dataclasses.replace(fa, adding=(4,))
    assert update(7, 2) == ("other", 7, 2)

    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            assert self.x >= 0

    assert fastrec.maker(Checked, ("x",)) is None
    assert fastrec.updater(Checked, ("x",), lambda o, v: o) is None


def test_equal_but_different_constants_are_not_shared() -> None:
    """``(1,) == (True,)``, yet each constant must come out as written (sharing is by class, element-wise)."""
    one, true = L.lit((1,)), L.lit((True,))
    expr = L.seq_of(L.seq_of(one, true), L.seq_of(true, one), L.lit(frozenset({1})), L.lit(frozenset({True})))
    fast = compile_fast(expr, ())({})
    assert repr(fast) == repr(compile_expr(expr, ())({}))
    assert repr(fast) == "(((1,), (True,)), ((True,), (1,)), frozenset({1}), frozenset({True}))"


def test_membership_in_constant_sets_of_enum_members_is_membership() -> None:
    """Sets of enum members (or of tuples of them) are tested by identity, not hashing: the same answers, for
    members, tuples of them and values of any other kind."""
    from kcspec.spec.vocabulary import PartitionState, ReplicaState

    small = L.lit(frozenset({ReplicaState.NewReplica, ReplicaState.OnlineReplica}))
    large = L.lit(frozenset(ReplicaState))
    pairs = L.lit(frozenset({(PartitionState.NewPartition, PartitionState.OnlinePartition)}))
    exprs = [
        small.contains(s),
        large.contains(s),
        pairs.contains(L.seq_of(s, t)),
        L.not_(pairs.contains(L.seq_of(t, s))),
    ]
    values = [*ReplicaState, *PartitionState, 1, "NewReplica", (1, 2), None]
    for expr in exprs:
        fast, slow = compile_fast(expr, ("s", "t")), compile_expr(expr, ("s", "t"))
        for a in values:
            for b in (PartitionState.OnlinePartition, PartitionState.NewPartition, 3):
                env = {"s": a, "t": b}
                assert fast(env) == slow(env), (expr, env)
