"""Every input Kafka's 2.8.2 and 1.1.1 controllers react to, mapped to a kcspec event or marked out of the model.

An input is a ``ControllerEvent`` type of ``KafkaController`` (dispatched by ``ControllerEventManager``'s event
thread) or a variant of a broker response that ``ControllerChannelManager`` turns into one. Each row says which
kcspec event expresses it, or why it is outside the model (``OUT``), or that it is a known gap (``GAP``): an input
that changes what the suite compares but that no kcspec event can express yet. ``PROTOCOL.md`` prints this table;
a test checks that every event named here exists and that every kcspec event appears in at least one row.

Sources: ``KafkaController.process`` and the ``ControllerEvent`` case classes (2.8.2), the event classes of
``KafkaController`` (1.1.1), the response callbacks of ``ControllerChannelManager.sendRequestsToBrokers`` (both),
as summarised in the semantics document (§7, §8, §9).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(enum.Enum):
    """How an input is covered."""

    event = "event"
    """A kcspec event expresses it (``events`` names them)."""
    out = "out of the model"
    """It changes nothing the suite compares, or the model abstracts it away (the reason says which)."""
    gap = "gap"
    """It changes what the suite compares, but no kcspec event expresses it yet."""


@dataclass(frozen=True)
class KafkaInput:
    """One input (or one variant of it) of Kafka's controller and how kcspec covers it."""

    kafka: str
    """The Kafka event class, or the response and its variant."""
    versions: str
    """``2.8.2``, ``1.1.1`` or both."""
    status: Status
    events: tuple[str, ...]
    """The kcspec event kinds that express it (empty unless ``status`` is ``event``)."""
    note: str
    """How the mapping works, or why the input is out of the model or a gap."""


BOTH = "2.8.2, 1.1.1"
E, OUT, GAP = Status.event, Status.out, Status.gap

KAFKA_INPUTS: tuple[KafkaInput, ...] = (
    # ------------------------------------------------------------------------------ controller election (§7.1, §7.12)
    KafkaInput(
        "Startup",
        BOTH,
        E,
        ("ControllerFailover",),
        "the broker's first election; winning it is the failover.",
    ),
    KafkaInput(
        "Reelect (`/controller` deleted)",
        BOTH,
        E,
        ("ControllerResignation", "ControllerFailover"),
        "the znode's deletion with the resignation of its owner is `ControllerResignation`; the election that "
        "follows, when a broker wins it, is `ControllerFailover`.",
    ),
    KafkaInput(
        "RegisterBrokerAndReelect (new ZooKeeper session)",
        BOTH,
        E,
        ("BrokerBounce", "ControllerFailover"),
        "re-registration with a new czxid is a bounce as the controller sees it; winning the election that follows "
        "is `ControllerFailover`.",
    ),
    KafkaInput(
        "Expire (session expiry of the controller)",
        BOTH,
        E,
        ("ControllerResignation",),
        "the controller resigns and its `/controller` znode disappears.",
    ),
    KafkaInput(
        "ControllerChange (`/controller` created or changed)",
        BOTH,
        E,
        ("ControllerChange", "NewerControllerElected"),
        "`NewerControllerElected` is the ZooKeeper side (another broker won), `ControllerChange` the old "
        "controller noticing it and resigning.",
    ),
    KafkaInput(
        "ShutdownEventThread",
        BOTH,
        E,
        ("BrokerFailure",),
        "the controller's own broker shutting down; as the cluster sees it, its registration disappears (a "
        "`BrokerFailure` of the active controller: the context is gone, nothing is handled).",
    ),
    # ------------------------------------------------------------------------------------------ brokers (§7.2–§7.4)
    KafkaInput(
        "BrokerChange: a new broker id",
        BOTH,
        E,
        ("BrokerStartup",),
        "one broker changed since the watch fired; several at once are `BrokerChange` (below).",
    ),
    KafkaInput(
        "BrokerChange: a broker id gone", BOTH, E, ("BrokerFailure",), "one broker changed, as above."
    ),
    KafkaInput(
        "BrokerChange: same id, new broker epoch (bounce)",
        BOTH,
        E,
        ("BrokerBounce",),
        "2.8.2 handles it as failure then startup (KAFKA-7235); 1.1.1 does not see it.",
    ),
    KafkaInput(
        "BrokerChange: several brokers changed at once",
        BOTH,
        E,
        ("BrokerChange",),
        "`processBrokerChange` calls `onBrokerStartup(new sorted)`, then (2.8.2) `onBrokerFailure(bounced sorted)` "
        "and `onBrokerStartup(bounced sorted)`, then `onBrokerFailure(dead sorted)`: one call per group, which "
        "differs from consecutive single-broker events (request batching, election order). 1.1.1 sets the live "
        "set to the registered brokers before `onBrokerStartup`, so the dead ones are already gone then, and "
        "sees no bounce. Out of the model while a reassignment is in flight: `onBrokerStartup` can then throw "
        "(`maybeResumeReassignments` has no `try`) and end the event before the later groups.",
    ),
    KafkaInput(
        "BrokerModifications (broker znode data changed)",
        "2.8.2",
        OUT,
        (),
        "endpoints and features of a broker are not part of the model; a change only resends UpdateMetadata "
        "with the new endpoints.",
    ),
    KafkaInput(
        "ControlledShutdown(id, brokerEpoch)",
        BOTH,
        E,
        ("ControlledShutdown",),
        "`broker_epoch` -1 means unknown (1.1.1 has no broker epoch check).",
    ),
    # ------------------------------------------------------------------------------------------ topics (§7.6, §8)
    KafkaInput(
        "TopicChange (new topic znodes)",
        BOTH,
        E,
        ("TopicCreation",),
        "one topic per event; several topics created before the watch fires arrive as consecutive events.",
    ),
    KafkaInput(
        "PartitionModifications(topic)", BOTH, E, ("PartitionExpansion",), "the complete new assignment."
    ),
    KafkaInput(
        "TopicDeletion (`/admin/delete_topics` children)", BOTH, E, ("TopicDeletion",), "any set of topics."
    ),
    KafkaInput(
        "TopicDeletionStopReplicaResponseReceived: request-level error",
        BOTH,
        E,
        ("StopReplicaResponseReceived",),
        "`error: true`: every listed partition failed.",
    ),
    KafkaInput(
        "TopicDeletionStopReplicaResponseReceived: every partition NONE",
        BOTH,
        E,
        ("StopReplicaResponseReceived",),
        "`error: false`: every listed replica's deletion completes.",
    ),
    KafkaInput(
        "TopicDeletionStopReplicaResponseReceived: some partitions with an error (e.g. KAFKA_STORAGE_ERROR)",
        BOTH,
        E,
        ("StopReplicaPartitionErrorsReceived",),
        "the partitions with an error fail their deletion, the others complete it. 2.8.2 batches the "
        "partitions of a broker in one StopReplica; 1.1.1 sends one request per deleted partition, so there a "
        "response lists one partition and the variant is the same as `error: true`.",
    ),
    KafkaInput(
        "StopReplica response to a request without deletion",
        BOTH,
        E,
        ("StopReplicaResponseWithoutDeletionReceived",),
        "2.8.2's callback counts only partitions whose request asked `deletePartition=true` (§3.4, the fix of "
        "KAFKA-9946) and 1.1.1 registers no callback for delete=false: the response changes nothing, also when "
        "it names replicas whose deletion has started since (a retry's StopReplica(delete=false) answered after "
        "its StopReplica(delete=true) was sent). A controller that counts it completes a deletion the broker never "
        "performed.",
    ),
    # ------------------------------------------------------------------------------- responses and log dirs (§7.5)
    KafkaInput(
        "LeaderAndIsrResponseReceived: KAFKA_STORAGE_ERROR for some partitions, no partition NONE",
        BOTH,
        E,
        ("LeaderAndIsrResponseReceived",),
        "the partitions join the broker's offline replicas; newly offline ones go through "
        "`onReplicasBecomeOffline`.",
    ),
    KafkaInput(
        "LeaderAndIsrResponseReceived: some partitions NONE",
        BOTH,
        E,
        ("LeaderAndIsrPartitionResultsReceived",),
        "NONE removes the partition from the broker's offline replicas (`online`), KAFKA_STORAGE_ERROR adds it "
        "(`storage_errors`, may be empty).",
    ),
    KafkaInput(
        "LeaderAndIsrResponseReceived: other per-partition errors",
        BOTH,
        OUT,
        (),
        "ignored by the controller: the same as not listing the partition.",
    ),
    KafkaInput(
        "LeaderAndIsrResponseReceived: request-level error",
        BOTH,
        OUT,
        (),
        "the controller logs it and stops: nothing the suite compares changes.",
    ),
    KafkaInput(
        "UpdateMetadataResponseReceived",
        "2.8.2",
        OUT,
        (),
        "only an ERROR log line for a request-level error (1.1.1 registers no callback).",
    ),
    KafkaInput(
        "LogDirEventNotification",
        BOTH,
        E,
        ("LogDirEventNotification",),
        "`onBrokerLogDirFailure`: every replica of the notified brokers → OnlineReplica (a LeaderAndIsr to "
        "learn which are offline). The responses are `LeaderAndIsrResponseReceived` / "
        "`LeaderAndIsrPartitionResultsReceived`. A notification of a broker that has died since is out of the "
        "model (the guard requires live brokers).",
    ),
    KafkaInput(
        "Request send failures and retries (RequestSendThread)",
        BOTH,
        OUT,
        (),
        "a request is sent to a live broker until it is delivered or the broker is removed; the suite compares "
        "the set of requests sent, not their delivery.",
    ),
    # ----------------------------------------------------------------------------------- reassignment (§7.7, §7.8)
    KafkaInput(
        "ZkPartitionReassignment / PartitionReassignment (`/admin/reassign_partitions`)",
        BOTH,
        E,
        ("ZkPartitionReassignment",),
        "2.8.2 `ZkPartitionReassignment`, 1.1.1 `PartitionReassignment` (legacy algorithm).",
    ),
    KafkaInput(
        "ApiPartitionReassignment", "2.8.2", E, ("ApiPartitionReassignment",), "`null` target = cancel."
    ),
    KafkaInput(
        "ListPartitionReassignments",
        "2.8.2",
        E,
        ("ListPartitionReassignmentsQueued", "QueuedEventProcessed"),
        "capability `callbacks`: the request waits in `controller.queued_elections` (kind "
        "ListPartitionReassignments: the `partitions` asked, none for all); processed, it changes nothing and its "
        "callback answers the ongoing reassignments asked about (`answers` with `assignment`, §7.7.1).",
    ),
    KafkaInput(
        "PartitionReassignmentIsrChange(tp)",
        BOTH,
        E,
        ("IsrChange",),
        "1.1.1: part of `IsrChange` for a partition being reassigned. 2.8.2 with IBP ≥ 2.7-IV2: `AlterIsr` "
        "calls `maybeCompleteReassignment` itself, which `IsrChange` includes; with an older IBP (the watch is "
        "registered) part of `IsrChange` for a partition being reassigned.",
    ),
    # --------------------------------------------------------------------------------------------- ISR (§7.11)
    KafkaInput(
        "AlterIsrReceived: the leader's current leader epoch, zk version and broker epoch",
        "2.8.2",
        E,
        ("IsrChange",),
        "kcspec's `IsrChange` proposes exactly the znode's leader epoch and zk version and the leader's "
        "registered broker epoch.",
    ),
    KafkaInput(
        "AlterIsrReceived: stale broker epoch, older leader epoch, older zk version",
        "2.8.2",
        E,
        ("StaleAlterIsrReceived",),
        "a delayed or repeated request (STALE_BROKER_EPOCH, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); "
        "only values the broker once had: a leader epoch or zk version newer than ZooKeeper's cannot be sent.",
    ),
    KafkaInput(
        "AlterIsrReceived: a partition the controller does not know",
        "2.8.2",
        OUT,
        (),
        "a partition without a state znode has no leader to send it; one whose leadership the controller has "
        "not cached is reached through `IsrChange` and `StaleAlterIsrReceived` (UNKNOWN_TOPIC_OR_PARTITION, "
        "an UpdateMetadata only).",
    ),
    KafkaInput(
        "IsrChangeNotification",
        BOTH,
        E,
        ("IsrChange",),
        "1.1.1, and 2.8.2 with `config.inter_broker_protocol` below 2.7-IV2: the leader's znode write and "
        "notification are `IsrChange`'s environment part. 2.8.2 with AlterIsr enabled (IBP ≥ 2.7-IV2) does not "
        "use notifications.",
    ),
    # ---------------------------------------------------------------------------------------- elections (§6, §7.9)
    KafkaInput(
        "ReplicaLeaderElection (ZooKeeper `/admin/preferred_replica_election`)",
        BOTH,
        E,
        ("ReplicaLeaderElection",),
        "`trigger: ZkTriggered`, `PREFERRED` (1.1.1's `PreferredReplicaLeaderElection`).",
    ),
    KafkaInput(
        "ReplicaLeaderElection (admin client, preferred or unclean)",
        "2.8.2",
        E,
        ("ReplicaLeaderElection",),
        "`trigger: AdminClientTriggered`.",
    ),
    KafkaInput(
        "AutoPreferredReplicaLeaderElection",
        BOTH,
        E,
        ("AutoPreferredReplicaLeaderElection",),
        "the scheduled check; `config.auto_leader_rebalance_enable` must be true.",
    ),
    KafkaInput(
        "UncleanLeaderElectionEnable / TopicUncleanLeaderElectionEnable(topic)",
        "2.8.2",
        E,
        ("UncleanLeaderElectionEnable",),
        '`topic: ""` is the broker default, otherwise the topic override.',
    ),
    KafkaInput(
        "unclean.leader.election.enable changed (1.1.1)",
        "1.1.1",
        E,
        ("UncleanLeaderElectionEnable",),
        "1.1.1 has no event: the new value is only read at the next election.",
    ),
    # ----------------------------------------------------------------------------------------------- other inputs
    KafkaInput(
        "UpdateFeatures",
        "2.8.2",
        OUT,
        (),
        "finalizing features (KIP-584) is not part of the model: only the `/feature` znode's setup at failover is (§7.1).",
    ),
    KafkaInput(
        "ZooKeeper faults (BADVERSION, CONNECTIONLOSS) on partition-state znodes",
        BOTH,
        E,
        ("ZkFaultInjection",),
        "armed by the event, consumed by the controller's next write or read of that znode.",
    ),
    KafkaInput(
        "A deposed controller's write of a partition-state znode",
        BOTH,
        E,
        ("ZombieControllerWrite",),
        "2.8.2 fences it; 1.1.1 lets it through (KAFKA-6082).",
    ),
    KafkaInput(
        "ReplicaLeaderElection (admin client) put behind a busy event thread, then processed",
        "2.8.2",
        E,
        ("ReplicaLeaderElectionQueued", "QueuedEventProcessed"),
        "capability `callbacks`: the request waits in `controller.queued_elections` (bound "
        "`config.max_queued_requests`); processed, its callback answers every partition (`answers`, §7.9).",
    ),
    KafkaInput(
        "ControlledShutdown put behind a busy event thread, then processed",
        "2.8.2",
        E,
        ("ControlledShutdownQueued", "QueuedEventProcessed"),
        "capability `callbacks`: the request waits in `controller.queued_elections` (kind ControlledShutdown) in "
        "the same queue as the admin elections; processed, its callback answers Success(partitions still led) or "
        "Failure(e) (`answers`, tp WHOLE_REQUEST, §7.10).",
    ),
    KafkaInput(
        "ApiPartitionReassignment (AlterPartitionReassignments) put behind a busy event thread, then processed",
        "2.8.2",
        E,
        ("ApiPartitionReassignmentQueued", "QueuedEventProcessed"),
        "capability `callbacks`: the request waits in `controller.queued_elections` (kind ApiPartitionReassignment: "
        "`targets` and `cancels`); processed, its callback answers every partition (`answers`, §7.7.1).",
    ),
    KafkaInput(
        "Event-queue preemption (`clearAndPut` of Expire or ShutdownEventThread with events queued)",
        "2.8.2",
        E,
        ("ControllerResignation",),
        "the queued admin elections' callbacks are answered NOT_CONTROLLER, queued ControlledShutdowns "
        "Failure(ControllerMovedException), queued ApiPartitionReassignments and ListPartitionReassignments "
        "NOT_CONTROLLER for the whole request (`answers`, tp WHOLE_REQUEST).",
    ),
)
"""Every input of Kafka's two controllers and how kcspec covers it."""
