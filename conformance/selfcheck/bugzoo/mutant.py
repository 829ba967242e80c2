"""What a mutant is: one re-injected bug of the reference controller, with its catalogue entry.

A ``Mutant`` carries the catalogue fields (ticket, the release that fixed it, the wrong behaviour, how it is
injected, the profile it mutates) and builds its ``Patch``es on demand (``patches()``), so that importing the
catalogue does not touch the reference controller. ``kind`` says where the mutant comes from:

* ``historical`` — a Kafka controller bug from the project's history (semantics §12 and the inline notes);
* ``hazard`` — a code-derived hazard of the semantics document, "fixed": Kafka keeps the hazard, so fixing
  it is a deviation the checks must notice;
* ``generic`` — a mutation made by a mutation-testing tool (``kcspec.conformance.selfcheck.bugzoo.generic``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kcspec.conformance.selfcheck.bugzoo.patching import Patch, injected

KINDS = ("historical", "hazard", "generic")


@dataclass(frozen=True)
class Mutant:
    name: str
    kind: str
    profile: str
    ticket: str
    fixed_in: str
    wrong: str
    """The wrong behaviour, as the controller exhibits it."""
    injection: str
    """How the bug is injected into the reference controller (which hook, which change)."""
    sections: tuple[str, ...]
    build: Callable[[], tuple[Patch, ...]]

    def patches(self) -> tuple[Patch, ...]:
        return self.build()

    @contextmanager
    def active(self) -> Iterator[None]:
        """The reference controller with this bug, for the duration of the ``with`` block."""
        with injected(self.patches()):
            yield
