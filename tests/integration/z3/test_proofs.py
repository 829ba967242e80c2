"""The proof suite: election lemmas hold (and fail where §6 says they must), tables are sane, the CLI's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.model.z3.election_lemmas import LEMMAS, prove_strategy, renaming_invariant
from kcspec.model.z3.prove import run_proofs
from kcspec.model.z3.table_sanity import check_machine, table_differences
from kcspec.spec import lang as L
from kcspec.spec.elections import elect
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8
from kcspec.spec.vocabulary import NO_LEADER, ElectionResult, ElectionStrategy, ReplicaState

S = ElectionStrategy


@pytest.mark.parametrize("profile", [KAFKA_2_8, KAFKA_1_1], ids=lambda p: p.name)
@pytest.mark.parametrize("strategy", list(S), ids=lambda s: s.value)
def test_election_lemmas_up_to_four_brokers(profile: object, strategy: ElectionStrategy) -> None:
    results = prove_strategy(profile, strategy, 4)  # type: ignore[arg-type]
    assert len(results) == sum(1 for lm in LEMMAS if strategy in lm.strategies)
    assert not [r for r in results if r.failed], [r.detail for r in results if r.failed]
    expected = {r.name for r in results if r.status == "expected-counterexample"}
    if strategy is S.OfflinePartitionLeaderElectionStrategy:
        assert expected == {"election/offline: the resulting ISR is a subset of AR"}
    if strategy is S.ControlledShutdownPartitionLeaderElectionStrategy:
        assert bool(expected) == (profile is KAFKA_1_1)


def test_a_wrong_rule_is_refuted_with_a_readable_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """A strategy that picks the *last* eligible replica breaks "first" and is caught."""
    from kcspec.model.z3 import election_lemmas as EL

    def last_eligible(p: object, strategy: object, inp: L.Expr) -> L.Expr:
        ar, isr, online = inp.f("assignment"), inp.f("leader_and_isr", "isr"), inp.f("online")
        eligible = ar.filter(lambda r: online.contains(r) & isr.contains(r))
        last = eligible.fold(L.lit(NO_LEADER), lambda acc, r: r)
        return L.rec(ElectionResult, leader=last, isr=isr, recipients=ar, unclean=False)

    monkeypatch.setattr(EL, "elect", last_eligible)
    results = prove_strategy(KAFKA_2_8, S.ReassignPartitionLeaderElectionStrategy, 3)
    by_name = {r.name.split(": ", 1)[1]: r for r in results}
    first = by_name["the chosen leader is the first candidate satisfying it"]
    assert first.status == "counterexample"
    assert "AR=" in first.detail and "→ result leader=" in first.detail


def test_election_rules_are_renaming_invariant() -> None:
    for strategy in S:
        assert renaming_invariant(elect(KAFKA_2_8, strategy, L.var("inp")))
    assert not renaming_invariant(L.var("x").eq(3))


def test_tables_are_sane_and_a_broken_table_is_reported() -> None:
    assert check_machine("replica", KAFKA_2_8.replica_valid_previous, ReplicaState.NonExistentReplica) == []
    broken = dict(KAFKA_2_8.replica_valid_previous)
    broken[ReplicaState.NonExistentReplica] = ()
    problems = check_machine("replica", broken, ReplicaState.NonExistentReplica)
    assert any("dead ends" in p for p in problems)
    assert "replica OfflineReplica→ReplicaDeletionIneligible: kafka-2.8 only" in table_differences()


def test_run_proofs_rejects_bad_input() -> None:
    with pytest.raises(KeyError):
        run_proofs("kafka-0.8", 3)
    with pytest.raises(ValueError):
        run_proofs("kafka-2.8", 0)


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    from kcspec.commands.prove import command

    runner = CliRunner()
    out = tmp_path / "p.json"
    ok = runner.invoke(
        command, ["--profile", "kafka-1.1", "--brokers", "2", "--no-induction", "--json", str(out)]
    )
    assert ok.exit_code == 0, ok.output
    data = json.loads(out.read_text())
    statuses = {r["status"] for r in data["results"]}
    assert "proved" in statuses and "expected-counterexample" in statuses
    [skipped] = [r for r in data["results"] if r["name"].startswith("induction")]
    assert skipped["status"] == "skipped" and "--no-induction" in skipped["detail"]
    assert runner.invoke(command, ["--brokers", "0"]).exit_code == 2
    assert runner.invoke(command, ["--profile", "nope"]).exit_code == 2
