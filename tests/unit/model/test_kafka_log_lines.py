"""The §10 line grammar of `model/kafka_log/` (shared by the audit and the checks) through the pure-Python reference
parser (fast, no Spark)."""

from __future__ import annotations

import pytest
from kcspec.model.kafka_log import lines as g
from kcspec.model.kafka_log.reference_parser import ParsedLine, parse_file, parse_lines

from tests.support.paths import SHARED

REAL_LOGS = SHARED / "real-logs"


def one(message: str, logger: str = "state.change.logger", level: str = "INFO") -> ParsedLine:
    [p] = list(parse_lines("f.log", [f"[2021-01-10 14:19:29,693] {level} {message} ({logger})"]))
    return p


CASES = [
    # (message, kind, expected fields subset) — 2.8 and 1.1 renderings of §10.2/§10.3/§10.4
    (
        "[Controller id=1 epoch=9] Changed state of replica 2 for partition my-topic-3 from OnlineReplica to "
        "OfflineReplica",
        "replica_transition",
        {
            "controller_id": 1,
            "controller_epoch": 9,
            "replica": 2,
            "topic": "my-topic",
            "partition": 3,
            "from_state": "OnlineReplica",
            "to_state": "OfflineReplica",
        },
    ),
    (
        "[Controller id=0 epoch=3] Controller 0 epoch 3 initiated state change of replica 1 for partition t-0 from "
        "ReplicaDeletionSuccessful to ReplicaDeletionIneligible failed",
        "replica_transition_failed",
        {"replica": 1, "from_state": "ReplicaDeletionSuccessful", "to_state": "ReplicaDeletionIneligible"},
    ),
    (
        "[Controller id=1 epoch=9] Partition test2-1 state changed to (Leader:-1,ISR:3,LeaderEpoch:2,"
        "ControllerEpoch:9) after removing replica 2 from the ISR as part of transition to OfflineReplica",
        "isr_removal",
        {"leader": -1, "isr": "3", "leader_epoch": 2, "zk_version": None, "lisr_controller_epoch": 9},
    ),
    (
        "[Controller id=0 epoch=5] Partition d-1 state changed to (Leader:0,ISR:0,2,LeaderEpoch:4,ZkVersion:7,"
        "ControllerEpoch:5) after removing replica 2 from the ISR as part of transition to OfflineReplica",
        "isr_removal",
        {"leader": 0, "isr": "0,2", "zk_version": 7},
    ),
    (
        "[Controller id=0 epoch=1] Changed partition test-0 state from NonExistentPartition to NewPartition with "
        "assigned replicas 0,1,2",
        "partition_transition",
        {"from_state": "NonExistentPartition", "to_state": "NewPartition", "replicas": "0,1,2"},
    ),
    (
        "[Controller id=0 epoch=1] Changed partition test-0 from NewPartition to OnlinePartition with state "
        "LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 1), zkVersion=0)",
        "partition_transition",
        {"leader": 0, "leader_epoch": 0, "isr": "0,1", "zk_version": 0, "to_state": "OnlinePartition"},
    ),
    (
        "[Controller id=2 epoch=4] Changed partition a.b_c-10 state from OnlinePartition to OfflinePartition",
        "partition_transition",
        {"topic": "a.b_c", "partition": 10, "to_state": "OfflinePartition"},
    ),
    (
        "[Controller id=2 epoch=4] Controller 2 epoch 4 failed to change state for partition t-0 from "
        "OfflinePartition to OnlinePartition",
        "partition_transition_failed",
        {"from_state": "OfflinePartition"},
    ),
    (
        "[Controller id=0 epoch=1] Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch=1, "
        "leader=0, leaderEpoch=0, isr=0, zkVersion=0, replicas=0, isNew=true) to broker 0 for partition test-0",
        "lair_sent",
        {"detail": "become-leader", "leader": 0, "isr": "0", "broker": 0, "lisr_controller_epoch": 1},
    ),
    (
        "[Controller id=0 epoch=1] Sending become-follower LeaderAndIsr request LeaderAndIsrPartitionState("
        "topicName='t', partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=2, isr=[1, 0], zkVersion=3, "
        "replicas=[1, 0], addingReplicas=[], removingReplicas=[], isNew=false) to broker 0 for partition t-0",
        "lair_sent",
        {"leader": 1, "leader_epoch": 2, "isr": "1,0", "replicas": "1,0", "zk_version": 3},
    ),
    (
        "[Controller id=0 epoch=1] Sending UpdateMetadata request PartitionState(controllerEpoch=1, leader=0, "
        "leaderEpoch=0, isr=[0], zkVersion=0, replicas=[0], offlineReplicas=[]) to brokers Set(0, 1) for partition "
        "chat-0",
        "umr_sent",
        {"brokers": "Set(0, 1)", "topic": "chat"},
    ),
    (
        "[Controller id=1 epoch=9] Sending UpdateMetadata request to brokers HashSet(1, 2, 3) for 5 partitions",
        "request_summary",
        {"brokers": "HashSet(1, 2, 3)", "count": 5},
    ),
    (
        "[Controller id=1 epoch=9] Sending UpdateMetadata request to brokers Set() for 0 partitions",
        "request_summary",
        {"brokers": "Set()", "count": 0},
    ),
    (
        "[Controller id=1 epoch=9] Sending LeaderAndIsr request to broker 1 with 0 become-leader and 5 "
        "become-follower partitions",
        "request_summary",
        {"broker": 1, "count": 0, "count2": 5},
    ),
    (
        "[Controller id=1 epoch=9] Sending StopReplica request for 3 replicas to broker 2",
        "request_summary",
        {"count": 3, "broker": 2},
    ),
    (
        "[Controller id=1 epoch=9] Sending StopReplica request (delete = true) for 3 replicas to broker 2",
        "request_summary",
        {"detail": "true", "count": 3},
    ),
    (
        "[Controller id=0 epoch=2] Sent LeaderAndIsr request (Leader:1,ISR:1,2,LeaderEpoch:3,ControllerEpoch:2) with "
        "new assigned replica list 1,2 to leader 1 for partition being reassigned t-0",
        "reassign_lair_sent",
        {"leader": 1, "isr": "1,2", "leader_epoch": 3},
    ),
    (
        "[Controller id=0] Received error in LeaderAndIsr response LeaderAndIsrResponse(x) from broker 3",
        "response_error",
        {"broker": 3},
    ),
    # fenced writes (Kafka's ReplicaManager, Partition and KafkaController sources, 0.8.1 – 3.x ZooKeeper mode)
    (
        "[Broker id=2] Received update metadata request with correlation id 5 from an old controller 1 with epoch "
        "6. Latest known controller epoch is 7",
        "stale_controller_request",
        {"broker": 2, "controller_id": 1, "controller_epoch": 6},
    ),
    (
        "[Broker id=2] Ignoring StopReplica request from controller 1 with correlation id 5 since its controller "
        "epoch 6 is old. Latest known controller epoch is 7",
        "stale_controller_request",
        {
            "broker": 2,
            "controller_id": 1,
            "controller_epoch": 6,
            "detail": "Latest known controller epoch is 7",
        },
    ),
    (
        "[Partition my.topic-10 broker=2] Cached zkVersion 4 not equal to that in zookeeper, skip updating ISR",
        "isr_update_fenced",
        {"topic": "my.topic", "partition": 10, "broker": 2, "zk_version": 4},
    ),
    (
        "Partition [t,0] on broker 2: Cached zkVersion [4] not equal to that in zookeeper, skip updating ISR",
        "isr_update_fenced",
        {"topic": "t", "partition": 0, "broker": 2, "zk_version": 4},
    ),
    (
        "[Controller id=1] Controller moved to another broker when processing ReplicaLeaderElection(Some(Set(t-0)),"
        "PREFERRED,ZkTriggered,<function1>).",
        "controller_moved",
        {
            "controller_id": 1,
            "detail": "ReplicaLeaderElection(Some(Set(t-0)),PREFERRED,ZkTriggered,<function1>)",
        },
    ),
    # pre-1.0 renderings
    (
        "Controller 1 epoch 28 changed state of replica 2 for partition [topic44,0] from OnlineReplica to "
        "OfflineReplica",
        "replica_transition",
        {"topic": "topic44", "partition": 0, "controller_epoch": 28},
    ),
    (
        "Controller 0 epoch 3 changed partition [test,0] state from NotExists to New with assigned replicas 0",
        "partition_transition",
        {"from_state": "NotExists", "to_state": "New"},
    ),
]


@pytest.mark.parametrize("message,kind,fields", CASES)
def test_templates(message: str, kind: str, fields: dict[str, object]) -> None:
    p = one(message)
    assert p.status == "record", (p.reason, message)
    assert p.kind == kind
    for k, v in fields.items():
        assert p.fields.get(k) == v, (k, p.fields)


def test_controller_log_lines() -> None:
    p = one(
        "[Controller id=1] 1 successfully elected as the controller. Epoch incremented to 9 and epoch zk version "
        "is now 8",
        "kafka.controller.KafkaController",
    )
    assert (p.kind, p.fields["controller_epoch"], p.fields["zk_epoch_version"]) == (
        "controller_elected",
        9,
        8,
    )
    p = one(
        "[Topic Deletion Manager 0], Handling deletion for topics t1,t2",
        "kafka.controller.TopicDeletionManager",
    )
    assert (p.kind, p.fields["topics"]) == ("topic_deletion_queued", "t1,t2")
    p = one(
        "[ReplicaStateMachine controllerId=3] Initializing replica state",
        "kafka.controller.ZkReplicaStateMachine",
    )
    assert (p.kind, p.fields["controller_id"]) == ("controller_message", 3)


def test_unknown_controller_state_change_is_quarantined() -> None:
    assert one("[Controller id=1 epoch=2] Something Kafka never wrote").reason == "unknown-state-change"
    assert one("Controller 1 epoch 2 did something old").reason == "legacy-state-change"
    assert one("[Broker id=1] Handling LeaderAndIsr request").kind == "broker_message"


def test_strimzi_layout_crlf_and_continuations() -> None:
    data = [
        "2020-03-23 21:38:24,456 ERROR [Controller id=0 epoch=1] Controller 0 epoch 1 failed to change state for "
        "partition t-0 from OfflinePartition to OnlinePartition (state.change.logger) [controller-event-thread]",
        "kafka.common.StateChangeFailedException: Failed to elect leader for partition t-0 under strategy "
        "OfflinePartitionLeaderElectionStrategy(false)",
        "\tat kafka.controller.X.y(X.scala:1)",
        "",
        "garbage !!",
        "\tat orphan.Frame(X.scala:2)",
    ]
    out = list(parse_lines("f", data))
    assert [p.status for p in out] == [
        "record",
        "continuation",
        "continuation",
        "blank",
        "quarantined",
        "quarantined",
    ]
    assert out[0].layout == "strimzi" and out[1].owner == 1 and out[2].owner == 1
    assert (out[4].reason, out[5].reason) == ("no-layout", "orphan-continuation")


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason="shared/real-logs not present")
def test_real_logs_1_1_and_later_fully_parsed() -> None:
    for path in sorted(REAL_LOGS.glob("*.log")):
        parsed = parse_file(path)
        assert parsed, path
        number = int(path.name[:2])
        quarantined = [p for p in parsed if p.status == "quarantined"]
        if number >= 22:  # 1.0.0 and later (SOURCES.md)
            assert quarantined == [], (path.name, quarantined[:3])
        for q in quarantined:
            assert q.reason in ("legacy-state-change", *g.ORPHAN_REASONS), (path.name, q)
