"""Where ``spec/`` writes what each audit rule checks, so that a violation in the report leads back to its source.

The audit's rules (``replay.RULES``) check recorded history against the spec; each cites its § and, when it checks
one of the spec's §11 invariants, the invariant's id (``§11 I1``, ``§9, I8``). ``where(code)`` turns that into
the spans of ``spec/``: the invariants with that id (a state and a step invariant may share one), the
valid-previous-state tables for the rules about transitions (§2.1, §2.2, §10.3), and the two ``handleStateChanges``
procedures for the rules about what the controller tracked or rejected (§2.3).
"""

from __future__ import annotations

import re
from functools import cache

from kcspec.audit.replay import RULES
from kcspec.spec import partition_machine, replica_machine, spans, tables
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import PROFILES

_INVARIANT_ID = re.compile(r"\bI\d+\b")


@cache
def _invariant_spans() -> dict[str, tuple[str, ...]]:
    """Invariant id (``I1``) → the spans of the invariants of any profile with that id, in line order."""
    found: dict[str, set[spans.Span]] = {}
    for profile in PROFILES.values():
        for inv in invariants(profile):
            ident = inv.name.split(" ", 1)[0]
            if inv.span is not None:
                found.setdefault(ident, set()).add(inv.span)
    return {k: tuple(str(s) for s in sorted(v)) for k, v in found.items()}


@cache
def where(code: str) -> tuple[str, ...]:
    """The spans of ``spec/`` that the audit rule ``code`` checks (``()`` for a code no rule has)."""
    rule = RULES.get(code)
    if rule is None:
        return ()
    ids = _INVARIANT_ID.findall(rule.section)
    out: list[str] = []
    for ident in ids:
        out += _invariant_spans().get(ident, ())
    if not ids and ("§2.1" in rule.section or "§2.2" in rule.section or "§10.3" in rule.section):
        out += [
            str(spans.of_assignment(tables, name))
            for name in (
                "REPLICA_VALID_PREVIOUS_2_8",
                "REPLICA_VALID_PREVIOUS_1_1",
                "PARTITION_VALID_PREVIOUS",
            )
        ]
    if not ids and "§2.3" in rule.section:
        out += [
            str(spans.of_function(replica_machine.replica_state_change)),
            str(spans.of_function(partition_machine.partition_state_change)),
        ]
    return tuple(out)


def describe(code: str) -> str:
    """``code`` with its § and spans, as the report shows a rule: ``leader-not-in-isr (§11 I1, spec/…:162)``."""
    rule = RULES.get(code)
    if rule is None:
        return code
    at = ", ".join(where(code))
    return f"{code} ({rule.section}{', ' + at if at else ''})"


__all__ = ["describe", "where"]
