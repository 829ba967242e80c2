"""Which section of the semantics document each vector checks, and the report that shows every section covered.

``SECTIONS`` lists the sections of ``kafka-semantics.md`` (number and title). Sections §2–§9 describe
controller behaviour and must each be checked by at least one vector of each profile in which the
behaviour exists; the others are out of the vectors' scope, with the reason given.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kcspec.conformance.vectors.model import Vector

SECTIONS: tuple[tuple[str, str], ...] = (
    ("§2.1", "Replica states"),
    ("§2.2", "Partition states"),
    ("§2.3", "Generic transition mechanics"),
    ("§3.1", "ControllerContext"),
    ("§3.2", "LeaderAndIsr record and which fields bump"),
    ("§3.3", "ZooKeeper write protocol for partition state"),
    ("§3.4", "Request batch"),
    ("§4.1", "→ NewReplica"),
    ("§4.2", "→ OnlineReplica"),
    ("§4.3", "→ OfflineReplica"),
    ("§4.4", "→ ReplicaDeletionStarted"),
    ("§4.5", "→ ReplicaDeletionIneligible"),
    ("§4.6", "→ ReplicaDeletionSuccessful"),
    ("§4.7", "→ NonExistentReplica"),
    ("§4.8", "Replica machine startup"),
    ("§5.1", "→ NewPartition"),
    ("§5.2", "→ OnlinePartition"),
    ("§5.3", "→ OfflinePartition and → NonExistentPartition"),
    ("§5.4", "Partition machine startup"),
    ("§6", "Leader-election strategies"),
    ("§7.1", "Election, failover"),
    ("§7.2", "Broker membership change"),
    ("§7.3", "onBrokerStartup"),
    ("§7.4", "onBrokerFailure"),
    ("§7.5", "LeaderAndIsr responses and log-dir failures"),
    ("§7.6", "Topic / partition creation"),
    ("§7.7", "Partition reassignment (KIP-455)"),
    ("§7.8", "Partition reassignment (legacy, 1.1)"),
    ("§7.9", "Replica leader election"),
    ("§7.10", "Controlled shutdown"),
    ("§7.11", "ISR changes made by leaders"),
    ("§7.12", "Resignation, session expiry"),
    ("§8", "Topic deletion"),
    ("§9", "Controller epoch and fencing"),
)

PROFILE_ONLY: dict[str, str] = {"§7.7": "kafka-2.8", "§7.8": "kafka-1.1"}
"""Sections whose behaviour exists in one profile only."""

OUT_OF_SCOPE: tuple[tuple[str, str], ...] = (
    ("§1", "what was read — provenance, no behaviour"),
    ("§10", "log formats — checked by the audit of state-change logs, not by the protocol"),
    ("§11", "safety invariants — checked by `kcspec verify` on every step, not per vector"),
    ("§12", "historical bugs — examples for the bug zoo"),
    ("§13", "caveats — what the document does not determine"),
)


def covers(vector_section: str, section: str) -> bool:
    """``§4.3`` covers ``§4.3``; ``§7.7.1`` covers ``§7.7``."""
    return vector_section == section or vector_section.startswith(section + ".")


def coverage(vectors: Iterable[Vector], profiles: Iterable[str]) -> dict[str, dict[str, int]]:
    """section → profile → number of vectors that check it."""
    table: dict[str, dict[str, int]] = {s: dict.fromkeys(profiles, 0) for s, _ in SECTIONS}
    for v in vectors:
        for s, _ in SECTIONS:
            if any(covers(vs, s) for vs in v.sections) and v.profile in table[s]:
                table[s][v.profile] += 1
    return table


def uncovered(vectors: Iterable[Vector], profiles: Iterable[str]) -> list[tuple[str, str]]:
    """(section, profile) pairs that no vector checks although the behaviour exists in that profile."""
    profiles = tuple(profiles)
    out = []
    for section, per_profile in coverage(vectors, profiles).items():
        for profile, n in per_profile.items():
            if n == 0 and PROFILE_ONLY.get(section, profile) == profile:
                out.append((section, profile))
    return out


def report(vectors: Iterable[Vector], profiles: Iterable[str]) -> str:
    """The traceability report (Markdown)."""
    vectors = list(vectors)
    profiles = tuple(profiles)
    table = coverage(vectors, profiles)
    by_section: dict[str, list[str]] = defaultdict(list)
    for v in vectors:
        for s in v.sections:
            by_section[s].append(v.id)
    lines = [
        "# Conformance vectors — traceability to the semantics document",
        "",
        f"{len(vectors)} vectors. Each row counts the vectors that check the section (or one of its subsections).",
        "",
        "| section | title | " + " | ".join(profiles) + " | status |",
        "|---|---|" + "---|" * len(profiles) + "---|",
    ]
    missing = set(uncovered(vectors, profiles))
    for section, title in SECTIONS:
        counts = table[section]
        cells = []
        for p in profiles:
            if PROFILE_ONLY.get(section, p) != p:
                cells.append("n/a")
            else:
                cells.append(str(counts[p]))
        status = "NOT COVERED" if any((section, p) in missing for p in profiles) else "covered"
        lines.append(f"| {section} | {title} | " + " | ".join(cells) + f" | {status} |")
    lines += ["", "Out of the vectors' scope:", ""]
    lines += [f"* {s}: {why}" for s, why in OUT_OF_SCOPE]
    lines += ["", "## Vectors per cited section", ""]
    for s in sorted(by_section, key=lambda t: tuple(int(x) for x in t.lstrip("§").split(".") if x.isdigit())):
        ids = by_section[s]
        sample = ", ".join(f"`{i}`" for i in ids[:3])
        lines.append(f"* {s}: {len(ids)} — e.g. {sample}")
    return "\n".join(lines) + "\n"
