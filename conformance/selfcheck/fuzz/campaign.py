"""Run the stateful machine for a time budget with a printed seed and a database of failures.

Hypothesis keeps every failing example it finds in the database directory and replays those first on
the next run, so a failure found once is re-run first next time. The seed is printed and accepted
back (``--seed``) to reproduce a campaign.

The budget is a bound, not a wish: Hypothesis runs a round of examples to its end, so the machine itself checks
the clock before every step and stops the round (``BudgetSpent``, not an ``Exception``: Hypothesis neither
shrinks nor retries it) once the budget is spent. Decision: a failure found inside the budget is shrunk for at
most ``SHRINK_SECONDS`` more (a minimal counterexample is worth a few seconds past the budget); if the shrinking
is cut short, the smallest failing run seen so far is reported, and said to be so. The set-up — the spec's code
is compiled on its first step, seconds on a busy machine — is done by ``warm_up`` before the clock starts, and
reported apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test
from kcspec.conformance.selfcheck.fuzz.machine import ControllerMachine, Coverage, coverage_gaps, machine_for
from kcspec.spec.events import ControllerEvent

SHRINK_SECONDS = 30.0
"""How long past the budget a failure found inside it may be shrunk."""


class BudgetSpent(BaseException):
    """The campaign's time is up (raised inside a Hypothesis run, which lets it through untouched)."""


def warm_up(profile: str) -> float:
    """Compile what the machine's first step would (the spec's actions and invariants, the reference controller)
    by running the bootstrap of its configuration once; returns the seconds it took."""
    from kcspec.conformance.selfcheck.fuzz.machine import default_config
    from kcspec.model.event_candidates import bootstrap
    from kcspec.model.invariants_check import InvariantChecker
    from kcspec.model.step import SpecMachine
    from kcspec.reference_impl import ReferenceController
    from kcspec.spec.state import ClusterState

    start = time.perf_counter()
    spec, checker, ref = SpecMachine(profile), InvariantChecker(profile), ReferenceController(profile)
    state = ClusterState()
    for event in bootstrap(default_config(profile)):
        result = spec.step(state, event)
        checker.check_state(result.state)
        checker.check_step(state, result.state, result.requests)
        ref.handle(event)
        state = result.state
    return time.perf_counter() - start


def bounded(
    machine: type[ControllerMachine], deadline: float, clock: Callable[[], float] = time.perf_counter
) -> type[ControllerMachine]:
    """``machine`` stopping at ``deadline`` (``time.perf_counter``), or ``SHRINK_SECONDS`` later once a failure
    was seen; the last failure's message is kept on the class (``last_failure``)."""

    class Bounded(machine):  # type: ignore[valid-type,misc]
        last_failure: str | None = None

        def apply(self, event: ControllerEvent) -> None:
            failing = type(self).last_failure is not None
            if clock() > deadline + (SHRINK_SECONDS if failing else 0.0):
                raise BudgetSpent()
            try:
                super().apply(event)
            except AssertionError as exc:
                type(self).last_failure = str(exc)
                raise

    Bounded.__name__ = machine.__name__
    return Bounded


@dataclass(frozen=True)
class CampaignResult:
    profile: str
    seed: int
    seconds: float
    rounds: int
    coverage: Coverage
    failure: str | None

    @property
    def gaps(self) -> dict[str, list[str]]:
        return coverage_gaps(self.profile, self.coverage)


def run_campaign(
    profile: str,
    budget_seconds: float,
    seed: int,
    database: Path | None,
    trace_dir: Path | None,
    examples_per_round: int = 25,
    steps: int = 30,
    clock: Callable[[], float] = time.perf_counter,
) -> CampaignResult:
    """Rounds of ``examples_per_round`` runs of ``steps`` steps until ``budget_seconds`` (by ``clock``) are spent
    or a failure is found."""
    start = clock()
    machine = bounded(machine_for(profile, trace_dir), start + budget_seconds, clock)
    db = DirectoryBasedExampleDatabase(str(database)) if database is not None else None
    rounds = 0
    failure: str | None = None
    while clock() - start < budget_seconds:
        conf = settings(
            max_examples=examples_per_round,
            stateful_step_count=steps,
            deadline=None,
            database=db,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.reuse, Phase.generate, Phase.shrink]
            if rounds == 0
            else [Phase.generate, Phase.shrink],
            print_blob=True,
        )
        try:
            _seeded(machine, conf, seed + rounds)
        except AssertionError as exc:
            failure = str(exc)
            rounds += 1
            break
        except BudgetSpent:
            spent = True
        except Exception as exc:
            # Hypothesis may answer a run that the budget cut short (BudgetSpent escaping mid-run) with a
            # consistency error of its own when it had run the same choices further before: the budget, not a
            # failure of the controller
            if not _cut_by_budget(exc):
                raise
            spent = True
        else:
            spent = False
        if spent:
            rounds += 1
            last = getattr(machine, "last_failure", None)
            if last is not None:
                failure = (
                    f"{last}\n(shrinking cut short by the budget: the smallest failing run found so far)"
                )
            break
        rounds += 1
    return CampaignResult(profile, seed, clock() - start, rounds, machine.coverage, failure)


def _cut_by_budget(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while ``BudgetSpent`` was being handled (its context chain holds one)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, BudgetSpent):
            return True
        seen = seen.__context__
    return False


def _seeded(machine: type, conf: settings, seed: int) -> None:
    """Run the machine with this seed (Hypothesis reads a ``@seed`` set on the state-machine class)."""
    from hypothesis import seed as hseed

    run_state_machine_as_test(hseed(seed)(machine), settings=conf)
