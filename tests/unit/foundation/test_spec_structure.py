"""The spec's structure (DESIGN.md rule 1): every named rule cites its section, a rule name stands for one rule,
every section of §2–§8 is cited, every event has an action and every invariant a citation."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.events import EVENT_TYPES
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import PROFILES, get_profile

SECTION = re.compile(r"^§(\d+)(\.\d+)*[a-z]?$")

# Every subsection of §2–§8 of the semantics document that states a rule.
REQUIRED = {
    "§2.1", "§2.2", "§2.3", "§3.1", "§3.3", "§3.4",
    "§4.1", "§4.2", "§4.3", "§4.4", "§4.5", "§4.6", "§4.7", "§4.8",
    "§5.1", "§5.2", "§5.3", "§5.4", "§6",
    "§7.1", "§7.2", "§7.3", "§7.4", "§7.5", "§7.6", "§7.7", "§7.8", "§7.9", "§7.10", "§7.11", "§7.12", "§8",
}  # fmt: skip


def _walk(expr: L.Expr) -> list[L.Expr]:
    seen: set[int] = set()
    out: list[L.Expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        stack.extend(L.children(e))
    return out


def _citations(profile_name: str) -> tuple[dict[str, set[str]], set[str]]:
    profile = get_profile(profile_name)
    names: dict[str, set[str]] = defaultdict(set)
    # The valid-previous-state tables (spec/tables.py) are the declarations of §2.1 and §2.2; every state-machine
    # call reads them.
    sections: set[str] = (
        {"§2.1", "§2.2"} if profile.replica_valid_previous and profile.partition_valid_previous else set()
    )
    for action in build_actions(profile).values():
        sections.add(action.section)
        for node in _walk(action.effect):
            if isinstance(node, L.Rule):
                names[node.name].add(node.section)
                sections.add(node.section)
            elif isinstance(node, L.Call):
                names[node.fn.name].add(node.fn.section)
                sections.add(node.fn.section)
    return names, sections


def _normalise(section: str) -> str:
    """``§5.2b`` cites §5.2; ``§11 I9`` is not a §2–§8 citation."""
    return re.sub(r"[a-z]$", "", section.split()[0])


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_rule_cites_a_section_and_a_name_stands_for_one_rule(profile: str) -> None:
    names, _ = _citations(profile)
    uncited = sorted(n for n, secs in names.items() if not all(SECTION.match(_normalise(s)) for s in secs))
    assert not uncited, f"rules without a § citation: {uncited}"
    ambiguous = {n: sorted(s) for n, s in names.items() if len({_normalise(x) for x in s}) > 1}
    assert not ambiguous, (
        f"one rule name cited under different sections (two rules or a wrong citation): {ambiguous}"
    )


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_spec_covers_every_section_of_2_to_8(profile: str) -> None:
    _, sections = _citations(profile)
    cited = {_normalise(s) for s in sections}
    covered = {req for req in REQUIRED if any(c == req or c.startswith(req + ".") for c in cited)}
    if profile == "kafka-2.8":
        covered |= {"§7.8"}  # the legacy algorithm exists only in kafka-1.1
    else:
        covered |= {"§7.7"} & cited
    missing = sorted(REQUIRED - covered - ({"§7.7"} if profile == "kafka-1.1" else set()))
    assert not missing, f"sections of §2–§8 no rule of {profile} cites: {missing}"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_event_has_an_action_and_every_invariant_cites_section_11(profile: str) -> None:
    actions = build_actions(get_profile(profile))
    expected = {cls.kind for cls in EVENT_TYPES} - (
        {
            "ApiPartitionReassignment",
            "StaleAlterIsrReceived",
            "ReplicaLeaderElectionQueued",
            "ControlledShutdownQueued",
            "ApiPartitionReassignmentQueued",
            "ListPartitionReassignmentsQueued",
            "QueuedEventProcessed",
        }
        if profile == "kafka-1.1"
        else set()
    )
    assert set(actions) == expected
    for inv in invariants(get_profile(profile)):
        assert inv.section.startswith("§"), f"{inv.name} cites no section: {inv.section!r}"
        assert inv.kind in ("state", "step")
