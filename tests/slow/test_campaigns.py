"""Campaigns too long for every run (`make test-slow`): the unmutated controller through the bug zoo's whole
killing suite and through every cheap check of the ladder."""

from __future__ import annotations

from kcspec.conformance.selfcheck.bugzoo import killing
from kcspec.conformance.selfcheck.bugzoo.checks import LadderConfig, hunt

from tests.quality.bugzoo.test_bugzoo import NOT_A_BUG


def test_a_non_mutant_passes_every_cheap_check() -> None:
    result = hunt(NOT_A_BUG, LadderConfig(budget=30.0, checks=("scenarios", "explore")))
    assert result.detection is None
    assert [s.check for s in result.stages] == ["scenarios", "explore"]


def test_the_unmutated_controller_passes_the_killing_suite() -> None:
    assert killing.baseline() == []
