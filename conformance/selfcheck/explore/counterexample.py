"""An exploration's counterexample for a reader and for tools: the shortest trace in words, and trace files.

``describe_trace`` is what ``kcspec explore`` prints and what ``kcspec verify`` puts in its report when the
explorer finds a violation; ``write_counterexample`` writes the trace as kcspec JSON, JSON lines and ITF (the
Apalache/Quint trace format), so that ``kcspec conformance replay`` and other tools can replay it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kcspec.conformance.reply_diff import diff_values
from kcspec.model.itf import write_itf
from kcspec.spec import codec
from kcspec.spec.trace import Trace

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.explore.explorer import ExploreResult


def describe_trace(result: ExploreResult) -> str:
    """The finding, its shortest trace (the state changes of the last three steps) and every difference."""
    assert result.finding is not None and result.trace is not None
    f = result.finding
    lines = [f"VIOLATION ({f.kind}): {f.message}", "shortest trace:"]
    state = result.trace.initial
    for i, step in enumerate(result.trace.steps, start=1):
        lines.append(f"  {i:2d}. {codec.dumps(step.event)}")
        if step.result is not None and i > len(result.trace.steps) - 4:
            for d in diff_values("state", codec.encode(state), codec.encode(step.result.state))[:15]:
                lines.append(f"        {d.path}: {d.expected} → {d.actual}")
        if step.result is not None:
            state = step.result.state
    for d in f.differences[:40]:
        lines.append(f"  spec vs reference: {d.render()}")
    for v in f.violations:
        lines.append(f"  invariant violated: {v}")
    return "\n".join(lines)


def write_counterexample(trace: Trace, out: Path, stem: str) -> list[Path]:
    """Write ``STEM.trace.json``, ``STEM.trace.jsonl`` and ``STEM.itf.json`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.trace.json", out / f"{stem}.trace.jsonl", out / f"{stem}.itf.json"]
    paths[0].write_text(trace.to_json() + "\n", encoding="utf-8")
    paths[1].write_text("\n".join(trace.to_jsonl()) + "\n", encoding="utf-8")
    paths[2].write_text(write_itf(trace) + "\n", encoding="utf-8")
    return paths
