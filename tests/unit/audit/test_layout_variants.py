"""Layouts and quarantine of real logs, in process with the reference parser (the JVM reader is held to it by
``test_jvm_parser`` / ``test_spark_job`` over ``layout_corpus``): Kafka 3.x's ``LeaderAndIsrPartitionState``
rendering (``partitionEpoch``, ``leaderRecoveryState``), log4j's padded level, and continuation lines before a
file's first record, quarantined apart and not counted against ``--max-quarantine``."""

from __future__ import annotations

from typing import Any

from kcspec.audit import verdict
from kcspec.model.kafka_log import lines as g
from kcspec.model.kafka_log.reference_parser import parse_lines

LAIR_3X = (
    "[2023-04-03 08:15:02,871] TRACE [Controller id=1 epoch=4] Sending become-leader LeaderAndIsr request "
    "LeaderAndIsrPartitionState(topicName='orders', partitionIndex=2, controllerEpoch=4, leader=1, leaderEpoch=7, "
    "isr=[1, 3], partitionEpoch=12, replicas=[1, 3], addingReplicas=[], removingReplicas=[], isNew=false, "
    "leaderRecoveryState=0) to broker 3 for partition orders-2 (state.change.logger)"
)
PADDED = (
    "2024-03-18 05:33:09 INFO  KafkaController:68 - [Controller id=0] 0 successfully elected as the controller. "
    "Epoch incremented to 2 and epoch zk version is now 1",
    "[2024-03-18 05:33:10,001] WARN  [Controller id=0] Controller 0's connection to broker localhost:9093 (id: 1 "
    "rack: null) was unsuccessful (kafka.controller.RequestSendThread)",
)
TRACE_START = [
    "\tat kafka.controller.KafkaController.elect(KafkaController.scala:1424)",
    "\tat kafka.controller.KafkaController.process(KafkaController.scala:2417)",
    "",
    "Caused by: java.io.IOException: Connection to 1 was disconnected before the response was read",
    PADDED[1],
    "\tat kafka.controller.RequestSendThread.doWork(ControllerChannelManager.scala:241)",
]


def test_kafka_3_request_rendering_parses() -> None:
    [p] = parse_lines("sc.log", [LAIR_3X])
    assert (p.status, p.kind) == ("record", "lair_sent"), p
    assert (p.fields["leader"], p.fields["leader_epoch"], p.fields["zk_version"]) == (1, 7, 12), p.fields
    assert (p.fields["topic"], p.fields["partition"], p.fields["isr"]) == ("orders", 2, "1,3"), p.fields


def test_a_padded_level_is_a_record() -> None:
    parsed = list(parse_lines("c.log", PADDED))
    assert [(p.status, p.layout, p.level, p.kind) for p in parsed] == [
        ("record", "logger-dash", "INFO", "controller_elected"),
        ("record", "kafka-default", "WARN", "controller_message"),
    ], parsed


def test_continuation_lines_before_the_first_record_are_not_counted_against_the_threshold() -> None:
    parsed = list(parse_lines("excerpt.log", TRACE_START))
    assert [(p.status, p.reason) for p in parsed] == [
        ("quarantined", g.ORPHAN_AT_START),
        ("quarantined", g.ORPHAN_AT_START),
        ("blank", None),
        ("quarantined", g.ORPHAN_AT_START),
        ("record", None),
        ("continuation", None),
    ]
    row: dict[str, Any] = {"file": "excerpt.log", "read": 6, "record": 1, "continuation": 1, "blank": 1}
    row["quarantined"] = 3
    cut = verdict.judge(6, 3, 3, 0, [row], checked=1, excused=3)
    assert cut.exit_code == verdict.CLEAN, cut
    counted = verdict.judge(6, 3, 3, 0, [row], checked=1)
    assert counted.exit_code == verdict.BAD_INPUT and "--max-quarantine" in counted.problems[0], counted


def test_other_containers_lines_are_out_of_scope() -> None:
    kafka = "kafka_1      | " + PADDED[1]
    zookeeper = (
        "zookeeper_1  | 2021-01-10 14:19:29,123 [myid:1] - INFO  [main:QuorumPeerConfig@133] - Reading "
        "configuration from: /conf/zoo.cfg"
    )
    banner = "kafka_1      | ===> Launching kafka ... "
    parsed = list(parse_lines("compose.log", [zookeeper, kafka, banner, "garbage"]))
    assert [(p.status, p.reason) for p in parsed] == [
        ("quarantined", g.OUT_OF_SCOPE),
        ("record", None),
        ("quarantined", g.OUT_OF_SCOPE),
        ("quarantined", "no-layout"),
    ], parsed


def test_the_lines_shown_are_read_back_as_the_reader_reads_them(tmp_path: Any) -> None:
    import gzip

    from kcspec.audit.findings import line_texts

    zipped = tmp_path / "state-change.log"  # gzip by its bytes, whatever its name says
    zipped.write_bytes(gzip.compress(("\n".join(PADDED) + "\n").encode()))
    wide = tmp_path / "controller.log"
    wide.write_bytes(b"\xff\xfe" + ("\r\n".join(PADDED) + "\r\n").encode("utf-16-le"))
    texts = line_texts([(str(zipped), 2), (str(wide), 1)])
    assert texts == {(str(zipped), 2): PADDED[1], (str(wide), 1): PADDED[0]}, texts


UNDATED = [
    # pasted from a terminal without the date: `%p %m (%c)`, and a controller's message alone
    "INFO [Controller id=1] 1 successfully elected as the controller. Epoch incremented to 3 and epoch zk version "
    "is now 2 (kafka.controller.KafkaController)",
    "TRACE [Controller id=1 epoch=3] Changed state of replica 2 for partition t-0 from NewReplica to OnlineReplica "
    "(state.change.logger)",
    "ERROR [Controller id=1 epoch=3] Controller 1 epoch 3 initiated state change of replica 2 for partition t-0 "
    "from OnlineReplica to ReplicaDeletionStarted failed (state.change.logger)",
    "java.lang.IllegalStateException: Replica [Topic=t,Partition=0,Replica=2] should be in the OfflineReplica "
    "states before moving to ReplicaDeletionStarted state. Instead it is in OnlineReplica state",
    "[Controller id=1 epoch=3] Changed partition t-0 state from NewPartition to OnlinePartition",
    "[KafkaController id=1] Starting become controller state transition",
    "WARN [Controller id=1] Some note",
    # a dated record beside them keeps its timestamp
    "[2024-05-01 10:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)",
    # not a record: a level alone, prose
    "INFO",
    "see the lines above",
]


def test_lines_without_a_timestamp_are_records_marked_undated() -> None:
    parsed = list(parse_lines("pasted.log", UNDATED))
    got = [(p.status, p.layout, p.ts, p.level, p.kind, p.undated) for p in parsed]
    assert got == [
        ("record", "undated", None, "INFO", "controller_elected", True),
        ("record", "undated", None, "TRACE", "replica_transition", True),
        ("record", "undated", None, "ERROR", "replica_transition_failed", True),
        ("continuation", None, None, None, None, False),
        ("record", "undated-message", None, None, "partition_transition", True),
        ("record", "undated-message", None, None, "other_message", True),
        ("record", "undated-message", None, "WARN", "controller_message", True),
        ("record", "kafka-default", "2024-05-01 10:00:00,000", "INFO", "resigned", False),
        ("quarantined", None, None, None, None, False),
        ("quarantined", None, None, None, None, False),
    ], got
    assert parsed[1].fields["from_state"] == "NewReplica" and parsed[1].logger == "state.change.logger"
    assert parsed[3].owner == 3


def test_an_undated_layout_is_never_found_behind_a_prefix() -> None:
    # another container's undated line stays out of scope: only a record's date finds it behind a prefix
    [p] = parse_lines("compose.log", ["zookeeper_1  | INFO binding to port 0.0.0.0/0.0.0.0:2181 (org.Foo)"])
    assert (p.status, p.reason) == ("quarantined", g.OUT_OF_SCOPE), p
