"""What PROTOCOL.md says about the suite's behaviour that no type carries: what the runner does with each error
code, when each failure reason is reported, and which state fields are the harness's (the SUT carries them).

Each table is keyed by the enum or the field it describes, and the tests check that every member or field is
described, so a new error code, failure reason or state field cannot be left out of the document; the tests
also check the field roles against the spec's own steps (``tests/unit/conformance/test_protocol_doc.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kcspec.conformance.protocol.messages import ErrorCode
from kcspec.spec.requests import FailureReason

ERROR_HANDLING: dict[ErrorCode, str] = {
    ErrorCode.unsupported: (
        "The vector is *not supported* (counted apart, never failed) — unless the vector expects an error reply, "
        "then the codes are compared like any reply and a different code *fails* it."
    ),
    ErrorCode.invalid_input: "Compared like any reply: the vector *fails* unless it expects `invalid_input`.",
    ErrorCode.not_enabled: (
        "Compared like any reply. Each scenario has one vector of an event whose guard is false in its state: "
        "it expects exactly this code. An enabled event answered `not_enabled` *fails*."
    ),
    ErrorCode.no_state: "Compared like any reply: the vector *fails*.",
    ErrorCode.internal: (
        "When it differs from the expected reply the vector is *errored* (the SUT broke), not *failed*; the "
        "message is reported."
    ),
    ErrorCode.beyond_scope: (
        "(1.1) The vector is *not supported*, like `unsupported`. In differential testing the sequence is dropped "
        "and counted (a note gives the count per event kind) and the search goes on with the next one: the "
        "event kind stays in the search, since another instance of it may be within the SUT's scope."
    ),
}
"""What the runner does when a SUT answers a request with each error code (``conformance/runner.py``)."""

FAILURE_REASONS: dict[FailureReason, str] = {
    FailureReason.InvalidTransition: (
        "Either machine: the element's current state is not a valid previous state of the target (§2.3 step 4). "
        "`from_state` is its current state, `target` the requested one; nothing else changes for that element."
    ),
    FailureReason.NewReplicaIsLeader: (
        "Replica machine, → NewReplica: the replica is the partition's cached leader (§4.1). Logged with target "
        "`OfflineReplica` (Kafka's message), not `NewReplica`."
    ),
    FailureReason.LeaderAndIsrPathEmpty: (
        "Replica machine, → OfflineReplica (ISR removal, §4.3): the partition has no state znode and its topic is "
        "not queued for deletion."
    ),
    FailureReason.WrittenByNewerController: (
        "The state znode read holds a controller epoch greater than the controller's (§3.3 read-side check): ISR "
        "removal (§4.3) or a leader election (§5.2b). Target `OfflineReplica` or `OnlinePartition`."
    ),
    FailureReason.ZkError: (
        "A ZooKeeper read of the state znode threw (a `CONNECTIONLOSS` fault: every partition of that read), or "
        "a conditional write found no znode (NONODE), in ISR removal (§4.3) or a leader election (§5.2b)."
    ),
    FailureReason.NoAssignedReplicaAlive: (
        "Partition machine, NewPartition → OnlinePartition (§5.2a): no assigned replica is online. `from_state` "
        "is `NewPartition`."
    ),
    FailureReason.NodeExists: (
        "Partition machine, NewPartition → OnlinePartition (§5.2a): the state znode already exists (NODEEXISTS "
        "on create)."
    ),
    FailureReason.LeaderAndIsrMissing: (
        "Partition machine, → OnlinePartition by election (§5.2b): the partition has no state znode."
    ),
    FailureReason.NoEligibleLeader: (
        "Partition machine, → OnlinePartition by election (§5.2b): the strategy found no leader (leader -1)."
    ),
}
"""When each ``FailureReason`` goes with a failure (``spec/replica_machine.py``, ``spec/partition_machine.py``)."""


class Role(enum.Enum):
    """Who writes a state field."""

    harness = "harness"
    """Only the events' environment parts write it: the SUT carries the loaded value and applies them."""
    shared = "shared"
    """The environment parts write it and the controller's ZooKeeper writes change it too."""
    controller = "controller"
    """The controller's in-memory context: the controller alone decides it."""


@dataclass(frozen=True)
class FieldRole:
    role: Role
    writers: tuple[str, ...]
    """The event kinds whose environment part writes the field (for harness and shared fields)."""
    note: str = ""


FIELD_ROLES: dict[str, FieldRole] = {
    "zk.controller": FieldRole(
        Role.harness,
        ("ControllerFailover", "ControllerResignation", "NewerControllerElected", "BrokerFailure"),
    ),
    "zk.controller_epoch": FieldRole(Role.harness, ("ControllerFailover", "NewerControllerElected")),
    "zk.controller_epoch_zk_version": FieldRole(
        Role.harness, ("ControllerFailover", "NewerControllerElected")
    ),
    "zk.brokers": FieldRole(Role.harness, ("BrokerStartup", "BrokerFailure", "BrokerBounce", "BrokerChange")),
    "zk.zxid": FieldRole(
        Role.harness,
        ("BrokerStartup", "BrokerBounce", "BrokerChange"),
        "a registration takes the current value as its epoch.",
    ),
    "zk.topics": FieldRole(
        Role.shared,
        ("TopicCreation",),
        "the controller deletes a topic's znode when its deletion completes.",
    ),
    "zk.topic_ids": FieldRole(
        Role.shared,
        ("TopicCreation",),
        "2.8 with IBP ≥ 2.8-IV0: the created topic znode has an ID; the controller gives one to every topic znode "
        "without one (TopicChange, failover), writes the context's ID with every topic assignment it writes and "
        "deletes it with the topic.",
    ),
    "zk.assignments": FieldRole(
        Role.shared,
        ("TopicCreation", "PartitionExpansion"),
        "the controller writes reassignments, removes deleted topics and (2.8) restores the assignment of a "
        "topic queued for deletion.",
    ),
    "zk.partition_states": FieldRole(
        Role.shared,
        ("IsrChange", "ZombieControllerWrite"),
        "environment writes in 1.1 only; the controller creates and writes them (zk version + 1 per write) and "
        "deletes them with their topic.",
    ),
    "zk.delete_topics": FieldRole(
        Role.shared, ("TopicDeletion",), "the controller removes completed and non-existing topics."
    ),
    "zk.reassign_partitions": FieldRole(
        Role.shared, ("ZkPartitionReassignment",), "the controller removes completed and refused partitions."
    ),
    "zk.preferred_replica_election": FieldRole(
        Role.shared, ("ReplicaLeaderElection",), "the controller deletes the znode after the election."
    ),
    "zk.isr_change_notifications": FieldRole(
        Role.shared, ("IsrChange",), "1.1; the controller deletes the notifications it processed."
    ),
    "zk.feature_znode": FieldRole(
        Role.shared,
        (),
        "2.8 (KIP-584, §7.1 step 1): every controller failover sets `/feature` up — created `Enabled` when "
        "`Absent`, a `Disabled` znode switched to `Enabled`, an `Enabled` one left alone. No event's environment "
        "writes it; an initial state may hold any status. 1.1 never touches it.",
    ),
    "zk.feature_znode_zk_version": FieldRole(
        Role.shared,
        (),
        "2.8: 0 when failover creates `/feature`, + 1 when it switches a `Disabled` one to `Enabled`; unchanged "
        "otherwise (and kept as loaded while the znode is `Absent`).",
    ),
    "zk.faults": FieldRole(
        Role.shared,
        ("ZkFaultInjection",),
        "the controller's next write or read of the znode consumes the fault.",
    ),
    "config.delete_topic_enable": FieldRole(Role.harness, (), "no event changes it."),
    "config.unclean_leader_election_enable": FieldRole(Role.harness, ("UncleanLeaderElectionEnable",)),
    "config.unclean_topics": FieldRole(
        Role.shared,
        ("UncleanLeaderElectionEnable",),
        "completing a topic's deletion deletes its configuration (`/config/topics/<t>`), override included.",
    ),
    "config.auto_leader_rebalance_enable": FieldRole(Role.harness, (), "no event changes it."),
    "config.leader_imbalance_per_broker_percentage": FieldRole(Role.harness, (), "no event changes it."),
    "config.inter_broker_protocol": FieldRole(
        Role.harness,
        (),
        "no event changes it; read by the kafka-2.8 profile only: the `/feature` znode at failover (KIP-584, "
        "≥ 2.7-IV0 enables it), the ISR path (KIP-497, ≥ 2.7-IV2 AlterIsr, else ZooKeeper notifications) and topic "
        "IDs (KIP-516).",
    ),
    "config.max_queued_requests": FieldRole(
        Role.harness,
        (),
        "no event changes it (capability `callbacks`).",
    ),
}
"""Role of every ``zk.*`` and ``config.*`` field; every ``controller.*`` field is ``Role.controller``."""


def field_role(path: str) -> FieldRole:
    """The role of a top-level state field (``zk.zxid``, ``controller.live_brokers``, ...)."""
    if path.startswith("controller."):
        return FieldRole(Role.controller, ())
    return FIELD_ROLES[path]
