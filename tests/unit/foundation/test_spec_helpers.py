"""The spec's writing helpers: ``Block`` (sequential bindings) and ``with_at`` (nested update) build exactly the
trees of the nested ``let``/``with_`` they replace, and a misspelt field path fails when the spec is built."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest
from kcspec.spec.actions import registry
from kcspec.spec.field_paths import FieldPathError, check_action, check_fields
from kcspec.spec.invariants import invariants
from kcspec.spec.lang import Action, Block, Expr, Let, Var, let, rec, rule
from kcspec.spec.profiles import PROFILES
from kcspec.spec.state import ClusterState
from kcspec.spec.work import Work


def _canonical(e: Expr) -> str:
    """The tree's text with the generated counters of bound names replaced by their order of appearance."""
    text = repr(e)
    order: dict[str, str] = {}
    for name in re.findall(r"[A-Za-z_]+_\d+", text):
        order.setdefault(name, f"{name.rsplit('_', 1)[0]}#{len(order)}")
    return re.sub(r"[A-Za-z_]+_\d+", lambda m: order.get(m.group(0), m.group(0)), text)


def test_block_builds_the_nested_lets_it_replaces() -> None:
    s = Var("s")
    nested = let(
        s.f("controller", "live_brokers").keys(),
        lambda live: let(live.minus(s.f("controller", "shutting_down")), lambda up: up.size()),
    )
    b = Block()
    b.live = s.f("controller", "live_brokers").keys()
    b.up = b.live.minus(s.f("controller", "shutting_down"))
    flat = b.in_(b.up.size())
    assert isinstance(flat, Let) and flat.name.startswith("live_")
    assert _canonical(flat) == _canonical(nested)


def test_a_step_is_named_once_where_it_is_bound_and_a_rebinding_reads_the_previous_step() -> None:
    b = Block()
    b.w = Var("w")
    first = b.w
    b.w = b.w.with_(moved=True)
    assert b.w != first and b.w.name.startswith("w_") and first.name.startswith("w_")
    tree = b.in_(b.w)
    assert isinstance(tree, Let) and tree.name == first.name
    assert isinstance(tree.body, Let) and tree.body.value == first.with_(moved=True)
    assert tree.body.body == Var(tree.body.name)


def test_reading_an_unbound_step_names_it_and_the_bound_ones() -> None:
    b = Block()
    b.live = Var("s").f("controller", "live_brokers")
    with pytest.raises(
        AttributeError, match=r"step 'lvie' is read before it is bound \(steps bound so far: live\)"
    ):
        _ = b.lvie
    with pytest.raises(
        AttributeError, match=r"step 'up' is read before it is bound \(steps bound so far: none\)"
    ):
        _ = Block().up


def test_a_step_cannot_take_a_private_or_the_closing_name() -> None:
    with pytest.raises(ValueError, match="'_x' cannot name a step"):
        Block()._x = 1
    with pytest.raises(ValueError, match="'in_' cannot name a step"):
        Block().in_ = 1  # type: ignore[assignment]  # deliberately binds the closing name


def test_a_block_is_closed_once() -> None:
    b = Block()
    b.x = 1
    b.in_(2)
    with pytest.raises(ValueError, match="step 'y' bound after the block was closed"):
        b.y = 3
    with pytest.raises(ValueError, match="already closed"):
        b.in_(3)


def test_with_at_is_the_pyramid_of_with() -> None:
    w = Var("w")
    pyramid = w.with_(state=w.f("state").with_(controller=w.f("state", "controller").with_(epoch=3)))
    assert w.with_at("state", "controller", epoch=3) == pyramid
    assert w.with_at(moved=True) == w.with_(moved=True)


def test_a_misspelt_field_names_the_record_the_name_and_the_valid_fields() -> None:
    bad = Var("w").f("state", "controller", "leadershp")
    with pytest.raises(FieldPathError) as err:
        check_fields(bad, {"w": Work}, "rule under test")
    message = str(err.value)
    assert "rule under test" in message
    assert "ControllerContext has no field 'leadershp'" in message
    assert "leadership" in message and "live_brokers" in message


def test_misspelt_fields_in_updates_and_records_and_through_bindings_fail() -> None:
    s = Var("s")
    with pytest.raises(FieldPathError, match="ClusterState has no field 'controler'"):
        check_fields(s.with_(controler=1), {"s": ClusterState}, "update")
    with pytest.raises(FieldPathError, match="Work has no field 'sate'"):
        check_fields(rec(Work, sate=s), {"s": ClusterState}, "record")
    through_let = let(s.f("controller"), lambda c: c.f("epoch_zk_versio"))
    with pytest.raises(FieldPathError, match="'epoch_zk_versio'"):
        check_fields(through_let, {"s": ClusterState}, "let")
    through_map = s.f("zk", "partition_states").keys().all(lambda tp: tp.f("partiton").ge(0))
    with pytest.raises(FieldPathError, match="TopicPartition has no field 'partiton'"):
        check_fields(through_map, {"s": ClusterState}, "quantifier")


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_field_path_of_the_spec_is_valid(profile: str) -> None:
    for action in registry.build(PROFILES[profile]).values():
        check_action(profile, action)
    assert invariants(PROFILES[profile])  # checks its own field paths when built


def test_building_the_actions_fails_on_a_misspelt_field(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = PROFILES[sorted(PROFILES)[0]]
    good = registry.builders(profile)[0]

    def misspelt(p: object) -> Action:
        action = good(profile)
        return dataclasses.replace(action, effect=Var("s").f("controller", "live_brokrs"))

    monkeypatch.setattr(registry, "builders", lambda p: [misspelt])
    monkeypatch.setattr(registry, "_checked", set())
    with pytest.raises(
        FieldPathError, match=r"action \w+ \(spec/[\w/]+\.py:\d+\): ControllerContext has no field"
    ):
        registry.build(profile)


def test_a_misspelt_field_names_the_rule_and_the_line_that_writes_it() -> None:
    """An error raised while the spec is built says where spec/ (here: this test) writes the faulty rule."""
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    bad = rule("ReadsAMisspeltField", "§0", Var("w").f("state", "controler"))
    with pytest.raises(FieldPathError) as err:
        check_fields(Var("w").with_(moved=bad), {"w": Work}, "rule under test")
    message = str(err.value)
    assert f"rule ReadsAMisspeltField (§0, tests/unit/foundation/test_spec_helpers.py:{line})" in message, (
        message
    )
    assert "ClusterState has no field 'controler'" in message, message
