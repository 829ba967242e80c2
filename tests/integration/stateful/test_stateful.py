"""Stateful property tests: long random event sequences, reference controller against the spec, both profiles.

The budget here is the CI budget (a few minutes with the fixed seed of ``make test``); ``kcspec fuzz``
runs longer campaigns.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, seed, settings
from hypothesis.stateful import run_state_machine_as_test
from kcspec.conformance.selfcheck.fuzz.machine import coverage_gaps, machine_for

EXAMPLES = int(os.environ.get("KCSPEC_STATEFUL_EXAMPLES", "300"))
"""300, not the 120 that reach every row alone: with the seed pinned, the runs are the same from one process to the
next, but not from one import order to another (kafka-1.1 at 120 examples missed two deletion rows when the CLI
was invoked earlier in the same process, as in the full suite; time and hash seeds play no part). 200 reached
every row and event kind in both orders for both profiles until each run also drew its event-queue bound (§7.12):
the extra draw moved kafka-1.1's runs, and at 200 they missed OfflinePartition→OfflinePartition; 250 and 300 reach
everything, and 300 keeps a margin."""
STEPS = int(os.environ.get("KCSPEC_STATEFUL_STEPS", "40"))
SEED = int(os.environ.get("KCSPEC_STATEFUL_SEED", "0"))


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_reference_controller_refines_the_spec_on_random_runs(profile: str, tmp_path: object) -> None:
    # The seed is pinned on the machine itself, so that the runs (and the coverage they reach) do not depend on
    # which tests ran before in the same process; KCSPEC_STATEFUL_SEED explores other runs.
    machine = seed(SEED)(machine_for(profile))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,  # the same runs everywhere: no replay of locally saved examples
            suppress_health_check=list(HealthCheck),
        ),
    )
    gaps = coverage_gaps(profile, machine.coverage)
    cov = machine.coverage
    assert not any(gaps.values()), (
        f"never exercised with the default budget ({cov.runs} runs, {cov.steps} steps): {gaps}"
    )
