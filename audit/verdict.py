"""What an audit's counts mean for the person who ran it: clean, violations, bad input, or an internal error.

A run is clean only when it found no violation *and* its input was good: every file yielded at least one
record, no file broke off (``jvm_parser.BROKEN_REASONS``), and the quarantined share of the lines read is at
most the threshold (``DEFAULT_MAX_QUARANTINE``, 5 %). The counts must also add up: per file and in total,
the lines read (counted by the reader) equal the records, continuation and blank lines (counted where the
lines are parsed) plus the quarantined lines (counted in what was written to ``quarantine.jsonl``); when they
do not, the audit itself is wrong and says so.

Exit codes (``exit_code``): 0 clean, 1 violations (even when the input also has problems: the violations
were found in what could be read, and the headline lists the problems), 2 bad input and no violation,
3 an internal error (counts that do not add up; the command also uses it for an unexpected exception) —
never 1, which would read as "violations found".
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MAX_QUARANTINE = 0.05
"""The largest share of quarantined lines (of the lines read) that still lets a run be called clean."""
CLEAN, VIOLATIONS, BAD_INPUT, INTERNAL_ERROR = 0, 1, 2, 3


@dataclass(frozen=True)
class AuditOutcome:
    """The run's outcome: its violations, its input problems and its internal errors, each in words (the outcome
    of a whole audit, with its exit code; a single check's result is ``kcspec.conformance.verdicts.Verdict``)."""

    violations: int
    problems: tuple[str, ...]
    internal: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """About the audit itself, not the input (a profile that does not match the log's Kafka version): in the
    headline, without changing the exit code."""
    notes: tuple[str, ...] = ()
    """What the reader needs to read the result (where controller epochs start over, ``eras``): the first in
    the headline, without changing the exit code."""
    checked: int | None = None
    """How many state transitions the rules checked (None: not counted)."""
    findings: Mapping[str, int] | None = None
    """The findings per severity (``findings.SEVERITIES``); they never change the exit code."""

    @property
    def exit_code(self) -> int:
        if self.internal:
            return INTERNAL_ERROR
        if self.violations:
            return VIOLATIONS
        return BAD_INPUT if self.problems else CLEAN

    @property
    def headline(self) -> str:
        if self.internal:
            return f"internal error: {len(self.internal)} count(s) do not add up"
        if self.violations:
            parts = [f"{self.violations} violation(s)"]
        elif self.problems:
            parts = []
        else:
            parts = ["no violations"]
        if self.checked is not None:
            parts.append(f"{self.checked} state transition(s) checked")
        if self.problems:
            parts.append(f"NOT CLEAN: {len(self.problems)} input problem(s)")
        parts += [f"WARNING: {w}" for w in self.warnings]
        if self.notes:
            more = f" (and {len(self.notes) - 1} more, see the report)" if len(self.notes) > 1 else ""
            parts.append(f"note: {self.notes[0]}{more}")
        return "; ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "headline": self.headline,
            "violations": self.violations,
            "problems": list(self.problems),
            "internal": list(self.internal),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "checked": self.checked,
            "findings": dict(self.findings or {}),
        }


def judge(
    lines_read: int,
    parsed: int,
    quarantined: int,
    violations: int,
    per_file: Sequence[Mapping[str, Any]],
    max_quarantine: float = DEFAULT_MAX_QUARANTINE,
    warnings: Sequence[str] = (),
    notes: Sequence[str] = (),
    checked: int | None = None,
    unaudited: Sequence[str] = (),
    excused: int = 0,
    findings: Mapping[str, int] | None = None,
) -> AuditOutcome:
    """The verdict on a run's counts; ``per_file`` rows hold ``file``, ``read``, ``record``, ``continuation``,
    ``blank``, ``quarantined`` and, for a file that broke off, ``unreadable`` (line and reason, in words).
    ``checked``: the state transitions the rules checked; a run that checked none is not clean ("nothing
    checked"). ``unaudited``: inputs that could not be audited (an unreadable folder, an unsupported file),
    each a problem in words. ``excused``: quarantined lines that do not count against ``max_quarantine``
    (``lines.EXCUSED_REASONS``: continuation lines before the first record of a file cut inside a stack
    trace, other containers' lines of a multiplexed stream). ``findings``: their counts per severity, reported
    as they are."""
    problems: list[str] = []
    internal: list[str] = []
    if parsed + quarantined != lines_read:
        internal.append(f"parsed {parsed} + quarantined {quarantined} != lines read {lines_read}")
    for f in per_file:
        counted = f["record"] + f["continuation"] + f["blank"] + f["quarantined"]
        if counted != f["read"]:
            internal.append(
                f"{f['file']}: {f['read']} lines read but {f['record']} records + {f['continuation']} "
                f"continuation + {f['blank']} blank + {f['quarantined']} quarantined = {counted}"
            )
        if f.get("unreadable"):
            problems.append(f"{f['file']}: {f['unreadable']}")
        if f["record"] == 0:
            what = "empty" if f["read"] == 0 else f"none of its {f['read']} line(s) is a record"
            # its lines by what they are, as counted in the run's "parsed" (blank, continuation) and
            # "quarantined" totals: a blank line of a file without records is parsed, not a record
            kinds = [
                (f["blank"], "blank"),
                (f["continuation"], "continuation"),
                (f["quarantined"], "quarantined"),
            ]
            parts = ", ".join(f"{n} {kind}" for n, kind in kinds if n)
            problems.append(f"{f['file']}: yields no record ({what})" + (f": {parts}" if parts else ""))
    if not per_file:
        problems.append("no input file was read")
    problems.extend(unaudited)
    if checked == 0 and not violations:
        # Decision: "clean" says the rules held on the history read; with no transition there is nothing they
        # held on (a KRaft log, a controller log without state changes), and an operator must not read it as
        # a healthy history.
        problems.append("nothing checked: no state transition of the model was found in the input")
    counted = quarantined - excused
    if lines_read and counted / lines_read > max_quarantine:
        besides = f", besides {excused} out of scope or at the start of a file" if excused else ""
        problems.append(
            f"{counted} of {lines_read} lines quarantined ({100 * counted / lines_read:.1f} %{besides}, "
            f"more than the {100 * max_quarantine:g} % allowed by --max-quarantine)"
        )
    return AuditOutcome(
        violations, tuple(problems), tuple(internal), tuple(warnings), tuple(notes), checked, findings
    )


def mark_html(path: Path, verdict: AuditOutcome) -> None:
    """Put the verdict (and its problems) at the top of the HTML summary ``path``, first thing in its body."""
    text = path.read_text(encoding="utf-8")
    ok = verdict.exit_code == CLEAN
    items = "".join(f"<li>{html.escape(p)}</li>" for p in (*verdict.internal, *verdict.problems))
    banner = (
        f"<div class='{'ok' if ok else 'bad'}'><h1>{html.escape(verdict.headline)} "
        f"(exit {verdict.exit_code})</h1>" + (f"<ul>{items}</ul>" if items else "") + "</div>"
    )
    at = text.find("<body>")
    at = 0 if at < 0 else at + len("<body>")
    path.write_text(text[:at] + banner + text[at:], encoding="utf-8")
