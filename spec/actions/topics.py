"""Topic creation and partition expansion (§7.6): ``TopicChange``, ``PartitionModifications`` and
``onNewPartitionCreation``, and the ``TopicCreation`` / ``PartitionExpansion`` actions.

A topic exists in ZooKeeper iff its topic znode ``/brokers/topics/<t>`` does (``zk.topics``), whatever its partition map
(``zk.assignments``) holds: KAFKA-6612's restore may leave it no partition (§7.6).
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.actions import common, deletion, topic_ids
from kcspec.spec.events import PartitionExpansion, TopicCreation
from kcspec.spec.lang import Action, Block, Expr, and_, build_map, if_, let, rule, set_of
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import ElectionStrategy, LeaderElection, PartitionState, ReplicaState

OFFLINE_CLEAN = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy, allow_unclean=False)


def on_new_partition_creation(p: Profile, w: Expr, partitions: object) -> Expr:
    """``onNewPartitionCreation(P)`` (§7.6): P → NewPartition; their replicas → NewReplica; P → OnlinePartition
    (Offline strategy, unused for new partitions, §5.2a); their replicas → OnlineReplica. Topics queued for
    deletion are not filtered."""
    b = Block()
    b.ps = partitions
    creation = b.in_(
        common.pipe(
            w,
            lambda x: partition_state_change(p, x, b.ps, PartitionState.NewPartition, None),
            lambda x: replica_state_change(
                p, x, context.replicas_of_partitions(common.st(x), b.ps), ReplicaState.NewReplica
            ),
            lambda x: partition_state_change(p, x, b.ps, PartitionState.OnlinePartition, OFFLINE_CLEAN),
            lambda x: replica_state_change(
                p, x, context.replicas_of_partitions(common.st(x), b.ps), ReplicaState.OnlineReplica
            ),
        )
    )
    return rule("onNewPartitionCreation", "§7.6", creation)


def zk_topics(w: Expr) -> Expr:
    """The children of ``/brokers/topics`` (``getAllTopicsInCluster``): the topic znodes, partitions or none."""
    return common.zk_of(w).f("topics")


def process_topic_change(p: Profile, w: Expr) -> Expr:
    """``TopicChange`` (§7.6): new topics = ZK − known, deleted = known − ZK; ``allTopics`` := ZK topics; deleted
    topics are removed from the context; ``processTopicIds`` for the new topics (2.8, ``topic_ids.py``); the new
    topics' assignments are read into the context and their partitions go through ``onNewPartitionCreation``."""

    def body(x: Expr) -> Expr:
        b = Block()
        b.topics = zk_topics(x)
        b.new = b.topics.minus(common.ctx(x).f("all_topics"))
        b.deleted = common.ctx(x).f("all_topics").minus(b.topics)
        b.zka = common.zk_of(x).f("assignments")
        b.added = b.zka.keys().filter(lambda tp: b.new.contains(tp.f("topic")))
        return b.in_(
            common.pipe(
                x,
                lambda y: common.set_ctx(y, all_topics=b.topics),
                lambda y: common.work_fold(
                    b.deleted.sorted(), y, lambda acc, t: deletion.remove_topic(acc, t)
                ),
                lambda y: topic_ids.process_topic_ids(p, y, b.new),
                lambda y: common.unless_moved(
                    y,
                    lambda v: common.set_ctx(
                        v,
                        assignments=common.ctx(v)
                        .f("assignments")
                        .merge(b.zka.delete_all(b.zka.keys().minus(b.added))),
                    ),
                ),
                lambda y: if_(b.new.is_empty(), y, on_new_partition_creation(p, y, b.added)),
            )
        )

    return rule("processTopicChange", "§7.6", let(w, body))


def process_partition_modifications(p: Profile, w: Expr, topic: Expr) -> Expr:
    """``PartitionModifications(t)`` (§7.6): partitions of t in ZK without replicas in memory are to be added. If t is
    queued for deletion: 2.8 restores the topic znode to the partitions that have a state znode, with their in-memory
    assignments (KAFKA-6612, fenced); 1.1 does nothing. Otherwise the additions are stored and created."""

    def queued(x: Expr, zk_part: Expr, to_add: Expr) -> Expr:
        if not p.partition_expansion_restore:
            return x

        def restored(z: Expr) -> Expr:
            b = Block()
            b.existing = zk_part.keys().filter(lambda tp: z.f("partition_states").has(tp))
            in_memory = build_map(b.existing, lambda tp: context.assignment(common.st(x), tp))
            return b.in_(z.with_(assignments=z.f("assignments").delete_all(zk_part.keys()).merge(in_memory)))

        return if_(
            to_add.is_empty(),
            x,
            common.fenced_zk(p, x, restored),
        )

    def body(x: Expr) -> Expr:
        zka = common.zk_of(x).f("assignments")
        b = Block()
        b.zk_part = zka.delete_all(zka.keys().filter(lambda tp: tp.f("topic").ne(topic)))
        b.to_add = b.zk_part.keys().filter(lambda tp: context.replicas(common.st(x), tp).is_empty())
        stored = common.set_ctx(
            x,
            assignments=common.ctx(x)
            .f("assignments")
            .merge(b.zk_part.delete_all(b.zk_part.keys().minus(b.to_add))),
        )
        return b.in_(
            if_(
                context.queued_for_deletion(common.st(x), topic),
                queued(x, b.zk_part, b.to_add),
                if_(b.to_add.is_empty(), x, on_new_partition_creation(p, stored, b.to_add)),
            )
        )

    return rule("processPartitionModifications", "§7.6", let(w, body))


def topic_creation_action(p: Profile) -> Action:
    """``TopicCreation(t, R)`` (§7.6): ``/brokers/topics/t`` is created with partition i assigned ``R[i]``. Only a
    topic without a topic znode can be created (``AdminZkClient.validateTopicCreate`` throws TopicExistsException
    when ``/brokers/topics/t`` exists, with or without partitions). 2.8 with IBP ≥ 2.8-IV0: the znode carries a fresh
    topic ID (``createTopicWithAssignment(..., usesTopicId)``, ``topic_ids.py``)."""
    v = common.param_vars(TopicCreation)
    t, reps = v["topic"], v["replicas"]
    s = common.S
    return common.controller_action(
        TopicCreation,
        "A topic znode is created; the controller handles TopicChange and onNewPartitionCreation (§7.6).",
        guard=and_(
            ~s.f("zk", "topics").contains(t),
            reps.non_empty(),
            reps.all(common.valid_replica_list),
        ),
        environment=lambda w: common.set_zk(
            w,
            topics=common.zk_of(w).f("topics").union(set_of(t)),
            topic_ids=if_(
                topic_ids.uses_topic_id(p, common.st(w)),
                topic_ids.with_new_topic_ids(common.zk_of(w), set_of(t)).f("topic_ids"),
                common.zk_of(w).f("topic_ids"),
            ),
            assignments=common.zk_of(w).f("assignments").merge(common.indexed_assignments(t, reps)),
        ),
        controller=lambda w: process_topic_change(p, w),
    )


def partition_expansion_action(p: Profile) -> Action:
    """``PartitionExpansion(t, R)`` (§7.6): the topic znode is rewritten with more partitions, existing ones unchanged."""
    v = common.param_vars(PartitionExpansion)
    t, reps = v["topic"], v["replicas"]
    s = common.S
    zka = s.f("zk", "assignments")
    existing = zka.keys().filter(lambda tp: tp.f("topic").eq(t))
    indexed = common.indexed_assignments(t, reps)
    b = Block()
    b.ex = existing
    b.m = indexed
    guard = b.in_(
        and_(
            b.ex.non_empty(),
            reps.size().gt(b.ex.size()),
            b.ex.all(lambda tp: b.m.has(tp) & b.m.get(tp).f("replicas").eq(zka.get(tp).f("replicas"))),
            b.m.keys().minus(b.ex).all(lambda tp: common.valid_replica_list(b.m.get(tp).f("replicas"))),
        )
    )

    def environment(w: Expr) -> Expr:
        b = Block()
        b.cur = common.zk_of(w).f("assignments")
        added = Block()
        added.m = common.indexed_assignments(t, reps)
        return b.in_(common.set_zk(w, assignments=added.in_(b.cur.merge(added.m.delete_all(b.cur.keys())))))

    return common.controller_action(
        PartitionExpansion,
        "Partitions are added to a topic znode; the controller handles PartitionModifications (§7.6).",
        guard=guard,
        environment=environment,
        controller=lambda w: process_partition_modifications(p, w, t),
    )
