"""``kcspec explore --workers N``: the same search on several processes finds the same states, counts the same
transitions and coverage, and reports a counterexample as short as one process does for planted bugs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore.counterexample import describe_trace
from kcspec.conformance.selfcheck.explore.explorer import explore, search
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.tla.manifest import Expected, load
from kcspec.spec.state import ClusterState

from kcspec.commands.explore import command
from tests.support.explore_cases import CASES

# The smallest model of each profile in every run; the other 1-broker models (4-6 s each) and the 2-broker crosscheck
# models (minutes of CPU each) in the slow tier. Covered in make test: the two-worker search counting what one
# worker counts (test_workers_count_what_one_worker_counts, and the minimal models here), and the one-worker count
# of every 1-broker model, state for state with TLC's and equal to the manifest's
# (test_tlc_real.py::test_tlc_agrees_with_the_manifest).
MANIFEST = [
    pytest.param(e, id=e.name, marks=() if e.in_verify and "minimal" in e.name else pytest.mark.slow)
    for e in load()
]


@pytest.mark.parametrize("entry", MANIFEST)
def test_two_workers_find_the_manifest_count(entry: Expected) -> None:
    result = search(model_space(entry.profile, entry.config), workers=2)
    assert result.finding is None, result.finding
    assert not result.stats.truncated
    assert result.stats.distinct_states == entry.distinct_states, (
        f"{entry.name}: 2 workers found {result.stats.distinct_states} distinct states, "
        f"the manifest (and one worker) {entry.distinct_states}"
    )


@pytest.mark.parametrize(
    "cfg",
    [
        ExploreConfig("kafka-2.8", 3, 1, 1, 2, 3),
        ExploreConfig("kafka-1.1", 3, 1, 1, 2, 2, faults=frozenset({"zk", "controller"})),
        ExploreConfig("kafka-2.8", 3, 1, 1, 2, 2, symmetry=False),
    ],
    ids=lambda c: c.describe(),
)
def test_workers_count_what_one_worker_counts(cfg: ExploreConfig) -> None:
    one = explore(cfg).stats
    for workers in (2, 3):
        many = explore(cfg, workers=workers).stats
        seen = (many.distinct_states, many.transitions, many.depth_reached)
        assert seen == (one.distinct_states, one.transitions, one.depth_reached), f"{workers} workers"
        assert many.replica_edges == one.replica_edges
        assert many.partition_edges == one.partition_edges
        assert many.invalid_attempts == one.invalid_attempts
        assert many.events == one.events
        assert many.workers == workers


@pytest.mark.parametrize(("mutant", "what", "cfg"), CASES, ids=[c[0] for c in CASES])
def test_workers_report_one_process_counterexample(mutant: str, what: str, cfg: ExploreConfig) -> None:
    with HISTORICAL_BY_NAME[mutant].active():
        one = explore(cfg)
        two = explore(cfg, workers=2)
    assert one.finding is not None and two.finding is not None, f"{mutant} ({what}) missed"
    assert one.trace is not None and two.trace is not None
    # the least-rank problem of the level is the one a single process meets first: the same shortest trace
    assert two.finding.events == one.finding.events, (
        f"{mutant}: 2 workers reported\n{describe_trace(two)}\none worker\n{describe_trace(one)}"
    )
    assert (two.finding.kind, two.finding.message) == (one.finding.kind, one.finding.message)


def test_workers_report_the_same_counterexample_on_every_run() -> None:
    mutant, _what, cfg = CASES[0]
    with HISTORICAL_BY_NAME[mutant].active():
        runs = [explore(cfg, workers=workers) for workers in (2, 2, 3)]
    traces = [describe_trace(r) for r in runs]
    assert traces[0] == traces[1] == traces[2], "\n\n".join(traces)


def test_cli_workers_option() -> None:
    runner = CliRunner()
    ok = runner.invoke(command, ["--depth", "2", "--workers", "2"])
    assert ok.exit_code == 0, ok.output
    assert "2 workers" in ok.output and "no violation found" in ok.output
    bad = runner.invoke(command, ["--workers", "0"])
    assert bad.exit_code == 2 and "--workers" in bad.output


def test_keeping_states_needs_one_worker() -> None:
    with pytest.raises(ValueError, match="one worker"):
        search(model_space("kafka-2.8", load()[0].config), keep_states=True, workers=2)


def test_workers_stop_at_max_states_at_the_end_of_a_level() -> None:
    cfg = ExploreConfig("kafka-2.8", 3, 1, 1, 2, 4, max_states=300)
    result = explore(cfg, workers=2)
    assert result.finding is None
    assert result.stats.truncated and result.stats.frontier_left > 0
    assert result.stats.distinct_states >= 300


def _planted_state_invariant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state invariant that fails in states several events deep (a partition's leader epoch of 3 or more while a
    broker is down): found while a level's new states are merged, not while it is expanded."""
    from kcspec.model.invariants_check import InvariantChecker, Violation

    checked = InvariantChecker.check_state

    def check_state(self: InvariantChecker, s: ClusterState) -> list[Violation]:
        found = checked(self, s)
        epochs = [li.leader_and_isr.leader_epoch for li in s.zk.partition_states.values()]
        if len(s.controller.live_brokers) < 3 and any(e >= 3 for e in epochs):
            found = [
                *found,
                Violation("PlantedForTest", "test", "a leader epoch >= 3 while a broker is down"),
            ]
        return found

    monkeypatch.setattr(InvariantChecker, "check_state", check_state)


def test_workers_report_one_process_state_invariant_counterexample(monkeypatch: pytest.MonkeyPatch) -> None:
    _planted_state_invariant(monkeypatch)
    cfg = ExploreConfig("kafka-2.8", 3, 1, 1, 2, 4)
    one = explore(cfg)
    assert one.finding is not None and one.finding.kind == "invariant", one.finding
    assert len(one.finding.events) - len(one.prefix) == 3  # three events deep: a merge finds it, at level 3
    for workers in (2, 3):
        many = explore(cfg, workers=workers)
        assert many.finding is not None
        assert many.finding.events == one.finding.events, f"{workers} workers:\n{describe_trace(many)}"
        assert [v.name for v in many.finding.violations] == [v.name for v in one.finding.violations]
