"""The bug zoo: cheap checks catch historical mutants, the unmutated controller passes the same checks (so the
zoo cannot pass vacuously), patches never outlive a run, and generic mutants are injected in memory."""

from __future__ import annotations

from pathlib import Path

import kcspec.reference_impl.elections as elections
import kcspec.reference_impl.partition_state_machine as psm
import pytest
from click.testing import CliRunner
from kcspec.conformance.scenarios import SCENARIOS
from kcspec.conformance.selfcheck.bugzoo import generic, killing
from kcspec.conformance.selfcheck.bugzoo.checks import (
    LadderConfig,
    check_context,
    check_scenarios,
    check_vectors,
    confirmed,
    hunt,
    hypothesis_round,
)
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL, HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.bugzoo.mutant import Mutant
from kcspec.conformance.selfcheck.bugzoo.patching import Patch, PatchError, injected
from kcspec.conformance.selfcheck.bugzoo.zoo import baseline, run_zoo
from kcspec.conformance.selfcheck.crosscheck import crosscheck
from kcspec.reference_impl.controller import KafkaController
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper

CHEAP = LadderConfig(budget=30.0, checks=("scenarios", "explore"))
NOT_A_BUG = Mutant(
    "not-a-bug",
    "historical",
    "kafka-2.8",
    "—",
    "—",
    "none: the patch re-installs the original method",
    "KafkaController.on_replicas_become_offline replaced by itself",
    ("§7.4",),
    lambda: (Patch(KafkaController, "on_replicas_become_offline", lambda original: original),),
)


@pytest.mark.parametrize(
    "name",
    [
        "kafka-6082",
        "kafka-8237",
        "kafka-7482",
        "kafka-9866",
        "kafka-1503-legacy",
        "kafka-5310",
        "hazard-i15-b9",
    ],
)
def test_cheap_checks_catch_historical_mutants(name: str) -> None:
    mutant = HISTORICAL_BY_NAME[name]
    result = hunt(mutant, CHEAP)
    assert result.detection is not None, f"{name} escaped: {result.stages}"
    d = result.detection
    assert d.check in ("scenarios", "explore")
    assert 1 <= d.after_bootstrap <= d.total == len(d.events)
    # the counterexample still shows the bug, and the unmutated controller agrees with the spec on it
    assert crosscheck("unmutated", mutant.profile, d.events).ok
    with mutant.active():
        assert not crosscheck("mutant", mutant.profile, d.events).ok


def test_the_vectors_catch_a_mutant_and_pass_the_unmutated_controller() -> None:
    detection, note = check_vectors(HISTORICAL_BY_NAME["kafka-6650"], CHEAP, deadline=float("inf"))
    assert detection is not None and detection.check == "vectors", note
    assert check_vectors(NOT_A_BUG, CHEAP, deadline=float("inf"))[0] is None


def test_stale_context_probes_catch_a_context_that_survives_resignation() -> None:
    """kafka-5310-legacy carries the reassignment map into the next controller; no event sequence of the model
    shows it (the map always equals the znode), a loaded context that ZooKeeper does not back does."""
    detection, note = check_context(HISTORICAL_BY_NAME["kafka-5310-legacy"], CHEAP, deadline=float("inf"))
    assert detection is not None and detection.check == "context", note
    assert check_context(NOT_A_BUG, CHEAP, deadline=float("inf"))[0] is None


def test_only_a_replayable_divergence_of_the_mutant_alone_is_confirmed() -> None:
    mutant = HISTORICAL_BY_NAME["kafka-9866"]
    detection, _note = check_scenarios(mutant, CHEAP, deadline=float("inf"))
    assert detection is not None
    assert confirmed(mutant, detection.events)
    assert not confirmed(NOT_A_BUG, detection.events)  # the unmutated controller agrees: nothing to confirm


def test_the_hypothesis_stage_stops_at_its_deadline() -> None:
    """A deadline already passed abandons the run at its first step, without a failure to shrink."""
    failure, note = hypothesis_round(
        HISTORICAL_BY_NAME["kafka-6650"], CHEAP, seed=0, examples=10, stop_at=0.0
    )
    assert failure is None and note == "out of time"


def test_a_non_mutant_passes_the_scenarios() -> None:
    report = run_zoo([NOT_A_BUG], LadderConfig(budget=30.0, checks=("scenarios",)))
    assert report.baseline_problems == []
    assert report.escaped() == report.rows  # reported as escaped, which `kcspec bugzoo` turns into exit 1
    assert report.rows[0].stages[0][2] == f"{len(SCENARIOS)} scenarios, no divergence"


def test_baseline_is_clean_for_both_profiles() -> None:
    assert baseline(["kafka-2.8", "kafka-1.1"]) == []


def test_patches_are_restored_even_when_the_run_fails() -> None:
    original_fn = elections.leader_for_controlled_shutdown
    original_check = SimulatedZooKeeper.check_controller_epoch
    mutant = HISTORICAL_BY_NAME["kafka-7482"]
    with pytest.raises(RuntimeError), mutant.active():
        # rebound where it was imported by name (the binding in psm's namespace, which psm does not export)
        assert vars(psm)["leader_for_controlled_shutdown"] is not original_fn
        raise RuntimeError("boom")
    assert elections.leader_for_controlled_shutdown is original_fn
    assert vars(psm)["leader_for_controlled_shutdown"] is original_fn
    with HISTORICAL_BY_NAME["kafka-6082"].active():
        assert SimulatedZooKeeper.check_controller_epoch is not original_check
    assert SimulatedZooKeeper.check_controller_epoch is original_check


def test_a_missing_hook_is_reported() -> None:
    with (
        pytest.raises(PatchError, match="hook"),
        injected([Patch(KafkaController, "no_such_method", lambda o: o)]),
    ):
        pass


def test_catalogue_entries_are_complete() -> None:
    assert len({m.name for m in HISTORICAL}) == len(HISTORICAL)
    for m in HISTORICAL:
        assert m.ticket and m.wrong and m.injection and m.fixed_in and m.sections
        assert m.profile in ("kafka-2.8", "kafka-1.1")
        assert m.patches(), m.name


def test_scenario_counterexample_is_one_minimal() -> None:
    """No single event of the shrunk counterexample can be dropped with the mutant still diverging while the
    unmutated controller agrees."""
    mutant = HISTORICAL_BY_NAME["kafka-9866"]
    detection, _note = check_scenarios(mutant, CHEAP, deadline=float("inf"))
    assert detection is not None
    events = detection.events
    for i in range(len(events) - 1):
        shorter = events[:i] + events[i + 1 :]
        agrees = crosscheck("unmutated", mutant.profile, shorter)
        if agrees.ok:
            with mutant.active():
                out = crosscheck("mutant", mutant.profile, shorter)
            d = out.divergence
            assert d is None or (d.kind == "enabled" and "neither" in d.message), (
                f"event {i + 1} is removable"
            )


def test_a_generic_mutant_is_injected_in_memory_and_killed() -> None:
    sites = generic.enumerate_sites(("elections",))
    site = next(
        s
        for s in sites
        if s.definition == "offline_partition_leader_election" and s.operator == "core/AddNot"
    )
    source = Path(elections.__file__ or "")
    before = source.read_text(encoding="utf-8")
    result = generic.run_generic(site)
    assert source.read_text(encoding="utf-8") == before
    assert result.status == "killed", result
    assert result.site.after and result.site.after != result.site.before


def test_cli_rejects_unknown_mutant_and_lists_catalogue() -> None:
    from kcspec.cli import main

    runner = CliRunner()
    bad = runner.invoke(main, ["bugzoo", "--mutant", "kafka-0000"])
    assert bad.exit_code == 2 and "unknown mutant" in bad.output
    listed = runner.invoke(main, ["bugzoo", "--list"])
    assert listed.exit_code == 0 and "KAFKA-6082" in listed.output


def test_cli_runs_a_mutant() -> None:
    from kcspec.cli import main

    result = CliRunner().invoke(
        main, ["bugzoo", "--mutant", "kafka-8237", "--checks", "scenarios"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert "historical mutants caught: 1/1" in result.output and "topic-deletion" in result.output


def test_a_survivors_mutated_line_is_traced() -> None:
    """The tracer that tells "never reached" from "reached, no effect" counts entries and line runs of the
    installed code (here: the unmutated election re-installed as a patch)."""
    original = elections.offline_partition_leader_election
    patch = Patch(elections, "offline_partition_leader_election", lambda o: o)
    code = original.__code__
    body_line = code.co_firstlineno + 1
    while body_line not in {line for _s, _e, line in code.co_lines() if line is not None}:
        body_line += 1
    reached = killing.exercise(patch, code, body_line)
    assert reached.calls > 0 and reached.line_hits > 0


def test_memo_tables_do_not_outlive_a_patch() -> None:
    """A mutant must compute with its own code (not results cached by the unmutated controller) and must not
    leave its results to later runs."""
    import kcspec.reference_impl.request_batch as request_batch

    request_batch._recipients((3, -1, 3))
    assert request_batch._RECIPIENTS
    with injected([Patch(request_batch, "_recipients", lambda o: o)]):
        assert not request_batch._RECIPIENTS
        request_batch._recipients((4, 4))
    assert not request_batch._RECIPIENTS
