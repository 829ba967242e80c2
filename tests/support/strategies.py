"""Hypothesis strategies for the data model, shared by the foundation tests."""

from __future__ import annotations

from hypothesis import strategies as st
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    ClusterConfig,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
    ZkFault,
)

broker_ids = st.integers(min_value=0, max_value=5)
topics = st.sampled_from(["foo", "bar-baz", "t-1", "x"])
tps = st.builds(TopicPartition, topics, st.integers(min_value=0, max_value=12))
prs = st.builds(PartitionReplica, tps, broker_ids)
replica_lists = st.lists(broker_ids, max_size=4, unique=True).map(tuple)
assignments = st.builds(ReplicaAssignment, replica_lists, replica_lists, replica_lists)
leader_and_isr = st.builds(
    LeaderAndIsr,
    st.integers(min_value=-2, max_value=5),
    st.integers(min_value=0, max_value=50),
    replica_lists,
    st.integers(min_value=0, max_value=50),
)
li = st.builds(LeaderIsrAndControllerEpoch, leader_and_isr, st.integers(min_value=0, max_value=9))


def fmaps(keys: st.SearchStrategy[object], values: st.SearchStrategy[object]) -> st.SearchStrategy[FMap]:  # type: ignore[type-arg]
    return st.dictionaries(keys, values, max_size=4).map(FMap)


zk_states = st.builds(
    ZkState,
    controller=st.integers(min_value=-1, max_value=5),
    controller_epoch=st.integers(min_value=0, max_value=9),
    controller_epoch_zk_version=st.integers(min_value=0, max_value=9),
    brokers=fmaps(broker_ids, st.integers(min_value=1, max_value=99)),
    topics=st.frozensets(topics, max_size=3),
    assignments=fmaps(tps, assignments),
    partition_states=fmaps(tps, li),
    delete_topics=st.frozensets(topics, max_size=2),
    reassign_partitions=fmaps(tps, replica_lists),
    preferred_replica_election=st.frozensets(tps, max_size=3),
    isr_change_notifications=st.frozensets(tps, max_size=3),
    faults=fmaps(tps, st.sampled_from(ZkFault)),
    zxid=st.integers(min_value=1, max_value=99),
)
contexts = st.builds(
    ControllerContext,
    controller_id=st.integers(min_value=-1, max_value=5),
    epoch=st.integers(min_value=0, max_value=9),
    epoch_zk_version=st.integers(min_value=0, max_value=9),
    live_brokers=fmaps(broker_ids, st.integers(min_value=1, max_value=99)),
    shutting_down=st.frozensets(broker_ids, max_size=2),
    offline_replicas=st.frozensets(prs, max_size=2),
    all_topics=st.frozensets(topics, max_size=3),
    assignments=fmaps(tps, assignments),
    leadership=fmaps(tps, li),
    partitions_being_reassigned=st.frozensets(tps, max_size=2),
    legacy_reassignments=fmaps(tps, replica_lists),
    replica_states=fmaps(prs, st.sampled_from(ReplicaState)),
    partition_states=fmaps(tps, st.sampled_from(PartitionState)),
    topics_to_be_deleted=st.frozensets(topics, max_size=2),
    topics_with_deletion_started=st.frozensets(topics, max_size=2),
    topics_ineligible_for_deletion=st.frozensets(topics, max_size=2),
)
configs = st.builds(
    ClusterConfig,
    delete_topic_enable=st.booleans(),
    unclean_leader_election_enable=st.booleans(),
    unclean_topics=st.frozensets(topics, max_size=2),
)
cluster_states = st.builds(ClusterState, zk=zk_states, controller=contexts, config=configs)
