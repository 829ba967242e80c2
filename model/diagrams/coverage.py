"""Reading transition coverage of a run (explore, Hypothesis, conformance, audit) for the coverage overlays.

Input format (shared with the audit pipeline): a JSON object, or a JSON list of such objects::

    {"profile": "kafka-2.8", "machine": "replica" | "partition",
     "source": "optional free text naming the run",
     "edges": [{"from": "OfflineReplica", "to": "OnlineReplica", "count": 12, "valid": true}, ...]}

``from``/``to`` are Kafka state names of that machine, ``count`` a non-negative integer, ``valid`` whether
the transition was performed (``true``) or attempted and rejected as invalid (``false``, §2.3 step 4).
Entries for the same profile and machine are added up. An edge marked valid must be in the profile's
table and an edge marked invalid must not be — a mismatch means the run used other tables, and is an error.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kcspec.model.diagrams.machines import MACHINES, EdgeKey, Overlay, states, valid_edges
from kcspec.spec import bounded_json
from kcspec.spec.profiles import PROFILES


class CoverageError(ValueError):
    """The coverage input is malformed; the message names the file and the offending entry."""


@dataclass(frozen=True)
class MachineCoverage:
    profile: str
    machine: str
    overlay: Overlay


def _fail(where: str, msg: str) -> CoverageError:
    return CoverageError(f"{where}: {msg}")


def parse_coverage(data: object, where: str, default_source: str) -> list[MachineCoverage]:
    """Validate decoded JSON and sum it per (profile, machine), in (profile, machine) order."""
    entries = data if isinstance(data, list) else [data]
    taken: dict[tuple[str, str], dict[EdgeKey, int]] = defaultdict(lambda: defaultdict(int))
    invalid: dict[tuple[str, str], dict[EdgeKey, int]] = defaultdict(lambda: defaultdict(int))
    sources: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, entry in enumerate(entries):
        here = f"{where}: entry {i}"
        if not isinstance(entry, Mapping):
            raise _fail(here, f"expected an object, got {type(entry).__name__}")
        unknown = set(entry) - {"profile", "machine", "edges", "source"}
        if unknown:
            raise _fail(here, f"unknown keys {sorted(unknown)}")
        profile, machine = entry.get("profile"), entry.get("machine")
        if profile not in PROFILES:
            raise _fail(here, f"'profile' is {profile!r}; expected one of {sorted(PROFILES)}")
        if machine not in MACHINES:
            raise _fail(here, f"'machine' is {machine!r}; expected one of {list(MACHINES)}")
        source = entry.get("source", default_source)
        if not isinstance(source, str):
            raise _fail(here, "'source' must be a string")
        edges = entry.get("edges")
        if not isinstance(edges, list):
            raise _fail(here, "'edges' must be a list")
        key = (profile, machine)
        if source not in sources[key]:
            sources[key].append(source)
        names = set(states(machine))
        table = set(valid_edges(PROFILES[profile], machine))
        for j, edge in enumerate(edges):
            e_here = f"{here}, edge {j}"
            if not isinstance(edge, Mapping) or set(edge) != {"from", "to", "count", "valid"}:
                raise _fail(e_here, "expected an object with exactly the keys from, to, count, valid")
            src, dst, count, valid = edge["from"], edge["to"], edge["count"], edge["valid"]
            for label, value in (("from", src), ("to", dst)):
                if value not in names:
                    raise _fail(
                        e_here, f"'{label}' is {value!r}, not a {machine} state ({', '.join(sorted(names))})"
                    )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise _fail(e_here, f"'count' must be a non-negative integer, got {count!r}")
            if not isinstance(valid, bool):
                raise _fail(e_here, f"'valid' must be true or false, got {valid!r}")
            if valid != ((src, dst) in table):
                verdict = "allows" if (src, dst) in table else "does not allow"
                raise _fail(
                    e_here,
                    f"{src} -> {dst} is marked valid={valid} but {profile}'s {machine} table {verdict} it",
                )
            (taken if valid else invalid)[key][(src, dst)] += count
    out = []
    for key in sorted(set(taken) | set(invalid) | set(sources)):
        overlay = Overlay(
            source="; ".join(sources[key]),
            taken={e: n for e, n in sorted(taken[key].items()) if n > 0},
            invalid={e: n for e, n in sorted(invalid[key].items()) if n > 0},
        )
        out.append(MachineCoverage(key[0], key[1], overlay))
    return out


def load_coverage(path: Path) -> list[MachineCoverage]:
    """Read and validate a coverage file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CoverageError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CoverageError(f"{path}: not UTF-8 text (byte {e.start}): not a coverage file") from None
    try:
        data = bounded_json.loads(text)
    except json.JSONDecodeError as e:
        raise CoverageError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return parse_coverage(data, str(path), default_source=path.name)


def coverage_json(entries: list[MachineCoverage]) -> list[dict[str, object]]:
    """The input format for ``entries`` (used to write the sample run)."""
    out: list[dict[str, object]] = []
    for mc in entries:
        edges: list[dict[str, object]] = [
            {"from": a, "to": b, "count": n, "valid": True} for (a, b), n in sorted(mc.overlay.taken.items())
        ]
        edges += [
            {"from": a, "to": b, "count": n, "valid": False}
            for (a, b), n in sorted(mc.overlay.invalid.items())
        ]
        out.append(
            {"profile": mc.profile, "machine": mc.machine, "source": mc.overlay.source, "edges": edges}
        )
    return out
