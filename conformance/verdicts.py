"""Verdicts of a conformance run: one per vector (or differential case), and the whole run's report.

``Verdict`` is kcspec's one verdict vocabulary: the gate of ``kcspec verify`` gives each of its cases one of these
too (``passed``, ``failed``, ``skipped``, ``errored``; ``selfcheck/gate/cases.py``). Outcomes of other kinds keep
names of their own: a TLC-vs-explorer comparison (``CrosscheckOutcome``), the induction check of one pair
(``InductionOutcome``), and the audit's judgement of a whole run with its exit codes (``audit/verdict.py``).
"""

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
    exchange_seconds: float = 0.0
    """Time spent in the exchanges themselves (request written, reply read): the rate of exchanges is counted over
    this, not over ``seconds``, which also holds the SUT's start-up, the suite's own work and differential testing."""

    @property
    def exchanges_per_second(self) -> float:
        """Exchanges per second of exchange time (0 when nothing was exchanged)."""
        return self.exchanges / self.exchange_seconds if self.exchange_seconds > 0 else 0.0

    def counts(self) -> dict[Verdict, int]:
        c = Counter(o.verdict for o in self.outcomes)
        return {v: c.get(v, 0) for v in Verdict}

    @property
    def ran(self) -> int:
        """How many vectors (and differential cases) actually ran: every verdict but skipped and not
        supported."""
        counts = self.counts()
        return len(self.outcomes) - counts[Verdict.skipped] - counts[Verdict.not_supported]

    @property
    def diverged(self) -> bool:
        counts = self.counts()
        return counts[Verdict.failed] > 0 or counts[Verdict.errored] > 0

    @property
    def ok(self) -> bool:
        """Nothing failed or errored, and something ran: a run of zero vectors is not a pass."""
        return not self.diverged and self.ran > 0

    def nothing_ran(self) -> str:
        """Why no vector ran, in words ("" when some did)."""
        if self.ran:
            return ""
        counts = self.counts()
        declared = ", ".join(self.sut.capabilities) or "none"
        return (
            f"no vector ran ({counts[Verdict.not_supported]} not supported, {counts[Verdict.skipped]} "
            f"skipped, of {len(self.outcomes)}): the SUT declares the capabilities {declared} and the "
            f"profiles {', '.join(self.sut.profiles) or 'none'}; a run must test something to pass"
        )

    def exit_code(self) -> int:
        """DESIGN.md exit codes: 1 when something failed or errored, 2 when nothing ran at all (the SUT
        cannot be tested as set up: a message says why), 0 otherwise."""
        if self.diverged:
            return 1
        return 2 if not self.ran else 0
