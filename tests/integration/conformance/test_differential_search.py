"""Differential testing respects the SUT, reports every divergence, and keeps to its budget."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import ClassVar

import pytest
from kcspec.conformance import differential
from kcspec.conformance.adapters.base import FailureKind, SutFailure
from kcspec.conformance.adapters.inprocess import InProcessAdapter, SutError
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.session_mutants import (
    LiveBrokersNeverShrink,
    StaleControllerEpoch,
    UpdateMetadataDeduplicated,
)
from kcspec.conformance.signature import Signature, general_path
from kcspec.conformance.verdicts import Outcome, Verdict
from kcspec.spec.events import BrokerStartup, ControllerEvent, ControllerFailover, TopicCreation
from kcspec.spec.requests import Request, UpdateMetadataRequest
from rich.console import Console

PROFILE = "kafka-2.8"


def _quiet() -> Console:
    return Console(file=io.StringIO())


def _run(sut: object, tmp_path: Path, examples: int = 60, **kw: object) -> tuple[list[Outcome], list[str]]:
    adapter = sut if not isinstance(sut, ReferenceSut) else InProcessAdapter(sut)
    return differential.run_differential(
        adapter,  # type: ignore[arg-type]
        profile=PROFILE,
        examples=examples,
        seed=kw.pop("seed", 0),  # type: ignore[arg-type]
        trace_dir=tmp_path,
        console=_quiet(),
        **kw,  # type: ignore[arg-type]
    )


class Recording(ReferenceSut):
    """The reference controller that records the kinds of the events it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: list[str] = []

    def event(self, event: ControllerEvent) -> m.StepReply:
        self.kinds.append(event.kind)
        return super().event(event)


class NoFaults(Recording):
    capabilities: ClassVar[frozenset[m.Capability]] = frozenset(m.Capability) - {m.Capability.fault_injection}


class NoAutoRebalance(Recording):
    """Declares everything but answers ``unsupported`` to the auto-rebalance event (as a real SUT may)."""

    def event(self, event: ControllerEvent) -> m.StepReply:
        if event.kind == "AutoPreferredReplicaLeaderElection":
            self.kinds.append(event.kind)
            raise SutError(m.ErrorCode.unsupported, "no auto leader rebalance here")
        return super().event(event)


class NoTopics(Recording):
    def event(self, event: ControllerEvent) -> m.StepReply:
        if event.kind == "TopicCreation":
            raise SutError(m.ErrorCode.unsupported, "no topics")
        return super().event(event)


def test_an_undeclared_capability_means_its_events_are_never_sent(tmp_path: Path) -> None:
    sut = NoFaults()
    outcomes, notes = _run(sut, tmp_path, examples=80)
    assert [o.verdict for o in outcomes] == [Verdict.passed], outcomes
    assert "ZkFaultInjection" not in sut.kinds
    assert len(set(sut.kinds)) > 6, sorted(set(sut.kinds))
    assert any("ZkFaultInjection not generated (fault_injection not declared)" in n for n in notes), notes


def test_an_unsupported_event_kind_is_dropped_for_the_rest_of_the_run_and_is_no_divergence(
    tmp_path: Path,
) -> None:
    sut = NoAutoRebalance()
    outcomes, notes = _run(sut, tmp_path, examples=80)
    assert [o.verdict for o in outcomes] == [Verdict.passed], outcomes
    assert sut.kinds.count("AutoPreferredReplicaLeaderElection") == 1, "sent again after 'unsupported'"
    assert any(
        "AutoPreferredReplicaLeaderElection not generated (the SUT answered unsupported in sequence" in n
        for n in notes
    ), notes


def test_a_sut_that_cannot_run_the_bootstrap_is_not_supported(tmp_path: Path) -> None:
    outcomes, _ = _run(NoTopics(), tmp_path, examples=20)
    assert [o.verdict for o in outcomes] == [Verdict.not_supported], outcomes
    assert "TopicCreation" in outcomes[0].reason


@pytest.mark.parametrize("budget", [0.0, 0.5, 3.0])
def test_the_budget_never_turns_a_divergence_into_a_pass(tmp_path: Path, budget: float) -> None:
    outcomes, notes = _run(LiveBrokersNeverShrink(), tmp_path, examples=300, budget=budget)
    verdicts = {o.verdict for o in outcomes}
    assert Verdict.passed not in verdicts, outcomes
    if budget == 0.0:
        assert verdicts == {Verdict.skipped}, outcomes
    if budget == 3.0:
        assert Verdict.failed in verdicts, (outcomes, notes)


def test_the_budget_bounds_a_slow_sut(tmp_path: Path) -> None:
    import time

    class Slow(ReferenceSut):
        def event(self, event: ControllerEvent) -> m.StepReply:
            time.sleep(0.01)
            return super().event(event)

    started = time.monotonic()
    outcomes, notes = _run(Slow(), tmp_path, examples=10_000, budget=1.0)
    assert time.monotonic() - started < 30.0
    assert [o.verdict for o in outcomes] == [Verdict.passed], outcomes
    assert any("the time limit ran out after" in n for n in notes), notes


def test_every_distinct_divergence_is_reported_shrunk_and_replayable(tmp_path: Path) -> None:
    outcomes, notes = _run(UpdateMetadataDeduplicated(), tmp_path, examples=120)
    failed = [o for o in outcomes if o.verdict is Verdict.failed]
    assert failed, outcomes
    assert len({o.id for o in failed}) == len(failed)
    # one bug, one group, however many signatures its divergences have (all listed in the reason)
    signatures = [sig for o in failed for sig in json.loads(o.reason.split("; signatures met: ", 1)[1])]
    assert len(signatures) >= 2, signatures
    traces = sorted(tmp_path.glob("divergence-*.json"))
    assert len(traces) == len(failed), (traces, notes)
    for o in failed:
        assert "signature {" in o.reason and "trace " in o.reason
        assert o.differences and o.seconds > 0.0
    for trace in traces:
        assert differential.replay_file(trace, InProcessAdapter(UpdateMetadataDeduplicated()), _quiet()) == 1
        assert differential.replay_file(trace, InProcessAdapter(ReferenceSut()), _quiet()) == 0


def test_shrinking_keeps_only_what_the_divergence_needs(tmp_path: Path) -> None:
    from kcspec.spec.trace import Trace

    outcomes, _ = _run(StaleControllerEpoch(), tmp_path, examples=300)
    assert {o.verdict for o in outcomes} == {Verdict.failed}, outcomes
    # requests are paired, so each signature names the stale field of the request types the failover sent
    # (a batch with a StopReplica is a second signature)
    for o in outcomes:
        assert '"kind": "ControllerFailover"' in o.request, o
        paths = Signature.of("ControllerFailover", o.differences).paths
        assert all(p.endswith("].controller_epoch") for p in paths), paths
    trace_files = sorted(tmp_path.glob("divergence-*.json"))
    assert len(trace_files) == len(outcomes), trace_files
    for trace_file in trace_files:
        trace = Trace.from_json(trace_file.read_text(), str(trace_file))
        kinds = [e.kind for e in trace.events]
        # the stale epoch needs a first request batch, a second failover and a batch sent under it
        assert kinds.count("ControllerFailover") == 2, kinds
        assert kinds[-1] == "ControllerFailover"
        assert len(kinds) <= 7, kinds


def test_the_same_seed_finds_the_same_divergences(tmp_path: Path) -> None:
    first, _ = _run(UpdateMetadataDeduplicated(), tmp_path / "a", examples=60, seed=7)
    again, _ = _run(UpdateMetadataDeduplicated(), tmp_path / "b", examples=60, seed=7)
    assert [o.id for o in first] == [o.id for o in again]


class _FailingAdapter:
    """An adapter around the reference controller that crashes at its 40th event and cannot start again."""

    description = "a SUT that crashes once and cannot restart"

    def __init__(self) -> None:
        self.inner = InProcessAdapter(ReferenceSut())
        self.events = 0
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        if self.starts > 1:
            raise SutFailure(FailureKind.cannot_start, "the binary is gone")
        self.inner.start()

    def call(self, request: m.RequestMessage) -> m.ResponseMessage:
        if isinstance(request, m.Event):
            self.events += 1
            if self.events == 40:
                raise SutFailure(FailureKind.crashed, "segmentation fault", "core dumped\n")
        return self.inner.call(request)

    def close(self) -> None:
        self.inner.close()

    def stderr_tail(self) -> str:
        return ""


def test_a_sut_that_cannot_be_restarted_stops_the_search_and_keeps_what_it_found(tmp_path: Path) -> None:
    outcomes, _ = _run(_FailingAdapter(), tmp_path, examples=50)
    verdicts = [o.verdict for o in outcomes]
    assert verdicts.count(Verdict.errored) == 2, outcomes
    crash = next(o for o in outcomes if "crashed" in o.reason)
    assert '"<crashed>"' in crash.reason and crash.stderr == "core dumped\n"
    stop = next(o for o in outcomes if "could not be restarted" in o.reason)
    assert "the binary is gone" in stop.reason


def test_signature_paths_drop_concrete_names_but_keep_request_types() -> None:
    assert (
        general_path('$.state.zk.partition_states["t0-1"].leader_and_isr.leader')
        == "$.state.zk.partition_states[*].leader_and_isr.leader"
    )
    assert (
        general_path("$.requests[LeaderAndIsr to broker 2].partition_states[t0-0].isr")
        == "$.requests[LeaderAndIsr].partition_states[*].isr"
    )
    assert general_path("$.requests[missing]") == "$.requests[missing]"
    wide = Signature("BrokerFailure", ("$.a", "$.b"))
    assert wide.covers(Signature("BrokerFailure", ("$.a",)))
    assert not wide.covers(Signature("BrokerFailure", ("$.c",)))
    assert not wide.covers(Signature("BrokerBounce", ("$.a",)))


class InternalOnBounce(ReferenceSut):
    def event(self, event: ControllerEvent) -> m.StepReply:
        if event.kind == "BrokerBounce":
            raise SutError(m.ErrorCode.internal, "NullPointerException in onBrokerBounce")
        return super().event(event)


def test_an_internal_error_is_an_errored_divergence_with_the_message(tmp_path: Path) -> None:
    outcomes, _ = _run(InternalOnBounce(), tmp_path, examples=60)
    assert [o.verdict for o in outcomes] == [Verdict.errored], outcomes
    assert "NullPointerException in onBrokerBounce" in outcomes[0].reason
    assert '"event": "BrokerBounce"' in outcomes[0].reason


def _failover_reply() -> m.StepReply:
    """The reference's reply to a second failover, which sends 9 requests (3 UpdateMetadata to each broker)."""
    events = [
        BrokerStartup(0),
        BrokerStartup(1),
        ControllerFailover(0),
        TopicCreation("t0", ((0, 1), (1, 2))),
        ControllerFailover(1),
    ]
    steps = differential.reference_steps(events, PROFILE, ReferenceSut())
    assert steps is not None, "the reference refused the failover sequence"
    return steps[-1][1]


def _stale(request: Request) -> Request:
    return dataclasses.replace(request, controller_epoch=request.controller_epoch - 1)


def test_requests_that_differ_in_one_field_are_paired_and_the_field_is_named() -> None:
    expected = _failover_reply()
    assert len(expected.requests) == 9, expected.requests
    actual = dataclasses.replace(expected, requests=frozenset(_stale(r) for r in expected.requests))
    diffs = diff_replies(
        expected, actual, order=False
    )  # pairing, not order (tests/conformance/test_request_order.py)
    rendered = "\n".join(d.render() for d in diffs)
    assert len(diffs) == 9, rendered
    assert all(d.path.endswith(".controller_epoch") for d in diffs), rendered
    assert "$.requests[LeaderAndIsr to broker 0].controller_epoch: expected 2, got 1" in rendered
    assert "(absent)" not in rendered
    assert Signature.of("ControllerFailover", diffs).paths == (
        "$.requests[LeaderAndIsr].controller_epoch",
        "$.requests[UpdateMetadata].controller_epoch",
    )


def test_a_request_with_no_counterpart_is_still_reported_missing() -> None:
    expected = _failover_reply()
    (dropped,) = [
        r
        for r in expected.requests
        if isinstance(r, UpdateMetadataRequest) and r.broker == 0 and not r.partition_states
    ]
    kept = frozenset(_stale(r) for r in expected.requests if r != dropped)
    diffs = diff_replies(expected, dataclasses.replace(expected, requests=kept), order=False)
    rendered = "\n".join(d.render() for d in diffs)
    missing = [d for d in diffs if d.actual == "(absent)"]
    assert [d.path for d in missing] == ["$.requests[UpdateMetadata to broker 0 (no partitions)]"], rendered
    assert '"type": "UpdateMetadata"' in missing[0].expected, rendered
    # the other 8 are still paired with their stale counterparts
    assert sum(d.path.endswith(".controller_epoch") for d in diffs) == 8, rendered


def test_a_divergence_s_differences_are_printed_once(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), width=200)
    outcomes, _ = differential.run_differential(
        InProcessAdapter(StaleControllerEpoch()),
        profile=PROFILE,
        examples=20,
        seed=0,
        trace_dir=tmp_path,
        console=console,
    )
    (failed,) = outcomes
    assert failed.differences, failed
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    # the run's own output names the events; the differences are the final report's (``print_outcome``)
    assert failed.differences[0].render() not in printed, printed
    assert "in the report below" in printed, printed


class QueueAnswersLost(Recording):
    """Declares callbacks but answers no callback when a queued request is processed (a SUT that forgets them)."""

    def event(self, event: ControllerEvent) -> m.StepReply:
        reply = super().event(event)
        if event.kind == "QueuedEventProcessed":
            return dataclasses.replace(reply, answers=frozenset())
        return reply


def test_the_event_queue_is_exercised_for_a_sut_that_declares_callbacks(tmp_path: Path) -> None:
    """Every other sequence starts with ``config.max_queued_requests`` above 0, so the queued events are sent and
    a SUT whose callbacks answer nothing diverges; its trace starts from that state and replays."""
    from kcspec.spec.trace import Trace

    sut = QueueAnswersLost()
    outcomes, notes = _run(sut, tmp_path, examples=60)
    assert {k for k in sut.kinds if k in differential.QUEUE_KINDS} >= {"QueuedEventProcessed"}, sorted(
        set(sut.kinds)
    )
    assert any("started with config.max_queued_requests = 2" in n for n in notes), notes
    failed = [o for o in outcomes if o.verdict is Verdict.failed]
    assert failed and all("answers" in o.reason for o in failed), outcomes
    traces = sorted(tmp_path.glob("divergence-*.json"))
    assert traces
    for path in traces:
        trace = Trace.from_json(path.read_text())
        assert trace.initial.config.max_queued_requests == differential.QUEUE_BOUND
        assert differential.replay_file(path, InProcessAdapter(QueueAnswersLost()), _quiet()) == 1
        assert differential.replay_file(path, InProcessAdapter(ReferenceSut()), _quiet()) == 0


def test_a_sut_without_callbacks_is_never_sent_the_event_queue(tmp_path: Path) -> None:
    class NoQueue(Recording):
        capabilities: ClassVar[frozenset[m.Capability]] = frozenset(m.Capability) - {m.Capability.callbacks}

    sut = NoQueue()
    outcomes, notes = _run(sut, tmp_path, examples=30)
    assert {o.verdict for o in outcomes} == {Verdict.passed}, outcomes
    assert not differential.QUEUE_KINDS & set(sut.kinds)
    assert not any("max_queued_requests" in n for n in notes), notes
