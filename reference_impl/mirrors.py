"""Which of the spec's rules a function of the reference controller implements — by the rule's name only.

``@mirrors("OfflinePartitionLeaderElectionStrategy")`` on ``offline_partition_leader_election`` records the pair
in ``COUNTERPARTS``; ``kcspec spec show --rule`` lists it beside the rule's other renderings. A name is a string:
nothing of the spec is imported (DESIGN.md rule 2), so the reference stays a second, independent implementation
and the decorator changes nothing at run time (it returns the function itself). A test checks that every name
given here is a rule of the spec, so a renamed rule cannot leave a stale counterpart behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

_F = TypeVar("_F", bound=Callable[..., object])
_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, order=True)
class Counterpart:
    """A function of the reference controller: where it is written (its first line: the ``@mirrors`` mark, which
    decorators put before the ``def``) and its qualified name."""

    path: str
    line: int
    qualname: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.qualname}"


COUNTERPARTS: dict[str, list[Counterpart]] = {}
"""Rule name → the reference controller's functions that implement it (filled when the modules are imported)."""


def mirrors(*rules: str) -> Callable[[_F], _F]:
    """Record that the decorated function implements the spec's rules named ``rules`` (Kafka's names)."""

    def deco(fn: _F) -> _F:
        code = fn.__code__
        path = Path(code.co_filename)
        if not (path.is_absolute() and path.is_file()):
            # code compiled from text (a mutant of the reference, re-executing its source) is no place in the
            # source tree: only the functions of the modules as written are counterparts
            return fn
        path = path.resolve()
        try:
            where = path.relative_to(_ROOT).as_posix()
        except ValueError:
            where = path.as_posix()
        here = Counterpart(where, code.co_firstlineno, fn.__qualname__)
        for rule in rules:
            known = COUNTERPARTS.setdefault(rule, [])
            if here not in known:  # a module imported twice (reloaded) marks its functions once
                known.append(here)
        return fn

    return deco


__all__ = ["COUNTERPARTS", "Counterpart", "mirrors"]
