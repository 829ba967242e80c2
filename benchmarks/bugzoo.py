"""Bug-zoo benchmark: every historical mutant through the check ladder, and a sample of cosmic-ray mutants
of ``reference_impl/`` through the killing suite; writes ``benchmarks/results/bugzoo.json`` and prints the figures.

    .venv/bin/python benchmarks/bugzoo.py                      # both parts, defaults below
    .venv/bin/python benchmarks/bugzoo.py --part historical --budget 60 --seed 0
    .venv/bin/python benchmarks/bugzoo.py --part generic --sample 100 --sample-seed 1
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from kcspec.conformance.bugzoo import generic
from kcspec.conformance.bugzoo.checks import LadderConfig, vectors_for
from kcspec.conformance.bugzoo.historical import HISTORICAL
from kcspec.conformance.bugzoo.zoo import run_zoo

OUT = Path(__file__).parent / "results"


def historical(budget: float, seed: int) -> dict[str, object]:
    for profile in sorted({m.profile for m in HISTORICAL}):
        vectors_for(profile)
    report = run_zoo(
        HISTORICAL,
        LadderConfig(budget=budget, seed=seed),
        progress=lambda r: print(
            f"  {r.name:26s} {r.check or 'ESCAPED':12s} {r.seconds if r.seconds is not None else float('nan'):7.2f} s  "
            f"{r.events_after_bootstrap} / {r.events_total} events  {r.detail}",
            flush=True,
        ),
    )
    if report.baseline_problems:
        raise SystemExit(
            "the unmutated controller disagrees with the spec:\n" + "\n".join(report.baseline_problems)
        )
    print(json.dumps(report.summary(), indent=1))
    return json.loads(report.to_json())


def generic_part(sample: int, sample_seed: int) -> dict[str, object]:
    t0 = time.perf_counter()
    sites = generic.enumerate_sites()
    chosen = generic.sample_sites(sites, sample, sample_seed)
    print(
        f"{len(sites)} cosmic-ray mutation sites in {len(generic.MODULES)} modules; sample of {len(chosen)}"
    )
    results = []
    for site in chosen:
        r = generic.run_generic(site)
        results.append(r)
        print(
            f"  {r.status:15s} {r.check:10s} {r.seconds:6.1f} s  {site.name}  {site.definition}", flush=True
        )
    counts = collections.Counter(r.status for r in results)
    injected = counts["killed"] + counts["survived"]
    summary = {
        "sites": len(sites),
        "sample": len(chosen),
        "sample_seed": sample_seed,
        "killed": counts["killed"],
        "survived": counts["survived"],
        "not_injectable": counts["not-injectable"],
        "raw_score": counts["killed"] / injected if injected else None,
        "seconds": time.perf_counter() - t0,
    }
    print(json.dumps(summary, indent=1))
    return {"summary": summary, "results": [asdict(r) for r in results]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("historical", "generic", "both"), default="both")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--sample-seed", type=int, default=1)
    args = ap.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    out: dict[str, object] = {"commit": commit}
    if args.part in ("historical", "both"):
        out["historical"] = historical(args.budget, args.seed)
    if args.part in ("generic", "both"):
        out["generic"] = generic_part(args.sample, args.sample_seed)
    OUT.mkdir(exist_ok=True)
    path = OUT / f"bugzoo-{args.part}.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {path}")


if __name__ == "__main__":
    main()
