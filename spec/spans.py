"""Where a rule of the spec is written: a file of ``spec/`` and a line, recorded while the spec is built.

A rule's § says which part of Kafka's behaviour it is (``kafka-semantics.md``); its span says where in ``spec/``
it is written (``spec/elections.py:80``), so that every rendering of the rule — a TLA+ operator's comment, an
invariant's violation, a counterexample, ``kcspec spec show --rule`` — leads one step back to its source.

The span of a rule, an action or an invariant is the line of the spec that asked for it: the first frame of the
call stack outside the spec language itself (``lang.py``, this module, generated ``__init__``s) and outside the
functions marked ``@builder`` (helpers such as ``controller_action`` that build a unit on behalf of their caller).
A procedure's span is its function's ``def`` line. Paths are relative to the folder that holds ``spec/`` (the
checkout's root, or the installed package's), so they read the same in both.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import TypeVar

_ROOT = Path(__file__).resolve().parent.parent
"""The folder that holds ``spec/``: spans are relative to it."""

_LANGUAGE = frozenset({str(Path(__file__).resolve()), str(Path(__file__).resolve().parent / "lang.py")})
_BUILDERS: set[CodeType] = set()

_F = TypeVar("_F", bound=Callable[..., object])


@dataclass(frozen=True, order=True)
class Span:
    """A place in the spec's source: ``path`` relative to the folder holding ``spec/``, and a 1-based line."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def builder(fn: _F) -> _F:
    """Mark ``fn`` as building units on behalf of its caller: spans skip its frames (and point at the caller)."""
    _BUILDERS.add(fn.__code__)
    return fn


@functools.cache
def _relative(filename: str) -> str:
    path = Path(filename)
    try:
        return path.resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        return path.as_posix()


@functools.cache
def _is_language(filename: str) -> bool:
    return filename.startswith("<") or str(Path(filename).resolve()) in _LANGUAGE


def of_function(fn: Callable[..., object]) -> Span:
    """The span of a function's ``def`` line (a procedure's span; a decorated function's own ``def``, through
    ``__wrapped__``)."""
    fn = inspect.unwrap(fn)
    code = fn.__code__
    return Span(_relative(code.co_filename), code.co_firstlineno)


def of_assignment(module: ModuleType, name: str) -> Span:
    """The span of the line that assigns the module-level ``name`` of ``module`` (a table such as
    ``tables.PARTITION_VALID_PREVIOUS``); ``KeyError`` naming it when the module assigns no such name."""
    filename = module.__file__ or ""
    for node in ast.parse(Path(filename).read_text(encoding="utf-8")).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return Span(_relative(filename), node.lineno)
    raise KeyError(f"{module.__name__} assigns no {name}")


def caller() -> Span | None:
    """The span of the spec line that is building a unit now: the first frame outside the spec language and the
    ``@builder`` functions. ``None`` when there is none (the whole stack is the language's)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not (_is_language(code.co_filename) or code in _BUILDERS):
            return Span(_relative(code.co_filename), frame.f_lineno)
        frame = frame.f_back
    return None


__all__ = ["Span", "builder", "caller", "of_assignment", "of_function"]
