"""Transition-table sanity (§2.1, §2.2): reachability, dead ends, return to the initial state, profile differences.

The valid-previous-state tables of ``spec/tables.py`` (through each ``Profile``) are read as graphs with an
edge ``prev → target`` for every ``prev ∈ validPreviousStates(target)``. Checked per machine and profile:

* every state is reachable from the implicit initial state (NonExistentReplica / NonExistentPartition);
* no dead ends: Kafka has none in either machine — a deleted replica or partition is NonExistent* again and
  can be re-created (§2.2: the partition entry is kept as NonExistentPartition after deletion);
* every state can get back to the initial state (a replica or partition can always be deleted);
* the differences between the profiles are listed: table edges and behaviour flags.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from kcspec.model.z3.results import ProofResult
from kcspec.spec import profiles as P
from kcspec.spec.profiles import Profile
from kcspec.spec.tables import PARTITION_INITIAL, REPLICA_INITIAL

EXPECTED_DEAD_ENDS: dict[str, frozenset[str]] = {"replica": frozenset(), "partition": frozenset()}
"""States where Kafka's machines stop for good (§2): none."""


def edges(table: Mapping[Any, Sequence[Any]]) -> set[tuple[Enum, Enum]]:
    return {(prev, target) for target, prevs in table.items() for prev in prevs}


def _closure(start: Enum, step: Mapping[Enum, set[Enum]]) -> set[Enum]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in step.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def check_machine(machine: str, table: Mapping[Any, Sequence[Any]], initial: Enum) -> list[str]:
    """The problems of one table (empty when sane)."""
    states = list(type(initial))
    problems = [f"state {s.name} has no row in the table" for s in states if s not in table]
    es = edges(table)
    forward: dict[Enum, set[Enum]] = {s: set() for s in states}
    backward: dict[Enum, set[Enum]] = {s: set() for s in states}
    for a, b in es:
        forward[a].add(b)
        backward[b].add(a)
    reachable = _closure(initial, forward)
    problems += [f"{s.name} is unreachable from {initial.name}" for s in states if s not in reachable]
    dead = {s.name for s in states if not forward[s]}
    if dead != EXPECTED_DEAD_ENDS[machine]:
        problems.append(f"dead ends {sorted(dead)}, Kafka has {sorted(EXPECTED_DEAD_ENDS[machine])}")
    back = _closure(initial, backward)
    problems += [f"{initial.name} is unreachable from {s.name}" for s in states if s not in back]
    return problems


def table_differences() -> list[str]:
    out: list[str] = []
    a, b = P.KAFKA_2_8, P.KAFKA_1_1
    for machine, ta, tb in (
        ("replica", a.replica_valid_previous, b.replica_valid_previous),
        ("partition", a.partition_valid_previous, b.partition_valid_previous),
    ):
        ea, eb = edges(ta), edges(tb)
        out += [f"{machine} {x.name}→{y.name}: {a.name} only" for x, y in sorted(ea - eb, key=str)]
        out += [f"{machine} {x.name}→{y.name}: {b.name} only" for x, y in sorted(eb - ea, key=str)]
    return out


def prove_tables(profile: Profile) -> list[ProofResult]:
    out: list[ProofResult] = []
    for machine, table, initial, section in (
        ("replica", profile.replica_valid_previous, REPLICA_INITIAL, "§2.1"),
        ("partition", profile.partition_valid_previous, PARTITION_INITIAL, "§2.2"),
    ):
        start = time.perf_counter()
        problems = check_machine(machine, table, initial)
        n = len(edges(table))
        detail = (
            "; ".join(problems)
            if problems
            else (
                f"{len(list(type(initial)))} states, {n} transitions: all reachable from {initial.name}, "
                f"no dead ends (as in Kafka), {initial.name} reachable from every state"
            )
        )
        out.append(
            ProofResult(
                f"tables/{machine}: reachability and dead ends",
                section,
                "counterexample" if problems else "proved",
                time.perf_counter() - start,
                detail,
            )
        )
    start = time.perf_counter()
    diffs = table_differences() + [
        f"flag {name}: {P.KAFKA_2_8.name}={a} {P.KAFKA_1_1.name}={b} — {doc.splitlines()[0] if doc else ''}"
        for name, doc, a, b in P.differences()
    ]
    out.append(
        ProofResult(
            "tables: differences between the profiles",
            "§2.1, [1.1]",
            "proved",
            time.perf_counter() - start,
            f"{len(diffs)} differences: " + " | ".join(diffs),
        )
    )
    return out
