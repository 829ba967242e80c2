"""``ReferenceController.load`` reuses the incarnation it built for a controller id (``KafkaController.adopt``):
a reused controller must answer every load exactly as a freshly built one (post-state, requests, failures, log
lines), whatever it handled before — including an event that failed half-way with requests still pending."""

from __future__ import annotations

from collections import deque

import pytest
from kcspec.model.event_candidates import bootstrap, candidates
from kcspec.model.explore_config import ExploreConfig
from kcspec.reference_impl import ReferenceController
from kcspec.reference_impl.controller import KafkaController
from kcspec.spec.events import ControllerEvent
from kcspec.spec.state import ClusterState

from tests.support.reference_scenarios import PROFILES


def _graph(profile: str, depth: int) -> list[tuple[ClusterState, ControllerEvent]]:
    """Every enabled (state, event) pair of a small breadth-first search, in search order."""
    cfg = ExploreConfig(profile=profile, brokers=3, topics=1, partitions=1, rf=2, depth=depth, symmetry=False)
    ref = ReferenceController(profile, trace=True)
    for ev in bootstrap(cfg):
        ref.handle(ev)
    start = ref.snapshot()
    seen = {start}
    frontier = deque([(start, 0)])
    pairs = []
    while frontier:
        state, d = frontier.popleft()
        if d >= depth:
            continue
        for ev in candidates(state, cfg):
            ref.load(state)
            if not ref.enabled(ev):
                continue
            pairs.append((state, ev))
            post = ref.handle(ev).state
            if post not in seen:
                seen.add(post)
                frontier.append((post, d + 1))
    return pairs


def _answer(ref: ReferenceController, state: ClusterState, event: ControllerEvent) -> tuple[object, ...]:
    ref.load(state)
    ref.state_change_log.clear()
    ref.controller_log.clear()
    enabled = ref.enabled(event)
    result = ref.handle(event)
    # the log's clock runs on across events (it belongs to the controller process, not to a state): lines are
    # compared without their timestamp
    return enabled, result, _untimed(ref.state_change_log), _untimed(ref.controller_log)


def _untimed(lines: list[str]) -> tuple[str, ...]:
    return tuple(line.split("] ", 1)[1] if line.startswith("[") else line for line in lines)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_reused_controller_answers_every_load_as_a_fresh_one(profile: str) -> None:
    pairs = _graph(profile, depth=2)
    assert len(pairs) > 50, "the search is too small to exercise the reuse"
    reused = ReferenceController(profile, trace=True)
    built = 0
    original = KafkaController.__init__

    def counting(self: KafkaController, *args: object, **kwargs: object) -> None:
        nonlocal built
        built += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    KafkaController.__init__ = counting  # type: ignore[method-assign]
    try:
        for state, event in pairs:
            fresh = ReferenceController(profile, trace=True)
            assert _answer(reused, state, event) == _answer(fresh, state, event), (state, event)
    finally:
        KafkaController.__init__ = original  # type: ignore[method-assign]
    # the fresh controllers build one incarnation each (and the events their own); the reused one far fewer
    assert built < 3 * len(pairs)


@pytest.mark.parametrize("profile", PROFILES)
def test_requests_left_pending_by_a_failed_event_do_not_reach_the_next_load(profile: str) -> None:
    pairs = [(s, e) for s, e in _graph(profile, depth=2) if s.controller.controller_id != -1]
    assert pairs
    ref = ReferenceController(profile, trace=True)
    for state, event in pairs:
        ref.load(state)
        kc = ref.kc
        tp = next(iter(state.controller.assignments))
        for batch in (
            kc.batch,
            kc.replica_sm.batch,
            kc.partition_sm.batch,
        ):  # as if an event stopped half-way
            batch.add_update_metadata([state.controller.controller_id], [tp])
            assert not batch.is_empty()
        ref.load(state)
        assert ref.kc is kc, "the incarnation was not reused: the test checks nothing"
        answer = _answer(ref, state, event)
        assert answer == _answer(ReferenceController(profile, trace=True), state, event), (state, event)
