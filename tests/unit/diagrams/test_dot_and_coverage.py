"""The DOT writer is deterministic and quotes safely; coverage input is validated with precise messages."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from kcspec.model.diagrams import machines as M
from kcspec.model.diagrams.coverage import CoverageError, load_coverage, parse_coverage
from kcspec.model.diagrams.dot import Edge, Graph, Html, Node, attrs, render_dot
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8, Profile
from kcspec.spec.vocabulary import ReplicaState


def test_dot_quotes_and_keeps_attribute_order() -> None:
    g = Graph(
        "g",
        nodes=(Node('a "b"', attrs(label="x\ny", shape="box")), Node("t", attrs(label=Html("<b>t</b>")))),
        edges=(Edge('a "b"', "t", attrs(color="red", label="1")),),
    )
    text = render_dot(g)
    assert '"a \\"b\\"" [label="x\\ny", shape="box"];' in text
    assert '"t" [label=<<b>t</b>>];' in text
    assert '"a \\"b\\"" -> "t" [color="red", label="1"];' in text
    assert text == render_dot(dataclasses.replace(g))


def _effects(profile: Profile, machine: str) -> dict[tuple[str, str], tuple[str, ...]]:
    return {e: (f"{e[0]}→{e[1]}",) for e in M.valid_edges(profile, machine)}


def test_state_machine_edges_follow_the_table() -> None:
    text = render_dot(M.state_machine_graph(KAFKA_2_8, "replica", _effects(KAFKA_2_8, "replica")))
    # §2.1: OfflineReplica → ReplicaDeletionIneligible exists in 2.8 only
    assert '"OfflineReplica" -> "ReplicaDeletionIneligible"' in text
    old = render_dot(M.state_machine_graph(KAFKA_1_1, "replica", _effects(KAFKA_1_1, "replica")))
    assert '"OfflineReplica" -> "ReplicaDeletionIneligible"' not in old
    # self-loops are drawn; the edge back into the initial state is written reversed for ranking
    assert '"OnlineReplica" -> "OnlineReplica"' in text
    assert '"NonExistentReplica" -> "ReplicaDeletionSuccessful"' in text and 'dir="back"' in text


def test_a_changed_table_changes_the_dot() -> None:
    table = dict(KAFKA_2_8.replica_valid_previous)
    table[ReplicaState.NewReplica] = (ReplicaState.NonExistentReplica, ReplicaState.OfflineReplica)
    changed = dataclasses.replace(KAFKA_2_8, replica_valid_previous=table)
    a = render_dot(M.state_machine_graph(KAFKA_2_8, "replica", _effects(KAFKA_2_8, "replica")))
    b = render_dot(M.state_machine_graph(changed, "replica", _effects(changed, "replica")))
    assert a != b and '"OfflineReplica" -> "NewReplica"' in b


def test_missing_effect_is_an_error_naming_the_edge() -> None:
    effects = _effects(KAFKA_2_8, "partition")
    del effects[("OnlinePartition", "OfflinePartition")]
    with pytest.raises(KeyError, match="OnlinePartition -> OfflinePartition"):
        M.state_machine_graph(KAFKA_2_8, "partition", effects)


def test_comparison_highlights_profile_only_edges() -> None:
    effects = {p.name: _effects(p, "replica") for p in (KAFKA_2_8, KAFKA_1_1)}
    text = render_dot(M.comparison_graph("replica", effects))
    line = next(x for x in text.splitlines() if '"OfflineReplica" -> "ReplicaDeletionIneligible"' in x)
    assert "kafka-2.8 only" in line
    assert "offline_replica_without_leadership" in text  # a §4 flag that differs


def _run(edges: list[dict[str, object]], profile: str = "kafka-2.8", machine: str = "replica") -> object:
    return {"profile": profile, "machine": machine, "edges": edges}


def test_coverage_sums_entries_and_splits_invalid() -> None:
    e1 = {"from": "OnlineReplica", "to": "OfflineReplica", "count": 2, "valid": True}
    bad = {"from": "NewReplica", "to": "NewReplica", "count": 3, "valid": False}
    out = parse_coverage([_run([e1, bad]), _run([e1])], "run.json", "run.json")
    assert len(out) == 1
    assert out[0].overlay.taken == {("OnlineReplica", "OfflineReplica"): 4}
    assert out[0].overlay.invalid == {("NewReplica", "NewReplica"): 3}
    graph = M.state_machine_graph(KAFKA_2_8, "replica", _effects(KAFKA_2_8, "replica"), out[0].overlay)
    text = render_dot(graph)
    assert "invalid ×3" in text and "×4" in text and "never taken" in text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_run([], profile="kafka-9"), "entry 0: 'profile' is 'kafka-9'"),
        (_run([], machine="broker"), "'machine' is 'broker'"),
        (
            _run([{"from": "Online", "to": "OfflineReplica", "count": 1, "valid": True}]),
            "edge 0: 'from' is 'Online'",
        ),
        (_run([{"from": "NewReplica", "to": "OnlineReplica", "count": -1, "valid": True}]), "non-negative"),
        (_run([{"from": "NewReplica", "to": "NewReplica", "count": 1, "valid": True}]), "does not allow it"),
        (_run([{"from": "NewReplica", "to": "OnlineReplica", "count": 1, "valid": False}]), "allows it"),
        ([1], "expected an object"),
    ],
)
def test_coverage_errors_name_what_and_where(data: object, message: str) -> None:
    with pytest.raises(CoverageError, match=re.escape(message)):
        parse_coverage(data, "run.json", "run.json")


def test_coverage_file_errors(tmp_path: Path) -> None:
    p = tmp_path / "run.json"
    p.write_text("{not json")
    with pytest.raises(CoverageError, match=re.escape("run.json: not JSON")):
        load_coverage(p)
    with pytest.raises(CoverageError, match="cannot read"):
        load_coverage(tmp_path / "absent.json")
    p.write_bytes(b"\xb1\x00\xff binary")
    with pytest.raises(CoverageError, match=re.escape("run.json: not UTF-8 text")):
        load_coverage(p)
    p.write_text(json.dumps(_run([])))
    assert load_coverage(p)[0].overlay.source == "run.json"
