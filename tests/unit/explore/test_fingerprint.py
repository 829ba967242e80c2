"""Fingerprints of explored states (``fingerprint.py``): the canonical text does not depend on how a state was built,
the visited set behaves as a set, and the digest is the same in every process whatever its hash seed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kcspec.conformance.selfcheck.explore.fingerprint import (
    Fingerprinter,
    FingerprintSet,
    blake2b_64,
    collision_probability,
)
from kcspec.model.event_candidates import bootstrap
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.step import SpecMachine
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext
from kcspec.spec.vocabulary import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaState,
    TopicPartition,
)


def _bootstrapped() -> ClusterState:
    cfg = ExploreConfig("kafka-2.8", 3, 1, 2, 2, 1)
    spec = SpecMachine(cfg.profile)
    state = ClusterState()
    for ev in bootstrap(cfg):
        state = spec.step(state, ev).state
    return state


def test_equal_states_built_in_another_order_have_one_fingerprint() -> None:
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    entries = [(PartitionReplica(tp, b), ReplicaState.OnlineReplica) for tp in (tp0, tp1) for b in (2, 0, 1)]
    a = ClusterState(
        controller=ControllerContext(replica_states=FMap(entries), shutting_down=frozenset({3, 1, 2}))
    )
    b = ClusterState(
        controller=ControllerContext(
            replica_states=FMap(reversed(entries)), shutting_down=frozenset({2, 3, 1})
        )
    )
    assert a == b and list(a.controller.replica_states) != list(b.controller.replica_states)
    fingerprint = Fingerprinter()
    assert fingerprint.text(a) == fingerprint.text(b)
    assert fingerprint(a) == fingerprint(b)


def test_different_states_have_different_texts() -> None:
    state = _bootstrapped()
    fingerprint = Fingerprinter()
    other = ClusterState(
        state.zk, state.controller.__class__(**{**state.controller.__dict__, "epoch": 7}), state.config
    )
    assert fingerprint.text(state) != fingerprint.text(other)
    # -1 and -2 are told apart (Python's hash maps both to -2)
    assert fingerprint(ClusterState(controller=ControllerContext(controller_id=-1))) != fingerprint(
        ClusterState(controller=ControllerContext(controller_id=-2))
    )


def test_remembered_sub_texts_do_not_change_a_fingerprint() -> None:
    state = _bootstrapped()
    warm = Fingerprinter()
    warm(state)
    assert warm(state) == Fingerprinter()(state)  # a second time, from remembered sub-texts


def test_fingerprint_set_is_a_set_and_round_trips() -> None:
    fps = FingerprintSet()
    values = [0, 1, 2**64 - 1, *(blake2b_64(str(i).encode()) for i in range(5000))]
    assert all(fps.add(v) for v in values)
    assert not any(fps.add(v) for v in values)
    assert len(fps) == len(values) and all(v in fps for v in values)
    assert 12345 not in fps
    assert fps.nbytes / len(fps) <= 24  # 8-byte slots, at most 70 % and at least 35 % full
    back = FingerprintSet.from_bytes(fps.to_bytes())
    assert sorted(back) == sorted(values)


def test_collision_probability_is_tlcs_estimate() -> None:
    assert collision_probability(10**6) == pytest.approx(10**12 / 2**65)
    assert collision_probability(1000, bits=8) == 1.0


@pytest.mark.integration
def test_a_fingerprint_is_the_same_under_every_hash_seed() -> None:
    code = (
        "from tests.unit.explore.test_fingerprint import _bootstrapped\n"
        "from kcspec.conformance.selfcheck.explore.fingerprint import Fingerprinter\n"
        "print(Fingerprinter()(_bootstrapped()))\n"
    )
    seen = set()
    for seed in ("1", "2", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        seen.add(out.stdout.strip())
    assert seen == {str(Fingerprinter()(_bootstrapped()))}


def test_the_direct_texts_of_tuple_records_are_the_generic_ones() -> None:
    fingerprint = Fingerprinter()
    generic = Fingerprinter()
    for cls in (TopicPartition, PartitionReplica, LeaderAndIsr, LeaderIsrAndControllerEpoch):
        generic._encoders.pop(cls)  # the text of a tuple: its fields, one call each
    tp = TopicPartition("t'0", 3)
    values = [
        tp,
        PartitionReplica(tp, -1),
        LeaderAndIsr(-2, 0, (), 5),
        LeaderAndIsr(1, 2, (1,), 0),
        LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 2, (1, 0, 2), 0), 4),
        _bootstrapped(),
    ]
    for value in values:
        assert fingerprint.text(value) == generic.text(value)
