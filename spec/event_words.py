"""Each controller event in words: when it can happen (its guard), what happens in ZooKeeper, a broker or an
admin client (its environment part), and what the controller does about it (its controller part).

The rules themselves are the actions of ``spec/actions/``; these words are their summary for implementers, and
``conformance/protocol/PROTOCOL.md`` is generated from them next to the guards printed from the actions. "Active"
means ``controller.controller_id != -1``; when no controller is active after the environment part, only the
environment part happens.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventWords:
    """One event's guard, environment part and controller part, in words (Markdown)."""

    guard: str
    environment: str
    controller: str


EVENT_WORDS: dict[str, EventWords] = {
    "ControllerFailover": EventWords(
        guard=("`broker_id` is registered in `zk.brokers`."),
        environment=(
            "If a controller is active it first resigns (its context is reset, §7.12). `zk.controller := "
            "broker_id`, `zk.controller_epoch += 1`, `zk.controller_epoch_zk_version += 1`."
        ),
        controller=(
            "The new controller's context takes `controller_id := broker_id` and the new epoch and epoch zk "
            "version from ZooKeeper, then runs `onControllerFailover` (§7.1): context initialisation, both state "
            "machines' startup, resumed reassignments, deletions and preferred elections."
        ),
    ),
    "ControllerResignation": EventWords(
        guard=("A controller is active."),
        environment=("`zk.controller := -1` (the `/controller` znode is gone with the session)."),
        controller=(
            "The controller resigns: the whole `controller` context is reset to its empty value (`controller_id` "
            "-1)."
        ),
    ),
    "NewerControllerElected": EventWords(
        guard=(
            "A controller is active, `broker_id` is registered in `zk.brokers` and is not the active controller."
        ),
        environment=(
            "`zk.controller := broker_id`, `zk.controller_epoch += 1`, `zk.controller_epoch_zk_version += 1`."
        ),
        controller=(
            "None: the active controller has not noticed and keeps its context and epoch (a zombie). In 2.8 its "
            "next ZooKeeper write fails (ControllerMovedException); in 1.1 its writes go through."
        ),
    ),
    "ControllerChange": EventWords(
        guard=("A controller is active and `zk.controller` is not its id."),
        environment=("None."),
        controller=(
            "The controller resigns (`maybeResign`, §7.12): the whole `controller` context is reset."
        ),
    ),
    "ZombieControllerWrite": EventWords(
        guard=("`tp` has a partition-state znode and `1 ≤ controller_epoch < zk.controller_epoch`."),
        environment=(
            "2.8: nothing (the write's epoch-version check fails). 1.1: the znode of `tp` becomes leader "
            "`leader`, leader epoch + 1, ISR `isr`, zk version + 1, controller epoch `controller_epoch`."
        ),
        controller=("None."),
    ),
    "BrokerStartup": EventWords(
        guard=("`broker_id ≥ 0` and `broker_id` is not registered in `zk.brokers`."),
        environment=("`zk.brokers[broker_id] := zk.zxid` (its broker epoch), then `zk.zxid += 1`."),
        controller=(
            "`BrokerChange` (§7.2): the broker is new to `live_brokers`, so `onBrokerStartup([broker_id])` "
            "(§7.3)."
        ),
    ),
    "BrokerFailure": EventWords(
        guard=("`broker_id` is registered in `zk.brokers`."),
        environment=(
            "`broker_id` is removed from `zk.brokers`; if `zk.controller == broker_id`, `zk.controller := -1`."
        ),
        controller=(
            "If `broker_id` is the active controller, the controller dies with it (context reset, no handling). "
            "Otherwise `BrokerChange` (§7.2): `onBrokerFailure([broker_id])` (§7.4)."
        ),
    ),
    "BrokerBounce": EventWords(
        guard=("`broker_id` is registered in `zk.brokers` and is not the active controller."),
        environment=("`zk.brokers[broker_id] := zk.zxid` (a new broker epoch), then `zk.zxid += 1`."),
        controller=(
            "2.8: `BrokerChange` sees a bounced broker (same id, new epoch, §7.2): `onBrokerFailure` then "
            "`onBrokerStartup` for it. 1.1: nothing (the bounce is invisible)."
        ),
    ),
    "ControlledShutdown": EventWords(
        guard=("A controller is active and `broker_id` is registered in `zk.brokers`."),
        environment=("None."),
        controller=(
            "`doControlledShutdown(broker_id, broker_epoch)` (§7.10); `broker_epoch` -1 skips the staleness "
            "check."
        ),
    ),
    "TopicCreation": EventWords(
        guard=(
            "`topic` has no topic znode (`topic ∉ zk.topics`); `replicas` is non-empty; every `replicas[i]` is "
            "non-empty, without duplicates, of ids ≥ 0."
        ),
        environment=(
            "`zk.topics ∪= {topic}`; `zk.assignments[topic-i] := {replicas: replicas[i], adding: [], removing: []}` "
            "for every i; 2.8 with `config.inter_broker_protocol` ≥ 2.8-IV0: `zk.topic_ids[topic] :=` the least "
            "positive integer no topic znode holds."
        ),
        controller=("`TopicChange` (§7.6): `onNewPartitionCreation` for the new partitions."),
    ),
    "PartitionExpansion": EventWords(
        guard=(
            "`topic` has n ≥ 1 partitions in `zk.assignments`, `len(replicas) > n`, `replicas[i]` equals the "
            "current replicas of `topic-i` for i < n, and the new lists obey the rules of `TopicCreation`."
        ),
        environment=(
            "`topic-i` is added to `zk.assignments` for every i ≥ n (existing partitions unchanged)."
        ),
        controller=(
            "`PartitionModifications(topic)` (§7.6); 2.8 restores the ZooKeeper assignment of a topic queued for "
            "deletion instead of adding partitions."
        ),
    ),
    "TopicDeletion": EventWords(
        guard=("`topics` is non-empty."),
        environment=("`zk.delete_topics ∪= topics`."),
        controller=("`TopicDeletion` (§8)."),
    ),
    "StopReplicaResponseReceived": EventWords(
        guard=(
            "A controller is active, `partitions` is non-empty, and every replica `(p, broker_id)` of "
            "`partitions` is in `ReplicaDeletionStarted`."
        ),
        environment=("None."),
        controller=(
            "`TopicDeletionStopReplicaResponseReceived` (§8): `error` true (a request-level error) fails the "
            "deletion of every listed replica (`failReplicaDeletion`); `error` false completes it "
            "(`completeReplicaDeletion`)."
        ),
    ),
    "ApiPartitionReassignment": EventWords(
        guard=("kafka-2.8 only; a controller is active; `targets` is non-empty."),
        environment=("None."),
        controller=(
            "§7.7.1 API path: validation per partition, then `maybeTriggerPartitionReassignment`; a `null` target"
            " cancels the partition's reassignment."
        ),
    ),
    "ZkPartitionReassignment": EventWords(
        guard=("`targets` is non-empty and `zk.reassign_partitions` is empty (the znode is absent)."),
        environment=("`zk.reassign_partitions := targets`."),
        controller=(
            "2.8: §7.7.1 ZooKeeper path (`ZkPartitionReassignment`); 1.1: §7.8.1 `PartitionReassignment` (legacy "
            "12-step algorithm)."
        ),
    ),
    "ReplicaLeaderElection": EventWords(
        guard=(
            "A controller is active and `partitions` is non-empty. `ZkTriggered` requires `PREFERRED` and an "
            "empty `zk.preferred_replica_election`; `AdminClientTriggered` exists in 2.8 only; `AutoTriggered` is"
            " never enabled (use `AutoPreferredReplicaLeaderElection`)."
        ),
        environment=("`ZkTriggered`: `zk.preferred_replica_election := partitions`. Otherwise none."),
        controller=("`ReplicaLeaderElection` (§7.9): preferred or unclean elections for the partitions."),
    ),
    "AutoPreferredReplicaLeaderElection": EventWords(
        guard=("A controller is active and `config.auto_leader_rebalance_enable` is true."),
        environment=("None."),
        controller=("The scheduled imbalance check (§7.9 `checkAndTriggerAutoLeaderRebalance`)."),
    ),
    "IsrChange": EventWords(
        guard=(
            "`tp` has a partition-state znode whose leader L ≥ 0 is registered in `zk.brokers`; L ∈ `isr`; `isr` "
            "has no duplicates and ids ≥ 0; `tp` is in `zk.assignments` and every member of `isr` is one of its "
            "replicas."
        ),
        environment=(
            "2.8 with `config.inter_broker_protocol` ≥ 2.7-IV2: none (the leader sends AlterIsr). 1.1, and 2.8 "
            "with an older IBP: the znode becomes `(L, same leader epoch, isr, zk version + 1)` keeping its "
            "controller epoch, and `zk.isr_change_notifications += tp`."
        ),
        controller=(
            "2.8 with IBP ≥ 2.7-IV2: `AlterIsrReceived(L, zk.brokers[L], {tp: (L, znode leader epoch, isr, znode "
            "zk version)})` (§7.11). 1.1: `IsrChangeNotification`, then, if `tp` is being reassigned, "
            "`PartitionReassignmentIsrChange(tp)` (§7.8.1). 2.8 with an older IBP: `IsrChangeNotification` (which "
            "also calls `maybeCompleteReassignment` for the notified partitions being reassigned), then, if `tp` is "
            "being reassigned, `maybeCompleteReassignment(tp)` (§7.7.1)."
        ),
    ),
    "LeaderAndIsrResponseReceived": EventWords(
        guard=(
            "A controller is active, `broker_id` is in `controller.live_brokers`, `storage_errors` is non-empty "
            "and `broker_id` is an assigned replica (context assignment) of each of them."
        ),
        environment=("None."),
        controller=(
            "§7.5 with KAFKA_STORAGE_ERROR for `storage_errors` and no other partition listed: the replicas join "
            "the broker's offline replicas; the newly offline ones go through `onReplicasBecomeOffline`."
        ),
    ),
    "UncleanLeaderElectionEnable": EventWords(
        guard=("Always enabled."),
        environment=(
            '`topic == ""`: `config.unclean_leader_election_enable := true`; otherwise `config.unclean_topics += '
            "topic`."
        ),
        controller=(
            "2.8: `triggerOnlinePartitionStateChange()` (all topics, or `topic` only) (§6); 1.1: nothing."
        ),
    ),
    "ZkFaultInjection": EventWords(
        guard=(
            "No fault is armed on `tp`, and `tp` has a partition-state znode, or `fault` is `CONNECTIONLOSS` and `tp` "
            "is in `zk.assignments` (its state znode is still to be created)."
        ),
        environment=("`zk.faults[tp] := fault`."),
        controller=(
            "None. The fault is consumed by the controller's next access to that znode: `BADVERSION` fails the "
            "next conditional write (the controller re-reads and retries), `CONNECTIONLOSS` makes the next read "
            "throw, or the next `createTopicPartitionStatesRaw` of that znode (the whole call throws: its partitions "
            "stay NewPartition, each logged as failed with target NewPartition, §5.2a step 4)."
        ),
    ),
    "StopReplicaResponseWithoutDeletionReceived": EventWords(
        guard=(
            "A controller is active, `partitions` is non-empty, and every replica `(p, broker_id)` of "
            "`partitions` is in `ReplicaDeletionStarted` (the StopReplica(delete=false) of the retry's → "
            "OfflineReplica call was sent before the StopReplica(delete=true) of its → ReplicaDeletionStarted call)."
        ),
        environment="None.",
        controller=(
            "None: the response callback counts only partitions whose request asked `deletePartition=true` "
            "(§3.4, the fix of KAFKA-9946; 1.1 registers no callback for delete=false). The replicas stay in "
            "`ReplicaDeletionStarted`, no request is sent, the reply's state is the loaded state."
        ),
    ),
    "StopReplicaPartitionErrorsReceived": EventWords(
        guard=(
            "A controller is active, `partitions` is non-empty, every replica `(p, broker_id)` of `partitions` is "
            "in `ReplicaDeletionStarted`, and `partition_errors` is a non-empty proper subset of `partitions` "
            "(all in error is `StopReplicaResponseReceived` with `error: true`)."
        ),
        environment="None.",
        controller=(
            "`TopicDeletionStopReplicaResponseReceived` (§8) with no request-level error: `failReplicaDeletion` "
            "of the replicas of `partition_errors`, then `completeReplicaDeletion` of the other listed replicas."
        ),
    ),
    "LeaderAndIsrPartitionResultsReceived": EventWords(
        guard=(
            "A controller is active, `broker_id` is in `controller.live_brokers`, `online` is non-empty, `online` "
            "and `storage_errors` share no partition, and `broker_id` is an assigned replica (context "
            "assignment) of each listed partition."
        ),
        environment="None.",
        controller=(
            "§7.5: the broker's offline replicas become (previous − `online`) ∪ `storage_errors`; the replicas "
            "that were not offline before and are now go through `onReplicasBecomeOffline`."
        ),
    ),
    "StaleAlterIsrReceived": EventWords(
        guard=(
            "kafka-2.8 only, with `config.inter_broker_protocol` ≥ 2.7-IV2 (brokers of an older IBP send no "
            "AlterIsr). A controller is active; `tp` has a partition-state znode and an assignment; "
            "`broker_id` is registered in `zk.brokers`; `isr` contains `broker_id`, has no duplicates and only "
            "assigned replicas; no value is newer than ZooKeeper's (`0 ≤ broker_epoch ≤ zk.brokers[broker_id]`, "
            "`0 ≤ leader_epoch ≤` and `0 ≤ zk_version ≤` the znode's); and either `zk_version` is older than the "
            "znode's, or it is the znode's, `leader_epoch` is the znode's and only `broker_epoch` is older."
        ),
        environment="None.",
        controller=(
            "`AlterIsrReceived(broker_id, broker_epoch, {tp: (broker_id, leader_epoch, isr, zk_version)})` "
            "(§7.11), as for `IsrChange`: ignored when `broker_epoch` is not the broker's epoch in "
            "`controller.live_brokers`; otherwise `processAlterIsr` compares with the cached leadership "
            "(an older leader epoch: UpdateMetadata only; the cached record: idempotent) or makes the "
            "conditional write, which an older zk version fails (UpdateMetadata only)."
        ),
    ),
    "BrokerChange": EventWords(
        guard=(
            "`new_broker_ids`, `dead_broker_ids` and `bounced_broker_ids` are each strictly ascending and share no "
            "broker, and together name at least two brokers (one broker is `BrokerStartup`, `BrokerFailure` or "
            "`BrokerBounce`); every new id is ≥ 0 and not registered in `zk.brokers`; every dead or bounced id is "
            "registered in `zk.brokers` and is not the active controller (the controller's own broker leaving is "
            "`BrokerFailure`); and no partition is being reassigned (`controller.partitions_being_reassigned` "
            "and `controller.legacy_reassignments` empty: with a reassignment in flight, `onBrokerStartup` can "
            "throw and end the event before the later groups, which the model leaves out)."
        ),
        environment=(
            "Each id of `new_broker_ids`, then each id of `bounced_broker_ids`, in the listed order: "
            "`zk.brokers[id] := zk.zxid` (its broker epoch), then `zk.zxid += 1`. Then every id of "
            "`dead_broker_ids` is removed from `zk.brokers`; if `zk.controller` is one of them, `zk.controller := -1`."
        ),
        controller=(
            "`processBrokerChange` (§7.2) with `new`, `dead` and `bounced` computed from `zk.brokers` against "
            "`live_brokers` (the event's lists whenever the context is in step with ZooKeeper, as after every handled event): 2.8: the new brokers join `live_brokers` and "
            "`onBrokerStartup(new)`; the bounced ones leave it, `onBrokerFailure(bounced)`, join it again with "
            "their new epochs and `onBrokerStartup(bounced)`; the dead ones leave it and `onBrokerFailure(dead)`. "
            "1.1: `live_brokers` becomes the registered set first (the dead brokers are gone before "
            "`onBrokerStartup(new)`), then `onBrokerStartup(new)`, then `onBrokerFailure(dead)`; a bounce is "
            "invisible. Each call gets its whole group at once (one request batch, one round of elections)."
        ),
    ),
    "LogDirEventNotification": EventWords(
        guard=(
            "A controller is active, `broker_ids` is non-empty, and every id is in `controller.live_brokers` (a "
            "notification left by a broker that has died since is out of the model)."
        ),
        environment=(
            "None: the brokers' notification znodes are created and deleted within the event, and the model "
            "holds no notification znodes."
        ),
        controller=(
            "`onBrokerLogDirFailure(broker_ids)` (§7.5): every replica hosted by those brokers (assignment in the "
            "context) → OnlineReplica (§4.2), which sends each a LeaderAndIsr (isNew = false) where the partition "
            "has leadership information; replicas that cannot go to OnlineReplica (deletion states) are invalid "
            "transitions, reported as failures. Duplicate ids are handled once."
        ),
    ),
    "ReplicaLeaderElectionQueued": EventWords(
        guard=(
            "2.8 only. A controller is active, `partitions` is non-empty and fewer than "
            "`config.max_queued_requests` requests wait in `controller.queued_elections` (the bound is 0 by "
            "default: the event never happens)."
        ),
        environment=(
            "An admin client's `ElectLeaders` request arrives while the event thread is busy: "
            "`controller.queued_elections += (partitions, election_type)`."
        ),
        controller=(
            "None yet: the request waits. While any waits, every event with a controller part waits behind it "
            "(its guard needs an empty queue), except `ControllerResignation` (`Expire`, `clearAndPut`): it "
            "preempts them. Every resignation answers each waiting request NOT_CONTROLLER for every requested "
            "partition (step reply `answers`)."
        ),
    ),
    "ControlledShutdownQueued": EventWords(
        guard=(
            "2.8 only. A controller is active, `broker_id` is registered and fewer than "
            "`config.max_queued_requests` requests wait in `controller.queued_elections`."
        ),
        environment=(
            "A broker's `ControlledShutdown` request arrives while the event thread is busy: "
            "`controller.queued_elections += (kind ControlledShutdown, broker_id, broker_epoch)`."
        ),
        controller=(
            "None yet: the request waits behind the requests already queued. A resignation answers it "
            "Failure(ControllerMovedException) (step reply `answers`: tp WHOLE_REQUEST, error NOT_CONTROLLER)."
        ),
    ),
    "ApiPartitionReassignmentQueued": EventWords(
        guard=(
            "2.8 only. A controller is active, `targets` is non-empty and fewer than "
            "`config.max_queued_requests` requests wait in `controller.queued_elections`."
        ),
        environment=(
            "An admin client's `AlterPartitionReassignments` request arrives while the event thread is busy: "
            "`controller.queued_elections += (kind ApiPartitionReassignment, targets, cancels)` (the `None` targets "
            "are the cancels)."
        ),
        controller=(
            "None yet: the request waits behind the requests already queued. A resignation answers it "
            "NOT_CONTROLLER for the whole request (step reply `answers`: tp WHOLE_REQUEST)."
        ),
    ),
    "ListPartitionReassignmentsQueued": EventWords(
        guard=(
            "2.8 only. A controller is active and fewer than `config.max_queued_requests` requests wait in "
            "`controller.queued_elections`."
        ),
        environment=(
            "An admin client's `ListPartitionReassignments` request arrives while the event thread is busy: "
            "`controller.queued_elections += (kind ListPartitionReassignments, partitions)` (no partition: Kafka's "
            "`None`, every partition being reassigned)."
        ),
        controller=(
            "None yet: the request waits behind the requests already queued. A resignation answers it "
            "NOT_CONTROLLER for the whole request (step reply `answers`: tp WHOLE_REQUEST)."
        ),
    ),
    "QueuedEventProcessed": EventWords(
        guard=("A request waits in `controller.queued_elections`."),
        environment=("None."),
        controller=(
            "The oldest request leaves the queue and is processed as an `AdminClientTriggered` "
            "`ReplicaLeaderElection` (§7.9); its callback answers every requested partition (`answers`, request "
            "0): UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION (topic queued for deletion), "
            "ELECTION_NOT_NEEDED, NONE with the new leader, PREFERRED_LEADER_NOT_AVAILABLE / "
            "ELIGIBLE_LEADERS_NOT_AVAILABLE (the state change failed) or UNKNOWN_SERVER_ERROR (a ZooKeeper error). "
            "An event that throws (a partition without leadership information) or raises ControllerMovedException "
            "answers nothing; the latter's resignation answers the rest of the queue NOT_CONTROLLER. A queued "
            "`ControlledShutdown` is processed as the event is (§7.10); its callback answers Success (tp "
            "WHOLE_REQUEST, NONE, and every partition the broker still leads, NONE with the broker as leader) or "
            "Failure(e) (tp WHOLE_REQUEST, `exception` e: NoSuchElementException, StaleBrokerEpochException, "
            "BrokerNotAvailableException or ControllerMovedException). A queued `ApiPartitionReassignment` is "
            "processed as the event is (§7.7.1); its callback answers every partition: NONE, "
            "NO_REASSIGNMENT_IN_PROGRESS, INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION or "
            "UNKNOWN_SERVER_ERROR (nothing when ControllerMovedException was raised). A queued "
            "`ListPartitionReassignments` changes nothing (§7.7.1); its callback answers the request (tp "
            "WHOLE_REQUEST, NONE) and every partition asked (none asked: every one in "
            "`controller.partitions_being_reassigned`) whose context assignment has adding or removing replicas, "
            "NONE with that `assignment`."
        ),
    ),
}
"""Event kind → its words, for every kind of ``kcspec.spec.events.EVENT_TYPES`` (a test checks it)."""
