"""ISR changes under an IBP below 2.7-IV2 (kafka-2.8, §7.11): leaders write ZooKeeper and notify, no AlterIsr.

Kafka 2.8.2 decides the ISR path by ``interBrokerProtocolVersion >= KAFKA_2_7_IV2`` (``alterIsrManager``). Below it
the leader writes the state znode (its leader epoch and the znode's controller epoch kept) and an ISR-change
notification; the controller refreshes its cache from ZooKeeper, sends UpdateMetadata, completes a reassignment
whose targets joined the ISR (``IsrChangeNotification``, ``PartitionReassignmentIsrChange``) and deletes the
notification. Every run here goes through the spec and the reference controller (``run_on_both_engines``: each
step agrees, every invariant holds); the assertions are on the spec's states.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kcspec.reference_impl.reference import ReferenceController
from kcspec.spec.events import (
    ApiPartitionReassignment,
    BrokerStartup,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    StaleAlterIsrReceived,
    TopicCreation,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import UpdateMetadataRequest
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig, InterBrokerProtocol, ReplicaAssignment

from tests.support.spec_scenarios import Scenario, run_on_both_engines, tp

T0 = tp("t", 0)
NOTIFYING = (InterBrokerProtocol.KAFKA_2_6_IV0, InterBrokerProtocol.KAFKA_2_7_IV0)
"""The IBPs whose leaders notify through ZooKeeper (below 2.7-IV2)."""


def _cluster(brokers: tuple[int, ...] = (1, 2, 3)) -> tuple[ControllerEvent, ...]:
    """Brokers registered, broker 1 the controller, topic ``t`` on brokers 1-3 (leader 1)."""
    return (*(BrokerStartup(b) for b in brokers), ControllerFailover(1), TopicCreation("t", ((1, 2, 3),)))


def _both(ibp: InterBrokerProtocol, *events: ControllerEvent) -> Scenario:
    """``events`` from an empty cluster of IBP ``ibp`` on both engines; the spec's run, for its assertions."""
    initial = ClusterState(config=ClusterConfig(inter_broker_protocol=ibp))
    run_on_both_engines(f"isr-notification-{ibp.value}", initial, events)
    return Scenario("kafka-2.8", state=initial).run(*events)


@pytest.mark.parametrize("ibp", NOTIFYING)
def test_isr_change_below_2_7_iv2_is_a_zookeeper_notification(ibp: InterBrokerProtocol) -> None:
    """The leader's write is the only ZooKeeper write (version + 1, same leader epoch, stored controller epoch: the
    one of the controller that created the topic, not the current one's as an AlterIsr write would have); the
    controller caches it, sends UpdateMetadata for the partition to every live broker and deletes the
    notification."""
    s = _both(ibp, *_cluster(), ControllerResignation(), ControllerFailover(2), IsrChange(T0, (1, 3)))
    before = s.history[-2][1].state.zk.partition_states[T0]
    after = s.state.zk.partition_states[T0]
    s.expect_eq(
        after.leader_and_isr,
        replace(before.leader_and_isr, isr=(1, 3), zk_version=before.leader_and_isr.zk_version + 1),
        "the leader's write",
    )
    s.expect_eq(after.controller_epoch, before.controller_epoch, "the znode keeps its controller epoch")
    s.expect(after.controller_epoch < s.state.controller.epoch, "written before the current controller")
    s.expect_eq(s.cached(T0), after.leader_and_isr, "cache refreshed from ZooKeeper")
    s.expect_eq(s.state.zk.isr_change_notifications, frozenset(), "notification deleted")
    s.expect_eq(s.umr_recipients(), {1, 2, 3}, "UpdateMetadata to every live broker")
    s.expect(
        all(ps.tp == T0 for r in s.requests(UpdateMetadataRequest) for ps in r.partition_states),
        "UpdateMetadata for the notified partition only",
    )


@pytest.mark.parametrize("ibp", [*NOTIFYING, InterBrokerProtocol.KAFKA_2_7_IV2])
def test_isr_change_without_a_controller(ibp: InterBrokerProtocol) -> None:
    """With no active controller a notifying leader still writes ZooKeeper, and the notification waits (failover
    deletes it, §7.1 step 3); an AlterIsr (IBP ≥ 2.7-IV2) reaches no controller and nothing changes."""
    s = _both(ibp, *_cluster(), ControllerResignation(), IsrChange(T0, (1, 3)))
    notifying = ibp in NOTIFYING
    s.expect_eq(s.znode(T0).isr, (1, 3) if notifying else (1, 2, 3), "ZooKeeper's ISR")
    s.expect_eq(s.state.zk.isr_change_notifications, frozenset({T0} if notifying else ()), "notifications")
    s.run(ControllerFailover(2))
    s.expect_eq(s.state.zk.isr_change_notifications, frozenset(), "failover deletes the notifications")


@pytest.mark.parametrize("ibp", NOTIFYING)
def test_brokers_below_2_7_iv2_send_no_alter_isr(ibp: InterBrokerProtocol) -> None:
    """A stale AlterIsr is not an event of a cluster whose brokers do not send AlterIsr (guard false on both
    engines); with IBP 2.7-IV2 the same request is one."""
    stale = StaleAlterIsrReceived(2, 1, T0, 0, (2,), 0)
    for protocol, enabled in ((ibp, False), (InterBrokerProtocol.KAFKA_2_7_IV2, True)):
        s = _both(protocol, *_cluster(), IsrChange(T0, (1, 2)))
        s.run(IsrChange(T0, (1, 2, 3)))
        assert s.machine.enabled(s.state, stale) is enabled, (protocol, s.describe())
        assert ReferenceController("kafka-2.8", s.state).enabled(stale) is enabled, protocol


@pytest.mark.parametrize("ibp", NOTIFYING)
def test_reassignment_completes_through_the_isr_notification(ibp: InterBrokerProtocol) -> None:
    """KIP-455 reassignment under an old IBP: the targets joining the ISR (the leader's write and notification)
    complete it, as AlterIsr does under 2.7-IV2 (``maybeCompleteReassignment``, §7.7.1)."""
    events = (
        *_cluster((1, 2, 3, 4)),
        ApiPartitionReassignment(FMap({T0: (3, 4)})),
        IsrChange(T0, (1, 2, 3, 4)),
    )
    s = _both(ibp, *events)
    c = s.state.controller
    s.expect(T0 not in c.partitions_being_reassigned, "reassignment completed")
    s.expect_eq(s.state.zk.assignments[T0], ReplicaAssignment((3, 4)), "ZooKeeper holds the targets")
    s.expect_eq(s.state.zk.isr_change_notifications, frozenset(), "notification deleted")
