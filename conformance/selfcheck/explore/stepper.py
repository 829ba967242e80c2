"""Every checked transition out of one state: the explorer's unit of work, shared by all its search strategies.

``Stepper.transitions(state)`` asks both implementations which candidate events are enabled, runs every enabled
event through the spec and the reference controller, compares the two results (refinement), records transition
coverage and checks the step invariants, then yields the successor with its fingerprint (``None`` when the
successor is outside the bounds): the fingerprint of its deduplication key (the state, or its orbit's canonical
representative under symmetry; ``fingerprint.py``). The caller decides whether the successor is new and checks the state
invariants of new states; the generator is lazy, so a caller sees the transitions in candidate order and can stop
at the first problem.

``expand_batch`` applies the same checks to a batch of frontier states and returns the successors with their
parents' ids and their ranks: the per-level successor computation of a breadth-first search, usable in any process
that can import this package (the ``--workers`` processes, or executors of a cluster) — its inputs and outputs
pickle.

A state's **rank** is the sequence of candidate indices of the path a one-process breadth-first search first
reaches it by, as bytes (two big-endian bytes per step, so comparing ranks as bytes compares those sequences):
a one-process search expands a level in the order of its states' ranks and, among the transitions out of one
state, in candidate order, so among several states, parents or problems of one level the least rank is the one it
meets first. The ``--workers`` and ``--spark`` searches keep the least rank wherever they have a choice, and so
find the same parents and the same counterexample as one process, on every run.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from kcspec.conformance.reply_diff import Difference
from kcspec.conformance.selfcheck.crosscheck import diff_metrics, diff_results
from kcspec.conformance.selfcheck.explore.fingerprint import DEFAULT_SCHEME, Fingerprinter, FingerprintScheme
from kcspec.conformance.selfcheck.explore.stats import ExploreStats, record_coverage
from kcspec.model.invariants_check import InvariantChecker, Violation
from kcspec.model.step import SpecMachine
from kcspec.model.symmetry import canonical_state
from kcspec.reference_impl import ReferenceController
from kcspec.spec.events import ControllerEvent
from kcspec.spec.requests import StepResult
from kcspec.spec.state import ClusterState


@dataclass(frozen=True)
class Transition:
    """One checked transition: the event (the ``index``-th candidate), the spec's post-state, its fingerprint
    (``None``: outside the bounds, cut) and the step invariants it violates."""

    event: ControllerEvent
    state: ClusterState
    key: int | None
    step_violations: tuple[Violation, ...]
    index: int


@dataclass(frozen=True)
class Problem:
    """A transition that cannot be accepted: the two implementations disagree, or one of them crashed."""

    event: ControllerEvent
    kind: str  # refinement | enabled | crash
    message: str
    differences: tuple[Difference, ...] = ()
    index: int = 0


class Stepper:
    """The spec, the reference controller and the invariant checker of one profile, driven state by state.

    Every transition handled by both implementations is counted in ``stats`` (and its coverage recorded there
    when both agree). With ``lockstep`` off, the reference controller alone is driven: its own guards decide what
    is enabled, its post-states are the successors, and the spec is not run (``kcspec tla crosscheck``, whose other
    side, TLC on the module generated from the spec, is the second implementation); the step and state invariants
    are still checked on its transitions.
    """

    def __init__(
        self,
        profile: str,
        candidates: Callable[[ClusterState], Sequence[ControllerEvent]],
        brokers: int,
        symmetry: bool,
        keep: Callable[[ClusterState], bool] | None,
        stats: ExploreStats,
        scheme: FingerprintScheme = DEFAULT_SCHEME,
        lockstep: bool = True,
    ) -> None:
        self.profile = profile
        self.lockstep = lockstep
        self.spec = SpecMachine(profile)
        self.fingerprints = Fingerprinter(scheme)
        self.checker = InvariantChecker(profile)
        self.ref = ReferenceController(profile, trace=True)
        self._candidates = candidates
        self._brokers = brokers
        self._symmetry = symmetry
        self._keep = keep
        self.stats = stats
        self._loaded: ClusterState | None = None
        self._canonical: dict[ClusterState, Hashable] = {}

    def key(self, state: ClusterState) -> Hashable:
        """The deduplication key: the state itself, or its orbit's canonical representative under symmetry."""
        if not self._symmetry:
            return state  # a frozen value with value equality and a cached hash in its maps: the exact key
        hit = self._canonical.get(state)
        if hit is None:
            if len(self._canonical) > CANONICAL_CACHE:
                self._canonical.clear()
            hit = self._canonical[state] = canonical_state(state, self._brokers)
        return hit

    def fingerprint(self, state: ClusterState) -> int:
        """The fingerprint of ``state``'s deduplication key."""
        return self.fingerprints(self.key(state))

    def transitions(self, state: ClusterState, fp: int | None = None) -> Iterator[Transition | Problem]:
        """The checked transitions out of ``state``, in candidate order; a ``Problem`` ends the sequence.

        ``fp``: ``state``'s fingerprint, when the caller knows it. A step back to the same state (a third of the
        transitions of the 2-broker model: a guard-true event that changes nothing, or changes a field and puts it
        back) then takes it instead of encoding and digesting the post-state again: equal states
        have one canonical text (a state's schema fixes the type of every position, so value equality never equates,
        say, ``1`` and ``True`` there). Every check of the step is made as for any other."""
        if not self.lockstep:
            yield from self._reference_transitions(state, fp)
            return
        spec, ref = self.spec, self.ref
        self.fingerprints.forget()  # the sub-texts remembered are those of this state and its successors
        events = self._candidates(state)
        # both guards of every candidate first, on one load of the state (a guard does not change the controller);
        # they are reported below in candidate order, as if asked one candidate at a time
        guards: list[tuple[bool, bool]] = []
        guard_crash: Exception | None = None
        try:
            if events and self._loaded is not state:
                ref.load(state)
                self._loaded = state
            for ev in events:
                guards.append((spec.enabled(state, ev), ref.enabled(ev)))
        except Exception as exc:
            guard_crash = exc
        for i, ev in enumerate(events):
            if i == len(guards):
                yield Problem(ev, "crash", f"{type(guard_crash).__name__}: {guard_crash}", index=i)
                return
            enabled, ref_enabled = guards[i]
            if enabled != ref_enabled:
                who = "the spec" if enabled else "the reference controller"
                yield Problem(ev, "enabled", f"only {who} accepts {ev.kind} here", index=i)
                return
            if not enabled:
                continue
            try:
                expected = spec.step(state, ev, guard_checked=True)  # its guard was true just above
                actual = self._ref_step(state, ev)
            except Exception as exc:
                yield Problem(ev, "crash", f"{type(exc).__name__}: {exc}", index=i)
                return
            self.stats.transitions += 1
            self.stats.events[ev.kind] += 1
            differences = diff_results(expected, actual) or diff_metrics(
                self.profile, expected.state, ref.metrics()
            )
            if differences:
                yield Problem(
                    ev,
                    "refinement",
                    f"the reference controller's step differs from the spec ({len(differences)} differences)",
                    tuple(differences),
                    i,
                )
                return
            record_coverage(self.stats, ref.state_change_log, expected)
            yield self._checked(state, fp, ev, i, expected)

    def _checked(
        self, state: ClusterState, fp: int | None, ev: ControllerEvent, index: int, result: StepResult
    ) -> Transition:
        """The transition to ``result``'s post-state: its step invariants checked, its fingerprint taken (``None``
        when it is outside the bounds: checked as a step, then cut, never a state of the search)."""
        bad = self.checker.check_step(state, result.state, result.requests)
        post = result.state
        if self._keep is not None and not self._keep(post):
            key = None
        elif fp is not None and (post is state or post == state):
            key = fp
        else:
            key = self.fingerprint(post)
        return Transition(ev, post, key, tuple(bad), index)

    def _reference_transitions(self, state: ClusterState, fp: int | None) -> Iterator[Transition | Problem]:
        """``transitions`` with ``lockstep`` off: the reference controller's enabled events and successors."""
        ref = self.ref
        self.fingerprints.forget()
        events = self._candidates(state)
        for i, ev in enumerate(events):
            try:
                if self._loaded is not state:
                    ref.load(state)
                    self._loaded = state
                if not ref.enabled(ev):
                    continue
                result = self._ref_step(state, ev)
            except Exception as exc:
                yield Problem(ev, "crash", f"{type(exc).__name__}: {exc}", index=i)
                return
            self.stats.transitions += 1
            self.stats.events[ev.kind] += 1
            record_coverage(self.stats, ref.state_change_log, result)
            yield self._checked(state, fp, ev, i, result)

    def enabled(self, state: ClusterState, ev: ControllerEvent) -> bool:
        """Whether ``ev`` is enabled in ``state``: the spec's guard, or with ``lockstep`` off the reference
        controller's."""
        if self.lockstep:
            return self.spec.enabled(state, ev)
        if self._loaded is not state:
            self.ref.load(state)
            self._loaded = state
        return self.ref.enabled(ev)

    def step(self, state: ClusterState, ev: ControllerEvent) -> ClusterState:
        """The successor of ``state`` by the enabled event ``ev``: the spec's, or with ``lockstep`` off the
        reference controller's."""
        if self.lockstep:
            return self.spec.step(state, ev, guard_checked=True).state
        return self._ref_step(state, ev).state

    def _ref_step(self, state: ClusterState, ev: ControllerEvent) -> StepResult:
        """The reference controller's step by ``ev`` (its guard found true) from ``state``, with its logs of this
        step only; the controller holds the successor after it."""
        ref = self.ref
        if self._loaded is not state:
            ref.load(state)
        ref.state_change_log.clear()
        ref.controller_log.clear()
        self._loaded = None
        return ref.handle(ev, guard_checked=True)


CANONICAL_CACHE = 50_000
"""The most states whose canonical representative a ``Stepper`` remembers (then it starts again)."""

_STEP = struct.Struct(">H")


def rank_of(parent_rank: bytes, index: int) -> bytes:
    """The rank of the successor by the ``index``-th candidate of a state of rank ``parent_rank``."""
    return parent_rank + _STEP.pack(index)


@dataclass(frozen=True)
class Successor:
    """A new-or-not successor found by ``expand_batch``: its fingerprint, the state, its parent's fingerprint, the
    event and its rank (``rank_of`` the parent's)."""

    key: int
    state: ClusterState
    parent: int
    event: ControllerEvent
    rank: bytes


@dataclass(frozen=True)
class BatchFinding:
    """The first problem of a batch: on the transition ``event`` out of the state ``parent`` (its fingerprint);
    ``rank`` is the transition's (``rank_of`` the parent's rank and the event's candidate index)."""

    parent: int
    event: ControllerEvent
    rank: bytes
    kind: str  # refinement | enabled | crash | invariant
    message: str
    differences: tuple[Difference, ...] = ()
    violations: tuple[Violation, ...] = ()


def expand_batch(
    stepper: Stepper, batch: Iterable[tuple[ClusterState, int, bytes]]
) -> tuple[list[Successor], BatchFinding | None]:
    """The checked successors of every ``(state, fingerprint, rank)`` of ``batch`` (cut ones left out), up to the
    first problem. A batch in ascending rank gives its least-rank problem.

    Every transition is checked for refinement and step invariants here. A successor violating a step invariant
    is reported with its state invariants too, as a one-process search would when the state is new (a state seen
    before has already passed them); the state invariants of the other successors are checked by whoever finds
    them new.
    """
    out: list[Successor] = []
    for state, sid, rank in batch:
        for t in stepper.transitions(state, sid):
            if isinstance(t, Problem):
                where = rank_of(rank, t.index)
                return out, BatchFinding(sid, t.event, where, t.kind, t.message, t.differences)
            if t.step_violations:
                bad = list(t.step_violations)
                if t.key is not None:
                    bad = stepper.checker.check_state(t.state) + bad
                return out, BatchFinding(
                    sid,
                    t.event,
                    rank_of(rank, t.index),
                    "invariant",
                    "invariant violated: " + ", ".join(v.name for v in bad),
                    violations=tuple(bad),
                )
            if t.key is not None:
                out.append(Successor(t.key, t.state, sid, t.event, rank_of(rank, t.index)))
    return out, None
