"""Exploration fails, with a readable shortest counterexample, when a rule of the reference controller is broken
on purpose: an election bug, a state-machine bug and a reassignment bug (historical Kafka bugs re-injected)."""

from __future__ import annotations

import pytest
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore
from kcspec.model.explore_config import ExploreConfig

from tests.support.explore_cases import CASES


@pytest.mark.parametrize(("mutant", "what", "cfg"), CASES, ids=[c[0] for c in CASES])
def test_exploration_finds_the_broken_rule(mutant: str, what: str, cfg: ExploreConfig) -> None:
    clean = explore(cfg)
    assert clean.finding is None, f"the unbroken controller must pass this configuration: {clean.finding}"
    with HISTORICAL_BY_NAME[mutant].active():
        result = explore(cfg)
    assert result.finding is not None, f"exploration missed {mutant} ({what}) in {cfg.describe()}"
    assert result.finding.kind in ("refinement", "invariant", "enabled")
    text = describe_trace(result)
    assert "shortest trace:" in text and result.finding.message in text
    assert result.trace is not None and len(result.trace.steps) <= 12
