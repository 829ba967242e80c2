"""A corpus generator for the line layouts of real-log FORMATS.md, with the truth of every record it writes.

Every message below is written as Kafka writes it (FORMATS.md §1–§9, one per template family and version
family, Kafka 3.x's request renderings); ``corpus`` renders them in every layout (Kafka's default with and
without ``:line`` and with log4j's padded level, Strimzi, the
``%c:%L - %m`` layout with and without brackets and milliseconds, LinkedIn's), behind the line prefixes of
container runtimes and log shippers (docker-compose, ``kubectl logs --prefix``, journald), with stack traces
after ERROR records, records wrapped by a terminal, CRLF line ends and a blank line after every line. The seed
is printed by the tests that use it; the same seed gives the same corpus.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

SCL = "state.change.logger"
KC = "kafka.controller.KafkaController"
PSM = "kafka.controller.PartitionStateMachine"
RSM = "kafka.controller.ReplicaStateMachine"

LAI = "LeaderAndIsr(leader=1, leaderEpoch=3, isr=List(1, 2), zkVersion=4)"
LISR = "(Leader:1,ISR:1,2,LeaderEpoch:3,ControllerEpoch:7)"

# (level, logger, message, kind): controller and state-change records of FORMATS.md, old and new families
MESSAGES: tuple[tuple[str, str, str, str], ...] = (
    # §1 partition state machine, 0.8.1 – 0.11 and 1.0 – 3.x
    (
        "TRACE",
        SCL,
        "Controller 1 epoch 7 changed partition [t,0] state from NotExists to New with assigned replicas 1,2",
        "partition_transition",
    ),
    (
        "TRACE",
        SCL,
        "Controller 1 epoch 7 changed partition [t,0] from OfflinePartition to OnlinePartition with leader 2",
        "partition_transition",
    ),
    (
        "TRACE",
        SCL,
        "Controller 1 epoch 7 changed partition [t,0] state from OnlinePartition to OfflinePartition",
        "partition_transition",
    ),
    ("TRACE", SCL, "Controller 1 epoch 7 started leader election for partition [t,0]", "election_started"),
    ("TRACE", SCL, "Controller 1 epoch 7 elected leader 2 for Offline partition [t,0]", "leader_elected"),
    (
        "ERROR",
        SCL,
        "Controller 1 epoch 7 initiated state change for partition [t,0] from OfflinePartition to "
        "OnlinePartition failed",
        "partition_transition_failed",
    ),
    (
        "ERROR",
        SCL,
        "Controller 1 epoch 7 encountered error while electing leader for partition [t,0] due to: No other "
        "replicas in ISR 1 for [t,0] besides shutting down brokers 1.",
        "election_failed",
    ),
    (
        "TRACE",
        SCL,
        "[Controller id=1 epoch=7] Changed partition t-0 state from NonExistentPartition to NewPartition with "
        "assigned replicas 1,2",
        "partition_transition",
    ),
    (
        "TRACE",
        SCL,
        "[Controller id=1 epoch=7] Changed partition t-0 from NewPartition to OnlinePartition with leader 1",
        "partition_transition",
    ),
    (
        "INFO",
        SCL,
        f"[Controller id=1 epoch=7] Changed partition t-0 from OfflinePartition to OnlinePartition with state {LAI}",
        "partition_transition",
    ),
    (
        "ERROR",
        SCL,
        "[Controller id=1 epoch=7] Controller 1 epoch 7 failed to change state for partition t-0 from "
        "OfflinePartition to OnlinePartition",
        "partition_transition_failed",
    ),
    # §2 replica state machine
    (
        "TRACE",
        SCL,
        "Controller 1 epoch 7 changed state of replica 2 for partition [t,0] to OnlineReplica",
        "replica_transition",
    ),
    (
        "TRACE",
        SCL,
        "Controller 1 epoch 7 changed state of replica 2 for partition [t,0] from OnlineReplica to OfflineReplica",
        "replica_transition",
    ),
    (
        "TRACE",
        SCL,
        "[Controller id=1 epoch=7] Changed state of replica 2 for partition t-0 from NewReplica to OnlineReplica",
        "replica_transition",
    ),
    (
        "INFO",
        SCL,
        "[Controller id=1 epoch=7] Partition t-0 state changed to (Leader:1,ISR:1,LeaderEpoch:4,ZkVersion:5,"
        "ControllerEpoch:7) after removing replica 2 from the ISR as part of transition to OfflineReplica",
        "isr_removal",
    ),
    (
        "ERROR",
        SCL,
        "[Controller id=1 epoch=7] Controller 1 epoch 7 initiated state change of replica 2 for partition t-0 "
        "from ReplicaDeletionSuccessful to ReplicaDeletionIneligible failed",
        "replica_transition_failed",
    ),
    # §9 request propagation, controller and broker side
    (
        "TRACE",
        SCL,
        f"Controller 1 epoch 7 sending become-leader LeaderAndIsr request {LISR} to broker 2 for partition [t,0]",
        "lair_sent",
    ),
    (
        "TRACE",
        SCL,
        f"Controller 1 epoch 7 sending UpdateMetadata request {LISR} to brokers Set(1, 2) for partition t-0",
        "umr_sent",
    ),
    (
        "TRACE",
        SCL,
        "[Controller id=1 epoch=7] Sending become-leader LeaderAndIsr request LeaderAndIsrPartitionState("
        "topicName='t', partitionIndex=0, controllerEpoch=7, leader=1, leaderEpoch=3, isr=[1, 2], partitionEpoch=4, "
        "replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=false, leaderRecoveryState=0) to broker 2 "
        "for partition t-0",
        "lair_sent",
    ),
    (
        "TRACE",
        SCL,
        "[Controller id=1 epoch=7] Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch=7, "
        "leader=1, leaderEpoch=3, isr=1,2, zkVersion=4, replicas=1,2, isNew=true) to broker 2 for partition t-0",
        "lair_sent",
    ),
    (
        "INFO",
        SCL,
        "[Controller id=1 epoch=7] Sending LeaderAndIsr request to broker 2 with 3 become-leader and 0 "
        "become-follower partitions",
        "request_summary",
    ),
    (
        "WARN",
        SCL,
        "Broker 2 ignoring LeaderAndIsr request from controller 1 with correlation id 5 epoch 7 for partition "
        "[t,0] since its associated leader epoch 3 is not higher than the current leader epoch 3",
        "lair_ignored",
    ),
    (
        "ERROR",
        SCL,
        "[Broker id=2] Received LeaderAndIsrRequest with correlation id 5 from controller 1 epoch 7 for "
        "partition t-0 (last update controller epoch 7) but cannot become follower since the new leader -1 is "
        "unavailable.",
        "become_follower_failed",
    ),
    (
        "TRACE",
        SCL,
        "[Broker id=2] Cached leader info PartitionState(...) for partition t-0",
        "broker_message",
    ),
    # fenced writes: stale-controller requests, ZooKeeper's BADVERSION on a conditional write
    (
        "WARN",
        SCL,
        "[Broker id=2] Ignoring StopReplica request from controller 1 with correlation id 5 since its controller "
        "epoch 6 is old. Latest known controller epoch is 7",
        "stale_controller_request",
    ),
    (
        "WARN",
        SCL,
        "[Broker id=2] Received update metadata request with correlation id 5 from an old controller 1 with epoch "
        "6. Latest known controller epoch is 7",
        "stale_controller_request",
    ),
    (
        "INFO",
        "kafka.cluster.Partition",
        "[Partition t-0 broker=2] Cached zkVersion [4] not equal to that in zookeeper, skip updating ISR",
        "isr_update_fenced",
    ),
    (
        "INFO",
        "kafka.cluster.Partition",
        "Partition [t,0] on broker 2: Cached zkVersion [4] not equal to that in zookeeper, skip updating ISR",
        "isr_update_fenced",
    ),
    (
        "INFO",
        KC,
        "[Controller id=1] Controller moved to another broker when processing AutoPreferredReplicaLeaderElection.",
        "controller_moved",
    ),
    # §3 – §8 controller.log
    (
        "INFO",
        KC,
        "[Controller id=1] 1 successfully elected as the controller. Epoch incremented to 7 and epoch zk version "
        "is now 6",
        "controller_elected",
    ),
    ("INFO", KC, "[Controller id=1] Ready to serve as the new controller with epoch 7", "controller_ready"),
    ("INFO", KC, "[Controller id=1] Resigned", "resigned"),
    (
        "INFO",
        KC,
        "[Controller 1]: Broker 1 starting become controller state transition",
        "controller_message",
    ),
    (
        "INFO",
        PSM,
        "[Partition state machine on Controller 1]: Invoking state change to OnlinePartition for partitions [t,0]",
        "controller_message",
    ),
    (
        "INFO",
        RSM,
        "[ReplicaStateMachine controllerId=1] Invoking state change to OnlineReplica for replicas "
        "[Topic=t,Partition=0,Replica=2]",
        "state_machine_bulk",
    ),
    ("INFO", KC, "[Controller id=1] Starting topic deletion for topics t", "topic_deletion_queued"),
    (
        "INFO",
        "kafka.controller.TopicDeletionManager",
        "[Topic Deletion Manager 1] Deletion of topic t successfully completed",
        "topic_deletion_completed",
    ),
)

EXCEPTION = (
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition t-0 under strategy "
    "OfflinePartitionLeaderElectionStrategy(false)",
    "\tat kafka.controller.ZkPartitionStateMachine.$anonfun$doHandleStateChanges$8(PartitionStateMachine.scala:175)",
    "\tat scala.collection.immutable.List.foreach(List.scala:431)",
    "Caused by: kafka.common.StateChangeFailedException: No other replicas in ISR 1 for [t,0]",
    "\t... 22 more",
)


def _ts(seconds: int) -> tuple[str, str, str]:
    """Kafka's timestamp, the same without milliseconds, LinkedIn's (``yyyy/MM/dd HH:mm:ss.SSS``)."""
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    clock = f"{10 + h:02d}:{m:02d}:{s:02d}"
    return (
        f"2021-01-10 {clock},{seconds % 1000:03d}",
        f"2021-01-10 {clock}",
        f"2021/01/10 {clock}.{seconds % 1000:03d}",
    )


Render = Callable[[int, str, str, str], str]

LAYOUTS: dict[str, tuple[str, Render]] = {
    # name in this corpus → (the parser's layout name, how a record is written)
    "kafka-default": ("kafka-default", lambda t, lv, lg, m: f"[{_ts(t)[0]}] {lv} {m} ({lg})"),
    "kafka-default-line": ("kafka-default", lambda t, lv, lg, m: f"[{_ts(t)[0]}] {lv} {m} ({lg}:66)"),
    "strimzi": ("strimzi", lambda t, lv, lg, m: f"{_ts(t)[0]} {lv} {m} ({lg}) [controller-event-thread]"),
    "logger-dash": ("logger-dash", lambda t, lv, lg, m: f"{_ts(t)[1]} {lv} {lg}:76 - {m}"),
    # log4j's padded level (%-5p: "INFO  ", "WARN  "; %5p: " INFO")
    "kafka-default-padded": ("kafka-default", lambda t, lv, lg, m: f"[{_ts(t)[0]}] {lv:<5} {m} ({lg})"),
    "logger-dash-padded": ("logger-dash", lambda t, lv, lg, m: f"{_ts(t)[1]} {lv:>5} {lg}:68 - {m}"),
    "logger-dash-brackets": ("logger-dash", lambda t, lv, lg, m: f"[{_ts(t)[0]}] {lv} {lg}:76 - {m}"),
    "linkedin": ("linkedin", lambda t, lv, lg, m: f"{_ts(t)[2]} [{lg.rsplit('.', 1)[-1]}] {m}"),
}

PREFIXES: dict[str, Callable[[int], str]] = {
    "none": lambda broker: "",
    "docker-compose": lambda broker: f"kafka_{broker}" + " " * 30 + "| ",
    "kubectl": lambda broker: f"[pod/kafka-{broker}/kafka] ",
    "journald": lambda broker: f"Jan 10 10:00:0{broker} kafka-{broker} kafka[81{broker}]: ",
}


@dataclass(frozen=True)
class Expected:
    """A record the corpus holds: its first physical line, its layout (the parser's name) and kind."""

    line: int
    layout: str
    kind: str


@dataclass(frozen=True)
class Corpus:
    lines: tuple[str, ...]
    expected: tuple[Expected, ...]
    line_end: str


def corpus(seed: int, layout: str, prefix: str, records: int = 120, wrap: int | None = None) -> Corpus:
    """``records`` records of ``MESSAGES`` (drawn with ``seed``) in ``layout`` behind ``prefix``; ERROR records
    carry a stack trace; with ``wrap`` every physical line longer than it is cut at that width (a terminal).
    The seed also picks the line ends (LF or CRLF) and whether a blank line follows every line."""
    rng = random.Random(seed)
    name, render = LAYOUTS[layout]
    lines: list[str] = []
    expected: list[Expected] = []
    blank_after = rng.random() < 0.3
    for i in range(records):
        level, logger, message, kind = rng.choice(MESSAGES)
        broker = rng.randint(1, 3)
        lead = PREFIXES[prefix](broker)
        physical = [lead + render(i, level, logger, message)]
        if level == "ERROR":
            physical += [lead + x for x in EXCEPTION]
        first = len(lines) + 1
        layout_name = name + ("+prefix" if lead else "")
        for text in physical:
            pieces = [text[k : k + wrap] for k in range(0, len(text), wrap)] if wrap else [text]
            lines.extend(pieces)
            if blank_after:
                lines.append(lead.rstrip() if rng.random() < 0.5 else "")
        expected.append(Expected(first, layout_name, kind))
    return Corpus(tuple(lines), tuple(expected), "\r\n" if rng.random() < 0.3 else "\n")
