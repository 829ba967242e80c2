"""The events the explorer tries in a state: every controller event and environment action of a bounded
configuration, filtered later by the spec's guards.

The bootstrap, the topic layout and the reassignment target are the shapes of ``model/event_domains.py``, which
the simulator and the TLA+ model share; the candidates here are the values of those domains that can matter in
the state at hand (the brokers that are registered, the partitions that exist, the replicas being deleted…).

They read only the spec's state and those domains, so they sit in ``model/``: the explorer, the stateful tests
and the bug zoo (``conformance/selfcheck/``) use them, and so does the kit's differential testing
(``conformance/differential.py``), which must not import the checks of kcspec itself.
"""

from __future__ import annotations

from kcspec.model import event_domains
from kcspec.model.event_domains import reassignment_target
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec.events import (
    ApiPartitionReassignment,
    ApiPartitionReassignmentQueued,
    AutoPreferredReplicaLeaderElection,
    BrokerBounce,
    BrokerChange,
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControlledShutdownQueued,
    ControllerChange,
    ControllerEvent,
    ControllerFailover,
    ControllerResignation,
    IsrChange,
    LeaderAndIsrPartitionResultsReceived,
    LeaderAndIsrResponseReceived,
    ListPartitionReassignmentsQueued,
    LogDirEventNotification,
    NewerControllerElected,
    PartitionExpansion,
    QueuedEventProcessed,
    ReplicaLeaderElection,
    ReplicaLeaderElectionQueued,
    StaleAlterIsrReceived,
    StopReplicaPartitionErrorsReceived,
    StopReplicaResponseReceived,
    StopReplicaResponseWithoutDeletionReceived,
    TopicCreation,
    TopicDeletion,
    UncleanLeaderElectionEnable,
    ZkFaultInjection,
    ZkPartitionReassignment,
    ZombieControllerWrite,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ElectionTrigger, ElectionType, ReplicaState, TopicPartition, ZkFault

LEGACY = "kafka-1.1"


def bootstrap(cfg: ExploreConfig) -> tuple[ControllerEvent, ...]:
    """Every broker registers, broker 0 becomes controller, every topic is created (``event_domains.bootstrap``)."""
    return event_domains.bootstrap(cfg.brokers, cfg.topic_names, cfg.assignment)


def candidates(s: ClusterState, cfg: ExploreConfig) -> list[ControllerEvent]:
    """Candidate events in state ``s`` (the spec's guards decide which are enabled)."""
    zk, c = s.zk, s.controller
    out: list[ControllerEvent] = []
    active = c.controller_id >= 0
    for b in range(cfg.brokers):
        if b in zk.brokers:
            out.append(BrokerFailure(b))
            out.append(BrokerBounce(b))
            if active:
                out.append(ControlledShutdown(b))
            if b != c.controller_id:
                out.append(ControllerFailover(b))
        else:
            out.append(BrokerStartup(b))
    for i, t in enumerate(cfg.topic_names):
        if t not in zk.topics:
            out.append(TopicCreation(t, cfg.assignment(i)))
            continue
        if t not in zk.delete_topics:
            out.append(TopicDeletion((t,)))
        current = tuple(
            zk.assignments[TopicPartition(t, p)].replicas
            for p in range(cfg.partitions)
            if TopicPartition(t, p) in zk.assignments
        )
        if len(current) == cfg.partitions:
            extra = tuple((cfg.partitions + i + k) % cfg.brokers for k in range(cfg.rf))
            out.append(PartitionExpansion(t, (*current, extra)))
    started: dict[int, list[TopicPartition]] = {}
    for pr, state in sorted(c.replica_states.items()):
        if state is ReplicaState.ReplicaDeletionStarted:
            started.setdefault(pr.replica, []).append(pr.tp)
            out.append(StopReplicaResponseReceived(pr.replica, (pr.tp,)))
            out.append(StopReplicaResponseReceived(pr.replica, (pr.tp,), error=True))
            out.append(StopReplicaResponseWithoutDeletionReceived(pr.replica, (pr.tp,)))
    for broker, tps in sorted(started.items()):
        if len(tps) > 1:
            out.append(StopReplicaResponseReceived(broker, tuple(tps)))
            out.append(StopReplicaPartitionErrorsReceived(broker, tuple(tps), (tps[0],)))
    for tp, fa in sorted(zk.assignments.items()):
        out.extend(_partition_events(s, cfg, tp, fa.replicas))
    if active:
        out.append(AutoPreferredReplicaLeaderElection())
    if (
        s.config.max_queued_requests > 0
    ):  # the controller's event queue (a model bound, 0 unless a run sets it)
        out.extend(_queue_events(s, cfg))
    if "controller" in cfg.faults:
        if active:
            out.append(ControllerResignation())
            out.append(ControllerChange())
            out.extend(NewerControllerElected(b) for b in sorted(zk.brokers) if b != c.controller_id)
        if zk.controller_epoch >= 2:
            for tp, li in sorted(zk.partition_states.items()):
                lead = zk.assignments[tp].replicas[0] if tp in zk.assignments else li.leader_and_isr.leader
                out.append(ZombieControllerWrite(tp, lead, (lead,), zk.controller_epoch - 1))
    if "controller" in cfg.faults and active and cfg.profile != LEGACY:
        out.extend(_stale_alter_isr(s))
    if "unclean" in cfg.faults:
        out.extend(
            UncleanLeaderElectionEnable(t) for t in cfg.topic_names if t not in s.config.unclean_topics
        )
    if "brokers" in cfg.faults:
        out.extend(_broker_changes(s, cfg))
    if "logdir" in cfg.faults and active:
        live = sorted(c.live_brokers)
        out.extend(LogDirEventNotification((b,)) for b in live)
        if len(live) > 1:
            out.append(LogDirEventNotification(tuple(live)))
    return out


def _queue_events(s: ClusterState, cfg: ExploreConfig) -> list[ControllerEvent]:
    """Requests with a callback that wait in the controller's event queue — an admin election per partition and
    election type, a controlled shutdown per registered broker (its current epoch), an API reassignment per
    partition (to the explorer's target, or cancelled) — and the event thread taking the oldest (§7.7.1, §7.9,
    §7.10, §7.12); the guards decide which are enabled."""
    out: list[ControllerEvent] = []
    for tp, fa in sorted(s.zk.assignments.items()):
        out.extend(ReplicaLeaderElectionQueued(frozenset({tp}), kind) for kind in ElectionType)
        out.append(ApiPartitionReassignmentQueued(FMap({tp: reassignment_target(fa.replicas, cfg.brokers)})))
        out.append(ApiPartitionReassignmentQueued(FMap({tp: None})))
        out.append(ListPartitionReassignmentsQueued(frozenset({tp})))
    out.append(ListPartitionReassignmentsQueued())  # Kafka's None: every partition being reassigned
    out.extend(ControlledShutdownQueued(b, epoch) for b, epoch in sorted(s.zk.brokers.items()))
    out.append(QueuedEventProcessed())
    return out


def _broker_changes(s: ClusterState, cfg: ExploreConfig) -> list[ControllerEvent]:
    """A few ``BrokerChange`` shapes with several brokers: every unregistered broker starts, every other broker but
    the controller dies or bounces, and one new broker with one dead or bounced one (the guard drops the shapes
    with fewer than two brokers)."""
    absent = tuple(b for b in range(cfg.brokers) if b not in s.zk.brokers)
    others = tuple(b for b in sorted(s.zk.brokers) if b != s.controller.controller_id)
    out: list[ControllerEvent] = [
        BrokerChange(new_broker_ids=absent),
        BrokerChange(dead_broker_ids=others),
        BrokerChange(bounced_broker_ids=others),
    ]
    if absent and others:
        out.append(BrokerChange(new_broker_ids=absent[:1], dead_broker_ids=others[:1]))
        out.append(BrokerChange(new_broker_ids=absent[:1], bounced_broker_ids=others[:1]))
    if len(others) > 1:
        out.append(BrokerChange(dead_broker_ids=others[:1], bounced_broker_ids=others[1:2]))
    return out


def _stale_alter_isr(s: ClusterState) -> list[ControllerEvent]:
    """A delayed AlterIsr from each partition's leader: the current ISR with the previous zk version (2.8)."""
    out: list[ControllerEvent] = []
    for tp, li in sorted(s.zk.partition_states.items()):
        lai = li.leader_and_isr
        if lai.leader in s.zk.brokers and lai.zk_version > 0:
            out.append(
                StaleAlterIsrReceived(
                    lai.leader, s.zk.brokers[lai.leader], tp, lai.leader_epoch, lai.isr, lai.zk_version - 1
                )
            )
    return out


def _partition_events(
    s: ClusterState, cfg: ExploreConfig, tp: TopicPartition, replicas: tuple[int, ...]
) -> list[ControllerEvent]:
    zk, c = s.zk, s.controller
    out: list[ControllerEvent] = []
    target = reassignment_target(replicas, cfg.brokers)
    if not zk.reassign_partitions:
        out.append(ZkPartitionReassignment(FMap({tp: target})))
    if cfg.profile != LEGACY and c.controller_id >= 0:
        out.append(ApiPartitionReassignment(FMap({tp: target})))
        if tp in c.partitions_being_reassigned:
            out.append(ApiPartitionReassignment(FMap({tp: None})))
    if not zk.preferred_replica_election and c.controller_id >= 0:
        out.append(
            ReplicaLeaderElection(frozenset({tp}), ElectionType.PREFERRED, ElectionTrigger.ZkTriggered)
        )
    if cfg.profile != LEGACY and "unclean" in cfg.faults and c.controller_id >= 0:
        out.append(
            ReplicaLeaderElection(frozenset({tp}), ElectionType.UNCLEAN, ElectionTrigger.AdminClientTriggered)
        )
    li = zk.partition_states.get(tp)
    if li is not None:
        lai = li.leader_and_isr
        for x in lai.isr:
            if x != lai.leader and len(lai.isr) > 1:
                out.append(IsrChange(tp, tuple(y for y in lai.isr if y != x)))
        current = c.assignments.get(tp)
        for y in current.replicas if current else replicas:
            if y not in lai.isr and y in zk.brokers:
                out.append(IsrChange(tp, (*lai.isr, y)))
    if li is not None and "zk" in cfg.faults and tp not in zk.faults:
        out.append(ZkFaultInjection(tp, ZkFault.BADVERSION))
        out.append(ZkFaultInjection(tp, ZkFault.CONNECTIONLOSS))
    elif tp in zk.assignments and "zk" in cfg.faults and tp not in zk.faults:
        # no state znode yet: a connection loss waits for its creation (createTopicPartitionStatesRaw throws)
        out.append(ZkFaultInjection(tp, ZkFault.CONNECTIONLOSS))
    if "logdir" in cfg.faults and c.controller_id >= 0:
        for b in replicas:
            offline = any(pr.tp == tp and pr.replica == b for pr in c.offline_replicas)
            if b in c.live_brokers and not offline:
                out.append(LeaderAndIsrResponseReceived(b, (tp,)))
            elif b in c.live_brokers:
                out.append(LeaderAndIsrPartitionResultsReceived(b, (tp,)))
    return out
