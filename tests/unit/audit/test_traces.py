"""Canonical JSONL trace lines (``Trace.to_jsonl``) decoded into audit facts, and bad lines rejected with a path."""

from __future__ import annotations

import json

from kcspec.audit.traces import INITIAL, decode_line
from kcspec.conformance.selfcheck.simulate import WalkConfig, bootstrap
from kcspec.reference_impl.reference import ReferenceController
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep


def reference_trace_lines() -> list[str]:
    """A short trace of the reference controller (cluster bootstrap) in the JSON Lines form."""
    ctl = ReferenceController("kafka-2.8")
    steps = tuple(
        TraceStep(ev, ctl.handle(ev)) for ev in bootstrap(WalkConfig(brokers=3, topics=1, partitions=2, rf=2))
    )
    return list(Trace(profile="kafka-2.8", initial=ClusterState(), steps=steps).to_jsonl())


def test_every_line_of_to_jsonl_decodes() -> None:
    lines = reference_trace_lines()
    decoded = [decode_line(line) for line in lines]
    assert [error for _, error in decoded] == [None] * len(lines)
    first, _ = decoded[0]
    assert [f.event for f in first] == [INITIAL]
    last, _ = decoded[-1]
    kinds = {f.fact for f in last}
    assert {"step", "replica_state", "partition_state", "znode"} <= kinds
    znodes = [f for f in last if f.fact == "znode"]
    assert len(znodes) == 2 and all(f.leader is not None and f.leader >= 0 for f in znodes)


def test_bad_lines_are_rejected_with_the_codec_path() -> None:
    line = json.loads(reference_trace_lines()[-1])
    line["state"]["controller"]["epoch"] = "two"
    facts, error = decode_line(json.dumps(line))
    assert facts == [] and error is not None and error.startswith("$.state.controller.epoch")
    facts, error = decode_line('{"step": 1, "event": null')
    assert facts == [] and error is not None and "not valid JSON" in error
    facts, error = decode_line(json.dumps({**line, "extra": 1}))
    assert error is not None and error.startswith("$.extra")
    facts, error = decode_line(json.dumps({**line, "step": 0}))
    assert error is not None and error.startswith("$.event")
