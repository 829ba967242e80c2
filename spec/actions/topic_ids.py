"""Topic IDs (KIP-516, Kafka 2.8): when the cluster uses them, the ID a topic gets, and ``processTopicIds``.

Kafka 2.8.2 (``KafkaConfig.usesTopicId``: IBP ≥ 2.8-IV0): the admin client creates a topic znode with a fresh ID
(``AdminZkClient.createTopicWithAssignment(..., usesTopicId)``); the controller's ``processTopicIds`` — at TopicChange
for the new topics and in ``initializeControllerContext`` for all topics — writes a fresh ID into every topic znode
that has none (``KafkaZkClient.setTopicIds``: one unconditional setData per znode, fenced by the controller epoch
CheckOp, so ControllerMovedException), then adds every topic's ID to ``controllerContext.topicIds``. The IDs read
from the znodes go into the context under an older IBP too ("If we don't have IBP 2.8, but are running 2.8 code, put
any topic IDs from the ZNode in controller context", ``KafkaController.processTopicIds``); only the creation of IDs
depends on the IBP. Any later ``setTopicAssignment`` writes the context's ID back with the partition map.

Decision (the model's ID): Kafka draws ``Uuid.randomUuid()``; the model takes the least positive integer that no
topic znode holds, topics handled in ascending name order. IDs are distinct among the existing topic znodes, the
state space stays finite (an ID is at most the number of topics) and every run is reproducible; a topic created
again after its deletion may get its predecessor's ID (Kafka's random UUIDs practically never repeat).
"""

from __future__ import annotations

from kcspec.spec.actions import common
from kcspec.spec.lang import Block, Expr, if_, lift, lit, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import InterBrokerProtocol


def uses_topic_id(p: Profile, s: Expr) -> Expr:
    """``config.usesTopicId`` in the ``ClusterState`` ``s``: the profile has topic IDs and the IBP is ≥ 2.8-IV0."""
    if not p.topic_ids:
        return lit(False)
    return common.ibp_at_least(s, InterBrokerProtocol.KAFKA_2_8_IV0)


def next_topic_id(ids: Expr) -> Expr:
    """The least positive integer that is not a value of the map ``ids`` (topic → ID)."""
    used = ids.keys().map(lambda t: ids.get(t))
    return used.sorted().fold(lit(1), lambda acc, i: if_(acc.eq(i), acc + 1, acc))


def with_new_topic_ids(zk: Expr, topics: object) -> Expr:
    """The ZooKeeper tree ``zk`` where every topic of ``topics`` without an ID gets a fresh one, in name order."""
    return (
        lift(topics)
        .sorted()
        .fold(
            zk,
            lambda z, t: if_(
                z.f("topic_ids").has(t),
                z,
                z.with_(topic_ids=z.f("topic_ids").put(t, next_topic_id(z.f("topic_ids")))),
            ),
        )
    )


def process_topic_ids(p: Profile, w: Expr, topics: object) -> Expr:
    """``processTopicIds`` for the topic znodes ``topics`` (a ``Work``): when the cluster uses topic IDs and some of
    them have none, one fenced write gives them fresh IDs (a failed CheckOp: ``moved``, nothing written); then the
    ID of every one of them that has an ID is added to ``controllerContext.topicIds``. 1.1: nothing."""
    if not p.topic_ids:
        return w

    def body(x: Expr) -> Expr:
        b = Block()
        b.ts = lift(topics)
        missing = b.ts.filter(lambda t: ~common.zk_of(x).f("topic_ids").has(t))
        written = if_(
            uses_topic_id(p, common.st(x)) & missing.non_empty(),
            common.fenced_zk(p, x, lambda z: with_new_topic_ids(z, b.ts)),
            x,
        )

        def add_to_context(y: Expr) -> Expr:
            ids = common.zk_of(y).f("topic_ids")
            read = ids.delete_all(ids.keys().minus(b.ts))
            return common.set_ctx(y, topic_ids=common.ctx(y).f("topic_ids").merge(read))

        return b.in_(common.unless_moved(written, add_to_context))

    return rule("processTopicIds", "§7.6", common.unless_moved(w, body))
