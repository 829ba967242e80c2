"""The example SUTs and the reference controller behind the protocol.

* The Node.js example passes every election and replica-machine vector of both profiles through the real
  subprocess path (skipped, with the reason, when ``node`` is not installed), and is a complete kafka-2.8
  controller: every vector of the controller level and a differential run without divergence.
* ``kcspec serve-reference`` (the reference controller) declares every capability and passes machine-level
  vectors through the subprocess path.
* Differential testing finds the buggy example's unclean-election bug in event sequences, writes a trace, and
  ``replay`` of that trace fails on the buggy controller and passes on the reference controller.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from kcspec.conformance import differential, runner
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.examples.buggy_controller import BuggyController
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.vectors import generate, inputs
from kcspec.conformance.vectors.model import Level, Vector
from kcspec.conformance.verdicts import Outcome, Verdict
from kcspec.spec import tables
from kcspec.spec.events import BrokerStartup, ControllerEvent
from kcspec.spec.vocabulary import PartitionState, ReplicaState
from rich.console import Console

from tests.support.paths import ROOT
from tests.support.timing import scaled

NODE_SUT = ROOT / "conformance" / "examples" / "node" / "sut.js"
KCSPEC = str(Path(sys.executable).with_name("kcspec"))
PROFILES = ("kafka-2.8", "kafka-1.1")


def _vectors(profile: str, cases: list[inputs.Case]) -> list[Vector]:
    """Vectors settled by both oracles (spec and reference): every case is answered; cases on which the spec
    and the reference controller disagree become no vector (the CLI reports them)."""
    gen = generate.Generation()
    oracles = [SpecSut(), ReferenceSut()]
    out = []
    for case in cases:
        expected = generate._settle(profile, case, oracles, gen)
        if expected is not None:
            out.append(generate._vector(profile, case, expected))
    assert not gen.unanswered, gen.unanswered[:3]
    assert len(gen.disagreements) <= len(cases) // 20, gen.disagreements[:1]
    return out


def _replica_table(profile: str) -> dict[ReplicaState, tuple[ReplicaState, ...]]:
    return tables.REPLICA_VALID_PREVIOUS_2_8 if profile == "kafka-2.8" else tables.REPLICA_VALID_PREVIOUS_1_1


@pytest.fixture(
    scope="module",
    params=[
        # kafka-2.8's in the slow tier: test_node_example_is_a_complete_kafka_2_8_controller runs every vector of
        # kafka-2.8 (these levels included) through the same subprocess path in every run
        pytest.param("kafka-2.8", marks=pytest.mark.slow),
        "kafka-1.1",
    ],
)
def node_vectors(request: pytest.FixtureRequest) -> tuple[str, list[Vector]]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    profile: str = request.param
    cases = (
        list(inputs.election_cases())[::4]
        + list(inputs.replica_cases(_replica_table(profile)))
        + list(inputs.partition_cases(tables.PARTITION_VALID_PREVIOUS))
    )
    return profile, _vectors(profile, cases)


def test_node_example_passes_election_and_state_machine_vectors(
    node_vectors: tuple[str, list[Vector]],
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    profile, vectors = node_vectors
    report = runner.run(
        SubprocessAdapter([node, str(NODE_SUT)], timeout=scaled(10.0)),
        vectors,
        profile=profile,
        level=Level.machines,
    )
    assert set(report.sut.capabilities) >= {
        "elections",
        "replica_state_machine",
        "partition_state_machine",
        "fault_injection",
    }
    not_passed = [
        (o.id, o.reason, o.differences[:3]) for o in report.outcomes if o.verdict is not Verdict.passed
    ]
    assert not not_passed, not_passed[:3]
    levels = {o.level for o in report.outcomes}
    assert levels == {"elections", "machines"}
    replica = [o for o in report.outcomes if ".replica." in o.id]
    assert len(replica) > 400
    for section in ("§4.1", "§4.2", "§4.3", "§4.4", "§4.5", "§4.6", "§4.7", "§3.3", "§3.4"):
        assert any(section in o.sections for o in replica), section
    partition = [o for o in report.outcomes if ".partition." in o.id]
    assert len(partition) > 300


def test_node_example_refuses_what_it_does_not_implement() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    adapter = SubprocessAdapter([node, str(NODE_SUT)], timeout=scaled(10.0))
    adapter.start()
    try:
        hello = adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-1.1"))
        assert isinstance(hello, m.HelloReply) and "kafka-1.1" in hello.profiles
        early = adapter.call(m.ReplicaStateChange((), ReplicaState.OnlineReplica))
        assert isinstance(early, m.ErrorReply) and early.code is m.ErrorCode.no_state
        assert isinstance(adapter.call(m.Load(inputs.base_state())), m.Ok)
        snap = adapter.call(m.Snapshot())
        assert isinstance(snap, m.StateReply) and snap.state == inputs.base_state()
        part = adapter.call(m.PartitionStateChange((inputs.T0,), PartitionState.OfflinePartition))
        assert isinstance(part, m.StepReply)
        event = adapter.call(m.Event(BrokerStartup(4)))
        assert isinstance(event, m.ErrorReply) and event.code is m.ErrorCode.unsupported
    finally:
        adapter.close()


@dataclass(frozen=True)
class _WrongType(ControllerEvent):
    """``BrokerStartup`` with a string where the broker id goes."""

    kind: ClassVar[str] = "BrokerStartup"
    broker_id: object


@dataclass(frozen=True)
class _MissingField(ControllerEvent):
    """``TopicDeletion`` without its ``topics``."""

    kind: ClassVar[str] = "TopicDeletion"


@dataclass(frozen=True)
class _UnknownField(ControllerEvent):
    """``BrokerChange`` with a field no event has."""

    kind: ClassVar[str] = "BrokerChange"
    new_broker_ids: tuple[int, ...]
    brokers: tuple[int, ...]


@pytest.mark.parametrize(
    ("event", "named"),
    [
        (_WrongType("x"), "broker_id"),
        (_WrongType(None), "broker_id"),
        (_MissingField(), "topics"),
        (_UnknownField((5, 6), (1,)), "brokers"),
    ],
    ids=["wrong-type", "null", "missing", "unknown"],
)
def test_node_example_answers_a_malformed_event_with_invalid_input(
    event: ControllerEvent, named: str
) -> None:
    """A malformed field of an event is the SUT's ``invalid_input`` naming the field (not ``internal``), through the
    subprocess adapter, and the session goes on."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    adapter = SubprocessAdapter([node, str(NODE_SUT)], timeout=scaled(10.0))
    adapter.start()
    try:
        assert isinstance(adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8")), m.HelloReply)
        assert isinstance(adapter.call(m.Load(inputs.base_state())), m.Ok)
        reply = adapter.call(m.Event(event))
        assert isinstance(reply, m.ErrorReply), reply
        assert reply.code is m.ErrorCode.invalid_input, reply
        assert named in reply.message
        after = adapter.call(m.Event(BrokerStartup(4)))
        assert isinstance(after, m.StepReply), "a refused event changes nothing and the session goes on"
    finally:
        adapter.close()


def test_node_example_is_a_complete_kafka_2_8_controller(tmp_path: Path) -> None:
    """The Node.js example declares every capability for kafka-2.8 (the event queue and the gauges included) and,
    through the CLI with default settings (vectors of every level, then differential testing against the reference
    controller), passes every vector and diverges in no event sequence."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [
            KCSPEC,
            "conformance",
            "run",
            "--sut",
            f"{node} {NODE_SUT}",
            "--level",
            "controller",
            "--profile",
            "kafka-2.8",
            "--differential",
            "150",
            "--seed",
            "7",
            # all 150 sequences however busy the machine: without a budget the differential run stops at 40 s
            "--budget",
            str(scaled(600)),
            "--trace-dir",
            str(tmp_path / "traces"),
            "--json",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=scaled(600),
        check=False,
    )
    report = json.loads(report_path.read_text())
    # the event queue's vectors (protocol 1.3, capability callbacks) run and pass like every other
    queue = [o for o in report["outcomes"] if ".event.queue." in o["id"]]
    assert queue and all(o["verdict"] == "passed" for o in queue), queue[:3]
    failing = [(o["id"], o.get("reason")) for o in report["outcomes"] if o["verdict"] != "passed"]
    assert done.returncode == 0 and not failing, (failing[:5], done.stdout[-3000:])
    # every capability, the controller's gauges (protocol 1.2) included: compared on every event step
    assert set(report["sut"]["capabilities"]) == {c.name for c in m.Capability}
    assert not any("controller metrics not compared" in note for note in report["notes"]), report["notes"]
    assert not any("event queue not tested" in n for n in report["notes"]), report["notes"]
    events = [o for o in report["outcomes"] if ".event." in o["id"]]
    assert len(events) > 250
    for section in (
        "§7.1",
        "§7.2",
        "§7.3",
        "§7.4",
        "§7.5",
        "§7.6",
        "§7.7",
        "§7.9",
        "§7.10",
        "§7.11",
        "§8",
        "§9",
    ):
        assert any(section in o["sections"] for o in events), section
    differential_outcomes = [o for o in report["outcomes"] if ".differential." in o["id"]]
    assert [o["verdict"] for o in differential_outcomes] == ["passed"], differential_outcomes
    assert any("150 of 150 sequences" in n and "0 divergence group" in n for n in report["notes"]), report[
        "notes"
    ]


def test_node_example_exits_after_shutdown() -> None:
    """Protocol v1: ``shutdown`` is answered with ``ok``, then the SUT exits (an example that stays alive costs
    every session the adapter's two-second grace period before it is terminated)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node.js example SUT cannot be run")
    proc = subprocess.Popen([node, str(NODE_SUT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(m.to_line(1, m.Hello(m.PROTOCOL_VERSION, "kafka-2.8")) + m.to_line(2, m.Shutdown()))
        proc.stdin.flush()
        assert m.parse_response(proc.stdout.readline())[0] == 1
        assert m.parse_response(proc.stdout.readline()) == (2, m.Ok())
        assert proc.wait(timeout=scaled(10.0)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_reference_declares_everything_and_passes_machine_vectors() -> None:
    profile = "kafka-1.1"
    cases = [
        *list(inputs.election_cases())[::25],
        *list(inputs.replica_cases(_replica_table(profile)))[::5],
        *list(inputs.partition_cases(tables.PARTITION_VALID_PREVIOUS))[::10],
    ]
    vectors = _vectors(profile, cases)
    report = runner.run(
        SubprocessAdapter([KCSPEC, "serve-reference"], timeout=scaled(10.0)),
        vectors,
        profile=profile,
        level=Level.machines,
    )
    assert set(report.sut.capabilities) == {c.name for c in m.Capability}
    assert report.sut.name == "kcspec-reference"
    assert report.counts()[Verdict.passed] == len(vectors) > 100


@pytest.fixture(scope="module")
def buggy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Outcome], list[str], Path]:
    trace_dir = tmp_path_factory.mktemp("traces")
    outcomes, notes = differential.run_differential(
        InProcessAdapter(BuggyController()),
        profile="kafka-2.8",
        examples=300,
        seed=3,
        trace_dir=trace_dir,
        console=_quiet(),
    )
    traces = sorted(trace_dir.glob("divergence-kafka-2.8-seed3-*.json"))
    assert traces, notes
    return outcomes, notes, traces[0]


def _quiet() -> Console:
    return Console(file=io.StringIO())


def test_differential_finds_the_buggy_controller_and_replay_reproduces_it(
    buggy_run: tuple[list[Outcome], list[str], Path],
) -> None:
    outcomes, notes, trace = buggy_run
    assert outcomes and {o.verdict for o in outcomes} == {Verdict.failed}, outcomes
    assert trace.is_file() and any(str(trace) in n for n in notes)
    assert any(d.path.startswith(("$.failures", "$.state", "$.requests")) for d in outcomes[0].differences)
    assert differential.replay_file(trace, InProcessAdapter(BuggyController()), _quiet()) == 1
    assert differential.replay_file(trace, InProcessAdapter(ReferenceSut()), _quiet()) == 0


def test_replay_refuses_a_sut_without_controller_events(
    buggy_run: tuple[list[Outcome], list[str], Path],
) -> None:
    _, _, trace = buggy_run
    with pytest.raises(differential.TraceError, match="controller_events"):
        differential.replay_file(trace, InProcessAdapter(SpecElectionsOnly()), _quiet())


class SpecElectionsOnly(SpecSut):
    """The spec, declaring elections only."""

    capabilities = frozenset({m.Capability.elections})
