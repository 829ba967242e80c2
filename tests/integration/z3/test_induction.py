"""Inductiveness checks: a non-inductive invariant yields a readable counterexample to induction that the Python
backend reproduces; a few (invariant, action) pairs are proved; an undecided pair is never reported as proved."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from kcspec.model.step import SpecMachine
from kcspec.model.z3.induction import InductionOutcome, check_profile, summarize
from kcspec.model.z3.induction_family import Shape
from kcspec.model.z3.results import ProofResult
from kcspec.spec import codec
from kcspec.spec.invariants import invariants
from kcspec.spec.lang import Invariant, Var
from kcspec.spec.profiles import KAFKA_2_8
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ZkFault

ONE_SHAPE = [Shape((0, 1), 0, False)]


def test_a_non_inductive_invariant_gives_two_readable_states_and_the_event() -> None:
    no_fault = Invariant(
        "no fault armed",
        "§3.3",
        "deliberately not inductive",
        "state",
        Var("s").f("zk", "faults").size().eq(0),
    )
    [verdict] = check_profile(KAFKA_2_8, [no_fault], ["ZkFaultInjection"], only=ONE_SHAPE)
    assert verdict.status == "counterexample"
    text = verdict.detail
    assert "counterexample to induction" in text and "after (changes):" in text
    assert re.search(r'zk\.faults\.t-0: "\(absent\)" → "(BADVERSION|CONNECTIONLOSS)"', text), text
    # the pre-state is canonical JSON the Python backend accepts, and it reproduces the step
    event_json, before_json = re.findall(r"event \w+ (\{.*?\})\n  before: (\{.*\})", text)[0]
    before = codec.loads(before_json, ClusterState)
    event = codec.decode_event(json.loads(event_json))
    after = SpecMachine(KAFKA_2_8.name).step(before, event).state
    assert not before.zk.faults and set(after.zk.faults.values()) <= set(ZkFault) and after.zk.faults


def test_controller_bookkeeping_invariants_are_inductive_over_controller_events() -> None:
    wanted = ("W4", "W5", "W8", "I9")
    invs = [i for i in invariants(KAFKA_2_8) if i.name.split()[0] in wanted]
    verdicts = check_profile(
        KAFKA_2_8,
        invs,
        ["ControllerResignation", "ControllerChange", "NewerControllerElected"],
        only=ONE_SHAPE,
    )
    assert len(verdicts) == len(wanted) * 3
    assert {v.status for v in verdicts} == {"proved"}, [(v.invariant, v.action, v.detail) for v in verdicts]


def test_an_undecided_pair_is_not_reported_as_proved() -> None:
    verdicts = [
        InductionOutcome("X", "§11", "BrokerFailure", "proved", 3, 0.1),
        InductionOutcome("X", "§11", "BrokerStartup", "not-decided", 0, 0.1, "time-out"),
    ]
    [result] = summarize(KAFKA_2_8, verdicts)
    assert result.status == "skipped"
    assert "not-decided: BrokerStartup" in result.detail


def test_prove_induction_prints_the_verdict_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from kcspec.commands import prove as cmd

    verdicts = [
        InductionOutcome("W4 no context", "§7.12", "ControllerChange", "proved", 2, 0.1),
        InductionOutcome(
            "W4 no context",
            "§7.12",
            "BrokerFailure",
            "counterexample",
            1,
            0.1,
            "counterexample to induction …",
        ),
    ]

    def fake(profile: str, brokers: int, induction: bool) -> list[ProofResult]:
        assert induction
        return summarize(KAFKA_2_8, verdicts)

    monkeypatch.setattr(cmd, "run_proofs", fake)
    result = CliRunner().invoke(cmd.command, ["--profile", "kafka-2.8", "--induction"])
    assert result.exit_code == 1, result.output
    assert "inductiveness" in result.output and "counterexample: BrokerFailure" in result.output


def test_worker_processes_give_the_verdicts_of_one_process() -> None:
    """Families checked in worker processes (which rebuild everything from names) are combined in family order:
    the same verdicts and details as checking them in this process."""
    kinds = ["ControllerResignation", "ZkFaultInjection"]
    two = [Shape((0, 1), 0, False), Shape((0,), 0, True)]
    alone = check_profile(KAFKA_2_8, kinds=kinds, only=two)
    pooled = check_profile(KAFKA_2_8, kinds=kinds, only=two, workers=2)
    assert [(v.invariant, v.action, v.status, v.checked, v.detail) for v in pooled] == [
        (v.invariant, v.action, v.status, v.checked, v.detail) for v in alone
    ]
    assert {v.status for v in pooled} == {"proved"}
