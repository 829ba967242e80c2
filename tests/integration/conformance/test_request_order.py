"""Request order (protocol 1.1): every request of a step reply carries its position among the requests to its
broker; the comparison checks each broker's order and not the order across brokers; a SUT of protocol 1.0 is
compared as before (sets), with a note; a SUT that sends one broker its UpdateMetadata before its LeaderAndIsr
is caught by the default CLI."""

from __future__ import annotations

import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from kcspec.conformance import differential
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.reply_diff import diff_replies
from kcspec.conformance.session_mutants import ORDER_MUTANTS
from kcspec.spec.requests import LeaderAndIsrRequest, Request, UpdateMetadataRequest

from tests.support.paths import ROOT
from tests.support.processes import controller_run

EXAMPLE = ROOT / "conformance" / "examples" / "mutant_controller.py"


def _replies_with_requests(n: int = 12) -> list[m.StepReply]:
    steps = differential.generate(random.Random(3), "kafka-2.8", ReferenceSut(), lambda _k: True, n)
    return [r for _e, r in steps if len(r.requests) > 1]


def _two_to_one_broker(reply: m.StepReply) -> bool:
    brokers = [r.broker for r in reply.requests]
    return len(brokers) != len(set(brokers))


def _reply_with_two_to_one_broker_and_several_brokers() -> m.StepReply:
    return next(
        r
        for r in _replies_with_requests(40)
        if _two_to_one_broker(r) and len({q.broker for q in r.requests}) > 1
    )


def test_positions_go_over_the_wire_and_come_back() -> None:
    replies = _replies_with_requests()
    assert replies
    for reply in replies:
        wire = m.to_wire(7, reply)
        per_broker: dict[int, list[int]] = {}
        for item in wire["requests"]:
            per_broker.setdefault(item["broker"], []).append(item["position"])
        assert all(sorted(ps) == list(range(len(ps))) for ps in per_broker.values()), per_broker
        _, back = m.parse_response(m.to_line(7, reply))
        assert back == reply


def test_a_batch_sends_leader_and_isr_then_update_metadata_to_a_broker() -> None:
    """§3.4 sendRequestsToBrokers: per broker, LeaderAndIsr before UpdateMetadata before StopReplica in a batch."""
    seen = 0
    for reply in _replies_with_requests(12):
        for broker in {r.broker for r in reply.requests}:
            kinds = [type(r).__name__ for r in reply.send_order if r.broker == broker]
            if kinds == ["LeaderAndIsrRequest", "UpdateMetadataRequest"]:
                seen += 1
    assert seen


def test_order_across_brokers_is_not_compared_and_a_broker_s_order_is() -> None:
    reply = _reply_with_two_to_one_broker_and_several_brokers()
    interleaved = m.send_order(sorted(reply.send_order, key=lambda r: -r.broker))
    assert interleaved == reply.send_order  # canonical: grouped by broker, each broker's order kept
    swapped = replace(reply, send_order=_swap_first_pair(reply.send_order))
    assert swapped.send_order != reply.send_order
    diffs = diff_replies(reply, swapped)
    assert diffs and all(d.path.endswith(".position") for d in diffs), diffs
    assert diff_replies(reply, swapped, order=False) == []


def _swap_first_pair(order: tuple[Request, ...]) -> tuple[Request, ...]:
    out = list(order)
    for i in range(len(out) - 1):
        if out[i].broker == out[i + 1].broker:
            out[i], out[i + 1] = out[i + 1], out[i]
            break
    return tuple(out)


def test_positions_are_all_or_none_and_unique_per_broker() -> None:
    reply = _reply_with_two_to_one_broker_and_several_brokers()
    wire = m.to_wire(1, reply)
    partial = json.loads(json.dumps(wire))
    del partial["requests"][0]["position"]
    with pytest.raises(m.ProtocolError, match="every request carries a position or none"):
        m.parse_response(json.dumps(partial))
    clash = json.loads(json.dumps(wire))
    for item in clash["requests"]:
        item["position"] = 0
    with pytest.raises(m.ProtocolError, match="both at position 0"):
        m.parse_response(json.dumps(clash))
    none = json.loads(json.dumps(wire))
    for item in none["requests"]:
        del item["position"]
    _, unordered = m.parse_response(json.dumps(none))
    assert isinstance(unordered, m.StepReply) and not unordered.ordered
    # a protocol 1.1 SUT that leaves the positions out is told what is missing
    assert any(d.path.endswith(".position") for d in diff_replies(reply, unordered))


def test_the_mutant_reorders_requests_of_one_broker_only() -> None:
    reply = next(
        r
        for r in _replies_with_requests(40)
        if any(
            isinstance(a, LeaderAndIsrRequest)
            and isinstance(b, UpdateMetadataRequest)
            and a.broker == b.broker
            for a, b in zip(r.send_order, r.send_order[1:], strict=False)
        )
    )
    from kcspec.conformance.session_mutants import _update_metadata_first

    wrong = _update_metadata_first(reply)
    assert wrong.requests == reply.requests and wrong.send_order != reply.send_order
    diffs = diff_replies(reply, wrong)
    assert {d.path.split("].")[0] + "]" for d in diffs} and all(d.path.endswith(".position") for d in diffs)


@pytest.mark.integration
def test_the_default_cli_run_catches_the_wrong_order(tmp_path: Path) -> None:
    result, failed = controller_run(f"{sys.executable} {EXAMPLE} {ORDER_MUTANTS[0].name}", tmp_path)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert failed
    for o in failed:
        assert o["differences"] and all(d["path"].endswith(".position") for d in o["differences"]), o
