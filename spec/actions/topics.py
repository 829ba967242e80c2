"""Topic creation and partition expansion (§7.6): ``TopicChange``, ``PartitionModifications`` and
``onNewPartitionCreation``, and the ``TopicCreation`` / ``PartitionExpansion`` actions.

A topic exists in ZooKeeper (``/brokers/topics/<t>``) iff ``zk.assignments`` has a partition of it.
"""

from __future__ import annotations

from kcspec.spec import context as C
from kcspec.spec.actions import common as K
from kcspec.spec.actions import deletion as D
from kcspec.spec.events import PartitionExpansion, TopicCreation
from kcspec.spec.lang import Action, Expr, and_, build_map, if_, let, rule
from kcspec.spec.partition_machine import partition_state_change
from kcspec.spec.profiles import Profile
from kcspec.spec.replica_machine import replica_state_change
from kcspec.spec.vocabulary import ElectionStrategy, LeaderElection, PartitionState, ReplicaState

OFFLINE_CLEAN = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy, allow_unclean=False)


def on_new_partition_creation(p: Profile, w: Expr, partitions: object) -> Expr:
    """``onNewPartitionCreation(P)`` (§7.6): P → NewPartition; their replicas → NewReplica; P → OnlinePartition
    (Offline strategy, unused for new partitions, §5.2a); their replicas → OnlineReplica. Topics queued for
    deletion are not filtered."""
    return rule(
        "onNewPartitionCreation",
        "§7.6",
        let(
            partitions,
            lambda ps: K.pipe(
                w,
                lambda x: partition_state_change(p, x, ps, PartitionState.NewPartition, None),
                lambda x: replica_state_change(
                    p, x, C.replicas_of_partitions(K.st(x), ps), ReplicaState.NewReplica
                ),
                lambda x: partition_state_change(p, x, ps, PartitionState.OnlinePartition, OFFLINE_CLEAN),
                lambda x: replica_state_change(
                    p, x, C.replicas_of_partitions(K.st(x), ps), ReplicaState.OnlineReplica
                ),
            ),
        ),
    )


def zk_topics(w: Expr) -> Expr:
    """The children of ``/brokers/topics``."""
    return K.zk_of(w).f("assignments").keys().map(lambda tp: tp.f("topic"))


def process_topic_change(p: Profile, w: Expr) -> Expr:
    """``TopicChange`` (§7.6): new topics = ZK − known, deleted = known − ZK; ``allTopics`` := ZK topics; deleted
    topics are removed from the context; the new topics' assignments are read into the context and their partitions
    go through ``onNewPartitionCreation``."""

    def body(x: Expr) -> Expr:
        return let(
            zk_topics(x),
            lambda topics: let(
                topics.minus(K.ctx(x).f("all_topics")),
                lambda new: let(
                    K.ctx(x).f("all_topics").minus(topics),
                    lambda deleted: let(
                        K.zk_of(x).f("assignments"),
                        lambda zka: let(
                            zka.keys().filter(lambda tp: new.contains(tp.f("topic"))),
                            lambda added: K.pipe(
                                x,
                                lambda y: K.set_ctx(y, all_topics=topics),
                                lambda y: K.work_fold(
                                    deleted.sorted(), y, lambda acc, t: D.remove_topic(acc, t)
                                ),
                                lambda y: K.set_ctx(
                                    y,
                                    assignments=K.ctx(y)
                                    .f("assignments")
                                    .merge(zka.delete_all(zka.keys().minus(added))),
                                ),
                                lambda y: if_(new.is_empty(), y, on_new_partition_creation(p, y, added)),
                            ),
                        ),
                    ),
                ),
            ),
        )

    return rule("processTopicChange", "§7.6", let(w, body))


def process_partition_modifications(p: Profile, w: Expr, topic: Expr) -> Expr:
    """``PartitionModifications(t)`` (§7.6): partitions of t in ZK without replicas in memory are to be added. If t is
    queued for deletion: 2.8 restores the topic znode to the partitions that have a state znode, with their in-memory
    assignments (KAFKA-6612, fenced); 1.1 does nothing. Otherwise the additions are stored and created."""

    def queued(x: Expr, zk_part: Expr, to_add: Expr) -> Expr:
        if not p.partition_expansion_restore:
            return x
        return if_(
            to_add.is_empty(),
            x,
            K.fenced_zk(
                p,
                x,
                lambda z: let(
                    zk_part.keys().filter(lambda tp: z.f("partition_states").has(tp)),
                    lambda existing: z.with_(
                        assignments=z.f("assignments")
                        .delete_all(zk_part.keys())
                        .merge(build_map(existing, lambda tp: C.assignment(K.st(x), tp)))
                    ),
                ),
            ),
        )

    def body(x: Expr) -> Expr:
        zka = K.zk_of(x).f("assignments")
        return let(
            zka.delete_all(zka.keys().filter(lambda tp: tp.f("topic").ne(topic))),
            lambda zk_part: let(
                zk_part.keys().filter(lambda tp: C.replicas(K.st(x), tp).is_empty()),
                lambda to_add: if_(
                    C.queued_for_deletion(K.st(x), topic),
                    queued(x, zk_part, to_add),
                    if_(
                        to_add.is_empty(),
                        x,
                        on_new_partition_creation(
                            p,
                            K.set_ctx(
                                x,
                                assignments=K.ctx(x)
                                .f("assignments")
                                .merge(zk_part.delete_all(zk_part.keys().minus(to_add))),
                            ),
                            to_add,
                        ),
                    ),
                ),
            ),
        )

    return rule("processPartitionModifications", "§7.6", let(w, body))


def topic_creation_action(p: Profile) -> Action:
    """``TopicCreation(t, R)`` (§7.6): ``/brokers/topics/t`` is created with partition i assigned ``R[i]``."""
    v = K.param_vars(TopicCreation)
    t, reps = v["topic"], v["replicas"]
    s = K.S
    return K.controller_action(
        TopicCreation,
        "A topic znode is created; the controller handles TopicChange and onNewPartitionCreation (§7.6).",
        guard=and_(
            ~s.f("zk", "assignments").keys().any(lambda tp: tp.f("topic").eq(t)),
            reps.non_empty(),
            reps.all(K.valid_replica_list),
        ),
        environment=lambda w: K.set_zk(
            w, assignments=K.zk_of(w).f("assignments").merge(K.indexed_assignments(t, reps))
        ),
        controller=lambda w: process_topic_change(p, w),
    )


def partition_expansion_action(p: Profile) -> Action:
    """``PartitionExpansion(t, R)`` (§7.6): the topic znode is rewritten with more partitions, existing ones unchanged."""
    v = K.param_vars(PartitionExpansion)
    t, reps = v["topic"], v["replicas"]
    s = K.S
    zka = s.f("zk", "assignments")
    existing = zka.keys().filter(lambda tp: tp.f("topic").eq(t))
    indexed = K.indexed_assignments(t, reps)
    guard = let(
        existing,
        lambda ex: let(
            indexed,
            lambda m: and_(
                ex.non_empty(),
                reps.size().gt(ex.size()),
                ex.all(lambda tp: m.has(tp) & m.get(tp).f("replicas").eq(zka.get(tp).f("replicas"))),
                m.keys().minus(ex).all(lambda tp: K.valid_replica_list(m.get(tp).f("replicas"))),
            ),
        ),
    )
    return K.controller_action(
        PartitionExpansion,
        "Partitions are added to a topic znode; the controller handles PartitionModifications (§7.6).",
        guard=guard,
        environment=lambda w: let(
            K.zk_of(w).f("assignments"),
            lambda cur: K.set_zk(
                w,
                assignments=let(
                    K.indexed_assignments(t, reps),
                    lambda m: cur.merge(m.delete_all(cur.keys())),
                ),
            ),
        ),
        controller=lambda w: process_partition_modifications(p, w, t),
    )
