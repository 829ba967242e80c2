"""A deliberately buggy controller: the conformance suite must fail it with a clear counterexample.

Its Offline election (§6) forgets the unclean rule's guard: when no online replica is in the ISR it
elects the first online assigned replica *even when unclean election is disabled* — the data-loss
bug class of KAFKA-3410-style unclean elections. Everything else follows §6.

It also handles whole controller events (§7, §8), so that differential testing finds the same bug in
event sequences: events are handled by the reference controller with its Offline election replaced,
for the duration of each event only, by one that always allows unclean elections. Run it with:

    kcspec conformance run --sut "python conformance/examples/buggy_controller.py" --level elections
    kcspec conformance run --sut "python conformance/examples/buggy_controller.py" --differential 300
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from kcspec.conformance.adapters.inprocess import ControllerSut
from kcspec.conformance.adapters.serve import serve
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ElectionInput, ElectionResult, ElectionStrategy

S = ElectionStrategy


def _first(candidates: tuple[int, ...], ok: frozenset[int] | set[int], isr: tuple[int, ...] | None) -> int:
    return next((r for r in candidates if r in ok and (isr is None or r in isr)), -1)


ELECTION_NAME = "leader_for_offline"
"""The name under which the reference partition machine's module refers to ``elections.leader_for_offline``."""


@contextmanager
def _unclean_always_allowed() -> Iterator[None]:
    """The reference controller's partition machine with the bug: its Offline election always allows unclean."""
    import kcspec.reference_impl.elections as elections
    import kcspec.reference_impl.partition_state_machine as psm

    correct = elections.leader_for_offline

    def buggy(ctx: Any, tp: Any, lai: Any, unclean_enabled: bool) -> Any:
        return correct(ctx, tp, lai, True)

    setattr(psm, ELECTION_NAME, buggy)
    try:
        yield
    finally:
        setattr(psm, ELECTION_NAME, correct)


class BuggyController(ControllerSut):
    name = "buggy-controller"
    version = "0.2"
    profiles: ClassVar[tuple[str, ...]] = ("kafka-2.8", "kafka-1.1")
    capabilities: ClassVar[frozenset[m.Capability]] = frozenset(
        {m.Capability.elections, m.Capability.controller_events, m.Capability.fault_injection}
    )

    def __init__(self) -> None:
        self._events = ReferenceSut()

    def hello(self, profile: str) -> None:
        self.profile = profile
        self._events.hello(profile)

    def load(self, state: ClusterState) -> None:
        self._events.load(state)

    def event(self, event: ControllerEvent) -> m.StepReply:
        with _unclean_always_allowed():
            return self._events.event(event)

    def snapshot(self) -> ClusterState:
        return self._events.snapshot()

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        ar, isr, online = inp.assignment, inp.leader_and_isr.isr, inp.online
        if strategy is S.OfflinePartitionLeaderElectionStrategy:
            recipients = tuple(r for r in ar if r in online)
            clean = _first(ar, online, isr)
            if clean != -1:
                return ElectionResult(clean, tuple(r for r in isr if r in online), recipients)
            leader = _first(ar, online, None)  # the bug: no check of allow_unclean / unclean_enabled
            return ElectionResult(
                leader, (leader,) if leader != -1 else isr, recipients, unclean=leader != -1
            )
        if strategy is S.ReassignPartitionLeaderElectionStrategy:
            targets = inp.target_replicas
            return ElectionResult(_first(targets, online, isr), isr, targets)
        if strategy is S.PreferredReplicaPartitionLeaderElectionStrategy:
            head = ar[0] if ar else -1
            return ElectionResult(head if head in online and head in isr else -1, isr, ar)
        reachable = inp.online_or_shutting_down
        down = inp.shutting_down
        leader = next((r for r in ar if r in reachable and r in isr and r not in down), -1)
        to = online if getattr(self, "profile", "kafka-2.8") == "kafka-1.1" else reachable
        return ElectionResult(leader, tuple(r for r in isr if r not in down), tuple(r for r in ar if r in to))


if __name__ == "__main__":
    sys.exit(serve(BuggyController()))
