"""What the gate of ``kcspec verify`` is made of: checks, their cases with one status each, and the run's report.

A check produces cases; each case is passed, failed (a violation, with a counterexample written),
skipped (it cannot run here, with the reason — never counted as passed) or errored (the check itself
broke). The gate passes only when nothing failed or errored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from kcspec.conformance.verdicts import Verdict

GATE_VERDICTS: tuple[Verdict, ...] = (Verdict.passed, Verdict.failed, Verdict.skipped, Verdict.errored)
"""The verdicts a case of the gate can have: the conformance kit's, less ``not_supported`` and ``known``, which
only a system under test can earn (the gate checks kcspec itself)."""


@dataclass(frozen=True)
class CaseResult:
    check: str
    name: str
    status: Verdict
    message: str = ""
    details: str = ""
    counterexample: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class VerifyOptions:
    profiles: tuple[str, ...]
    out: Path
    tla2tools: str | None = None
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    run: Callable[[VerifyOptions], Iterator[CaseResult]]
    cost: int = 1
    """Rough relative cost, for the progress bar."""


@dataclass
class VerifyReport:
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    interrupted: str | None = None
    """How the run was interrupted (``Ctrl-C``, ``SIGTERM``), or ``None``: an interrupted run never passes."""
    stopped: str | None = None
    """Why the run stopped before its last case without being interrupted (``--fail-fast``), or ``None``."""
    not_run: tuple[str, ...] = ()
    """The checks of the run that had not started when it stopped."""

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status in (Verdict.failed, Verdict.errored)]

    @property
    def ok(self) -> bool:
        """The gate passed: nothing failed or errored, and the run was not interrupted."""
        return not self.failed and self.interrupted is None

    def counts(self, check: str | None = None) -> dict[Verdict, int]:
        out = {s: 0 for s in GATE_VERDICTS}
        for c in self.cases:
            if check is None or c.check == check:
                out[c.status] += 1
        return out


START_LISTENER: ContextVar[Callable[[str, str], None] | None] = ContextVar(
    "kcspec_gate_on_start", default=None
)
"""Who is told that a case starts (``gate.run``, for the heartbeat of a run without a terminal)."""


def started(check: str, name: str) -> None:
    """Say that the case ``name`` of ``check`` starts (``timed`` does it for every case it runs)."""
    listener = START_LISTENER.get()
    if listener is not None:
        listener(check, name)


def timed(check: str, name: str, fn: Callable[[], tuple[Verdict, str, str, str | None]]) -> CaseResult:
    """Run one case; an exception inside the check is an ``errored`` case, not a crash of the gate."""
    started(check, name)
    start = time.perf_counter()
    try:
        status, message, details, cex = fn()
    except Exception as exc:  # the gate reports a broken check instead of dying
        status, message, details, cex = Verdict.errored, f"{type(exc).__name__}: {exc}", "", None
    return CaseResult(check, name, status, message, details, cex, time.perf_counter() - start)
