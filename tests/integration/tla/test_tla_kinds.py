"""The static kind check: a generated module never makes TLC compare values of two kinds, and the absent optional
value is the model value ``NoValue`` (TLC stopped at the initial state when it was the string "None")."""

from __future__ import annotations

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.kinds import KindChecker, KindError, mismatch
from kcspec.model.tla.module import ModuleError, generate_from
from kcspec.model.tla.types import INT, NONE, STR, from_hint, map_of, seq_of, set_of
from kcspec.spec import lang as L
from kcspec.spec.fmap import FMap
from kcspec.spec.lang import Action, Param
from kcspec.spec.profiles import KAFKA_2_8
from kcspec.spec.vocabulary import LeaderAndIsr, ReplicaAssignment, ReplicaState, TopicPartition
from kcspec.spec.work import Work

from tests.support import sample_spec
from tests.support.tla_modules import generated, models

DEFAULT = ModelConfig()
"""The default crosscheck model (``kcspec tla crosscheck`` without options)."""


def _action(guard: L.Expr, params: tuple[Param, ...] = ()) -> Action:
    s = L.var("s")
    return Action(
        "MixedKinds", "§0", "A deliberately ill-kinded action.", params, guard, L.rec(Work, state=s)
    )


def _generate_mixed(guard: L.Expr, params: tuple[Param, ...] = ()) -> str:
    with pytest.raises(ModuleError) as info:
        generate_from(KAFKA_2_8, DEFAULT, [*sample_spec.actions(), _action(guard, params)])
    return str(info.value)


def test_a_sequence_compared_with_a_string_is_rejected_naming_the_operator_and_both_kinds() -> None:
    # the shape of the bug real TLC found: a cancel target written as the string "None"
    targets = L.var("targets")
    tp = L.lit(TopicPartition("t0", 0))
    message = _generate_mixed(
        targets.get(tp).eq(L.lit("None")), (Param("targets", FMap[TopicPartition, tuple[int, ...] | None]),)
    )
    assert "operator MixedKinds" in message
    assert "function (seq[int])" in message and "string (str)" in message
    assert '"None"' in message and "Attempted to compare" in message


def test_a_set_literal_mixing_integers_and_strings_is_rejected() -> None:
    message = _generate_mixed(L.set_of(L.lit(1), L.lit("x")).contains(L.lit(1)))
    assert "a set literal" in message and "integer (int)" in message and "string (str)" in message


def test_if_branches_of_two_kinds_are_rejected() -> None:
    message = _generate_mixed(L.if_(L.lit(True), L.lit(1), L.lit(frozenset({2}))).eq(L.lit(1)))
    assert "the branches of IF" in message and "integer (int)" in message and "set (set[int])" in message


def test_a_record_field_of_another_kind_is_rejected() -> None:
    leader = L.rec(LeaderAndIsr, leader=L.lit("zero"), leader_epoch=0, isr=(0,), zk_version=0)
    message = _generate_mixed(leader.f("leader_epoch").eq(L.lit(0)))
    assert "LeaderAndIsr.leader" in message and "integer (int)" in message and "string (str)" in message


def test_kinds_that_tlc_compares() -> None:
    assert mismatch(seq_of(INT), NONE) is None  # a model value compares with anything
    assert mismatch(seq_of(INT), map_of(INT, INT)) is None  # a sequence is a function on 1..n
    assert mismatch(set_of(INT), set_of(STR)) == (INT, STR)  # the mismatch found inside
    assert mismatch(from_hint(ReplicaState), STR) is None  # enum members are strings
    assert mismatch(from_hint(ReplicaAssignment), from_hint(ReplicaAssignment)) is None
    with pytest.raises(KindError, match="Next"):
        KindChecker().check("a parameter domain", seq_of(INT), STR, "operator Next", "RfLists", '{"None"}')


def test_the_cancel_target_is_the_model_value_no_value() -> None:
    module = generated("kafka-2.8", DEFAULT)
    assert '"None"' not in module.tla
    assert "RfLists \\cup {NoValue}" in module.tla
    declared = module.tla.split("CONSTANTS", 1)[1].split("VARIABLES", 1)[0]  # the declaration may span lines
    assert "CONSTANTS Brokers" in module.tla and "NoValue" in declared.replace(",", " ").split()
    assert "    NoValue = NoValue" in module.cfg.splitlines()


@pytest.mark.parametrize(("profile", "config"), models())
def test_every_generated_module_passes_the_kind_check(profile: str, config: ModelConfig) -> None:
    # generation runs the check and raises on the first mismatch; the counts say what it covered
    module = generated(profile, config)
    checks = dict(module.kind_checks)
    for site in ("=", "\\in", "the branches of IF", "\\cup", "a record field", "a parameter domain"):
        assert checks.get(site, 0) > 0, f"{profile}: no {site!r} was checked ({checks})"
    # every operator is checked with each combination of argument types it is called with; generalised rules
    # (model/tla/generalise.py) are one operator for many copies, so the count is of places in the module
    assert sum(checks.values()) > 2_500
