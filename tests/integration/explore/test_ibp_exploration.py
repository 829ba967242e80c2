"""Exploration of the kafka-2.8 profile under an IBP whose brokers send no AlterIsr (2.6-IV0, 2.7-IV0): every
reachable state of a small cluster, with ZooKeeper and controller faults, refines the spec (the reference
controller's step is the spec's) and keeps every invariant, on the ZooKeeper ISR-notification path (§7.11) and the
``/feature`` znode's ``disableFeatureVersioning`` (§7.1 step 1). The manifest models keep the default IBP; this
is the one search of the other paths."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.conformance.selfcheck.explore.explorer import search, space_of
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig, InterBrokerProtocol


@pytest.mark.parametrize("ibp", [InterBrokerProtocol.KAFKA_2_6_IV0, InterBrokerProtocol.KAFKA_2_7_IV0])
def test_old_ibp_states_refine_the_spec_and_keep_the_invariants(ibp: InterBrokerProtocol) -> None:
    cfg = ExploreConfig(profile="kafka-2.8", brokers=2, rf=2, depth=4, faults=frozenset({"zk", "controller"}))
    space = replace(space_of(cfg), initial=ClusterState(config=ClusterConfig(inter_broker_protocol=ibp)))
    result = search(space)
    assert result.finding is None, (ibp, result.finding)
    assert not result.stats.truncated
    assert result.stats.events["IsrChange"] > 0, result.stats.events
    assert result.stats.events.get("StaleAlterIsrReceived", 0) == 0, "brokers of this IBP send no AlterIsr"
