"""§10: log layout, clock and the exact text of a representative line of each template, per profile."""

from __future__ import annotations

from datetime import datetime

import pytest
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import (
    BrokerFailure,
    BrokerStartup,
    ControllerFailover,
    LeaderAndIsrResponseReceived,
    TopicCreation,
    ZkPartitionReassignment,
)
from kcspec.spec.fmap import FMap

from tests.support.reference_scenarios import cluster, message, tp


def _messages(lines: list[str]) -> list[str]:
    return [message(line) if line.startswith("[") else line for line in lines]


def test_layout_and_deterministic_clock() -> None:
    rc = ReferenceController(log_start=datetime(2024, 2, 3, 4, 5, 6))
    rc.handle(BrokerStartup(1))
    rc.handle(ControllerFailover(1))
    assert rc.controller_log[0] == (
        "[2024-02-03 04:05:06,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch incremented "
        "to 1 and epoch zk version is now 1 (kafka.controller.KafkaController)"
    )
    assert rc.state_change_log[0].startswith("[2024-02-03 04:05:06,001] INFO [Controller id=1 epoch=1] ")
    again = ReferenceController(log_start=datetime(2024, 2, 3, 4, 5, 6))
    again.handle(BrokerStartup(1))
    again.handle(ControllerFailover(1))
    assert again.controller_log == rc.controller_log, "reproducible"


def test_trace_lines_only_when_enabled() -> None:
    quiet = cluster(topics={"foo": ((1, 2),)})
    loud = cluster(topics={"foo": ((1, 2),)}, trace=True)
    assert not any(" TRACE " in line for line in quiet.state_change_log)
    assert any(
        message(line)
        == "TRACE [Controller id=1 epoch=1] Changed state of replica 2 for partition foo-0 from "
        "NewReplica to OnlineReplica (state.change.logger)"
        for line in loud.state_change_log
    )


def test_state_change_templates_28() -> None:
    rc = cluster("kafka-2.8", controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(1))
    lines = _messages(rc.state_change_log)
    expected = [
        "INFO [Controller id=3 epoch=1] Changed partition foo-0 state from NonExistentPartition to NewPartition with "
        "assigned replicas 1,2 (state.change.logger)",
        "INFO [Controller id=3 epoch=1] Changed partition foo-0 from NewPartition to OnlinePartition with state "
        "LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0) (state.change.logger)",
        "INFO [Controller id=3 epoch=1] Sending LeaderAndIsr request to broker 1 with 1 become-leader and 0 "
        "become-follower partitions (state.change.logger)",
        "INFO [Controller id=3 epoch=1] Sending UpdateMetadata request to brokers Set(1, 2, 3) for 1 partitions "
        "(state.change.logger)",
        "INFO [Controller id=3 epoch=1] Changed partition foo-0 from OfflinePartition to OnlinePartition with state "
        "LeaderAndIsr(leader=2, leaderEpoch=1, isr=List(2), zkVersion=1) (state.change.logger)",
        "INFO [Controller id=3 epoch=1] Partition foo-0 state changed to (Leader:2,ISR:2,LeaderEpoch:1,ZkVersion:1,"
        "ControllerEpoch:1) after removing replica 1 from the ISR as part of transition to OfflineReplica "
        "(state.change.logger)",
    ]
    from kcspec.spec.events import TopicDeletion

    rc.handle(TopicDeletion(("foo",)))
    lines = _messages(rc.state_change_log)
    expected.append(
        "INFO [Controller id=3 epoch=1] Sending StopReplica request for 1 replicas to broker 2 (state.change.logger)"
    )
    missing = [line for line in expected if line not in lines]
    assert not missing, "missing:\n" + "\n".join(missing) + "\nlog:\n" + "\n".join(lines)


def test_state_change_templates_11() -> None:
    rc = cluster("kafka-1.1", controller=3, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(1))
    lines = _messages(rc.state_change_log)
    assert not any(
        "Changed partition" in line or "Sending" in line or "after removing replica" in line for line in lines
    ), "1.1: partition success lines are TRACE, no request summaries, no ISR-removal line"
    traced = cluster("kafka-1.1", controller=3, topics={"foo": ((1, 2),)}, trace=True)
    assert (
        "TRACE [Controller id=3 epoch=1] Changed partition foo-0 from NewPartition to OnlinePartition with state "
        "LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0) (state.change.logger)"
    ) in _messages(traced.state_change_log)


def test_failed_transition_lines_with_exception() -> None:
    for profile in ("kafka-2.8", "kafka-1.1"):
        rc = cluster(profile, brokers=(1,))
        rc.handle(TopicCreation("foo", ((2,),)))
        lines = _messages(rc.state_change_log)
        i = lines.index(
            "ERROR [Controller id=1 epoch=1] Controller 1 epoch 1 failed to change state for partition foo-0 from "
            "NewPartition to OnlinePartition (state.change.logger)"
        )
        assert lines[i + 1].startswith(
            "kafka.common.StateChangeFailedException: Controller 1 epoch 1 encountered"
        )


def test_mark_replicas_offline_line_has_no_epoch() -> None:
    rc = cluster(topics={"foo": ((1, 2),)})
    rc.handle(LeaderAndIsrResponseReceived(2, (tp("foo-0"),)))
    assert (
        "INFO [Controller id=1] Mark replicas foo-0 on broker 2 as offline (state.change.logger)"
        in _messages(rc.state_change_log)
    )


@pytest.mark.parametrize(
    ("profile", "lines"),
    [
        (
            "kafka-2.8",
            [
                "INFO [Controller id=1] Newly added brokers: , deleted brokers: 3, bounced brokers: , all live "
                "brokers: 1,2 (kafka.controller.KafkaController)",
                "INFO [Controller id=1] Broker failure callback for 3 (kafka.controller.KafkaController)",
                "INFO [Controller id=1] Ready to serve as the new controller with epoch 1 (kafka.controller.KafkaController)",
                "INFO [Controller id=1] New partition creation callback for foo-0 (kafka.controller.KafkaController)",
            ],
        ),
        (
            "kafka-1.1",
            [
                "INFO [Controller id=1] 1 successfully elected as the controller (kafka.controller.KafkaController)",
                "INFO [Controller id=1] Epoch incremented to 1 (kafka.controller.KafkaController)",
                "INFO [Controller id=1] Newly added brokers: , deleted brokers: 3, all live brokers: 1,2 "
                "(kafka.controller.KafkaController)",
            ],
        ),
    ],
)
def test_controller_log_templates(profile: str, lines: list[str]) -> None:
    rc = cluster(profile, topics={"foo": ((1, 2),)})
    rc.handle(BrokerFailure(3))
    got = _messages(rc.controller_log)
    missing = [line for line in lines if line not in got]
    assert not missing, "missing:\n" + "\n".join(missing) + "\nlog:\n" + "\n".join(got)


def test_reassignment_lines_per_profile() -> None:
    rc = cluster("kafka-2.8", brokers=(1, 2, 3), topics={"foo": ((1, 2),)})
    rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (1, 3)})))
    got = _messages(rc.controller_log) + _messages(rc.state_change_log)
    assert (
        "INFO [Controller id=1] Successfully updated assignment of partition foo-0 to ReplicaAssignment(replicas=1,3,2, "
        "addingReplicas=3, removingReplicas=2) (kafka.controller.KafkaController)"
    ) in got
    assert (
        "INFO [Controller id=1] Updated leader epoch for partition foo-0 to 1, zkVersion=1 (kafka.controller.KafkaController)"
        in got
    )
    assert (
        "INFO [Controller id=1 epoch=1] Sent LeaderAndIsr request (Leader:1,ISR:1,2,LeaderEpoch:1,ZkVersion:1,"
        "ControllerEpoch:1) with new replica assignment ReplicaAssignment(replicas=1,3,2, addingReplicas=3, "
        "removingReplicas=2) to leader 1 for partition being reassigned foo-0 (state.change.logger)"
    ) in got
    legacy = cluster("kafka-1.1", brokers=(1, 2, 3), topics={"foo": ((1, 2),)})
    legacy.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (1, 3)})))
    got = _messages(legacy.controller_log)
    assert (
        "INFO [Controller id=1] Handling reassignment of partition foo-0 to new replicas 1,3 (kafka.controller.KafkaController)"
        in got
    )
    assert (
        "INFO [Controller id=1] Updated leader epoch for partition foo-0 to 1 (kafka.controller.KafkaController)"
        in got
    )


def test_more_controller_log_templates_28() -> None:
    from kcspec.spec.events import BrokerStartup, ControlledShutdown, IsrChange, ReplicaLeaderElection

    rc = cluster("kafka-2.8", brokers=(1, 2, 3), controller=3, topics={"foo": ((1, 2),)})
    rc.handle(ControlledShutdown(1))
    rc.handle(BrokerFailure(1))
    rc.handle(BrokerStartup(1))
    rc.handle(IsrChange(tp("foo-0"), (2, 1)))
    rc.handle(ReplicaLeaderElection(frozenset({tp("foo-0")})))
    rc.handle(ZkPartitionReassignment(FMap({tp("foo-0"): (3,)})))
    rc.handle(IsrChange(tp("foo-0"), (1, 2, 3)))
    got = _messages(rc.controller_log)
    expected = [
        "INFO [Controller id=3] Shutting down broker 1 (kafka.controller.KafkaController)",
        "INFO [Controller id=3] Removed 1 from list of shutting down brokers. (kafka.controller.KafkaController)",
        "INFO [Controller id=3] New broker startup callback for 1 (kafka.controller.KafkaController)",
        "INFO [Controller id=3] Starting replica leader election (PREFERRED) for partitions foo-0 triggered by "
        "ZkTriggered (kafka.controller.KafkaController)",
        "INFO [Controller id=3] Partition foo-0 completed preferred replica leader election. New leader is 1 "
        "(kafka.controller.KafkaController)",
        "INFO [Controller id=3] Leader 1 for partition foo-0 being reassigned, is not in the new list of replicas 3. "
        "Re-electing leader (kafka.controller.KafkaController)",
        "INFO [Controller id=3] Removing partitions Map(foo-0 -> List(3)) from the list of reassigned partitions in "
        "zookeeper (kafka.controller.KafkaController)",
        "INFO [Controller id=3] No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions "
        "(kafka.controller.KafkaController)",
    ]
    missing = [line for line in expected if line not in got]
    assert not missing, "missing:\n" + "\n".join(missing) + "\nlog:\n" + "\n".join(got)
