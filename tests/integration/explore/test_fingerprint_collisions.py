"""A fingerprint collision, provoked with a deliberately weak (8-bit) digest: what it does to a search, how the
audit mode detects it, and how the estimate TLC gives bounds it at 64 bits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.fingerprint import (
    FingerprintCollision,
    FingerprintScheme,
    blake2b_64,
    collision_probability,
)
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

pytestmark = pytest.mark.integration


def weak_digest(data: bytes) -> int:
    """The default digest cut to 8 bits: 256 fingerprints for hundreds of states."""
    return blake2b_64(data) & 0xFF


WEAK = FingerprintScheme(weak_digest, 8, "blake2b-8")
SMALLEST = min(load(), key=lambda e: e.distinct_states)


def test_collisions_of_a_weak_digest_lose_states_and_the_estimate_says_so() -> None:
    space = model_space(SMALLEST.profile, SMALLEST.config)
    result = search(replace(space, fingerprints=WEAK))
    # two states sharing a fingerprint are taken for one: states are lost, none is invented
    assert result.finding is None
    assert result.stats.distinct_states < SMALLEST.distinct_states
    assert result.stats.distinct_states <= 256
    # the birthday estimate flags it; at 64 bits the same search is far below one chance in a billion
    assert collision_probability(SMALLEST.distinct_states, WEAK.bits) == 1.0
    assert collision_probability(SMALLEST.distinct_states, 64) < 1e-9
    assert search(space).stats.distinct_states == SMALLEST.distinct_states


def test_audit_mode_detects_a_collision_and_names_both_states() -> None:
    space = model_space(SMALLEST.profile, SMALLEST.config)
    with pytest.raises(FingerprintCollision) as caught:
        search(replace(space, fingerprints=replace(WEAK, audit=True)))
    err = caught.value
    assert err.first != err.second
    assert weak_digest(err.first.encode()) == weak_digest(err.second.encode()) == err.fingerprint
    assert err.first in str(err) and err.second in str(err)


def test_audit_mode_passes_when_there_is_no_collision() -> None:
    space = model_space(SMALLEST.profile, SMALLEST.config)
    audited = replace(space, fingerprints=FingerprintScheme(audit=True))
    assert search(audited).stats.distinct_states == SMALLEST.distinct_states
