"""The ``/feature`` znode (KIP-584) at controller failover: ``maybeSetupFeatureVersioning`` (§7.1 step 1).

Kafka 2.8.2 ``KafkaController.onControllerFailover`` first calls ``maybeSetupFeatureVersioning``:
``enableFeatureVersioning()`` when ``config.isFeatureVersioningSupported`` (IBP ≥ 2.7-IV0), else
``disableFeatureVersioning()``. Both read ``/feature`` with its version; absent (``ZkVersion.UnknownVersion``) →
``createFeatureZNode`` of the new node (version 0); present → ``updateFeatureZNode`` (version + 1) only when the new
node differs from the existing one. ``enableFeatureVersioning``'s new node is ``Enabled`` with the existing features
(``Enabled``) or none (``Disabled``, ``defaultFinalizedFeatures`` when created); ``disableFeatureVersioning``'s is
``Disabled`` with ``emptyFinalizedFeatures``. The features are always empty in 2.8.2 (``FeatureZNodeStatus``), so a
node differs exactly when its status does. Neither write is fenced by the controller epoch
(``KafkaZkClient.createFeatureZNode``/``updateFeatureZNode``: a plain create, a setData with ``MatchAnyVersion``).
The wait for the broker's feature cache (``featureCache.waitUntilEpochOrThrow``) and the WARN of a Disabled node
with features are not modelled: the model has no feature cache and no ZooKeeper fault on ``/feature``.

The state machines never read ``/feature`` (§7.1 step 1: "irrelevant to the state machines"); it is ZooKeeper state
that a conformant controller must leave as Kafka does.
"""

from __future__ import annotations

from kcspec.spec.actions import common
from kcspec.spec.lang import Block, Expr, if_, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import FeatureZNodeStatus, InterBrokerProtocol


def _set_feature_znode(w: Expr, status: FeatureZNodeStatus) -> Expr:
    """``/feature`` made ``status``: created (version 0) when absent, updated (version + 1) when its status differs,
    left as it is otherwise."""
    b = Block()
    b.z = common.zk_of(w)
    current = b.z.f("feature_znode")
    written = if_(
        current.eq(FeatureZNodeStatus.Absent),
        common.set_zk(w, feature_znode=status, feature_znode_zk_version=0),
        if_(
            current.eq(status),
            w,
            common.set_zk(
                w, feature_znode=status, feature_znode_zk_version=b.z.f("feature_znode_zk_version") + 1
            ),
        ),
    )
    return b.in_(written)


def maybe_setup_feature_versioning(p: Profile, w: Expr) -> Expr:
    """``maybeSetupFeatureVersioning`` (§7.1 step 1, 2.8): with IBP ≥ 2.7-IV0 ``enableFeatureVersioning`` — ``/feature``
    created ``Enabled`` when absent, switched from ``Disabled`` to ``Enabled``; below, ``disableFeatureVersioning`` —
    created ``Disabled`` when absent, switched from ``Enabled`` to ``Disabled``, its features cleared. 1.1: nothing."""
    if not p.feature_versioning:
        return w
    b = Block()
    b.w = w
    enabled = rule("enableFeatureVersioning", "§7.1", _set_feature_znode(b.w, FeatureZNodeStatus.Enabled))
    disabled = rule("disableFeatureVersioning", "§7.1", _set_feature_znode(b.w, FeatureZNodeStatus.Disabled))
    supported = common.ibp_at_least(common.st(b.w), InterBrokerProtocol.KAFKA_2_7_IV0)
    return b.in_(if_(supported, enabled, disabled))
