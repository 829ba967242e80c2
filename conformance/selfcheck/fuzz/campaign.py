"""Run the stateful machine for a time budget with a printed seed and a database of failures.

Hypothesis keeps every failing example it finds in the database directory and replays those first on
the next run, so a failure found once is re-run first next time. The seed is printed and accepted
back (``--seed``) to reproduce a campaign.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test
from kcspec.conformance.selfcheck.fuzz.machine import Coverage, coverage_gaps, machine_for


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
) -> CampaignResult:
    machine = machine_for(profile, trace_dir)
    db = DirectoryBasedExampleDatabase(str(database)) if database is not None else None
    start = time.perf_counter()
    rounds = 0
    failure: str | None = None
    while rounds == 0 or time.perf_counter() - start < budget_seconds:
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
        rounds += 1
    return CampaignResult(profile, seed, time.perf_counter() - start, rounds, machine.coverage, failure)


def _seeded(machine: type, conf: settings, seed: int) -> None:
    """Run the machine with this seed (Hypothesis reads a ``@seed`` set on the state-machine class)."""
    from hypothesis import seed as hseed

    run_state_machine_as_test(hseed(seed)(machine), settings=conf)
