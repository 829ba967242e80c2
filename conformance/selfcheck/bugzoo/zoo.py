"""Run the zoo: a baseline on the unmutated controller, then the check ladder against every chosen mutant.

The baseline runs the built-in scenarios on the unmutated reference controller for every profile involved: if
they do not all agree with the spec, no mutant result means anything (a mutant "caught" by a check that fails
anyway), so the zoo stops there. It also compiles the spec once, so the first mutant's time to detection
does not include that one-off cost.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kcspec.conformance.selfcheck.bugzoo.checks import Hunt, LadderConfig, hunt
from kcspec.conformance.selfcheck.bugzoo.mutant import Mutant
from kcspec.spec import codec


@dataclass(frozen=True)
class ZooRow:
    name: str
    kind: str
    profile: str
    ticket: str
    caught: bool
    check: str
    detail: str
    seconds: float | None
    """Seconds from the start of the ladder to the detection (``None`` if it escaped)."""
    events_after_bootstrap: int | None
    events_total: int | None
    message: str
    stages: tuple[tuple[str, float, str], ...]
    counterexample: tuple[str, ...]
    """The counterexample's events as canonical JSON."""

    @staticmethod
    def of(h: Hunt) -> ZooRow:
        m, d = h.mutant, h.detection
        stages = tuple((s.check, round(s.seconds, 3), s.note) for s in h.stages)
        if d is None:
            return ZooRow(
                m.name, m.kind, m.profile, m.ticket, False, "", "", None, None, None, "", stages, ()
            )
        return ZooRow(
            m.name,
            m.kind,
            m.profile,
            m.ticket,
            True,
            d.check,
            d.detail,
            h.seconds_to_detection,
            d.after_bootstrap,
            d.total,
            d.message,
            stages,
            tuple(codec.dumps(e) for e in d.events),
        )


@dataclass
class ZooReport:
    config: LadderConfig
    rows: list[ZooRow] = field(default_factory=list)
    baseline_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def escaped(self, kinds: Sequence[str] = ("historical",)) -> list[ZooRow]:
        return [r for r in self.rows if r.kind in kinds and not r.caught]

    def summary(self) -> dict[str, object]:
        caught = [r for r in self.rows if r.caught]
        times = [r.seconds for r in caught if r.seconds is not None]
        lengths = [r.events_after_bootstrap for r in caught if r.events_after_bootstrap is not None]
        historical = [r for r in self.rows if r.kind == "historical"]
        return {
            "mutants": len(self.rows),
            "caught": len(caught),
            "historical": len(historical),
            "historical_caught": sum(r.caught for r in historical),
            "median_seconds": statistics.median(times) if times else None,
            "max_seconds": max(times) if times else None,
            "max_events_after_bootstrap": max(lengths) if lengths else None,
            "max_events_total": max((r.events_total or 0 for r in caught), default=None),
            "by_check": {c: sum(r.check == c for r in caught) for c in self.config.checks},
        }

    def to_json(self) -> str:
        return json.dumps(
            {
                "config": asdict(self.config),
                "baseline_problems": self.baseline_problems,
                "seconds": self.seconds,
                "summary": self.summary(),
                "mutants": [asdict(r) for r in self.rows],
            },
            indent=1,
            ensure_ascii=False,
        )

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n", encoding="utf-8")


def baseline(profiles: Sequence[str], vectors: bool = False) -> list[str]:
    """Problems of the unmutated controller on the built-in scenarios and, with ``vectors``, the conformance
    vectors (empty when all agree with the spec)."""
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    problems: list[str] = []
    for profile in profiles:
        for scenario in SCENARIOS:
            out = crosscheck(scenario.name, profile, scenario.events(profile))
            if not out.ok:
                problems.append(out.report())
        if vectors:
            problems.extend(vector_problems(profile))
    return problems


def vector_problems(profile: str) -> list[str]:
    """The conformance vectors of ``profile`` the unmutated reference controller does not pass."""
    from kcspec.conformance.adapters.inprocess import InProcessAdapter
    from kcspec.conformance.reference_sut import ReferenceSut
    from kcspec.conformance.runner import run
    from kcspec.conformance.selfcheck.bugzoo.checks import vectors_for
    from kcspec.conformance.vectors.model import Level
    from kcspec.conformance.verdicts import Verdict

    report = run(
        InProcessAdapter(ReferenceSut()), vectors_for(profile), profile=profile, level=Level.controller
    )
    return [
        f"vector {o.id} [{profile}]: {o.verdict.value}: {o.reason}"
        for o in report.outcomes
        if o.verdict in (Verdict.failed, Verdict.errored)
    ]


def run_zoo(
    mutants: Sequence[Mutant], cfg: LadderConfig, progress: Callable[[ZooRow], None] | None = None
) -> ZooReport:
    start = time.perf_counter()
    report = ZooReport(cfg)
    report.baseline_problems = baseline(sorted({m.profile for m in mutants}), "vectors" in cfg.checks)
    if report.baseline_problems:
        report.seconds = time.perf_counter() - start
        return report
    for mutant in mutants:
        row = ZooRow.of(hunt(mutant, cfg))
        report.rows.append(row)
        if progress is not None:
            progress(row)
    report.seconds = time.perf_counter() - start
    return report
