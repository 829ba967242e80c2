"""Kafka versions the reference controller can behave as, and the profile names that select them.

Kafka guards behaviour changes with version checks (``config.interBrokerProtocolVersion >= KAFKA_2_7_IV2``);
the reference controller does the same with its own ``KafkaVersion`` constants, one per release that changed
controller behaviour (semantics §1, §12). The two supported profiles are ``kafka-2.8`` (2.8.2) and
``kafka-1.1`` (1.1.1). Nothing here is read from the spec's profiles (DESIGN.md rule 2).
"""

from __future__ import annotations

from typing import NamedTuple

from kcspec.spec.vocabulary import ClusterConfig, InterBrokerProtocol


class KafkaVersion(NamedTuple):
    """A Kafka release ``major.minor``; ordered, so ``version >= KAFKA_2_4`` reads like Kafka's IBP checks.

    A named tuple rather than an ordered dataclass for speed: the comparison is the tuple's own (C-level)
    instead of a generated Python ``__ge__``, and the reference controller makes about 20 such checks per
    explored transition."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


KAFKA_1_1 = KafkaVersion(1, 1)
KAFKA_2_0 = KafkaVersion(2, 0)
"""KAFKA-6650 (OfflineReplica without leadership), KAFKA-6612 (expansion during deletion reverted)."""
KAFKA_2_1 = KafkaVersion(2, 1)
"""KAFKA-6082 (fenced ZK writes), KAFKA-6753 (controlled shutdown skips deleting topics), unclean re-trigger."""
KAFKA_2_2 = KafkaVersion(2, 2)
"""KAFKA-7235 (bounce detection, broker epochs), KAFKA-7537 (split startup UMR), KAFKA-7482."""
KAFKA_2_3 = KafkaVersion(2, 3)
"""KAFKA-8237 (OfflineReplica → ReplicaDeletionIneligible)."""
KAFKA_2_4 = KafkaVersion(2, 4)
"""KIP-455 reassignment, KAFKA-3143 (startup offlines dead replicas, UMR for P_0), KIP-460 retry fix."""
KAFKA_2_5 = KafkaVersion(2, 5)
"""KAFKA-9212 (reassignment epoch bump updates the cache)."""
KAFKA_2_6 = KafkaVersion(2, 6)
"""KIP-570 (StopReplica leader epoch), KAFKA-8470 (INFO partition lines), KAFKA-9866 (auto rebalance ISR check),
KAFKA-10040 (controller gauges kept by ``ControllerContext``)."""
KAFKA_2_7 = KafkaVersion(2, 7)
"""KAFKA-10314 (isNew for adding replicas), AlterIsr (KIP-497), the ``/feature`` znode set up at failover (KIP-584)."""
KAFKA_2_8 = KafkaVersion(2, 8)
"""KIP-516 topic IDs (as the inter-broker protocol allows: ``uses_topic_id``, ``requests_carry_topic_ids``)."""

PROFILES: dict[str, KafkaVersion] = {"kafka-2.8": KAFKA_2_8, "kafka-1.1": KAFKA_1_1}
"""Profile name → the Kafka version the reference controller behaves as."""


def version_for_profile(profile: str) -> KafkaVersion:
    """The ``KafkaVersion`` of a profile name; a ``ValueError`` listing the known names otherwise."""
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown profile {profile!r}; known profiles: {known}") from None


_API_VERSIONS: dict[InterBrokerProtocol, tuple[int, int, int]] = {
    InterBrokerProtocol.KAFKA_2_6_IV0: (2, 6, 0),
    InterBrokerProtocol.KAFKA_2_7_IV0: (2, 7, 0),
    InterBrokerProtocol.KAFKA_2_7_IV2: (2, 7, 2),
    InterBrokerProtocol.KAFKA_2_8_IV0: (2, 8, 0),
    InterBrokerProtocol.KAFKA_2_8_IV1: (2, 8, 1),
}
"""Kafka's ``ApiVersion`` of each ``inter.broker.protocol.version``: (major, minor, IV), ordered like Kafka's."""


def ibp_at_least(config: ClusterConfig, major: int, minor: int, iv: int) -> bool:
    """``config.interBrokerProtocolVersion >= KAFKA_<major>_<minor>_IV<iv>``."""
    return _API_VERSIONS[config.inter_broker_protocol] >= (major, minor, iv)


def is_feature_versioning_supported(version: KafkaVersion, config: ClusterConfig) -> bool:
    """``KafkaConfig.isFeatureVersioningSupported``: 2.7+ code with ``interBrokerProtocolVersion >= KAFKA_2_7_IV0``."""
    return version >= KAFKA_2_7 and ibp_at_least(config, 2, 7, 0)


def is_alter_isr_enabled(version: KafkaVersion, config: ClusterConfig) -> bool:
    """``interBrokerProtocolVersion.isAlterIsrSupported`` (``>= KAFKA_2_7_IV2``) on 2.7+ code: leaders send AlterIsr
    (``alterIsrManager``), else they write the state znode and an ISR-change notification (``ZkIsrManager``)."""
    return version >= KAFKA_2_7 and ibp_at_least(config, 2, 7, 2)


def uses_topic_id(version: KafkaVersion, config: ClusterConfig) -> bool:
    """``KafkaConfig.usesTopicId``: 2.8 code with ``interBrokerProtocolVersion >= KAFKA_2_8_IV0``."""
    return version >= KAFKA_2_8 and ibp_at_least(config, 2, 8, 0)


def requests_carry_topic_ids(version: KafkaVersion, config: ClusterConfig) -> bool:
    """LeaderAndIsr v5 / UpdateMetadata v7 (``interBrokerProtocolVersion >= KAFKA_2_8_IV1``) carry topic IDs."""
    return version >= KAFKA_2_8 and ibp_at_least(config, 2, 8, 1)
