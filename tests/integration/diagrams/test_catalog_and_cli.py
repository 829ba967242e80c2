"""The committed diagrams match the spec, ``--check`` catches a changed rule, and the diagrams say what the spec says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.model.diagrams import catalog
from kcspec.model.diagrams.coverage import load_coverage
from kcspec.model.diagrams.dot import render_dot
from kcspec.model.diagrams.effects import machine_effects
from kcspec.model.diagrams.events import event_calls
from kcspec.model.diagrams.reassignment import reassignment_graph
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8
from kcspec.spec.vocabulary import ReplicaState

from kcspec.commands.diagrams import command, record_scenario_run
from tests.support.paths import ROOT

COMMITTED = ROOT / "diagrams"


@pytest.fixture(scope="module")
def spec_diagrams() -> list[catalog.Diagram]:
    return catalog.spec_diagrams()


def test_committed_diagrams_match_the_spec(spec_diagrams: list[catalog.Diagram]) -> None:
    result = catalog.check(spec_diagrams, COMMITTED)
    assert result.stale == (), "\n".join(result.stale)
    runs = COMMITTED / catalog.COVERAGE_RUNS
    entries = [e for p in sorted(runs.glob("*.json")) for e in load_coverage(p)]
    overlay = catalog.check(catalog.coverage_diagrams(entries), runs)
    assert overlay.stale == (), "\n".join(overlay.stale)


def test_every_issue_diagram_exists(spec_diagrams: list[catalog.Diagram]) -> None:
    names = {d.name for d in spec_diagrams}
    for profile in ("kafka-2.8", "kafka-1.1"):
        for kind in ("replica", "partition", "elections", "reassignment", "events"):
            assert f"{kind}-{profile}" in names
    assert {"replica-comparison", "partition-comparison"} <= names
    for d in spec_diagrams:
        assert '"legend"' in d.dot, f"{d.name} has no legend"


def test_check_catches_a_changed_rule(
    spec_diagrams: list[catalog.Diagram], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog.write(spec_diagrams, tmp_path, ("dot", "svg"), lambda _msg: None)
    assert CliRunner().invoke(command, ["--check", "--out", str(tmp_path)]).exit_code == 0
    # a changed rule: NewReplica becomes valid from OfflineReplica in kafka-2.8 (§2.1 table)
    table = KAFKA_2_8.replica_valid_previous
    monkeypatch.setitem(
        table, ReplicaState.NewReplica, (ReplicaState.NonExistentReplica, ReplicaState.OfflineReplica)
    )
    result = CliRunner().invoke(command, ["--check", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'replica-kafka-2.8.dot'} (differs from the spec)" in result.output
    assert "replica-comparison.dot" in result.output
    assert "partition-kafka-2.8.dot" not in result.output


def test_check_lists_missing_and_extra_files(spec_diagrams: list[catalog.Diagram], tmp_path: Path) -> None:
    catalog.write(spec_diagrams, tmp_path, ("dot",), lambda _msg: None)
    (tmp_path / "old-diagram.dot").write_text("digraph {}\n")
    result = catalog.check(spec_diagrams, tmp_path)
    assert f"{tmp_path / 'replica-kafka-2.8.svg'} (missing)" in result.stale
    assert f"{tmp_path / 'old-diagram.dot'} (no longer generated)" in result.stale


def test_cli_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "run.json"
    bad.write_text(json.dumps({"profile": "kafka-2.8", "machine": "replica", "edges": [{"from": "X"}]}))
    result = CliRunner().invoke(command, ["--coverage", str(bad), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "run.json: entry 0, edge 0" in result.output
    assert CliRunner().invoke(command, ["--check", "--out", str(tmp_path / "none")]).exit_code == 2
    assert CliRunner().invoke(command, ["--check", "--profile", "kafka-2.8"]).exit_code == 2
    assert "Example" in CliRunner().invoke(command, ["--help"]).output


def test_labels_follow_the_profiles() -> None:
    new = machine_effects(KAFKA_2_8, "replica")[("OnlineReplica", "OfflineReplica")]
    old = machine_effects(KAFKA_1_1, "replica")[("OnlineReplica", "OfflineReplica")]
    assert "SR(delete=false) → r" in new and new[-1] == "§4.3"
    # §4.3 step 5: 1.1 leaves replicas of partitions without leadership untouched (KAFKA-6650)
    assert "no LI: no change" in old and "no LI: no change" not in new
    online = machine_effects(KAFKA_2_8, "partition")[("OfflinePartition", "OnlinePartition")]
    assert any(x.startswith("Preferred: refused") for x in online)


def test_event_map_and_flows_are_read_from_the_actions() -> None:
    new, old = event_calls(KAFKA_2_8), event_calls(KAFKA_1_1)
    assert "ControlledShutdownPartitionLeaderElectionStrategy" in new["ControlledShutdown"][1]
    assert new["BrokerBounce"][0] and not old["BrokerBounce"][0]  # §7.2: 1.1 does not see bounces
    assert "ApiPartitionReassignment" in new and "ApiPartitionReassignment" not in old
    kip455, legacy = reassignment_graph(KAFKA_2_8), reassignment_graph(KAFKA_1_1)
    assert "reassignmentPhaseA (§7.7.2)" in render_dot(kip455)
    text = render_dot(legacy)
    assert "removePartitionFromReassignedPartitions (§7.8.1)" in text and "Phase" not in text
    assert "Replica → NewReplica" in text and "election: Reassign" in text


def test_recorded_run_is_reproducible() -> None:
    committed = (COMMITTED / catalog.COVERAGE_RUNS / "scenarios.json").read_text(encoding="utf-8")
    assert json.dumps(record_scenario_run(["kafka-1.1", "kafka-2.8"]), indent=1) + "\n" == committed


def test_each_machine_edge_says_where_the_spec_writes_its_rule(spec_diagrams: list[catalog.Diagram]) -> None:
    """Hovering an edge of a state-machine diagram names the target's rule, its § and the line that writes it."""
    for d in spec_diagrams:
        if not d.name.startswith(("replica-", "partition-")):
            continue
        transitions = [e for e in d.graph.edges if e.tail != "start" and e.head != "start"]
        assert transitions, d.name
        for e in transitions:
            a = dict(e.attrs)
            tip = a.get("tooltip")
            assert isinstance(tip, str) and a.get("labeltooltip") == tip, (
                f"{d.name}: {e.tail} -> {e.head}: {a}"
            )
            for one in tip.split(" / "):
                section, _, rest = one.partition(" ")
                name, _, where = rest.partition(", ")
                path, _, line = where.rpartition(":")
                assert section.startswith("§") and path.startswith("spec/"), f"{d.name}: {one!r}"
                target = e.tail if dict(e.attrs).get("dir") == "back" else e.head
                assert name == target, f"{d.name}: the edge into {target} cites the rule {name!r}"
                lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
                text = " ".join(lines[int(line) - 1 : int(line) + 2])  # the call, its name on the next line
                assert "rule(" in text and (f'"{name}"' in text or "target.name" in text), (
                    f"{d.name}: {one!r} points at {text.strip()!r}"
                )
