"""TLC's liveness check of one model, one property at a time: the property holds, or TLC's lasso violates it
and is a known gap of Kafka (an expected, documented result) or is not (a failure).

One property per TLC run, because TLC stops at its first lasso: with the three properties in one run, the known
gap of one (a deletion halted by a failed StopReplica, §8) would hide every lasso of the others. Used by
``kcspec verify`` (``gate/tla.py``) on the smallest manifest models, where each run takes seconds.
"""

from __future__ import annotations

import enum
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.liveness import PROPERTIES
from kcspec.model.tla.liveness_report import LivenessError, LivenessFinding, read_lasso
from kcspec.model.tla.module import generate
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import Outcome
from kcspec.model.tlc.run import TlcResult, run_tlc
from kcspec.spec.profiles import get_profile


class LivenessOutcome(enum.Enum):
    HOLDS = "holds"
    EXPECTED_GAP = "expected-gap"
    """TLC's lasso violates the property exactly where Kafka is known not to make progress (``KNOWN_GAPS``)."""
    VIOLATED = "violated"
    TLC_FAILED = "tlc-failed"
    """TLC did not finish (an error, a timeout) or its lasso could not be read: nothing was decided."""


@dataclass(frozen=True)
class LivenessResult:
    prop: str
    outcome: LivenessOutcome
    message: str
    tlc: TlcResult
    finding: LivenessFinding | None = None


def property_cfg(liveness_cfg: str, prop: str) -> str:
    """The module's liveness configuration with only ``prop`` among its ``PROPERTY`` lines."""
    names = {p.name for p in PROPERTIES}
    if prop not in names:
        raise ValueError(f"unknown liveness property {prop!r} (known: {', '.join(sorted(names))})")
    lines = [line for line in liveness_cfg.splitlines() if not line.startswith("PROPERTY ")]
    return "\n".join([*lines, f"PROPERTY {prop}"]) + "\n"


def check_property(
    profile: str, config: ModelConfig, prop: str, tools: Toolchain, *, timeout_s: float | None = None
) -> LivenessResult:
    """TLC on the generated module under ``FairSpec`` with the property ``prop`` alone."""
    module = generate(get_profile(profile), config)
    with tempfile.TemporaryDirectory(prefix="kcspec-liveness-") as tmp:
        work = Path(tmp)
        tla = work / f"{module.name}.tla"
        tla.write_text(module.tla, encoding="utf-8")
        cfg = work / f"{module.name}_{prop}.cfg"
        cfg.write_text(property_cfg(module.liveness_cfg, prop), encoding="utf-8")
        tlc = run_tlc(
            TlcArgs(module=tla, config=cfg, timeout_s=timeout_s, liveness_at_end=True),
            tools,
            remove_on_death=(work,),
        )
    if tlc.outcome is Outcome.OK:
        return LivenessResult(
            prop, LivenessOutcome.HOLDS, f"{prop} holds ({tlc.report.stats.distinct} states)", tlc
        )
    if tlc.outcome is not Outcome.PROPERTY_VIOLATED:
        detail = tlc.report.error or tlc.outcome.value
        return LivenessResult(prop, LivenessOutcome.TLC_FAILED, f"TLC did not finish: {detail}", tlc)
    try:
        finding = read_lasso(tlc.raw_output, profile, config)
    except LivenessError as exc:
        return LivenessResult(prop, LivenessOutcome.TLC_FAILED, f"unreadable lasso: {exc}", tlc)
    mine = [v for v in finding.violations if v.prop == prop]
    events = f"{len(finding.lasso.trace.steps)} events, {finding.shape}"
    if mine and all(v.gap is not None for v in mine):
        gaps = "; ".join(sorted({f"{v.gap.ticket} ({v.gap.section})" for v in mine if v.gap is not None}))
        return LivenessResult(
            prop,
            LivenessOutcome.EXPECTED_GAP,
            f"{prop}: Kafka's known gap, {gaps} (lasso of {events})",
            tlc,
            finding,
        )
    what = "; ".join(v.describe() for v in mine) if mine else "; ".join(finding.summary_lines())
    return LivenessResult(prop, LivenessOutcome.VIOLATED, f"{what} (lasso of {events})", tlc, finding)


__all__ = ["LivenessOutcome", "LivenessResult", "check_property", "property_cfg"]
