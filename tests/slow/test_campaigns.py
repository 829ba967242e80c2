"""Campaigns too long for every run (`make test-slow`): the unmutated controller through the bug zoo's whole
killing suite and through every cheap check of the ladder, and the explorer's 2-worker search of the 2-broker
TLA+ manifest models (minutes of CPU each)."""

from __future__ import annotations

import pytest
from kcspec.conformance.selfcheck.bugzoo import killing
from kcspec.conformance.selfcheck.bugzoo.checks import LadderConfig, hunt
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import Expected, load

from tests.quality.bugzoo.test_bugzoo import NOT_A_BUG


def test_a_non_mutant_passes_every_cheap_check() -> None:
    result = hunt(NOT_A_BUG, LadderConfig(budget=30.0, checks=("scenarios", "explore")))
    assert result.detection is None
    assert [s.check for s in result.stages] == ["scenarios", "explore"]


def test_the_unmutated_controller_passes_the_killing_suite() -> None:
    assert killing.baseline() == []


@pytest.mark.parametrize("entry", [e for e in load() if not e.in_verify], ids=lambda e: e.name)
def test_two_workers_find_the_manifest_count_of_the_large_models(entry: Expected) -> None:
    result = search(model_space(entry.profile, entry.config), workers=2)
    assert result.finding is None, result.finding
    assert not result.stats.truncated
    assert result.stats.distinct_states == entry.distinct_states, (
        f"{entry.name}: 2 workers found {result.stats.distinct_states} distinct states, "
        f"the manifest (and one worker) {entry.distinct_states}"
    )
