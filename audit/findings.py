"""Findings: what an operator must look at in a log even when no rule of the spec is violated.

Kafka reports some of its own troubles in its logs: a state transition its controller rejected (ERROR), a
leader election that failed (ERROR), a broker that ignored a request from a stale leader or controller epoch
(a *fenced* write: the fencing worked, but a stale controller was writing), a broker that could not follow an
unavailable leader, an unclean election (possible data loss). Each such record is a ``Finding`` with a
severity, what it is in words, its file and line and — read back from the file, since the stored parse keeps
only the fields of records — the line's text and the exception that follows it.

``narrow`` and ``dressed`` give them their columns (the log rules' pass passes them on); ``line_texts`` reads the text
of a few ``(file, line)`` positions back from the files (violations' offending and compared lines too);
``attention`` orders what the summaries show first.
"""

from __future__ import annotations

import io
import lzma
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcspec.audit import layouts, stats

SEVERITIES = ("error", "warning", "expected")
"""Most urgent first. ``error``: a fault (a transition Kafka's code paths never request from that state, a
request that failed); ``warning``: trouble of the cluster that Kafka handled as designed (a partition left
offline, a fenced write, an unclean election); ``expected``: an ERROR line that is Kafka's normal behaviour
(``EXPECTED``), shown below the others and never as a fault."""


@dataclass(frozen=True)
class FindingKind:
    """A record kind (``lines.TEMPLATES``) that is a finding: its severity and what it means, in words."""

    kind: str
    severity: str
    finding: str
    meaning: str


FINDING_KINDS: dict[str, FindingKind] = {
    f.kind: f
    for f in (
        FindingKind(
            "replica_transition_failed",
            "error",
            "rejected-transition",
            "the controller rejected a replica state transition (invalid from the replica's current state)",
        ),
        FindingKind(
            "partition_transition_failed",
            "error",
            "failed-state-change",
            "a partition state change failed (to OnlinePartition: no leader could be elected)",
        ),
        FindingKind(
            "election_failed",
            "error",
            "failed-election",
            "the controller could not elect a leader for the partition",
        ),
        FindingKind(
            "become_follower_failed",
            "error",
            "follower-without-leader",
            "a broker was told to follow a leader that is unavailable",
        ),
        FindingKind(
            "reassign_lair_failed",
            "error",
            "reassignment-request-failed",
            "the controller failed to send the LeaderAndIsr request of a reassignment",
        ),
        FindingKind(
            "lair_ignored",
            "warning",
            "fenced-write",
            "a broker ignored a LeaderAndIsr request with a stale leader or controller epoch (a fenced write)",
        ),
        FindingKind(
            "stale_controller_request",
            "warning",
            "fenced-write",
            "a broker ignored a StopReplica or UpdateMetadata request from a controller with an older controller "
            "epoch (a fenced write)",
        ),
        FindingKind(
            "controller_moved",
            "warning",
            "fenced-zookeeper-write",
            "the controller's write to ZooKeeper was fenced (ControllerMovedException: its check of the controller "
            "epoch znode's version failed, BADVERSION): another broker is controller, this one resigns",
        ),
        FindingKind(
            "isr_update_fenced",
            "warning",
            "fenced-isr-write",
            "a partition leader's conditional ISR write to ZooKeeper was rejected (its cached zkVersion is stale, "
            "BADVERSION): the ISR was not updated",
        ),
        FindingKind(
            "unclean_election",
            "warning",
            "unclean-election",
            "a leader was elected from outside the ISR: possible data loss",
        ),
    )
}


@dataclass(frozen=True)
class Regrade:
    """A finding whose logged transition makes it another severity than its kind's: a failed transition of
    ``kind`` to ``to_state`` from any of ``from_states`` (``None``: from any state) is ``severity``, because
    ``why`` (the section of ../shared/kafka-semantics.md, or Kafka's source, that says so)."""

    kind: str
    to_state: str
    from_states: tuple[str, ...] | None
    severity: str
    why: str


EXPECTED: tuple[Regrade, ...] = (
    Regrade(
        "replica_transition_failed",
        "NewReplica",
        None,
        "expected",
        "§7.7.2 A2 (and §7.3 step 5, §7.1): every invocation of a reassignment's phase A moves each adding replica "
        "to NewReplica; one that already has a state (Online after a failover or a broker's restart, New on a "
        "repeated invocation, a deletion state) is an invalid transition, logged at ERROR and harmless: the "
        "LeaderAndIsr request went out in A1 (§2.3 step 4: no other effect)",
    ),
    Regrade(
        "replica_transition_failed",
        "OnlineReplica",
        ("ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
        "expected",
        "§7.3 step 3: a restarted broker's replicas all go to OnlineReplica, and those of a topic being deleted "
        "(ReplicaDeletionStarted/Successful) are rejected as invalid transitions (logged); the deletion goes on",
    ),
    Regrade(
        "replica_transition_failed",
        "ReplicaDeletionIneligible",
        None,
        "expected",
        "§8 onPartitionDeletion and failReplicaDeletion: every replica of a dead broker of a topic being deleted is "
        "moved to ReplicaDeletionIneligible whatever its state (one still Online on a shutting-down broker, one "
        "already Ineligible or Successful, and in 1.1 one Offline) and the invalid ones are only logged",
    ),
    Regrade(
        "partition_transition_failed",
        "OnlinePartition",
        ("OnlinePartition",),
        "expected",
        "§5.2, §7.9, §7.10: a preferred, reassignment or controlled-shutdown election of a partition that has a "
        "leader and finds no eligible candidate fails and is logged at ERROR; the partition keeps its leader",
    ),
    Regrade(
        "partition_transition_failed",
        "OnlinePartition",
        ("OfflinePartition", "NewPartition"),
        "warning",
        "§5.2, §6: no replica of the partition is alive (and in the ISR, unless unclean election is on): Kafka "
        "leaves it offline as designed; the cluster lost the partition's brokers, the controller did no wrong",
    ),
)
"""Decision: which ERROR findings are Kafka's normal behaviour (or the cluster's trouble, not a fault), by the
kind and logged transition alone (the first ``Regrade`` that matches wins); every other finding keeps its
kind's severity (``FINDING_KINDS``). A rejected transition not listed here — one no code path of Kafka asks
for from that state — stays an error. Context (is the topic queued for deletion right now?) is not consulted:
the listed transitions arise only in the flows named in their ``why``, whatever the moment."""


def severity_of(kind: str | None, from_state: str | None, to_state: str | None) -> str | None:
    """A finding's severity from its kind and logged transition (``EXPECTED``, else its kind's); ``None`` for a
    record that is no finding."""
    for r in EXPECTED:
        if (
            r.kind == kind
            and r.to_state == to_state
            and (r.from_states is None or from_state in r.from_states)
        ):
            return r.severity
    f = FINDING_KINDS.get(kind or "")
    return None if f is None else f.severity


def severity_column(kind: Any, from_state: Any, to_state: Any) -> Any:
    """``severity_of`` as a Spark column over the three columns."""
    from pyspark.sql import functions as F

    out: Any = F.create_map(*[F.lit(x) for f in FINDING_KINDS.values() for x in (f.kind, f.severity)])[kind]
    for r in reversed(EXPECTED):
        match = (kind == r.kind) & (to_state == r.to_state)
        if r.from_states is not None:
            match = match & from_state.isin(*r.from_states)
        out = F.when(match, F.lit(r.severity)).otherwise(out)
    return out


RECORD_FIELDS = ("kind", "topic", "partition", "controller_id", "controller_epoch", "broker", "exception")
"""A finding's fields as its record has them (the first line of the exception that follows it last)."""
FINDING_COLUMNS = ("file", "line", "ts", "severity", "finding", "meaning", *RECORD_FIELDS)


NARROW_COLUMNS = ("fid", "line", "ts", *RECORD_FIELDS, "from_state", "to_state")
"""What a finding's ``FINDING_COLUMNS`` are made of (``dressed``): the record's file id, line, ``ts_key`` and
fields, and the logged transition its severity depends on (``severity_of``); a finding's sort moves these only. ``NARROW_ORDER`` sorts them as ``ORDER`` sorts the dressed rows:
file ids are in the order of the files' names, and a line holds one record."""
NARROW_ORDER = ("fid", "line", "kind")
ORDER = ("file", "line", "finding")


SAMPLE_KEY = ("severity", "ts", "file", "line")
"""The findings the summaries show first: by severity (in ``SEVERITIES``' order: ``RANKED``), then in time order."""
RANKED: dict[str, tuple[str, ...]] = {"severity": SEVERITIES}
"""Key columns that sort by their value's place in a tuple, not by the value itself."""


def rank_column(severity: Any) -> Any:
    """A severity's place in ``SEVERITIES`` (0: most urgent), as a Spark column."""
    from pyspark.sql import functions as F

    return F.create_map(*[F.lit(x) for i, s in enumerate(SEVERITIES) for x in (s, i)])[severity]


def narrow_sample_key() -> tuple[Any, ...]:
    """``SAMPLE_KEY`` over ``narrow`` rows (the same order: ``ts`` keys sort as their texts, file ids as the
    files' names)."""
    from pyspark.sql import functions as F

    severity = severity_column(F.col("kind"), F.col("from_state"), F.col("to_state"))
    return (rank_column(severity), F.col("ts"), F.col("fid"), F.col("line"))


def narrow(rows: Any) -> Any:
    """``NARROW_COLUMNS`` of ``rows``: records of ``FINDING_KINDS`` as the log rules' pass passes them on
    (``replay.log_pass``), with the first line of the exception that follows each (``exception``)."""
    return rows.select(*NARROW_COLUMNS)


def dressed(rows: Any, names: Any) -> Any:
    """``FINDING_COLUMNS`` of ``narrow`` rows; ``names`` is an array column of file names by file id."""
    from pyspark.sql import functions as F

    def by_kind(attr: str) -> Any:
        return F.create_map(*[F.lit(x) for f in FINDING_KINDS.values() for x in (f.kind, getattr(f, attr))])

    kind = F.col("kind")
    return rows.select(
        F.element_at(names, F.col("fid") + 1).alias("file"),
        "line",
        stats.ts_column_text(F.col("ts")).alias("ts"),
        severity_column(kind, F.col("from_state"), F.col("to_state")).alias("severity"),
        by_kind("finding")[kind].alias("finding"),
        by_kind("meaning")[kind].alias("meaning"),
        *RECORD_FIELDS,
    )


def line_texts(wanted: Iterable[tuple[str, int]], limit: int = 2000) -> dict[tuple[str, int], str]:
    """The text of each ``(file, line)`` (lines numbered from 1, ended by ``\\n``, ``\\r\\n`` or ``\\r`` as the
    reader ends them), read back from the files; at most ``limit`` positions. A file that cannot be read, or
    a line past its end, is left out."""
    per_file: dict[str, set[int]] = {}
    for f, n in list(wanted)[:limit]:
        if f is not None and n is not None:
            per_file.setdefault(f, set()).add(int(n))
    out: dict[tuple[str, int], str] = {}
    for f, numbers in per_file.items():
        last = max(numbers)
        try:
            raw = layouts.open_log(Path(f))  # decompressed and decoded as the reader does (magic bytes)
            stream = io.TextIOWrapper(raw, encoding=layouts.encoding(raw), errors="replace", newline=None)
            with stream:
                for number, text in enumerate(stream, start=1):
                    if number in numbers:
                        out[(f, number)] = text.rstrip("\n")
                    if number >= last:
                        break
        except (OSError, EOFError, ValueError, lzma.LZMAError):
            continue
    return out


def with_texts(
    findings: Sequence[Mapping[str, Any]], violations: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sampled findings with ``text`` and the sampled violations with ``text`` and ``compared_text`` (the
    earlier line a history rule compared the offending line with), read back from the files."""
    wanted = [(r.get("file"), r.get("line")) for r in (*findings, *violations)]
    wanted += [(r.get("compared_file"), r.get("compared_line")) for r in violations]
    texts = line_texts((str(f), int(n)) for f, n in wanted if f is not None and n is not None)

    def text(f: Any, n: Any) -> str | None:
        return None if f is None or n is None else texts.get((str(f), int(n)))

    fs = [{**r, "text": text(r.get("file"), r.get("line"))} for r in findings]
    vs = [
        {
            **r,
            "text": text(r.get("file"), r.get("line")),
            "compared_text": text(r.get("compared_file"), r.get("compared_line")),
        }
        for r in violations
    ]
    return fs, vs


def attention(
    warnings: Sequence[str],
    by_finding: Mapping[str, int],
    finding_sample: Sequence[Mapping[str, Any]],
    violation_sample: Sequence[Mapping[str, Any]],
    violations: int,
    limit: int = 10,
    groups: Sequence[Mapping[str, Any]] = (),
    by_severity: Mapping[str, int] | None = None,
) -> list[str]:
    """What an operator must look at, most urgent first, as plain lines: warnings about the audit itself (a
    profile that does not match the log), violations (each with its line and the earlier line it was compared
    with), then findings by severity (each with its line and exception; ``by_severity``: their counts)."""
    by_severity = by_severity or {}
    out = [f"WARNING: {w}" for w in warnings]
    if violations and groups:
        out.append(f"{violations} violation(s) of the spec, in {len(groups)} group(s) by rule and signature:")
        for g in groups[:limit]:
            out.append(f"  [{g['rule']}] x{g['count']}: {g['signature']}")
            if g.get("spec"):
                out.append(f"    checks {', '.join(g['spec'])}")
            for v in g["first"]:
                out += _violation_lines(v, "    ")
    elif violations:
        out.append(f"{violations} violation(s) of the spec:")
        for v in violation_sample[:limit]:
            out.append(f"  {v.get('file')}:{v.get('line')}: [{v.get('rule')}] {v.get('message')}")
            if v.get("text"):
                out.append(f"      line: {v['text']}")
            if v.get("compared_line") is not None:
                shown = v.get("compared_text") or ""
                out.append(f"      compared with {v.get('compared_file')}:{v.get('compared_line')}: {shown}")
    ordered = sorted(
        finding_sample, key=lambda f: (SEVERITIES.index(str(f.get("severity"))), f.get("ts") or "")
    )
    if by_finding:
        counts = ", ".join(f"{k}: {n}" for k, n in sorted(by_finding.items()))
        graded = ", ".join(f"{n} {s}" for s in SEVERITIES if (n := by_severity.get(s, 0)))
        graded = f"; {graded}" if by_severity else ""
        out.append(f"{sum(by_finding.values())} finding(s) in the logs ({counts}{graded}):")
        for f in ordered[:limit]:
            out.append(
                f"  {str(f.get('severity')).upper()} {f.get('file')}:{f.get('line')}: {f.get('meaning')}"
            )
            if f.get("text"):
                out.append(f"      line: {f['text']}")
            if f.get("exception"):
                out.append(f"      {f['exception']}")
    return out


def _violation_lines(v: Mapping[str, Any], indent: str) -> list[str]:
    """A violation as the terminal shows it: where, the rule and message, its line and the line it was
    compared with."""
    out = [f"{indent}{v.get('file')}:{v.get('line')}: {v.get('message')}"]
    if v.get("text"):
        out.append(f"{indent}    line: {v['text']}")
    if v.get("compared_line") is not None:
        shown = v.get("compared_text") or ""
        out.append(f"{indent}    compared with {v.get('compared_file')}:{v.get('compared_line')}: {shown}")
    return out
