"""What the logs say about themselves: the layouts each file is written in, and the Kafka version its formats
belong to (and so the profile to audit it with).

* ``layout_counts`` — per file, the lines each layout took (``lines.LAYOUTS`` names, ``+prefix`` when a line
  prefix stood before the record) and the lines that are not records (``-``), from parsed lines.
* ``VERSION_HINTS`` — templates whose format belongs to a range of Kafka versions (real-log FORMATS.md,
  "seen in", widened to the releases whose source writes them); ``infer_version`` intersects the ranges of the
  templates a log uses. ``profile_for`` names the profile that models those versions, ``profile_warning`` says
  when the profile an audit runs with does not match the log.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from kcspec.model.kafka_log.reference_parser import ParsedLine, parse_lines

NOT_A_RECORD = "-"

Version = tuple[int, int]
LATEST: Version = (99, 0)

VERSION_HINTS: dict[str, tuple[Version, Version, str]] = {
    # template → (first, last version, why); the legacy "Controller <c> epoch <e>" family ends with 0.11
    "legacy-replica-transition-no-from": ((0, 8), (0, 8), "replica transitions logged without a from-state"),
    "legacy-partition-new": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-replica-transition": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-partition-online": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-partition-transition": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-election-started": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-leader-elected": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-lair-sent": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-umr-sent": ((0, 8), (0, 11), "the 'Controller <c> epoch <e>' state-change prefix"),
    "legacy-election-failed": ((0, 10), (0, 11), "'encountered error while electing leader'"),
    "replica-transition": ((1, 0), LATEST, "the '[Controller id=<c> epoch=<e>]' state-change prefix"),
    "partition-new": ((1, 0), LATEST, "the '[Controller id=<c> epoch=<e>]' state-change prefix"),
    "partition-online-leader": ((1, 0), (1, 0), "'to OnlinePartition with leader' under the 1.0 prefix"),
    "partition-online": ((1, 1), LATEST, "'to OnlinePartition with state LeaderAndIsr(...)'"),
    "isr-removal": ((2, 0), LATEST, "'after removing replica ... from the ISR' (absent in 1.1)"),
    "lair-summary": ((2, 6), LATEST, "the per-broker LeaderAndIsr request summary (2.6+)"),
    "umr-summary": ((2, 6), LATEST, "the UpdateMetadata request summary (2.6+)"),
}
"""Templates whose format dates a log (first and last Kafka version that writes it, and why)."""

QUIRK_0_8 = (
    "Kafka 0.8.0/0.8.1 log the from-state after the update (NewPartition→Online prints 'from OnlinePartition'): "
    "transition checks on such a log give false positives (its previous-state-mismatch lines are reported as "
    "the finding not-checkable-for-version, not as violations)"
)


def layout_counts(parsed: Iterable[ParsedLine]) -> dict[str, int]:
    """Lines per layout name (``-``: lines that are not records: continuation, blank, quarantined)."""
    counts = Counter[str]()
    for p in parsed:
        counts[p.layout if p.status == "record" and p.layout else NOT_A_RECORD] += 1
    return dict(counts)


@dataclass(frozen=True)
class VersionEvidence:
    """The Kafka versions a log's formats allow (``low``–``high``) and the template lines that say so."""

    low: Version
    high: Version
    evidence: tuple[str, ...]
    """``template at file:line (why)``, one per hinting template (its first line)."""

    @property
    def known(self) -> bool:
        return bool(self.evidence)

    @property
    def consistent(self) -> bool:
        return self.low <= self.high

    def text(self) -> str:
        def v(x: Version) -> str:
            return "latest" if x == LATEST else f"{x[0]}.{x[1]}"

        if not self.known:
            return "no version-specific format seen"
        span = v(self.low) if self.low == self.high else f"{v(self.low)}–{v(self.high)}"
        if not self.consistent:
            span = (
                f"inconsistent ({v(self.high)} and {v(self.low)} formats both seen: more than one version?)"
            )
        return f"Kafka {span}, from: " + "; ".join(self.evidence[:3])


def infer_version(parsed: Iterable[ParsedLine]) -> VersionEvidence:
    """Intersect the version ranges of the hinting templates among ``parsed`` records."""
    low, high, evidence = _hints(parsed)
    return VersionEvidence(low, high, tuple(evidence.values()))


def _hints(parsed: Iterable[ParsedLine]) -> tuple[Version, Version, dict[str, str]]:
    """``infer_version``'s range and its evidence by key (template and why), in the order first seen."""
    low: Version = (0, 0)
    high: Version = LATEST
    evidence: dict[str, str] = {}
    for p in parsed:
        if p.status != "record" or p.template is None:
            continue
        hint = VERSION_HINTS.get(p.template)
        if hint is None:
            continue
        first, last, why = hint
        if p.template == "legacy-partition-new" and p.fields.get("from_state") == "NotExists":
            first, last, why = (0, 8), (0, 8), "0.8 partition-state names 'NotExists'/'New'"
        low, high = max(low, first), min(high, last)
        evidence.setdefault(p.template + why, f"{p.template} at {p.file}:{p.line} ({why})")
    return low, high, evidence


PROFILE_VERSIONS: dict[str, tuple[Version, Version]] = {
    "kafka-1.1": ((1, 0), (1, 1)),
    "kafka-2.8": ((2, 0), LATEST),
}
"""The Kafka versions each profile of ``spec.profiles`` stands for (1.1.1 and 2.8.2 are what they model; 1.0 and
2.x–3.x ZooKeeper controllers share their formats and transition tables)."""


def profile_for(v: VersionEvidence) -> str | None:
    """The profile whose versions hold all the log's versions, or ``None`` (no profile models them)."""
    if not v.known or not v.consistent:
        return None
    for name, (first, last) in PROFILE_VERSIONS.items():
        if first <= v.low and v.high <= last:
            return name
    return None


def profile_warning(profile: str, v: VersionEvidence) -> str | None:
    """A headline warning when the log's formats say the audit's ``profile`` does not model it, else ``None``."""
    if not v.known:
        return None
    first, last = PROFILE_VERSIONS.get(profile, ((0, 0), LATEST))
    # Decision: a log whose formats allow some version of the profile is audited without a warning (formats
    # rarely pin one release); the warning is for a log that cannot be of the profile's versions.
    if v.consistent and v.low <= last and first <= v.high:
        return None
    best = profile_for(v)
    advice = f"; use --profile {best}" if best and best != profile else "; no profile models these versions"
    quirk = f". {QUIRK_0_8}" if v.consistent and v.high <= (0, 8) else ""
    return f"profile {profile} does not match the log: {v.text()}{advice}{quirk}"


SAMPLE_LINES = 5_000
"""Lines read from the start of each file to infer the version (formats do not change within a file)."""


def sample_file(path: Path, lines: int = SAMPLE_LINES) -> list[ParsedLine]:
    """The parse of the first ``lines`` lines of a log (``.gz`` decompressed); what cannot be read is left out
    (the audit reports unreadable input itself)."""
    return list(parse_lines(str(path), head(path, lines)))


def head(path: Path, lines: int) -> list[str]:
    """The first ``lines`` lines of a file (``.gz`` decompressed), what can be read of them."""
    texts: list[str] = []
    try:
        raw = open_log(path)
        with raw, io.TextIOWrapper(raw, encoding=encoding(raw), errors="replace", newline="") as f:
            for text in f:
                texts.append(text.rstrip("\r\n"))
                if len(texts) >= lines:
                    break
    except (OSError, EOFError, ValueError, gzip.BadGzipFile, lzma.LZMAError):
        pass
    return texts


MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
"""A file's compression by its first bytes, as ``LineParser.compression`` reads it (never by the name)."""


def compression(path: Path) -> str | None:
    """The compression ``path``'s first bytes say (``MAGIC``), or ``None``."""
    with open(path, "rb") as f:
        first = f.read(6)
    return next((name for magic, name in MAGIC if first.startswith(magic)), None)


def open_log(path: Path) -> io.BufferedReader:
    """``path`` decompressed as its first bytes say, for the driver's samples: gzip, bzip2 and xz (the
    standard library's); a file in lz4 or zstd reads as empty here (the JVM reader decodes them)."""
    codec = compression(path)
    if codec == "gzip":
        return io.BufferedReader(gzip.open(path, "rb"))
    if codec == "bzip2":
        return io.BufferedReader(bz2.open(path, "rb"))
    if codec == "xz":
        return io.BufferedReader(lzma.open(path, "rb"))
    if codec is not None:
        return io.BufferedReader(io.BytesIO(b""))
    return open(path, "rb")


def encoding(raw: io.BufferedReader) -> str:
    """The text encoding of a log from its first bytes, as ``LineParser.charset`` reads it: UTF-16 by its
    byte-order mark or the zero bytes of ASCII text, else UTF-8 (a UTF-8 byte-order mark skipped)."""
    m = raw.peek(4)[:4]
    if m[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    if len(m) == 4 and m[0] and not m[1] and m[2] and not m[3]:
        return "utf-16-le"
    if len(m) == 4 and not m[0] and m[1] and not m[2] and m[3]:
        return "utf-16-be"
    return "utf-8-sig"


OUT_OF_MODEL: tuple[tuple[str, str], ...] = (
    ("[QuorumController id=", "a KRaft controller log"),
    ("org.apache.kafka.controller.QuorumController", "a KRaft controller log"),
    ("KRaftMigrationDriver", "a ZooKeeper-to-KRaft migration log"),
    ("KRaftMigrationZkWriter", "a ZooKeeper-to-KRaft migration log"),
    ("ZkMigrationClient", "a ZooKeeper-to-KRaft migration log"),
)
"""Markers of logs whose controller the spec does not model (its ZooKeeper-mode controller, semantics §1):
the KRaft quorum controller, and the migration from ZooKeeper to KRaft. Decision: such a file is audited as
any other (its lines are counted), and named in the headline as out of the model, so that its "nothing
checked" is not read as a healthy history."""


OUT_OF_MODEL_LINES = 100
"""Lines read from the start of each file for ``OUT_OF_MODEL`` markers (nearly every line of such a log has one)."""


def out_of_model(paths: Iterable[str], lines: int = SAMPLE_LINES) -> list[str]:
    """For each file whose first ``lines`` lines (at most ``OUT_OF_MODEL_LINES``) show a controller the spec
    does not model (``OUT_OF_MODEL``), ``<file>: <what> (line <n>), out of the model (…)``; the lines are read,
    not parsed: those ``version_report``'s sample of ``lines`` lines read (``_file_evidence``)."""
    found = []
    for p in paths:
        marker = _file_evidence(p, lines, _stamp(p))[3]
        if marker is not None:
            n, what = marker
            found.append(f"{p}: {what} (line {n}), out of the model (ZooKeeper-mode controllers only)")
    return found


def _marker(texts: Sequence[str]) -> tuple[int, str] | None:
    """The first of ``texts`` (lines from a file's start) that shows an ``OUT_OF_MODEL`` marker: its line
    number and what it shows."""
    for n, text in enumerate(texts[:OUT_OF_MODEL_LINES], 1):
        what = next((w for marker, w in OUT_OF_MODEL if marker in text), None)
        if what is not None:
            return n, what
    return None


SAMPLE_BUDGET = 50_000
"""Lines read in all by ``version_report`` (the driver parses them in Python): with many files each gets fewer
lines, at least ``SAMPLE_MIN``.

Decision (measured): the sample is a budget for the whole run, not per file. With a per-file floor of 500
lines a folder of 5,000 hourly-rotated files had 2.5 M lines parsed in Python before the audit could report
(90 of its 163 s; the single-process Python pass over every line of the folder takes 5 s). A format does not
change within a file, and the rotated files of one folder are written by the same broker: the first
``SAMPLE_MIN`` lines of each of thousands of files date the logs as well as 500 would."""
SAMPLE_MIN = 10


def infer_files(paths: Iterable[str], lines: int = SAMPLE_LINES) -> VersionEvidence:
    """``infer_version`` over the first ``lines`` lines of every file of ``paths``: each file's evidence (read
    once per process while the file is unchanged: the command chooses the profile and the report infers the
    version from the same samples), combined as ``infer_version`` would over all of them."""
    low: Version = (0, 0)
    high: Version = LATEST
    evidence: dict[str, str] = {}
    for p in paths:
        first, last, items, _ = _file_evidence(p, lines, _stamp(p))
        low, high = max(low, first), min(high, last)
        for k, text in items:
            evidence.setdefault(k, text)
    return VersionEvidence(low, high, tuple(evidence.values()))


def _stamp(path: str) -> tuple[int, int]:
    """A file's modification time and size (``(0, -1)`` when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=1 << 16)
def _file_evidence(
    path: str, lines: int, _stamp: tuple[int, int]
) -> tuple[Version, Version, tuple[tuple[str, str], ...], tuple[int, str] | None]:
    """One file's ``_hints`` over its first ``lines`` lines (``_stamp``: modification time and size, so a file
    changed since is read again), and the ``OUT_OF_MODEL`` marker among them (``_marker``), from one read.

    Decision (measured on a folder of 5,000 rotated files): with room for 4,096 files the cache kept none of
    them for the report's inference after the command's choice of profile had read them in order (each read
    dropped the oldest), and the markers read every file a second time; one file's entry is a few hundred
    bytes."""
    texts = head(Path(path), lines)
    low, high, evidence = _hints(parse_lines(str(Path(path)), texts))
    return low, high, tuple(evidence.items()), _marker(texts)


def chosen_profile(paths: Sequence[str], default: str) -> tuple[str, str]:
    """The profile to audit ``paths`` with when none is given: the one whose versions hold every version the
    logs' formats allow (``profile_for``), else ``default``; and why, in words."""
    each = min(SAMPLE_LINES, max(SAMPLE_MIN, SAMPLE_BUDGET // max(1, len(paths))))
    v = infer_files(paths, each)
    name = profile_for(v)
    span = v.text().split(", from: ")[0]  # the evidence is in stats.json and summary.html
    if name is not None:
        return name, f"inferred from the logs' formats ({span})"
    if not v.known:
        return default, "the default (no version-specific format seen in the logs)"
    return default, f"the default (the logs' formats say {span}; no one profile models exactly that)"


UNCHECKABLE_0_8 = ("previous-state-mismatch",)
"""Rules a Kafka 0.8.0/0.8.1 log is documented to break by itself (``QUIRK_0_8``; FORMATS.md, "from-state is
read after the update"): on a history whose formats say 0.8, their violations are findings
(``NOT_CHECKABLE``), not violations."""

NOT_CHECKABLE = "not-checkable-for-version"
"""The finding a violation of an ``UNCHECKABLE_0_8`` rule on a 0.8 history becomes."""


def is_0_8(v: VersionEvidence) -> bool:
    """The formats say Kafka 0.8 (they cannot tell 0.8.2 from 0.8.0/0.8.1 apart: 0.8.2 is given the benefit of
    the doubt, as the headline's ``QUIRK_0_8`` warning does)."""
    return v.known and v.consistent and v.high <= (0, 8)


def version_report(
    groups: Mapping[str, Sequence[str]], profile: str, per_history: bool = False
) -> dict[str, Any]:
    """Per history (``groups``: history name → its files; one history of every file by default), the version its
    logs' formats say, the profile for it and ``profile_used``: with ``per_history`` the profile for the log
    where one models it, else ``profile``; ``unchecked_rules``: ``UNCHECKABLE_0_8`` on a 0.8 history.
    ``warning``: the histories their profile does not match, in one line for the headline (``None`` when it
    matches them all). JSON-ready."""
    n_files = sum(len(f) for f in groups.values())
    each = min(SAMPLE_LINES, max(SAMPLE_MIN, SAMPLE_BUDGET // max(1, n_files)))
    histories: dict[str, dict[str, Any]] = {}
    bad: list[tuple[str, VersionEvidence]] = []
    for name, files in sorted(groups.items()):
        v = infer_files(files, each)
        used = (profile_for(v) if per_history else None) or profile
        histories[name] = {
            "inferred": v.text(),
            "profile_for_log": profile_for(v),
            "profile_used": used,
            "mixed_versions": v.known and not v.consistent,
            "unchecked_rules": list(UNCHECKABLE_0_8) if is_0_8(v) else [],
        }
        if profile_warning(used, v) is not None:
            bad.append((name, v))
    warning: str | None = None
    if len(groups) == 1 and bad:
        warning = profile_warning(histories[bad[0][0]]["profile_used"], bad[0][1])
    elif bad:
        shown = "; ".join(f"{name}: {v.text().split(', from: ')[0]}" for name, v in bad[:3])
        more = f"; and {len(bad) - 3} more" if len(bad) > 3 else ""
        quirk = f". {QUIRK_0_8}" if any(v.consistent and v.high <= (0, 8) for _, v in bad) else ""
        what = f"profile {profile}" if not per_history else "the profile used"
        warning = (
            f"{what} does not match {len(bad)} of {len(groups)} histories ({shown}{more}); "
            f"see stats.json 'version'{quirk}"
        )
    mixed = [name for name, h in histories.items() if h["mixed_versions"]]
    outside = out_of_model([f for files in groups.values() for f in files], each)
    if outside:
        more = f" (and {len(outside) - 1} more file(s), see stats.json 'version')" if len(outside) > 1 else ""
        warning = "; ".join(x for x in (warning, outside[0] + more) if x)
    return {
        "histories": histories,
        "warning": warning,
        "mixed": mixed_warning(mixed, len(groups)),
        "out_of_model": outside,
    }


MIXED_CLUSTERS = (
    "the files{where} have the formats of more than one Kafka version, so they are probably more than one "
    "cluster, yet are audited as one history: controller epochs and timestamps of unrelated clusters are "
    "compared with each other (stale-controller-write and ordering violations may be artefacts of that) — "
    "audit unrelated clusters apart with --history file or --history dir"
)


def mixed_warning(mixed: Sequence[str], n_histories: int) -> str | None:
    """The headline warning for histories whose files show more than one Kafka version's formats (``None``: none).

    Decision: the audit still treats the files as the user said (one cluster by default) and reports what it
    finds; it says plainly that the input looks like several clusters and which option audits them apart.
    """
    if not mixed:
        return None
    where = "" if n_histories == 1 else f" of {len(mixed)} histories ({', '.join(mixed[:3])})"
    return MIXED_CLUSTERS.format(where=where)
