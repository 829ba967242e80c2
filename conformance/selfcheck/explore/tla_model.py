"""The explorer on the generated TLA+ module's own abstraction, so that its state count is comparable with TLC's.

``kcspec explore`` starts from a bootstrapped cluster and tries a hand-picked set of events per state (a
search for bugs); the TLA+ module (``model/tla/module.py``) starts from the empty cluster and its ``Next``
tries every action with every parameter value of its finite domains. This mode runs the explorer on
exactly that model:

* the initial state is ``Init`` (the empty ``ClusterState``, its config holding the queue's bound
  ``max_queued_requests``), with no bootstrap events;
* the candidates in every state are all event instances of ``Next`` — every spec action with every
  combination of values of its parameters' domains (``model/tla/domains.py``, the same definitions the
  module's text is generated from); the spec's guard decides which are enabled, as in the module;
* successors outside the bounds (``model/tla/bounds.py``, the module's ``StateConstraint``) are neither
  counted nor explored, as TLC does with a ``CONSTRAINT``;
* no symmetry reduction (the module has none: broker ids are integers the spec orders, §2.3) and no depth
  bound: the search runs to the fixed point.

The reference controller is driven and checked exactly as in ``kcspec explore`` (refinement and invariants on
every step), so the count is the reference controller's, and it equals TLC's count on the module exactly
when the two describe the same state space. ``kcspec tla crosscheck`` drives the reference controller alone by
default (``lockstep=False``: its own guards, no spec beside it), since TLC on the module is its second
implementation there; ``kcspec verify``'s count of each manifest model (``check_count``) keeps the refinement.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

from kcspec.conformance.selfcheck.explore.explorer import ExploreResult, ExploreStats, SearchSpace, search
from kcspec.model.tla.bounds import within_bounds
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.instances import model_events
from kcspec.model.tla.manifest import Expected, load, save


def model_space(
    profile: str, config: ModelConfig, max_states: int = 1_000_000, lockstep: bool = True
) -> SearchSpace:
    """The search space of the TLA+ module of ``profile`` for ``config`` (``lockstep``: ``SearchSpace``'s)."""
    events = model_events(profile, config)
    return SearchSpace(
        profile=profile,
        description=f"TLA+ model of {profile}: {config.describe()}",
        prefix=(),
        candidates=lambda s: events,
        brokers=config.brokers,
        symmetry=False,
        depth=None,
        max_states=max_states,
        keep=lambda s: within_bounds(s, config),
        initial=config.initial,
        lockstep=lockstep,
    )


def explore_model(
    profile: str,
    config: ModelConfig,
    max_states: int = 1_000_000,
    progress: Callable[[ExploreStats], None] | None = None,
    keep_states: bool = False,
) -> ExploreResult:
    """Explore the reference controller over the TLA+ module's state space, to the fixed point."""
    return search(model_space(profile, config, max_states), progress, keep_states=keep_states)


UPDATE_HINT = (
    "if the spec changed on purpose, run python -m kcspec.conformance.selfcheck.explore.tla_model --update"
)


@dataclass(frozen=True)
class CountCheck:
    """The explorer's count on a manifest model against the count the manifest records."""

    entry: Expected
    result: ExploreResult

    @property
    def count(self) -> int:
        return self.result.stats.distinct_states

    @property
    def problem(self) -> str | None:
        """Why the model does not match the manifest (``None`` when it does)."""
        if self.result.finding is not None:
            return f"the explorer found a {self.result.finding.kind} violation: {self.result.finding.message}"
        if self.result.stats.truncated:
            return "the exploration stopped before the fixed point"
        if self.count != self.entry.distinct_states:
            return (
                f"{self.count:,} distinct states, the manifest expects {self.entry.distinct_states:,}; "
                + UPDATE_HINT
            )
        return None


def check_count(entry: Expected) -> CountCheck:
    """Explore ``entry``'s model and compare its distinct-state count with the manifest's."""
    return CountCheck(entry, explore_model(entry.profile, entry.config))


def main(argv: list[str] | None = None) -> int:
    """List the manifest's models (those named, else every one) with the explorer's counts; ``--update`` writes
    the counts into the manifest."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--update", action="store_true", help="write the explorer's counts into the manifest")
    parser.add_argument("names", nargs="*", help="manifest model names (default: all)")
    args = parser.parse_args(argv)
    entries = load()
    unknown = sorted(set(args.names) - {e.name for e in entries})
    if unknown:
        print(
            f"unknown manifest model(s) {unknown}; known: {sorted(e.name for e in entries)}", file=sys.stderr
        )
        return 2
    checks = [check_count(e) for e in entries if not args.names or e.name in args.names]
    for c in checks:
        print(f"{c.entry.name}: manifest {c.entry.distinct_states}, explorer {c.count}: {c.problem or 'ok'}")
    if any(c.result.finding is not None or c.result.stats.truncated for c in checks):
        print("an exploration did not complete cleanly; the manifest is left as it is")
        return 1
    if args.update:
        counts = {c.entry.name: c.count for c in checks}
        save(tuple(replace(e, distinct_states=counts.get(e.name, e.distinct_states)) for e in entries))
        return 0
    return 1 if any(c.problem for c in checks) else 0


__all__ = ["CountCheck", "check_count", "explore_model", "model_events", "model_space"]


if __name__ == "__main__":
    raise SystemExit(main())
