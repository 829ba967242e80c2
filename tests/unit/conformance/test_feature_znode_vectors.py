"""The ``/feature`` vectors (``conformance/vectors/inputs.py``, ``feature_znode_cases``): the ported Kafka 2.8.2
``ControllerIntegrationTest.testControllerFeatureZNodeSetup...`` methods, through the protocol, on both oracles.

Each vector loads a one-broker ZooKeeper holding ``/feature`` as the Kafka test creates it, under the IBP of the
Kafka test (2.7-IV0 for the ``...IsEnabled...`` methods, 2.6-IV0 for the ``...IsDisabled...`` ones), and sends
``ControllerFailover(0)``; the test checks what the Kafka test asserts on the znode, in the state both the spec and
the reference controller reply (and that the two replies have no difference, as vector generation requires).
"""

from __future__ import annotations

import pytest
from kcspec.conformance.adapters.inprocess import dispatch
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.vectors import inputs
from kcspec.spec.vocabulary import FeatureZNodeStatus

CASES = {c.id: c for c in inputs.feature_znode_cases()}

EXPECTED_2_8 = {
    # (status, version) after the failover, as testControllerFeatureZNodeSetup asserts for IBP >= 2.7-IV0:
    "event.feature-znode.absent.ControllerFailover": (FeatureZNodeStatus.Enabled, 0),  # created, version 0
    "event.feature-znode.disabled.ControllerFailover": (
        FeatureZNodeStatus.Enabled,
        4,
    ),  # updated: version + 1
    "event.feature-znode.enabled.ControllerFailover": (FeatureZNodeStatus.Enabled, 3),  # left unmodified
    # and for IBP 2.6-IV0 (disableFeatureVersioning):
    "event.feature-znode.ibp-2_6-IV0.absent.ControllerFailover": (FeatureZNodeStatus.Disabled, 0),  # created
    "event.feature-znode.ibp-2_6-IV0.disabled.ControllerFailover": (
        FeatureZNodeStatus.Disabled,
        3,
    ),  # unmodified
    "event.feature-znode.ibp-2_6-IV0.enabled.ControllerFailover": (
        FeatureZNodeStatus.Disabled,
        4,
    ),  # updated: version + 1
}


def test_every_feature_znode_test_of_kafka_is_a_vector() -> None:
    """The six ``testControllerFeatureZNodeSetupWhenFeatureVersioningIs{Enabled,Disabled}With...`` methods."""
    assert sorted(CASES) == sorted(EXPECTED_2_8)
    assert len({c.description.split(":")[0] for c in CASES.values()}) == 6


def _step(oracle: SpecSut | ReferenceSut, profile: str, case: inputs.Case) -> m.StepReply:
    dispatch(oracle, m.Hello(m.PROTOCOL_VERSION, profile))
    assert case.state is not None
    assert isinstance(dispatch(oracle, m.Load(case.state)), m.Ok)
    reply = dispatch(oracle, case.request)
    assert isinstance(reply, m.StepReply), reply
    return reply


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
@pytest.mark.parametrize("case_id", sorted(EXPECTED_2_8))
def test_feature_znode_vector(profile: str, case_id: str) -> None:
    """2.8 sets ``/feature`` up as the Kafka test asserts; 1.1 (before KIP-584) leaves it as loaded."""
    case = CASES[case_id]
    spec, reference = _step(SpecSut(), profile, case), _step(ReferenceSut(), profile, case)
    assert not diff_replies(spec, reference, ()), (case.description, diff_replies(spec, reference, ()))
    zk = spec.state.zk
    assert case.state is not None
    loaded = (case.state.zk.feature_znode, case.state.zk.feature_znode_zk_version)
    expected = EXPECTED_2_8[case_id] if profile == "kafka-2.8" else loaded
    assert (zk.feature_znode, zk.feature_znode_zk_version) == expected, case.description
