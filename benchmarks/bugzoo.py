"""Bug-zoo benchmark: every historical mutant through the check ladder, and a sample of cosmic-ray mutants
of ``reference_impl/`` through the killing suite; prints the figures and writes the raw results as JSON into
``--out`` (default ``benchmarks/raw/bugzoo/``, which git ignores: the figures people read are in
``benchmarks/results/bugzoo.md``).

    .venv/bin/python benchmarks/bugzoo.py                      # both parts, defaults below
    .venv/bin/python benchmarks/bugzoo.py --part historical --budget 60 --seed 0
    .venv/bin/python benchmarks/bugzoo.py --part historical --mutants kafka-1503 --budget 5   # one mutant (smoke)
    .venv/bin/python benchmarks/bugzoo.py --part generic --sample 300 --sample-seed 2026

The generic part can run in shards (``--shard 0 --shards 2`` and ``--shard 1 --shards 2`` in two processes, each
writing ``bugzoo-generic-<k>of<n>.json``); ``--part merge --shards 2`` combines them into ``bugzoo-generic.json``;
``--part recheck`` runs that file's survivors through the killing suite as it is now (``bugzoo-generic-recheck.json``);
all of them in ``--out``.
The mutation score is killed / (sample − not injectable − equivalent); the equivalent survivors are classified by
hand (``benchmarks/results/bugzoo.md``), so the script reports the raw score and its 95 % Wilson interval.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import time
from dataclasses import asdict
from pathlib import Path

import harness  # beside this script
from kcspec.conformance.selfcheck.bugzoo import generic, killing
from kcspec.conformance.selfcheck.bugzoo.checks import LadderConfig, vectors_for
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL
from kcspec.conformance.selfcheck.bugzoo.zoo import run_zoo

RAW = Path(__file__).parent / "raw" / "bugzoo"
"""The default folder of the raw JSON results (ignored by git)."""


def historical(budget: float, seed: int, names: frozenset[str] = frozenset()) -> dict[str, object]:
    """Every historical mutant (or those named in ``names``) through the ladder."""
    unknown = names - {m.name for m in HISTORICAL}
    if unknown:
        raise SystemExit(f"--mutants: no historical mutant named {', '.join(sorted(unknown))}")
    chosen = [m for m in HISTORICAL if not names or m.name in names]
    for profile in sorted({m.profile for m in chosen}):
        vectors_for(profile)
    report = run_zoo(
        chosen,
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
    summary: dict[str, object] = json.loads(report.to_json())
    return summary


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def generic_summary(results: list[dict[str, object]], sites: int, sample_seed: int) -> dict[str, object]:
    counts = collections.Counter(str(r["status"]) for r in results)
    injected = counts["killed"] + counts["survived"]
    return {
        "sites": sites,
        "sample": len(results),
        "sample_seed": sample_seed,
        "killed": counts["killed"],
        "survived": counts["survived"],
        "not_injectable": counts["not-injectable"],
        "raw_score": counts["killed"] / injected if injected else None,
        "raw_score_wilson95": wilson(counts["killed"], injected),
        "by_check": dict(collections.Counter(str(r["check"]) for r in results if r["status"] == "killed")),
    }


def generic_part(
    out: Path, sample: int, sample_seed: int, shard: int, shards: int, minutes: float | None, skip: int = 0
) -> dict[str, object]:
    """The shard's mutants through the killing suite, in sample order; with ``minutes``, no mutant is started
    after that many minutes (the sample is drawn in random order, so the mutants done are a random sample)."""
    t0 = time.perf_counter()
    stop = t0 + minutes * 60 if minutes is not None else float("inf")
    problems = killing.baseline()
    if problems:
        raise SystemExit("the unmutated controller fails the killing suite:\n" + "\n".join(problems))
    sites = generic.enumerate_sites()
    chosen = generic.sample_sites(sites, sample, sample_seed)[shard::shards]
    print(
        f"{len(sites)} cosmic-ray mutation sites in {len(generic.MODULES)} modules; sample of {sample} "
        f"(seed {sample_seed}), shard {shard} of {shards}: {len(chosen)} mutants; baseline "
        f"{time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    # one JSON line per mutant, appended as it finishes (``--skip`` resumes a shard after a crash)
    log = out / f"bugzoo-generic-{shard}of{shards}.jsonl"
    if not skip:
        log.write_text("", encoding="utf-8")
    results = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    if len(results) != skip:
        raise SystemExit(f"{log} has {len(results)} results, --skip says {skip}")
    for i, site in enumerate(chosen, start=1):
        if i <= skip:
            continue
        if time.perf_counter() > stop:
            print(f"time box reached: {i - 1} of {len(chosen)} mutants done", flush=True)
            break
        r = generic.run_generic(site)
        results.append(asdict(r))
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(r), ensure_ascii=False) + "\n")
        reached = f" reached {r.exercised.calls}/{r.exercised.line_hits}" if r.exercised else ""
        print(
            f"  [{i}/{len(chosen)}] {r.status:15s} {r.check:10s} {r.seconds:6.1f} s  {site.name}  "
            f"{site.definition}{reached}",
            flush=True,
        )
    summary = generic_summary(results, len(sites), sample_seed)
    summary["seconds"] = time.perf_counter() - t0
    summary["shard"] = [shard, shards, len(chosen)]
    print(json.dumps(summary, indent=1))
    return {"summary": summary, "results": results}


def merge(out: Path, shards: int) -> dict[str, object]:
    parts = [
        json.loads((out / f"bugzoo-generic-{k}of{shards}.json").read_text(encoding="utf-8"))
        for k in range(shards)
    ]
    results = [r for part in parts for r in part["generic"]["results"]]
    first = parts[0]["generic"]["summary"]
    summary = generic_summary(results, first["sites"], first["sample_seed"])
    summary["seconds_per_shard"] = [part["generic"]["summary"]["seconds"] for part in parts]
    summary["done_per_shard"] = [len(part["generic"]["results"]) for part in parts]
    print(json.dumps(summary, indent=1))
    return {"summary": summary, "results": results}


def recheck(
    out: Path, stages: tuple[str, ...], shard: int, shards: int, only: frozenset[str]
) -> dict[str, object]:
    """Every survivor of ``bugzoo-generic.json`` through the stages of the killing suite given (after
    strengthening, the stages that changed suffice: the others already let the survivors through)."""
    recorded = json.loads((out / "bugzoo-generic.json").read_text(encoding="utf-8"))["generic"]["results"]
    problems = killing.baseline()
    if problems:
        raise SystemExit("the unmutated controller fails the killing suite:\n" + "\n".join(problems))
    sites = {s.name: s for s in generic.enumerate_sites()}
    results = []
    for row in [r for r in recorded if r["status"] == "survived"][shard::shards]:
        site_fields = dict(row["site"])
        site_fields["after"] = ""
        name = generic.Site(**site_fields).name
        if only and name not in only:
            continue
        r = generic.run_generic(sites[name], stages=stages, trace_survivor=False)
        results.append(asdict(r))
        print(f"  {r.status:15s} {r.check:10s} {r.seconds:6.1f} s  {name}  {r.detail[:100]}", flush=True)
    counts = collections.Counter(str(r["status"]) for r in results)
    print(json.dumps(dict(counts)))
    return {"stages": stages, "summary": dict(counts), "results": results}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("historical", "generic", "both", "merge", "recheck"), default="both")
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--sample-seed", type=int, default=2026)
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--stages", default=",".join(killing.STAGES), help="recheck: killing-suite stages to run")
    ap.add_argument("--only", default="", help="recheck: only these survivors (comma-separated names)")
    ap.add_argument("--mutants", default="", help="historical: only these mutants (comma-separated names)")
    ap.add_argument("--skip", type=int, default=0, help="generic: resume the shard after this many mutants")
    ap.add_argument("--minutes", type=float, default=None, help="generic: start no mutant after this long")
    ap.add_argument(
        "--out", type=Path, default=RAW, help="folder of the raw JSON results (default: %(default)s)"
    )
    args = ap.parse_args()
    machine = harness.machine()
    harness.print_header(f"Bug zoo, part {args.part}", machine)
    args.out.mkdir(parents=True, exist_ok=True)
    out: dict[str, object] = {
        "commit": machine.revision,
        "dirty": machine.dirty,
        "calibration": machine.calibration,
        "loadavg_at_start": machine.load_before,
    }
    if args.part in ("historical", "both"):
        out["historical"] = historical(
            args.budget, args.seed, frozenset(filter(None, args.mutants.split(",")))
        )
    if args.part in ("generic", "both"):
        out["generic"] = generic_part(
            args.out, args.sample, args.sample_seed, args.shard, args.shards, args.minutes, args.skip
        )
    if args.part == "merge":
        out["generic"] = merge(args.out, args.shards)
    if args.part == "recheck":
        out["recheck"] = recheck(
            args.out,
            tuple(args.stages.split(",")),
            args.shard,
            args.shards,
            frozenset(filter(None, args.only.split(","))),
        )
    out["loadavg_at_end"] = harness.load_average()
    name = {"merge": "generic", "recheck": "generic-recheck-" + args.stages.replace(",", "-")}.get(
        args.part, args.part
    )
    if args.only:
        name += "-only"
    if args.part in ("generic", "recheck") and args.shards > 1:
        name = f"{name}-{args.shard}of{args.shards}"
    path = args.out / f"bugzoo-{name}.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {path}")


if __name__ == "__main__":
    main()
