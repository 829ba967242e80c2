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


@pytest.mark.parametrize(
    ("kafka_test", "initial", "version_before", "expected_version"),
    [
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsEnabledWithNonExistingFeatureZNode",
            ABSENT,
            0,
            0,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsEnabledWithDisabledExistingFeatureZNode",
            DISABLED,
            0,
            1,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsEnabledWithEnabledExistingFeatureZNode",
            ENABLED,
            0,
            0,
        ),
        # the same with a znode updated before (its version is not the creation's 0)
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsEnabledWithDisabledExistingFeatureZNode",
            DISABLED,
            4,
            5,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsEnabledWithEnabledExistingFeatureZNode",
            ENABLED,
            4,
            4,
        ),
    ],
)
def test_controller_feature_znode_setup_when_feature_versioning_is_enabled(
    kafka_test: str, initial: FeatureZNodeStatus, version_before: int, expected_version: int
) -> None:
    """``ControllerIntegrationTest.<kafka_test>`` (via its ``testControllerFeatureZNodeSetup``): after the failover
    ``/feature`` is Enabled with no finalized feature; created at version 0, a Disabled znode updated (version + 1),
    an Enabled one not written (version unchanged)."""
    s = _run(_cluster(initial, version_before), BrokerStartup(0), ControllerFailover(0))
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (ENABLED, expected_version), (
        kafka_test,
        s.zk,
    )


@pytest.mark.parametrize(
    ("kafka_test", "initial", "version_before", "expected_version"),
    [
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsDisabledWithNonExistingFeatureZNode",
            ABSENT,
            0,
            0,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsDisabledWithDisabledExistingFeatureZNode",
            DISABLED,
            0,
            0,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsDisabledWithEnabledExistingFeatureZNode",
            ENABLED,
            0,
            1,
        ),
        # the same with a znode updated before (its version is not the creation's 0)
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsDisabledWithDisabledExistingFeatureZNode",
            DISABLED,
            4,
            4,
        ),
        (
            "testControllerFeatureZNodeSetupWhenFeatureVersioningIsDisabledWithEnabledExistingFeatureZNode",
            ENABLED,
            4,
            5,
        ),
    ],
)
def test_controller_feature_znode_setup_when_feature_versioning_is_disabled(
    kafka_test: str, initial: FeatureZNodeStatus, version_before: int, expected_version: int
) -> None:
    """``ControllerIntegrationTest.<kafka_test>`` (IBP 2.6-IV0, ``disableFeatureVersioning``): after the failover
    ``/feature`` is Disabled with no finalized feature; created at version 0, an Enabled znode updated (version + 1),
    a Disabled one not written (version unchanged)."""
    s = _run(
        _cluster(initial, version_before, InterBrokerProtocol.KAFKA_2_6_IV0),
        BrokerStartup(0),
        ControllerFailover(0),
    )
    assert (s.zk.feature_znode, s.zk.feature_znode_zk_version) == (DISABLED, expected_version), (
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
