"""A protocol that can grow (1.1): a SUT written before a new event kind passes with it reported as not
supported; unknown capabilities are ignored with a warning; ``beyond_scope`` drops one differential sequence and
the search goes on; PROTOCOL.md's tables name exactly what the schema accepts."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import ClassVar

import pytest
from kcspec.conformance import differential
from kcspec.conformance.adapters.inprocess import InProcessAdapter, SutError
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.protocol.protocol_doc import PROTOCOL_MD
from kcspec.conformance.protocol.schema_gen import SCHEMA_DIR
from kcspec.conformance.reference_sut import ReferenceSut
from kcspec.conformance.runner import run
from kcspec.conformance.selfcheck.bugzoo.checks import vectors_for
from kcspec.conformance.vectors.model import Level
from kcspec.conformance.verdicts import Verdict
from kcspec.spec.events import ControllerEvent
from rich.console import Console

NEW_KIND = "StopReplicaResponseWithoutDeletionReceived"


class BeforeTheNewKind(ReferenceSut):
    """A SUT written against protocol 1.0: no positions, no new event kind (it would answer unsupported)."""

    protocol_minor: ClassVar[int] = 0

    def event(self, event: ControllerEvent) -> m.StepReply:
        if event.kind == NEW_KIND:
            raise SutError(m.ErrorCode.unsupported, f"{NEW_KIND} is newer than this SUT")
        return super().event(event)


class RefusesRefailover(ReferenceSut):
    """Answers beyond_scope to a failover while a controller is active (a state it does not model)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = 0

    def event(self, event: ControllerEvent) -> m.StepReply:
        if event.kind == "ControllerFailover" and self.snapshot().controller.controller_id != -1:
            self.refused += 1
            raise SutError(m.ErrorCode.beyond_scope, "one controller per session")
        return super().event(event)


def test_a_sut_from_before_the_new_kind_passes_with_it_not_supported(tmp_path: Path) -> None:
    report = run(
        InProcessAdapter(BeforeTheNewKind()),
        vectors_for("kafka-2.8"),
        profile="kafka-2.8",
        level=Level.controller,
    )
    counts = report.counts()
    assert counts[Verdict.failed] == counts[Verdict.errored] == 0, [
        (o.id, o.reason) for o in report.outcomes if o.verdict in (Verdict.failed, Verdict.errored)
    ][:5]
    new = [o for o in report.outcomes if NEW_KIND in o.id]
    assert new and all(o.verdict is Verdict.not_supported for o in new), new
    assert any("came with protocol 1.1" in o.reason for o in new)
    assert any("request order not compared" in n for n in report.notes), report.notes
    outcomes, notes = differential.run_differential(
        InProcessAdapter(BeforeTheNewKind()),
        profile="kafka-2.8",
        examples=60,
        seed=0,
        trace_dir=tmp_path,
        console=Console(file=io.StringIO()),
    )
    assert [o.verdict for o in outcomes] == [Verdict.passed], outcomes
    assert any(f"{NEW_KIND} not generated" in n for n in notes), notes


@pytest.mark.integration
def test_beyond_scope_at_a_bootstrap_kind_drops_the_sequence_and_the_search_goes_on(tmp_path: Path) -> None:
    sut = RefusesRefailover()
    outcomes, notes = differential.run_differential(
        InProcessAdapter(sut),
        profile="kafka-2.8",
        examples=200,
        seed=0,
        trace_dir=tmp_path,
        console=Console(file=io.StringIO()),
    )
    assert [o.verdict for o in outcomes] == [Verdict.passed], outcomes
    assert sut.refused > 0
    assert "200 of 200 sequences" in notes[0], notes
    dropped = [n for n in notes if "answered beyond_scope" in n]
    assert dropped and "at ControllerFailover" in dropped[0], notes


def test_an_unknown_capability_is_ignored_with_a_warning() -> None:
    line = json.dumps(
        {
            "id": 1,
            "type": "hello",
            "protocol_version": 1,
            "implementation": {"name": "later", "version": "9"},
            "profiles": ["kafka-2.8"],
            "capabilities": ["controller_events", "telepathy"],
            "event_kinds": ["BrokerStartup", "FutureEvent"],
        }
    )
    _, hello = m.parse_response(line)
    assert isinstance(hello, m.HelloReply)
    assert hello.capabilities == frozenset({m.Capability.controller_events})
    assert hello.handles("BrokerStartup") and not hello.handles("BrokerFailure")
    warnings = hello.warnings(["BrokerStartup", "BrokerFailure"])
    assert any("telepathy" in w for w in warnings) and any("FutureEvent" in w for w in warnings)
    assert json.loads(m.to_line(1, hello))["capabilities"] == ["controller_events", "telepathy"]


def _section(title: str) -> str:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _first_column(section: str) -> set[str]:
    """The first cells (in backticks) of the body rows of the Markdown tables in ``section`` (headers skipped)."""
    out: set[str] = set()
    in_body = False
    for line in section.splitlines():
        if not line.startswith("|"):
            in_body = False
        elif line.startswith("|---"):
            in_body = True
        elif in_body:
            cell = re.match(r"^\| `([^`]+)` \|", line)
            if cell:
                out.add(cell.group(1))
    return out


def test_protocol_md_tables_name_exactly_what_the_schema_accepts() -> None:
    defs = json.loads((SCHEMA_DIR / "protocol.json").read_text())["$defs"]
    assert defs["StateChangeFailure"]["properties"]["reason"] == {"$ref": "#/$defs/FailureReason"}
    assert _first_column(_section("Failure reasons")) == set(defs["FailureReason"]["enum"])
    assert defs["ErrorReply"]["properties"]["code"] == {"$ref": "#/$defs/ErrorCode"}
    assert _first_column(_section("Error codes")) == set(defs["ErrorCode"]["enum"])
    assert _first_column(_section("Capabilities")) == set(defs["Capability"]["enum"])
    for record in (
        "LeaderAndIsrRequest",
        "UpdateMetadataRequest",
        "StopReplicaRequest",
        "StateChangeFailure",
    ):
        table = _section("Requests and replies").split(f"#### `{record}`", 1)[1].split("####", 1)[0]
        assert _first_column(table) == set(defs[record]["properties"]) - {"type"}, record
