"""Benchmark: TLC's liveness checks — each property of ``model/tla/liveness.py`` on a model, one TLC run each.

For every model named (a model of ``model/tla/state_counts.json``; the default runs the two 2-broker models, those
of the default crosscheck) and every liveness property, TLC (one worker) checks the property alone
under ``FairSpec`` (``conformance/selfcheck/tla_liveness.py``, what ``kcspec verify`` runs on the smallest
models). Each result is printed as soon as it is known: holds, Kafka's known gap (with the ticket and the lasso's
length), violated (a failure: the lasso is not a known gap) or TLC did not finish (an error or ``--timeout``).

    .venv/bin/python benchmarks/tlc_liveness.py [--models two-broker-default-2.8,two-broker-default-1.1]
        [--properties LeaderEventuallyElected,...] [--timeout 3600] [--tla2tools JAR]

Exit code 0 when every property holds or is a known gap, 1 when one is violated or TLC did not finish.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import harness  # beside this script
from kcspec.conformance.selfcheck.tla_liveness import LivenessOutcome, check_property
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.liveness import PROPERTIES
from kcspec.model.tla.manifest import load as load_manifest
from kcspec.model.tlc.locate import find_toolchain


@dataclass(frozen=True)
class Model:
    name: str
    profile: str
    config: ModelConfig


def resolve(name: str) -> Model:
    """A model of ``model/tla/state_counts.json`` by name; ``ValueError`` names the known ones."""
    entries = load_manifest()
    for entry in entries:
        if entry.name == name:
            return Model(name, entry.profile, entry.config)
    raise ValueError(f"unknown model {name!r} (known: {', '.join(e.name for e in entries)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="two-broker-default-2.8,two-broker-default-1.1")
    ap.add_argument("--properties", default=",".join(p.name for p in PROPERTIES))
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per TLC run")
    ap.add_argument("--tla2tools", type=Path, default=None)
    args = ap.parse_args(argv)
    try:
        models = [resolve(n) for n in args.models.split(",") if n]
    except ValueError as exc:
        ap.error(f"--models: {exc}")
    known = {p.name for p in PROPERTIES}
    props = [p for p in args.properties.split(",") if p]
    unknown = [p for p in props if p not in known]
    if unknown:
        ap.error(f"--properties: unknown {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    tools = find_toolchain(args.tla2tools)
    harness.print_header("TLC's liveness checks, one property per run")
    print(f"  {tools.describe()}", flush=True)
    rows = []
    failed = 0
    for model in models:
        for prop in props:
            start = time.monotonic()
            result = check_property(model.profile, model.config, prop, tools, timeout_s=args.timeout)
            wall = time.monotonic() - start
            distinct = result.tlc.report.stats.distinct
            states = "—" if distinct is None else f"{distinct:,}"
            if result.outcome not in (LivenessOutcome.HOLDS, LivenessOutcome.EXPECTED_GAP):
                failed += 1
            print(
                f"  {model.name} ({model.profile}, {model.config.describe()}): {prop}: "
                f"{result.outcome.value} in {wall:.0f} s, {states} states; {result.message}; "
                f"load {harness.format_load()}",
                flush=True,
            )
            rows.append((model.name, prop, result.outcome.value, states, f"{wall:.0f}"))
    print(
        harness.markdown_table(
            ("model", "property", "result", "distinct states", "TLC wall s"), rows, numeric="lllrr"
        )
    )
    print(f"liveness: {len(rows) - failed} of {len(rows)} runs hold or are Kafka's known gaps")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
