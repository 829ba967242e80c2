"""PROTOCOL.md is generated from the code and up to date, its tables cover every code, reason, field and event,
and the behaviour it states holds (field roles, fencing of direct calls, duplicate set elements)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.protocol import protocol_doc
from kcspec.conformance.protocol.kafka_inputs import KAFKA_INPUTS, Status
from kcspec.conformance.protocol.protocol_facts import (
    ERROR_HANDLING,
    FAILURE_REASONS,
    FIELD_ROLES,
    Role,
    field_role,
)
from kcspec.conformance.reference_sut import ReferenceSut, SpecSut
from kcspec.conformance.scenarios import SCENARIOS
from kcspec.model.step import SpecMachine
from kcspec.spec.event_words import EVENT_WORDS
from kcspec.spec.events import EVENT_TYPES, EVENTS_BY_KIND
from kcspec.spec.requests import FailureReason
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig, PartitionReplica, ReplicaState, TopicPartition


def test_committed_protocol_md_is_up_to_date() -> None:
    assert protocol_doc.main(["--check"]) == 0, "run python -m kcspec.conformance.protocol.protocol_doc"


def test_check_reports_a_stale_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "PROTOCOL.md"
    stale.write_text("# an old protocol\n")
    monkeypatch.setattr(protocol_doc, "PROTOCOL_MD", stale)
    assert protocol_doc.main(["--check"]) == 1
    assert "is stale (run python -m kcspec.conformance.protocol.protocol_doc)" in capsys.readouterr().out
    assert protocol_doc.main([]) == 0
    assert stale.read_text() == protocol_doc.render()
    assert protocol_doc.main(["--bogus"]) == 2


def test_the_document_has_every_section_an_implementer_needs() -> None:
    text = protocol_doc.render()
    for heading in (
        "## Framing and ids",
        "### Protocol errors",
        "### Records",
        "## Error codes",
        "## What is compared",
        "## Elections (`elect`)",
        "**Fencing of direct calls.**",
        "## Failure reasons",
        "## Events (`event`)",
        "## Kafka's inputs and kcspec's events",
    ):
        assert heading in text, heading
    for cls in EVENT_TYPES:
        assert f"### `{cls.kind}`" in text
    assert "{{" not in text, "a placeholder of the template was not filled"


def test_every_event_has_its_words_and_nothing_else_does() -> None:
    assert set(EVENT_WORDS) == {cls.kind for cls in EVENT_TYPES}
    for kind, words in EVENT_WORDS.items():
        assert words.guard and words.environment and words.controller, kind


def test_every_error_code_failure_reason_and_state_field_is_described() -> None:
    assert set(ERROR_HANDLING) == set(m.ErrorCode)
    assert set(FAILURE_REASONS) == set(FailureReason)
    zk_and_config = {f"zk.{f.name}" for f in dataclasses.fields(ClusterState().zk)} | {
        f"config.{f.name}" for f in dataclasses.fields(ClusterConfig)
    }
    assert set(FIELD_ROLES) == zk_and_config
    for role in FIELD_ROLES.values():
        assert all(w in EVENTS_BY_KIND for w in role.writers), role


def test_checklist_names_real_events_and_covers_every_event() -> None:
    named = {e for row in KAFKA_INPUTS for e in row.events}
    assert named <= set(EVENTS_BY_KIND), named - set(EVENTS_BY_KIND)
    assert {cls.kind for cls in EVENT_TYPES} <= named, {cls.kind for cls in EVENT_TYPES} - named
    for row in KAFKA_INPUTS:
        assert (row.status is Status.event) == bool(row.events), row.kafka
        assert row.note, row.kafka


def _field(state: ClusterState, path: str) -> object:
    part, name = path.split(".")
    return getattr(getattr(state, part), name)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_harness_fields_change_only_under_the_events_that_write_them(profile: str) -> None:
    """A harness field is written only by the environment parts of the events the table names: along every
    built-in scenario, no other event changes it."""
    machine = SpecMachine(profile)
    harness = [p for p, r in FIELD_ROLES.items() if r.role is Role.harness]
    changed: set[str] = set()
    for scenario in SCENARIOS:
        state = ClusterState()
        for event in scenario.events(profile):
            if not machine.enabled(state, event):
                continue
            after = machine.step(state, event).state
            for path in harness:
                if _field(state, path) != _field(after, path):
                    changed.add(path)
                    assert event.kind in field_role(path).writers, (
                        f"{scenario.name}: {event.kind} changed {path} "
                        f"from {_field(state, path)!r} to {_field(after, path)!r}, "
                        f"but PROTOCOL.md names only {field_role(path).writers} as its writers"
                    )
            state = after
    assert {"zk.zxid", "zk.brokers", "zk.controller"} <= changed, "the scenarios no longer exercise the check"


@pytest.mark.parametrize("sut_class", [ReferenceSut, SpecSut])
def test_a_fenced_direct_state_machine_call_does_not_resign(sut_class: type[ReferenceSut | SpecSut]) -> None:
    """kafka-2.8: a newer controller rewrote /controller_epoch; the ISR removal of → OfflineReplica is fenced,
    nothing is sent, and the controller keeps its context (PROTOCOL.md, "Fencing of direct calls")."""
    from kcspec.conformance.vectors.inputs import base_state

    state = base_state()
    moved = dataclasses.replace(state, zk=dataclasses.replace(state.zk, controller_epoch_zk_version=2))
    sut = sut_class()
    sut.hello("kafka-2.8")
    sut.load(moved)
    leader = PartitionReplica(TopicPartition("t", 0), 1)
    reply = sut.replica_state_change((leader,), ReplicaState.OfflineReplica)
    assert reply.state.controller == moved.controller
    assert reply.state.zk == moved.zk
    assert reply.requests == frozenset()
    assert reply.failures == frozenset()


def test_a_reply_listing_a_request_twice_is_a_protocol_error() -> None:
    from kcspec.spec.requests import StopReplicaRequest

    request = StopReplicaRequest(1, 0, 1, frozenset())
    wire = m.to_wire(7, m.StepReply(ClusterState(), frozenset({request}), frozenset()))
    assert m.parse_response(json.dumps(wire))[1] == m.StepReply(
        ClusterState(), frozenset({request}), frozenset()
    )
    wire["requests"] = wire["requests"] * 2
    with pytest.raises(m.ProtocolError, match=r"\$\.requests: a set must not list the same element twice"):
        m.parse_response(json.dumps(wire))
