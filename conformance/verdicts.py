"""Verdicts of a conformance run: one per vector (or differential case), and the whole run's report."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field

from kcspec.conformance.reply_diff import Difference


class Verdict(enum.Enum):
    passed = "passed"
    """The SUT's reply matches the expected one."""
    failed = "failed"
    """The SUT answered, and the answer differs from the expected one (a divergence)."""
    errored = "errored"
    """The SUT did not answer properly (crash, hang, garbage, wrong id, oversized line, internal error)."""
    skipped = "skipped"
    """Not run, with the reason (the time budget ran out, the SUT became unavailable)."""
    not_supported = "not_supported"
    """The SUT does not declare the capability or profile the vector needs, or answered ``unsupported``."""
    known = "known"
    """The SUT diverges, and its ``--known`` file acknowledges the deviation (``kcspec.conformance.known``)."""


@dataclass(frozen=True)
class Outcome:
    """The verdict of one vector, with what is needed to understand it."""

    id: str
    level: str
    sections: tuple[str, ...]
    description: str
    verdict: Verdict
    reason: str = ""
    differences: tuple[Difference, ...] = ()
    stderr: str = ""
    seconds: float = 0.0
    request: str = ""
    """The request line (canonical JSON) for failed and errored vectors, to reproduce them."""


@dataclass(frozen=True)
class SutInfo:
    description: str
    name: str = "?"
    version: str = "?"
    protocol_version: int = 0
    profiles: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunReport:
    sut: SutInfo
    profile: str
    level: str
    outcomes: tuple[Outcome, ...]
    seconds: float
    exchanges: int
    notes: tuple[str, ...] = field(default=())

    def counts(self) -> dict[Verdict, int]:
        c = Counter(o.verdict for o in self.outcomes)
        return {v: c.get(v, 0) for v in Verdict}

    @property
    def ok(self) -> bool:
        counts = self.counts()
        return counts[Verdict.failed] == 0 and counts[Verdict.errored] == 0

    def exit_code(self) -> int:
        """0 when nothing failed or errored, 1 otherwise (DESIGN.md exit codes)."""
        return 0 if self.ok else 1
