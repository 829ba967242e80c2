"""Each audit rule leads back to where ``spec/`` writes what it checks: the invariant its § names, the
valid-previous-state tables, or the ``handleStateChanges`` procedures."""

from __future__ import annotations

from kcspec.audit.replay import RULES
from kcspec.audit.rule_spans import describe, where

from tests.support.paths import ROOT


def _line(span: str) -> str:
    path, _, line = span.rpartition(":")
    return (ROOT / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]


def test_every_rule_names_lines_of_spec_that_exist() -> None:
    for code, rule in RULES.items():
        found = where(code)
        assert found, f"{code} ({rule.section}): no place of spec/ found"
        for span in found:
            assert span.startswith("spec/"), (code, span)
            assert _line(span).strip(), f"{code}: {span} is an empty line"


def _near(span: str) -> str:
    """The span's line and the next (a call's arguments may start on the next line)."""
    path, _, line = span.rpartition(":")
    return _line(span) + " " + _line(f"{path}:{int(line) + 1}")


def test_an_invariant_rule_points_at_that_invariant() -> None:
    found = where("empty-isr")  # §11 I3: the state and the step invariant
    assert len(found) == 2 and all(s.startswith("spec/invariants.py:") for s in found), found
    assert all('"I3 ' in _near(s) for s in found), [_near(s) for s in found]


def test_table_and_procedure_rules_point_at_their_definitions() -> None:
    assert any("PARTITION_VALID_PREVIOUS" in _line(s) for s in where("unreachable-state-change"))
    procedures = where("previous-state-mismatch")
    assert {s.split(":")[0] for s in procedures} == {"spec/replica_machine.py", "spec/partition_machine.py"}
    assert all("state_change" in _line(s) or "procedure" in _line(s) for s in procedures), procedures


def test_describe_reads_as_the_report_shows_a_rule() -> None:
    assert describe("stale-controller-write").startswith(
        "stale-controller-write (§9, I8, spec/invariants.py:"
    )
    assert where("no-such-rule") == () and describe("no-such-rule") == "no-such-rule"
