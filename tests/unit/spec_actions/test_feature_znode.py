"""The ``/feature`` znode (KIP-584): the feature-znode test methods of Kafka 2.8.2's ``ControllerIntegrationTest``.

Each Kafka test starts a one-broker cluster on a ZooKeeper that holds no ``/feature`` znode, or one written before
(Disabled or Enabled, with no finalized feature), lets the controller fail over and asserts the znode's status and
version. Here the events run on the spec and on the reference controller (``crosscheck``: every step agrees, every
invariant holds), then the final state is asserted as the Kafka test does, under the IBP the Kafka test uses:
2.7-IV0 for the three ``...IsEnabled...`` methods (``enableFeatureVersioning``), 2.6-IV0 for the three
``...IsDisabled...`` ones (``disableFeatureVersioning``).
"""

from __future__ import annotations

import pytest
from kcspec.spec.events import BrokerStartup, ControllerEvent, ControllerFailover, ControllerResignation
from kcspec.spec.state import ClusterState, ZkState
from kcspec.spec.vocabulary import ClusterConfig, FeatureZNodeStatus, InterBrokerProtocol

from tests.support.spec_scenarios import run_on_both_engines

ABSENT = FeatureZNodeStatus.Absent
DISABLED = FeatureZNodeStatus.Disabled
ENABLED = FeatureZNodeStatus.Enabled


def _run(initial: ClusterState, *events: ControllerEvent, profile: str = "kafka-2.8") -> ClusterState:
    return run_on_both_engines("feature-znode", initial, events, profile)


def _cluster(
    status: FeatureZNodeStatus, version: int, ibp: InterBrokerProtocol = InterBrokerProtocol.KAFKA_2_7_IV0
) -> ClusterState:
    """A ZooKeeper with ``/feature`` as given (``zkClient.createFeatureZNode`` before the brokers start), and the IBP
    of the brokers the Kafka test makes (``makeServers(1, interBrokerProtocolVersion = ...)``)."""
    return ClusterState(
        zk=ZkState(feature_znode=status, feature_znode_zk_version=version),
        config=ClusterConfig(inter_broker_protocol=ibp),
    )


ZNODE_NAMES = {ABSENT: "NonExisting", DISABLED: "DisabledExisting", ENABLED: "EnabledExisting"}
MODES = {
    "Enabled": (InterBrokerProtocol.KAFKA_2_7_IV0, ENABLED),  # enableFeatureVersioning
    "Disabled": (InterBrokerProtocol.KAFKA_2_6_IV0, DISABLED),  # disableFeatureVersioning
}


@pytest.mark.parametrize(
    ("mode", "initial", "version_before", "expected_version"),
    [
        # (...FeatureVersioningIs<mode>..., the znode the test creates, its version, its version after failover)
        ("Enabled", ABSENT, 0, 0),  # created
        ("Enabled", DISABLED, 0, 1),  # updated
        ("Enabled", ENABLED, 0, 0),  # not written
        ("Disabled", ABSENT, 0, 0),  # created
        ("Disabled", DISABLED, 0, 0),  # not written
        ("Disabled", ENABLED, 0, 1),  # updated
        # the same with a znode updated before (its version is not the creation's 0)
        ("Enabled", DISABLED, 4, 5),
        ("Enabled", ENABLED, 4, 4),
        ("Disabled", DISABLED, 4, 4),
        ("Disabled", ENABLED, 4, 5),
    ],
)
def test_controller_feature_znode_setup(
    mode: str, initial: FeatureZNodeStatus, version_before: int, expected_version: int
) -> None:
    """``ControllerIntegrationTest.testControllerFeatureZNodeSetupWhenFeatureVersioningIs<mode>With<znode>
    FeatureZNode`` (via its ``testControllerFeatureZNodeSetup``), under the Kafka test's IBP: after the failover
    ``/feature`` is Enabled (IBP 2.7-IV0) or Disabled (IBP 2.6-IV0) with no finalized feature; created at version 0,
    a znode of the other status updated (version + 1), one of the same status not written (version unchanged)."""
    ibp, expected = MODES[mode]
    kafka_test = (
        f"testControllerFeatureZNodeSetupWhenFeatureVersioningIs{mode}With{ZNODE_NAMES[initial]}FeatureZNode"
    )
    s = _run(_cluster(initial, version_before, ibp), BrokerStartup(0), ControllerFailover(0))
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (expected, expected_version), (
        kafka_test,
        s.zk,
    )


@pytest.mark.parametrize(
    ("ibp", "expected"),
    [
        (InterBrokerProtocol.KAFKA_2_6_IV0, DISABLED),
        (InterBrokerProtocol.KAFKA_2_7_IV0, ENABLED),
        (InterBrokerProtocol.KAFKA_2_7_IV2, ENABLED),
        (InterBrokerProtocol.KAFKA_2_8_IV0, ENABLED),
        (InterBrokerProtocol.KAFKA_2_8_IV1, ENABLED),
    ],
)
def test_feature_versioning_is_supported_from_ibp_2_7_iv0(
    ibp: InterBrokerProtocol, expected: FeatureZNodeStatus
) -> None:
    """``config.isFeatureVersioningSupported`` is IBP ≥ 2.7-IV0: every value the model offers, on both sides."""
    s = _run(_cluster(ABSENT, 0, ibp), BrokerStartup(0), ControllerFailover(0))
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (expected, 0), (ibp, s.zk)


def test_feature_znode_is_written_once_across_reelections() -> None:
    """Later failovers find the znode Enabled and leave it alone (``newFeatureZNode.equals(existingFeatureZNode)``)."""
    s = _run(
        _cluster(DISABLED, 0),
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(0),
        ControllerResignation(),
        ControllerFailover(1),
        ControllerFailover(0),
    )
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (ENABLED, 1), s.zk


@pytest.mark.parametrize("initial", [ABSENT, DISABLED, ENABLED])
def test_kafka_1_1_has_no_feature_znode(initial: FeatureZNodeStatus) -> None:
    """1.1 predates KIP-584: its failover neither creates nor updates ``/feature``."""
    s = _run(_cluster(initial, 2), BrokerStartup(0), ControllerFailover(0), profile="kafka-1.1")
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (initial, 2), s.zk
