"""Every backend of the expression language has a handler for every node kind of ``spec/lang.py``.

A node kind added to the language without a handler in some backend would otherwise fail only at run time, on
the first rule that uses it, and only in that backend."""

from __future__ import annotations

import importlib

import pytest
from kcspec.model.dispatch import MissingHandler, NodeTable, node_kinds
from kcspec.spec import lang as L

BACKENDS = (
    "kcspec.model.evaluate",
    "kcspec.model.codegen",
    "kcspec.model.tla.emit",
    "kcspec.model.z3.symbolic",
    "kcspec.model.diagrams.pretty",
)


@pytest.mark.parametrize("module", BACKENDS)
def test_the_backend_handles_every_node_kind(module: str) -> None:
    tables = [t for t in vars(importlib.import_module(module)).values() if isinstance(t, NodeTable)]
    assert len(tables) == 1, f"{module} should have one dispatch table (a NodeTable), has {len(tables)}"
    table = tables[0]
    assert not table.missing(), f"{table.backend} has no handler for: {', '.join(table.missing())}"


def test_the_language_has_the_node_kinds_the_backends_know() -> None:
    names = {k.__name__ for k in node_kinds()}
    assert {"Const", "Var", "Call", "Rule", "MapBuild", "Fold"} <= names
    assert "Expr" not in names


def test_a_node_kind_without_a_handler_is_named_in_the_error() -> None:
    table: NodeTable[object] = NodeTable("a backend under test")
    table.on(L.Const)(object())
    assert "Var" in table.missing() and "Const" not in table.missing()
    with pytest.raises(MissingHandler, match="a backend under test has no handler for Var nodes"):
        table.handler(L.Var("x"))
    with pytest.raises(ValueError, match="two handlers for Const"):
        table.on(L.Const)(object())
