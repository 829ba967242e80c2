"""Injecting a bug into the reference controller from outside, for the duration of a run.

A ``Patch`` names one attribute of a reference-controller module or class and says how to build its
replacement from the original. ``injected(patches)`` installs the replacements and always restores the
originals on the way out, so no patch outlives the run. A module-level function is also rebound in every
``kcspec.reference_impl`` module that imported it by name (``from … import leader_for_offline``), so callers
see the mutant whichever name they use. ``reference_impl/`` itself is never edited.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

REFERENCE_PACKAGE = "kcspec.reference_impl"


class PatchError(RuntimeError):
    """A patch names an attribute the reference controller does not have (the hook is missing)."""


@dataclass(frozen=True)
class Patch:
    """Replace ``owner.name`` (``owner`` a module or a class) by ``make(original)``."""

    owner: types.ModuleType | type
    name: str
    make: Callable[[Any], Any]

    @property
    def target(self) -> str:
        owner = self.owner
        where = (
            owner.__name__
            if isinstance(owner, types.ModuleType)
            else f"{owner.__module__}.{owner.__qualname__}"
        )
        return f"{where}.{self.name}"


def _reference_modules() -> list[types.ModuleType]:
    return [
        mod
        for name, mod in sorted(sys.modules.items())
        if isinstance(mod, types.ModuleType)
        and (name == REFERENCE_PACKAGE or name.startswith(REFERENCE_PACKAGE + "."))
    ]


MEMO_CACHES = (
    ("request_batch", "_RECIPIENTS"),
    ("logs", "_ISR_LISTS"),
    ("logs", "_ISR_STRINGS"),
    ("logs", "_JAVA_LISTS"),
    ("logs", "_MK_STRINGS"),
    ("logs", "_SCALA_SETS"),
    ("snapshot", "_REPLICA_KEYS"),
)
"""Module-level memo tables of the reference controller. They outlive a run, so they are emptied when a patch is
installed and again when it is removed: otherwise a mutant would be served results its unmutated function
computed earlier (the mutated line never runs), and would leave its own wrong results to later runs."""


def clear_memo_caches() -> None:
    for module, name in MEMO_CACHES:
        table = getattr(sys.modules.get(f"{REFERENCE_PACKAGE}.{module}"), name, None)
        if isinstance(table, dict):
            table.clear()


@contextmanager
def injected(patches: Sequence[Patch]) -> Iterator[None]:
    """Install ``patches`` for the duration of the ``with`` block; the originals are restored afterwards (and
    the memo tables emptied on the way in and out)."""
    undo: list[tuple[object, str, object]] = []
    clear_memo_caches()
    try:
        for patch in patches:
            owner = patch.owner
            if isinstance(owner, type):
                if patch.name not in vars(owner):
                    raise PatchError(f"{patch.target} does not exist: the hook this mutant needs is missing")
                original = vars(owner)[patch.name]
                undo.append((owner, patch.name, original))
                setattr(owner, patch.name, patch.make(original))
                continue
            if not hasattr(owner, patch.name):
                raise PatchError(f"{patch.target} does not exist: the hook this mutant needs is missing")
            original = getattr(owner, patch.name)
            replacement = patch.make(original)
            holders = [owner, *(m for m in _reference_modules() if m is not owner)]
            for mod in holders:
                for attr, value in list(vars(mod).items()):
                    if value is original and (mod is owner or attr == patch.name):
                        undo.append((mod, attr, original))
                        setattr(mod, attr, replacement)
        yield
    finally:
        for holder, attr, original in reversed(undo):
            setattr(holder, attr, original)
        clear_memo_caches()


def unwrap(value: Any) -> Any:
    """The function behind a class attribute (a property's getter, a static or class method's function)."""
    if isinstance(value, property):
        return value.fget
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    return value


def rewrap(original: Any, fn: Any) -> Any:
    """``fn`` wrapped the way ``original`` was (property, static or class method, or plain)."""
    if isinstance(original, property):
        return property(fn, original.fset, original.fdel, original.__doc__)
    if isinstance(original, staticmethod):
        return staticmethod(fn)
    if isinstance(original, classmethod):
        return classmethod(fn)
    return fn
