"""The TLA+ model shared by TLC and the explorer, and ``kcspec tla crosscheck``.

Without TLC, the comparison's plumbing is tested against a stand-in ``java`` (``fakes/fake_tlc.py``) that writes
TLC's output and state dump for a given list of states; the real comparison runs when ``TLA2TOOLS_JAR`` is set.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.explore.explorer import ExploreResult
from kcspec.conformance.selfcheck.explore.fingerprint import DEFAULT_SCHEME, Fingerprinter, FingerprintSet
from kcspec.conformance.selfcheck.explore.tla_model import check_count, explore_model, model_events
from kcspec.conformance.selfcheck.tla_crosscheck import (
    EXPLORER_NICE,
    CrosscheckArgs,
    CrosscheckOutcome,
    CrosscheckResult,
    default_explorer_workers,
    run_crosscheck,
)
from kcspec.conformance.selfcheck.tla_dump_read import DumpError, ranges, read_dump_against
from kcspec.model.step import SpecMachine
from kcspec.model.tla import domains as D
from kcspec.model.tla.bounds import within_bounds
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.manifest import load
from kcspec.model.tla.module import generate
from kcspec.model.tlc.dump import parse_dump
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.trace import TraceFormatError
from kcspec.spec import codec
from kcspec.spec.actions import build_actions
from kcspec.spec.events import BrokerStartup, ControllerFailover, TopicCreation, TopicDeletion
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState

from kcspec.cli import main
from tests.support.fakes.fake_tlc import write_dump
from tests.support.paths import SUPPORT

TINY = ModelConfig(
    brokers=1,
    topics=1,
    partitions=1,
    rf=1,
    max_controller_epoch=1,
    max_leader_epoch=1,
    max_zxid=2,
    max_zk_version=0,
)
FAKE = SUPPORT / "fakes" / "fake_tlc.py"


def test_domains_enumerate_the_sets_their_text_names() -> None:
    c = ModelConfig(brokers=3, topics=2, partitions=2, rf=2)
    assert len(D.replica_lists(c)) == 3 + 6 + 6
    assert all(len(set(q)) == len(q) for q in D.replica_lists(c))
    assert len(D.rf_lists(c)) == 6
    assert len(D.ASSIGNMENTS.values(c)) == 6 + 6 * 6
    assert len(D.PARTITION_SETS.values(c)) == 2**4 - 1
    assert D.BROKER_EPOCHS.values(c) == (-1, 1, 2, 3, 4)
    assert D.CONTROLLER_EPOCHS.values(c) == (1, 2)
    assert D.TOPICS_OR_ALL.values(c) == ("", "t0", "t1")


def test_next_tries_every_action_with_every_parameter_value() -> None:
    events = model_events("kafka-2.8", TINY)
    kinds = Counter(e.kind for e in events)
    # every action but those kept out of the models (model/tla/domains.py NOT_IN_MODELS, each with its reason)
    assert set(kinds) == set(build_actions(get_profile("kafka-2.8"))) - set(D.NOT_IN_MODELS)
    # one broker, one partition: 2 election types x 3 triggers; the zombie write: tp x leader x isr x epoch
    assert kinds["ReplicaLeaderElection"] == 6
    assert kinds["ZombieControllerWrite"] == 1
    assert kinds["ControlledShutdown"] == 1 * 3  # broker epochs -1, 1, 2
    assert kinds["ApiPartitionReassignment"] == 2  # the one RF list, or cancel (None)
    module = generate(get_profile("kafka-2.8"), TINY)
    # a domain that is an expression is a constant-level definition, which TLC evaluates once
    assert "BrokerEpochValues == {-1} \\cup 1..MaxZxid" in module.tla
    assert re.search(
        r"\\E broker_epoch \\in BrokerEpochValues :\s+ControlledShutdown\(broker_id, broker_epoch\)",
        module.tla,
    ), "ControlledShutdown's entry of Next"


def test_bounds_are_the_modules_state_constraint() -> None:
    spec = SpecMachine("kafka-2.8")
    s = ClusterState()
    assert within_bounds(s, TINY)
    for ev in (BrokerStartup(0), BrokerStartup(1), ControllerFailover(0), TopicCreation("t0", ((0,),))):
        s = spec.step(s, ev).state
    two = ModelConfig(brokers=2, rf=1, max_controller_epoch=1, max_zxid=3)
    assert within_bounds(s, two)
    assert not within_bounds(s, ModelConfig(brokers=2, rf=1, max_controller_epoch=1, max_zxid=2))
    s = spec.step(s, ControllerFailover(1)).state
    assert s.zk.controller_epoch == 2
    assert not within_bounds(s, two)
    assert within_bounds(s, ModelConfig(brokers=2, rf=1, max_controller_epoch=2, max_zxid=3))
    module = generate(get_profile("kafka-2.8"), TINY)
    constraint = module.tla.split("StateConstraint ==")[1]
    for const in ("MaxControllerEpoch", "MaxZxid", "MaxLeaderEpoch", "MaxZkVersion"):
        assert const in constraint
    assert "MaxZkVersion = 0" in module.cfg and "CONSTRAINT StateConstraint" in module.cfg


@pytest.mark.parametrize("name", [e.name for e in load() if "minimal" in e.name])
def test_explorer_counts_match_the_manifest(name: str) -> None:
    checked = check_count(next(e for e in load() if e.name == name))
    assert checked.problem is None, f"{name}: {checked.problem}"


def test_dump_parser_reads_tlcs_format_and_names_bad_lines() -> None:
    text = "State 1:\n/\\ x = 1\n/\\ y = <<1, 2>>\n\nState 2:\n/\\ x = 2\n/\\ y = [a |-> {1,\n  2}]\n\n"
    states = list(parse_dump(iter(text.splitlines(keepends=True))))
    assert [s.number for s in states] == [1, 2]
    assert states[1].var("x") == 2
    with pytest.raises(TraceFormatError, match="dump:1"):
        list(parse_dump(iter(["garbage\n"])))


def _fake_java(tmp_path: Path) -> Toolchain:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"")
    return Toolchain(java, jar)


@pytest.fixture(scope="module")
def tiny_explored() -> ExploreResult:
    result = explore_model("kafka-2.8", TINY, keep_states=True)
    assert result.states is not None and result.finding is None
    return result


def _cluster_states(result: ExploreResult) -> list[ClusterState]:
    """The explored states in the explorer's order: all ``ClusterState`` (the result types them ``Hashable``)."""
    assert result.states is not None
    states = [s for s in result.states if isinstance(s, ClusterState)]
    assert len(states) == len(result.states)
    return states


@pytest.fixture()
def tiny_states(tiny_explored: ExploreResult) -> list[str]:
    """The tiny model's states, in the explorer's breadth-first order (what the stand-in TLC dumps)."""
    assert tiny_explored.states is not None
    return [codec.dumps(s) for s in tiny_explored.states]


def _run(
    tmp_path: Path, states: list[str], monkeypatch: pytest.MonkeyPatch, explorer_workers: int = 1, **env: str
) -> CrosscheckResult:
    listing = tmp_path / "states.jsonl"
    listing.write_text("\n".join(states) + "\n")
    monkeypatch.setenv("FAKE_TLC_STATES", str(listing))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    args = CrosscheckArgs("kafka-2.8", TINY, explorer_workers=explorer_workers)
    return run_crosscheck(args, _fake_java(tmp_path))


@pytest.mark.parametrize("explorer_workers", [1, 2])
def test_crosscheck_agrees_when_both_sides_reach_the_same_states(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch, explorer_workers: int
) -> None:
    result = _run(tmp_path, tiny_states, monkeypatch, explorer_workers)
    assert result.verdict is CrosscheckOutcome.AGREE, result.message
    assert result.tlc_distinct == result.explorer_distinct == result.dumped == 828
    assert "-dump" in result.tlc.argv


@pytest.mark.parametrize("explorer_workers", [1, 2])
def test_crosscheck_prints_states_reachable_on_one_side_only(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch, explorer_workers: int
) -> None:
    """TLC's dump without its last two states: the explorer's two are reported with the shortest event sequence
    to each, rebuilt from the parents' fingerprints (one process or two alike)."""
    result = _run(tmp_path, tiny_states, monkeypatch, explorer_workers, FAKE_TLC_DROP="2")
    assert result.verdict is CrosscheckOutcome.DIFFER
    assert result.exit_code == 1
    assert (result.only_explorer, result.only_tlc) == (2, 0)
    sample = result.explorer_samples[0]
    assert codec.dumps(sample.state) in tiny_states[-2:]
    assert sample.path is not None
    replayed = ClusterState()
    for ev in sample.path:
        replayed = SpecMachine("kafka-2.8").step(replayed, ev).state
    assert replayed == sample.state


def test_the_explorer_processes_yield_their_core_to_tlc(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TLC searches on one thread and the explorer's processes on whatever cores are free, so TLC keeps this
    process's priority and the explorer's workers run ``EXPLORER_NICE`` below it (the result is the same)."""
    tlc_nice = tmp_path / "tlc-nice"
    monkeypatch.setenv("FAKE_TLC_NICE", str(tlc_nice))
    listing = tmp_path / "states.jsonl"
    listing.write_text("\n".join(tiny_states) + "\n")
    monkeypatch.setenv("FAKE_TLC_STATES", str(listing))
    workers: list[int] = []

    def progress(_: object) -> None:
        pids = [p.pid for p in multiprocessing.active_children() if p.name.startswith("kcspec-explore")]
        workers.extend(os.getpriority(os.PRIO_PROCESS, pid) for pid in pids if pid is not None)

    args = CrosscheckArgs("kafka-2.8", TINY, explorer_workers=2)
    result = run_crosscheck(args, _fake_java(tmp_path), on_explore_progress=progress)
    assert result.verdict is CrosscheckOutcome.AGREE, result.message
    ours = os.nice(0)
    assert int(tlc_nice.read_text()) == ours, "TLC runs at the crosscheck's own priority"
    assert workers and set(workers) == {min(19, ours + EXPLORER_NICE)}, (
        f"the explorer's workers ran at {workers}"
    )


def test_the_explorer_side_is_the_reference_controller_alone_unless_lockstep(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the explorer's successors are the reference controller's own (its guards, its steps; TLC on the
    module generated from the spec is the other side): a reference controller that refuses every topic deletion
    shows as states reachable in TLC's model only. With ``lockstep`` the spec runs beside it and the same bug is
    the explorer's refinement finding."""
    from kcspec.reference_impl import ReferenceController

    enabled = ReferenceController.enabled

    def refusing(self: ReferenceController, event: object) -> bool:
        return False if isinstance(event, TopicDeletion) else enabled(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(ReferenceController, "enabled", refusing)
    listing = tmp_path / "states.jsonl"
    listing.write_text("\n".join(tiny_states) + "\n")
    monkeypatch.setenv("FAKE_TLC_STATES", str(listing))
    tools = _fake_java(tmp_path)
    alone = run_crosscheck(CrosscheckArgs("kafka-2.8", TINY, samples=1), tools)
    assert alone.verdict is CrosscheckOutcome.DIFFER, alone.message
    assert alone.only_tlc > 0 and alone.only_explorer == 0, alone.message
    assert alone.explorer_distinct < 828 and alone.tlc_distinct == 828
    (sample,) = alone.tlc_samples
    assert codec.dumps(sample.state) in tiny_states and sample.path is None  # as TLC wrote it
    both = run_crosscheck(CrosscheckArgs("kafka-2.8", TINY, lockstep=True), tools)
    assert both.verdict is CrosscheckOutcome.EXPLORER_FINDING, both.message
    assert both.explored is not None and both.explored.finding is not None
    assert both.explored.finding.kind == "enabled", both.message
    assert both.explored.finding.events[-1].kind == "TopicDeletion"


def test_crosscheck_cli_reports_tlc_only_states_and_json(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = ClusterState(config=ClusterState().config.__class__(unclean_topics=frozenset({"zz"})))
    listing = tmp_path / "states.jsonl"
    listing.write_text("\n".join([*tiny_states, codec.dumps(extra)]) + "\n")
    tools = _fake_java(tmp_path)
    monkeypatch.setenv("FAKE_TLC_STATES", str(listing))
    monkeypatch.setenv("JAVA_HOME", str(tools.java.parent.parent))
    out = tmp_path / "cc.json"
    args = ["tla", "crosscheck", "--brokers", "1", "--rf", "1", "--max-controller-epoch", "1"]
    args += ["--max-leader-epoch", "1", "--max-zxid", "2", "--max-zk-version", "0"]
    args += ["--tla2tools", str(tools.jar), "--json", str(out)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1, res.output
    assert "reachable in TLC's model only" in res.output and '"zz"' in res.output
    assert '"only_tlc": 1' in out.read_text()
    assert (
        json.loads(out.read_text())["lockstep"] is False
    )  # the explorer side: the reference controller alone


def test_crosscheck_reports_a_tlc_violation_without_comparing(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(tmp_path, tiny_states, monkeypatch, FAKE_TLC_EXIT="violation")
    assert result.verdict is CrosscheckOutcome.TLC_FAILED and result.exit_code == 1
    assert result.explored is None


def test_crosscheck_names_bad_options_and_stops_at_max_states(
    tmp_path: Path, tiny_states: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    res = CliRunner().invoke(main, ["tla", "crosscheck", "--brokers", "1", "--rf", "1", "--max-states", "0"])
    assert res.exit_code == 2 and "--max-states must be at least 1" in res.output
    res = CliRunner().invoke(
        main, ["tla", "crosscheck", "--brokers", "1", "--rf", "1", "--explorer-workers", "0"]
    )
    assert res.exit_code == 2 and "--explorer-workers must be at least 1" in res.output
    listing = tmp_path / "states.jsonl"
    listing.write_text("\n".join(tiny_states) + "\n")
    monkeypatch.setenv("FAKE_TLC_STATES", str(listing))
    result = run_crosscheck(CrosscheckArgs("kafka-2.8", TINY, max_states=10), _fake_java(tmp_path))
    assert result.verdict is CrosscheckOutcome.EXPLORER_TRUNCATED and result.exit_code == 2
    assert "--max-states 10" in result.message


def test_crosscheck_without_tlc_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from kcspec.model.tlc import locate

    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    monkeypatch.setattr(locate, "installed_jar", lambda: None)
    res = CliRunner().invoke(main, ["tla", "crosscheck", "--brokers", "1", "--rf", "1"])
    assert res.exit_code == 2
    assert "TLA2TOOLS_JAR" in res.output


@pytest.mark.parametrize(("cores", "expected"), [({0}, 1), ({0, 1}, 2), (set(range(16)), 2)])
def test_the_explorer_side_uses_the_core_tlc_leaves_by_default(
    monkeypatch: pytest.MonkeyPatch, cores: set[int], expected: int
) -> None:
    """With no --explorer-workers, the explorer runs as two processes where two cores are there to run them (TLC's
    side ends long before the explorer's), and as one on a single core."""
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    assert default_explorer_workers() == expected


def test_the_dump_read_by_several_processes_gives_what_one_process_reads(
    tmp_path: Path, tiny_explored: ExploreResult
) -> None:
    """The dump is cut at state headers; counts, fingerprints and the first TLC-only samples (in the dump's order)
    are those of one process reading it whole."""
    assert tiny_explored.states is not None
    states = _cluster_states(tiny_explored)
    known = FingerprintSet()
    fingerprints = Fingerprinter(DEFAULT_SCHEME)
    for st in states[::2]:  # half of them "reached by the explorer"
        fingerprints.forget()
        known.add(fingerprints(st))
    dump = write_dump(tmp_path / "states.dump", states)
    whole = read_dump_against(dump, known, DEFAULT_SCHEME, 3, processes=1)
    assert (whole.dumped, whole.only_tlc, len(whole.seen)) == (828, 414, 828)
    assert list(whole.samples) == states[1:6:2]
    for n in (2, 3, 7):
        cuts = ranges(dump, n)
        assert len(cuts) == n and cuts[0][0] == 0 and cuts[-1][1] == dump.stat().st_size
        assert all(dump.read_bytes()[start : start + 6] == b"State " for start, _ in cuts)
        split = read_dump_against(dump, known, DEFAULT_SCHEME, 3, processes=n)
        assert (split.dumped, split.only_tlc, split.samples) == (whole.dumped, whole.only_tlc, whole.samples)
        assert sorted(split.seen) == sorted(whole.seen)


def test_a_bad_state_in_the_second_half_of_the_dump_is_named(
    tmp_path: Path, tiny_explored: ExploreResult
) -> None:
    """Whether one process reads the dump or two, a state that cannot be read is named by its number, and a
    syntax error by the file's own line."""
    assert tiny_explored.states is not None
    good = write_dump(tmp_path / "states.dump", _cluster_states(tiny_explored)).read_text()
    header = "State 700:\n/\\ zk = ["
    line = good[: good.index(header)].count("\n") + 2  # the zk line of state 700
    bad_type = tmp_path / "bad-type.dump"
    bad_type.write_text(
        good.replace(header + "controller |-> ", header + 'controller |-> "x", bogus |-> ', 1)
    )
    bad_text = tmp_path / "bad-text.dump"
    bad_text.write_text(good.replace(header, header + "[", 1))
    for n in (1, 2):
        with pytest.raises(DumpError, match="state 700 does not fit the data model"):
            read_dump_against(bad_type, FingerprintSet(), DEFAULT_SCHEME, 3, processes=n)
        with pytest.raises(
            DumpError, match=rf"unreadable: .*bad-text.dump:{line - 1}: state 700, variable zk"
        ):
            read_dump_against(bad_text, FingerprintSet(), DEFAULT_SCHEME, 3, processes=n)
