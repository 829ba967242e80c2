"""§7.7 KIP-455 reassignment (kafka-2.8) and §7.8 legacy 12-step reassignment (kafka-1.1)."""

from __future__ import annotations

from kcspec.spec.events import ApiPartitionReassignment, IsrChange, TopicDeletion, ZkPartitionReassignment
from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import PartitionReplica, ReplicaAssignment, ReplicaState

from tests.support.spec_scenarios import tp, with_topic

T0 = tp("t", 0)
BROKERS = (1, 2, 3, 4)


def test_kip455_api_reassignment_phases() -> None:
    s = with_topic("kafka-2.8", "t", [[1, 2]], BROKERS).run(ApiPartitionReassignment(FMap({T0: (3, 4)})))
    fa = ReplicaAssignment((3, 4, 1, 2), (3, 4), (1, 2))
    s.expect_eq(s.state.controller.assignments[T0], fa, "U2: FA = reassignTo(TRS), TRS first")
    s.expect_eq(s.state.zk.assignments[T0], fa, "U1: ZK written first")
    s.expect(T0 in s.state.controller.partitions_being_reassigned, "reassigning")
    s.expect_eq((s.znode(T0).leader_epoch, s.cached(T0).leader_epoch), (1, 1), "A1: epoch +1, cache updated")
    s.expect(
        all(ps.is_new for b in (3, 4) for ps in s.lair_states(b, T0)), "A1: isNew for adding (KAFKA-10314)"
    )
    s.expect(not any(ps.is_new for b in (1, 2) for ps in s.lair_states(b, T0)), "isNew=false for origin")
    s.expect_eq(s.state.controller.replica_states[PartitionReplica(T0, 3)], ReplicaState.NewReplica, "A2")
    s.run(IsrChange(T0, (1, 2, 3, 4)))
    c = s.state.controller
    s.expect_eq(c.assignments[T0], ReplicaAssignment((3, 4)), "B2: RS = TRS")
    s.expect_eq(s.state.zk.assignments[T0], ReplicaAssignment((3, 4)), "B6: ZK = TRS")
    s.expect(T0 not in c.partitions_being_reassigned, "B7: done")
    li = s.znode(T0)
    s.expect_eq((li.leader, li.isr), (3, (3, 4)), "B3 leader 3, B4 ISR shrunk to TRS")
    s.expect_eq(li.leader_epoch, 4, "epochs: A1 +1, B3 +1, B4 +1 per removed ISR member (2)")
    s.expect(not any(pr.replica in (1, 2) for pr in c.replica_states if pr.tp == T0), "removed replicas gone")
    s.expect(any(ps.delete_partition for ps in s.sr_states(1, T0)), "SR(delete=true) to removed replicas")


def test_kip455_cancellation_and_unknown_partition() -> None:
    s = with_topic("kafka-2.8", "t", [[1, 2]], BROKERS).run(ApiPartitionReassignment(FMap({T0: (3, 4)})))
    s.run(ApiPartitionReassignment(FMap({T0: None})))
    s.expect_eq(s.state.controller.assignments[T0], ReplicaAssignment((1, 2)), "cancelled: back to ORS")
    s.expect_eq(s.state.zk.assignments[T0], ReplicaAssignment((1, 2)), "ZK back to ORS")
    s.expect(
        not any(pr.replica in (3, 4) for pr in s.state.controller.replica_states), "adding replicas deleted"
    )
    before = s.state
    s.run(ApiPartitionReassignment(FMap({tp("x"): (1,), T0: (1, 9)})))
    s.expect_eq(s.state.zk.assignments, before.zk.assignments, "unknown partition / dead target rejected")


def test_kip455_zk_reassignment_and_deleting_topic() -> None:
    s = with_topic("kafka-2.8", "t", [[1, 2]], BROKERS).run(ZkPartitionReassignment(FMap({T0: (2, 1)})))
    s.expect_eq(
        s.state.controller.assignments[T0], ReplicaAssignment((2, 1)), "permutation completes at once"
    )
    s.expect_eq(s.state.zk.reassign_partitions, FMap(), "znode deleted when done")
    s.expect_eq(s.znode(T0).leader_epoch, 1, "one epoch bump (B3)")
    s = with_topic("kafka-2.8", "t", [[1, 2]], BROKERS).run(TopicDeletion(("t",)))
    s.run(ZkPartitionReassignment(FMap({T0: (3, 4)})))
    s.expect_eq(s.state.zk.reassign_partitions, FMap(), "refused for a deleting topic, entry removed")


def test_legacy_reassignment_steps() -> None:
    s = with_topic("kafka-1.1", "t", [[1, 2]], BROKERS).run(ZkPartitionReassignment(FMap({T0: (3, 4)})))
    c = s.state.controller
    s.expect_eq(c.assignments[T0], ReplicaAssignment((3, 4, 1, 2)), "step 1: AR' = distinct(RAR ++ AR)")
    s.expect_eq(s.state.zk.assignments[T0], ReplicaAssignment((3, 4, 1, 2)), "AR' in ZK")
    s.expect_eq(s.znode(T0).leader_epoch, 1, "step 2: epoch +1 in ZK")
    s.expect_eq(s.cached(T0).leader_epoch, 0, "KAFKA-9212: cache not updated")
    s.expect(any(ps.leader_epoch == 1 for ps in s.lair_states(1, T0)), "LAIR carries the new epoch")
    s.expect_eq(c.legacy_reassignments[T0], (3, 4), "RAR recorded")
    s.run(IsrChange(T0, (1, 2, 3, 4)))
    c = s.state.controller
    s.expect_eq(c.assignments[T0], ReplicaAssignment((3, 4)), "steps 6/10: AR = RAR")
    s.expect_eq(s.state.zk.assignments[T0], ReplicaAssignment((3, 4)), "step 10 in ZK")
    s.expect_eq(c.legacy_reassignments, FMap(), "step 11")
    s.expect_eq(s.state.zk.reassign_partitions, FMap(), "znode deleted")
    li = s.znode(T0)
    s.expect_eq((li.leader, li.isr), (3, (3, 4)), "leader moved into RAR, OAR out of the ISR")


def test_legacy_reassignment_to_current_list_is_ignored() -> None:
    s = with_topic("kafka-1.1", "t", [[1, 2]], BROKERS).run(ZkPartitionReassignment(FMap({T0: (1, 2)})))
    s.expect_eq(s.znode(T0).leader_epoch, 0, "no epoch bump")
    s.expect_eq(s.state.zk.reassign_partitions, FMap(), "entry removed")
