"""The explorer's symmetry reduction: ``canonical_state`` picks one representative per class of states equal up to
renaming brokers, the same classes as the least encoding over all renamings (``canonical_key``)."""

from __future__ import annotations

import random

from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.step import SpecMachine
from kcspec.model.symmetry import canonical_key, canonical_state, permutations, permute_brokers
from kcspec.spec.state import ClusterState


def _walk_states(profile: str, brokers: int, seed: int) -> list[ClusterState]:
    cfg = ExploreConfig(profile=profile, brokers=brokers, topics=1, partitions=2, rf=2)
    spec = SpecMachine(profile)
    state = ClusterState()
    for ev in bootstrap(cfg):
        state = spec.step(state, ev).state
    rng = random.Random(seed)
    states = [state]
    for _ in range(25):
        enabled = [ev for ev in candidates(state, cfg) if spec.enabled(state, ev)]
        if not enabled:
            break
        state = spec.step(state, rng.choice(enabled)).state
        states.append(state)
    return states


def test_canonical_state_is_a_renaming_and_the_same_for_every_renaming() -> None:
    for profile in ("kafka-2.8", "kafka-1.1"):
        for brokers in (3, 4):
            perms = permutations(brokers)
            for state in _walk_states(profile, brokers, seed=brokers):
                rep = canonical_state(state, brokers)
                assert rep in {permute_brokers(state, p) for p in perms}
                for p in perms:
                    assert canonical_state(permute_brokers(state, p), brokers) == rep


def test_canonical_state_has_the_classes_of_the_least_encoding() -> None:
    perms = permutations(3)
    states = [s for seed in range(3) for s in _walk_states("kafka-2.8", 3, seed)]
    states += [permute_brokers(s, perms[3]) for s in states]
    # each state's least encoding and representative, computed once (both are functions of the state alone)
    keys = [canonical_key(s, perms) for s in states]
    reps = [canonical_state(s, 3) for s in states]
    for a in range(len(states)):
        for b in range(0, len(states), 5):
            same_class = keys[a] == keys[b]
            assert (reps[a] == reps[b]) == same_class, (states[a], states[b])
