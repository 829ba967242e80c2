"""Guard probes: near-miss events, to check that the reference controller rejects what the spec rejects.

Every check that generates events (scenarios, exploration, the stateful machine) offers only events the spec
enables, so a reference controller that accepts *more* than the spec goes unnoticed. ``probe`` replays a scenario
and, in every state on the way, perturbs the scenario's next event one field at a time (an id one off or
unregistered, a list shortened, lengthened or emptied, an unknown topic, a flag flipped, another enum member) and compares
``enabled`` of the spec and of the reference controller on each variant. Variants the spec cannot even evaluate
(malformed beyond its guards) are skipped.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator
from typing import Any

from kcspec.spec.events import ControllerEvent
from kcspec.spec.fmap import FMap


def _field_variants(value: Any) -> list[Any]:
    if isinstance(value, enum.Enum):
        return [member for member in type(value) if member is not value]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value - 1, value + 1, -1, 9]
    if isinstance(value, str):
        return ["", "zz"] if value else ["zz"]
    if type(value) is tuple:  # plain tuples only: a ``TopicPartition`` field is a record, not a sequence
        out: list[Any] = [(), value[:-1], (*value, value[-1] if value else 9)]
        if value and type(value[0]) is tuple:
            out += [((), *value[1:]), (value[0][:-1], *value[1:]), (value[0] + (9,), *value[1:])]
        elif value and isinstance(value[0], int):
            out += [(*value, 9), (-1, *value[1:])]
        return out
    if isinstance(value, frozenset):
        return [frozenset()]
    if isinstance(value, FMap):
        items = list(value.items())
        return [FMap({}), *(FMap({k: v for k, v in items if k != key}) for key, _v in items[:1])]
    return []


def variants(event: ControllerEvent) -> Iterator[ControllerEvent]:
    """``event`` with one field changed at a time (never ``event`` itself)."""
    if not dataclasses.is_dataclass(event):
        return
    for f in dataclasses.fields(event):
        for value in _field_variants(getattr(event, f.name)):
            try:
                other = dataclasses.replace(event, **{f.name: value})
            except (TypeError, ValueError):
                continue
            if other != event:
                yield other


def probe(profile: str, events: tuple[ControllerEvent, ...]) -> str | None:
    """The first near-miss event on which the spec and the reference controller disagree about enabledness
    (or on which the reference controller's guard crashes), replaying ``events`` from the empty state."""
    from kcspec.model.step import SpecMachine
    from kcspec.reference_impl import ReferenceController
    from kcspec.spec.state import ClusterState

    spec = SpecMachine(profile)
    ref = ReferenceController(profile)
    state = ClusterState()
    for i, event in enumerate(events, start=1):
        for other in variants(event):
            try:
                expected = spec.enabled(state, other)
            except Exception:  # malformed beyond the spec's guards: not a probe
                continue
            try:
                actual = ref.enabled(other)
            except Exception as exc:
                return f"before step {i}: the reference guard crashed on {other}: {type(exc).__name__}: {exc}"
            if expected != actual:
                who = "the spec" if expected else "the reference controller"
                return f"before step {i}: only {who} accepts {other}"
        if not spec.enabled(state, event):
            return None
        state = spec.step(state, event).state
        ref.handle(event)
    return None
