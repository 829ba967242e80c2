"""Mutants that only event *sequences* catch: SUTs that remember something between two events of a session.

A conformance vector loads its state and sends one request, so it never sees what a controller keeps from one
event to the next. A real controller keeps plenty: caches of what it read from ZooKeeper, of what it already
told each broker, of the epoch it runs under. Each mutant here is the example controller
(``conformance/examples/buggy_controller.py`` style: the reference controller behind protocol v1) with one such
memory added and wrongly kept. The memory is empty after every ``load``, so every vector passes; differential
testing (``kcspec.conformance.differential``) runs several events in one session and sees the difference.

``ORDER_MUTANTS`` are not about memory: they send the right requests in the wrong order to a broker, which the
vectors and differential testing of protocol 1.1 see (each request's ``position``).

Run one over the subprocess protocol with ``python conformance/examples/mutant_controller.py NAME``. They are
example SUTs of the kit, so they live in it (``tests/quality/bugzoo/test_session_mutants.py`` checks that the kit catches them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    Request,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import (
    LeaderElection,
    PartitionReplica,
    PartitionState,
    ReplicaState,
    TopicPartition,
)


class SessionMutant(ReferenceSut):
    """The reference controller whose event replies go through ``rewrite`` with a memory reset on ``load``."""

    name = "kcspec-session-mutant"
    bug: ClassVar[str] = ""
    """The wrong behaviour, as an implementer would describe the bug."""

    def load(self, state: ClusterState) -> None:
        super().load(state)
        self.forget()

    def forget(self) -> None:
        """Empty the memory (a new state was loaded)."""

    def event(self, event: ControllerEvent) -> m.StepReply:
        reply = super().event(event)
        rewritten = self.rewrite(list(reply.send_order))  # each broker's requests in send order
        return replace(reply, requests=frozenset(rewritten), send_order=m.send_order(rewritten))

    def rewrite(self, requests: list[Request]) -> list[Request]:
        raise NotImplementedError


class StaleControllerEpoch(SessionMutant):
    name = "mutant-stale-controller-epoch"
    bug = (
        "The controller epoch stamped on requests is read once, when the first request of the session is "
        "sent, and never again: after a second controller failover the requests carry the old epoch."
    )

    def forget(self) -> None:
        self.epoch: int | None = None

    def rewrite(self, requests: list[Request]) -> list[Request]:
        if not requests:
            return requests
        if self.epoch is None:
            self.epoch = requests[0].controller_epoch
        return [replace(r, controller_epoch=self.epoch) for r in requests]


class UpdateMetadataDeduplicated(SessionMutant):
    name = "mutant-update-metadata-dedup"
    bug = (
        "UpdateMetadata omits a partition state identical to one already sent to the same broker in this "
        "session (an 'optimisation': Kafka sends it again, e.g. to a broker that bounced and lost its cache)."
    )

    def forget(self) -> None:
        self.sent: set[tuple[int, UpdateMetadataPartitionState]] = set()

    def rewrite(self, requests: list[Request]) -> list[Request]:
        out: list[Request] = []
        sent_now: set[tuple[int, UpdateMetadataPartitionState]] = set()
        for r in requests:
            if isinstance(r, UpdateMetadataRequest):
                keep = frozenset(s for s in r.partition_states if (r.broker, s) not in self.sent)
                sent_now.update((r.broker, s) for s in r.partition_states)
                r = replace(r, partition_states=keep)
            out.append(r)
        self.sent |= sent_now
        return out


class LeaderAndIsrDeduplicated(SessionMutant):
    name = "mutant-leader-and-isr-dedup"
    bug = (
        "LeaderAndIsr skips a partition state identical to one already sent to the same broker in this session, "
        "and a request left without partitions is not sent (Kafka resends them, e.g. after a failover)."
    )

    def forget(self) -> None:
        self.sent: set[tuple[int, LeaderAndIsrPartitionState]] = set()

    def rewrite(self, requests: list[Request]) -> list[Request]:
        out: list[Request] = []
        sent_now: set[tuple[int, LeaderAndIsrPartitionState]] = set()
        for r in requests:
            if isinstance(r, LeaderAndIsrRequest):
                keep = frozenset(s for s in r.partition_states if (r.broker, s) not in self.sent)
                sent_now.update((r.broker, s) for s in r.partition_states)
                if not keep:
                    continue
                r = replace(r, partition_states=keep)
            out.append(r)
        self.sent |= sent_now
        return out


class StickyOfflineReplicas(SessionMutant):
    name = "mutant-sticky-offline-replicas"
    bug = (
        "A replica once reported offline in UpdateMetadata stays in the partition's offline replicas for the "
        "rest of the session, even after its broker came back."
    )

    def forget(self) -> None:
        self.offline: set[PartitionReplica] = set()

    def rewrite(self, requests: list[Request]) -> list[Request]:
        out: list[Request] = []
        seen_now: set[PartitionReplica] = set()
        for r in requests:
            if isinstance(r, UpdateMetadataRequest):
                states = set()
                for s in r.partition_states:
                    seen_now.update(PartitionReplica(s.tp, b) for b in s.offline_replicas)
                    sticky = {pr.replica for pr in self.offline if pr.tp == s.tp and pr.replica in s.replicas}
                    extra = tuple(sorted(sticky - set(s.offline_replicas)))
                    states.add(replace(s, offline_replicas=s.offline_replicas + extra) if extra else s)
                r = replace(r, partition_states=frozenset(states))
            out.append(r)
        self.offline |= seen_now
        return out


class LiveBrokersNeverShrink(SessionMutant):
    name = "mutant-live-brokers-never-shrink"
    bug = (
        "The live brokers of UpdateMetadata come from a set the controller adds every broker it has announced to, "
        "and never removes from: a broker that failed is still announced as live."
    )

    def forget(self) -> None:
        self.live: set[int] = set()

    def rewrite(self, requests: list[Request]) -> list[Request]:
        out: list[Request] = []
        announced: set[int] = set()
        for r in requests:
            if isinstance(r, UpdateMetadataRequest):
                announced |= r.live_brokers
                r = replace(r, live_brokers=r.live_brokers | self.live)
            out.append(r)
        self.live |= announced
        return out


class UpdateMetadataBeforeLeaderAndIsr(ReferenceSut):
    """Not a session mutant: a wrong send order, which every reply with both requests to one broker shows."""

    name = "mutant-update-metadata-first"
    bug: ClassVar[str] = (
        "The batch sends a broker its UpdateMetadata before its LeaderAndIsr (§3.4 sends LeaderAndIsr first), "
        "so the broker serves metadata naming a leader that does not know it leads yet; the requests are the "
        "right ones, only their order to that broker is wrong (to the lowest broker that gets both)."
    )

    def event(self, event: ControllerEvent) -> m.StepReply:
        return _update_metadata_first(super().event(event))

    def replica_state_change(
        self, replicas: tuple[PartitionReplica, ...], target: ReplicaState
    ) -> m.StepReply:
        return _update_metadata_first(super().replica_state_change(replicas, target))

    def partition_state_change(
        self, partitions: tuple[TopicPartition, ...], target: PartitionState, election: LeaderElection | None
    ) -> m.StepReply:
        return _update_metadata_first(super().partition_state_change(partitions, target, election))


def _update_metadata_first(reply: m.StepReply) -> m.StepReply:
    order = list(reply.send_order)
    for i in range(len(order) - 1):
        first, then = order[i], order[i + 1]
        same = first.broker == then.broker
        if same and isinstance(first, LeaderAndIsrRequest) and isinstance(then, UpdateMetadataRequest):
            order[i], order[i + 1] = then, first
            return replace(reply, send_order=tuple(order))
    return reply


SESSION_MUTANTS: tuple[type[SessionMutant], ...] = (
    StaleControllerEpoch,
    UpdateMetadataDeduplicated,
    LeaderAndIsrDeduplicated,
    StickyOfflineReplicas,
    LiveBrokersNeverShrink,
)
BY_NAME: dict[str, type[SessionMutant]] = {cls.name: cls for cls in SESSION_MUTANTS}
ORDER_MUTANTS: tuple[type[ReferenceSut], ...] = (UpdateMetadataBeforeLeaderAndIsr,)
"""Mutants whose requests are right but sent to a broker in the wrong order (protocol 1.1's ``position``)."""

__all__ = ["BY_NAME", "ORDER_MUTANTS", "SESSION_MUTANTS", "SessionMutant", "UpdateMetadataBeforeLeaderAndIsr"]
