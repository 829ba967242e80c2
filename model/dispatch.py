"""Dispatch tables for the backends of the expression language: one small handler per node kind.

Every backend that reads ``Expr`` trees (the Python evaluator, the code generator, the TLA+ emitter, the Z3
symbolic evaluator, the diagrams' pretty-printer) registers its handlers in a ``NodeTable``; a node kind
added to ``spec/lang.py`` without a handler in some backend is found by ``missing()`` (a test checks every
backend) instead of failing at run time on the first spec rule that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kcspec.spec import lang as L

H = TypeVar("H")


def node_kinds() -> tuple[type[L.Expr], ...]:
    """Every concrete node kind of the expression language (the subclasses of ``Expr``), by name."""
    found: set[type[L.Expr]] = set()
    todo = list(L.Expr.__subclasses__())
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        # ``dataclass(slots=True)`` replaces a class by a new one: only the class the module exports counts.
        if getattr(L, kind.__name__, None) is kind:
            found.add(kind)
    return tuple(sorted(found, key=lambda k: k.__name__))


class MissingHandler(LookupError):
    """A backend has no handler for a node kind (a backend left behind when the language grew)."""


class NodeTable(Generic[H]):
    """The handlers of one backend, by node kind; ``on(kind)`` registers one, ``handler(e)`` finds it."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self._handlers: dict[type, H] = {}

    def on(self, *kinds: type[L.Expr]) -> Callable[[H], H]:
        def register(handler: H) -> H:
            for kind in kinds:
                if kind in self._handlers:
                    raise ValueError(f"{self.backend}: two handlers for {kind.__name__}")
                self._handlers[kind] = handler
            return handler

        return register

    def handler(self, e: L.Expr) -> H:
        try:
            return self._handlers[type(e)]
        except KeyError:
            raise MissingHandler(f"{self.backend} has no handler for {type(e).__name__} nodes") from None

    def missing(self) -> tuple[str, ...]:
        """Node kinds of the language this backend has no handler for."""
        return tuple(k.__name__ for k in node_kinds() if k not in self._handlers)
