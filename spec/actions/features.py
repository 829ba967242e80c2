"""The ``/feature`` znode (KIP-584) at controller failover: ``enableFeatureVersioning`` (§7.1 step 1).

Kafka 2.8.2 ``KafkaController.onControllerFailover`` first calls ``maybeSetupFeatureVersioning``:
``enableFeatureVersioning()`` when ``config.isFeatureVersioningSupported`` (IBP ≥ 2.7-IV0), else
``disableFeatureVersioning()``. ``enableFeatureVersioning`` reads ``/feature`` with its version: absent
(``ZkVersion.UnknownVersion``) → ``createFeatureZNode(FeatureZNode(Enabled, defaultFinalizedFeatures))`` (version 0);
present → the new node is ``Enabled`` with the existing features (``Enabled``) or none (``Disabled``), written by
``updateFeatureZNode`` (version + 1) only when it differs from the existing node. Neither write is fenced by the
controller epoch (``KafkaZkClient.createFeatureZNode``/``updateFeatureZNode``: a plain create, a setData with
``MatchAnyVersion``). The wait for the broker's feature cache (``featureCache.waitUntilEpochOrThrow``) is not
modelled: the model has no feature cache and no ZooKeeper fault on ``/feature``.

Not reachable in the model: ``disableFeatureVersioning`` — the ``InterBrokerProtocol`` values all are ≥ 2.7-IV2
(the decision is written there). The state machines never read ``/feature`` (§7.1 step 1: "irrelevant to the state
machines"); it is ZooKeeper state that a conformant controller must leave as Kafka does.
"""

from __future__ import annotations

from kcspec.spec.actions import common
from kcspec.spec.lang import Block, Expr, if_, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import FeatureZNodeStatus


def enable_feature_versioning(p: Profile, w: Expr) -> Expr:
    """``enableFeatureVersioning`` (§7.1 step 1, 2.8): ``/feature`` created ``Enabled`` (version 0) when absent,
    switched from ``Disabled`` to ``Enabled`` (version + 1), left as it is when ``Enabled``. 1.1: nothing."""
    if not p.feature_versioning:
        return w
    b = Block()
    b.z = common.zk_of(w)
    status = b.z.f("feature_znode")
    written = if_(
        status.eq(FeatureZNodeStatus.Absent),
        common.set_zk(w, feature_znode=FeatureZNodeStatus.Enabled, feature_znode_zk_version=0),
        if_(
            status.eq(FeatureZNodeStatus.Disabled),
            common.set_zk(
                w,
                feature_znode=FeatureZNodeStatus.Enabled,
                feature_znode_zk_version=b.z.f("feature_znode_zk_version") + 1,
            ),
            w,
        ),
    )
    return rule("enableFeatureVersioning", "§7.1", b.in_(written))
