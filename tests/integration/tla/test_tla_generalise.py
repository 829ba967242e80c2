"""Rule copies as one operator (``generalise``): the copies the spec's builders make of a rule, with different
caller expressions in them, become one operator parametrised by the differences; every copy is proved to be its
operator's instance (substitution, up to renaming of bound names) whenever a module is generated."""

from __future__ import annotations

from typing import Any

import pytest
from kcspec.model.tla import generalised
from kcspec.model.tla import module as module_py
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.generalise import Generaliser
from kcspec.model.tla.module import generate_from
from kcspec.spec import lang as L
from kcspec.spec.profiles import KAFKA_2_8, get_profile
from kcspec.spec.work import Work

from tests.support import sample_spec

s = L.var("s")


def _bump(state: L.Expr) -> L.Expr:
    """A rule built anew at each use, around whatever state expression the caller has."""
    return L.rule("bumpZxid", "§3.3", state.with_(zk=state.f("zk").with_(zxid=state.f("zk", "zxid") + 1)))


def _action(name: str, state: L.Expr) -> L.Action:
    return L.Action(name, "§7.12", "doc", (), L.lit(True), L.rec(Work, state=state))


def test_copies_of_a_rule_around_different_caller_expressions_are_one_operator() -> None:
    plain = _action("ControllerChange", _bump(s))
    elsewhere = _action("ControllerResignation", _bump(s.with_(controller=s.f("controller").with_(epoch=1))))
    m = generate_from(KAFKA_2_8, ModelConfig(), [plain, elsewhere], [])
    assert (
        m.tla.count("(* §3.3 bumpZxid, ") == 1
    )  # the comment cites the line of this test that writes the rule
    assert "BumpZxid(s2) ==" in m.tla  # the state it bumps: a parameter (s2, as s is the module's own)
    assert "BumpZxid(s)" in m.tla and "BumpZxid([s EXCEPT !.controller" in m.tla


def test_copies_that_differ_where_a_bound_name_is_read_keep_their_own_operators() -> None:
    tps = s.f("zk").f("assignments").keys()
    left = L.rule("pick", "§5.1", tps.any(lambda tp: tp.f("partition").gt(0)))
    right = L.rule("pick", "§5.1", tps.any(lambda tp: tp.f("topic").size().gt(0)))
    g = Generaliser(frozenset({"s"}), frozenset())
    g.collect([left, right])
    out = [g.rewrite(left), g.rewrite(right)]
    assert all(isinstance(e, L.Rule) for e in out)  # tp.partition vs tp.topic reads the quantified tp
    assert g.verify() == []


def test_the_differing_part_becomes_a_parameter_and_each_copy_passes_its_own() -> None:
    a = L.rule("liveCount", "§3.1", s.f("zk").f("brokers").keys().size() + 1)
    b = L.rule("liveCount", "§3.1", s.f("controller").f("live_brokers").keys().size() + 1)
    g = Generaliser(frozenset({"s"}), frozenset())
    g.collect([a, b])
    ca, cb = g.rewrite(a), g.rewrite(b)
    assert isinstance(ca, L.Call) and isinstance(cb, L.Call) and ca.fn is cb.fn
    assert len(ca.fn.params) == 1
    assert g.verify() == []


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_every_rule_copy_of_the_spec_is_its_operators_instance(
    profile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proof runs here from scratch (nothing kept in this process or read from the cache folder)."""
    computed: list[generalised.Generalised] = []
    original = generalised.generalise_roots

    def spy(*args: Any) -> generalised.Generalised:
        computed.append(original(*args))
        return computed[-1]

    monkeypatch.setenv("KCSPEC_CACHE_DIR", "off")
    monkeypatch.setattr(generalised, "generalise_roots", spy)
    monkeypatch.setattr(module_py, "generalise_roots", spy)
    generalised.forget()
    module = module_py._generate(get_profile(profile), ModelConfig())
    assert len(computed) == 1, "the rules were not generalised from scratch"
    assert computed[0].rule_defs, "no rule was generalised"
    assert computed[0].problems == ()
    # the copies of doElectLeaderForPartitions the builders make (one per caller and strategy: ten in kafka-2.8)
    # are one operator, the strategy a parameter dispatching to the strategy's own election
    if profile == "kafka-2.8":
        assert module.tla.count("(* §5.2b doElectLeaderForPartitions, spec/") == 1
    assert 'elect_case = "Offline"' in module.tla


def test_sample_spec_module_still_generates() -> None:
    m = generate_from(KAFKA_2_8, ModelConfig(), sample_spec.actions(), sample_spec.invariants())
    assert "Next ==" in m.tla
