"""Benchmark: the explorer's rate of two commits side by side, on the same host, in alternating runs.

The shared hosts differ in speed by 2–3× from one day to the next (``calibration.py``), so a before-and-after figure
is only sound when both trees run in the same minutes. This script exports each commit with ``git archive``, lays it
out as the installed package would be (``kcspec``, ``kcspec.spec`` … from the tree's top-level folders), and runs
the explorer on the speed-target configurations (``speed_targets.configs()``: both profiles; 3 brokers depth 3,
3 brokers depth 2 with ZooKeeper and controller faults, 4 brokers × 2 partitions RF 3 depth 2) in a fresh process per tree
and round, alternating ``before``, ``after``, ``before``, … Each figure is distinct states per CPU second, the best
of ``--repeat`` runs; the table gives each tree's range over the rounds and the gain (after / before). One commit
against itself (``--before 3f79a58 --after 3f79a58 --rounds 1 --repeat 1``, 2026-11-28) gave 0.96–1.15×: on these
shared hosts a gain inside that band is noise; more rounds narrow it.

Both trees run on the base interpreter of this one (a virtual environment's own ``python`` would import the
installed, editable ``kcspec`` instead of the exported tree), with this environment's site-packages for the
dependencies. The default ``before`` is ``18f573d``, the commit whose figures issue 17 quotes; older trees keep
the explorer under ``kcspec.conformance.explore``, which is found too.

    .venv/bin/python benchmarks/side_by_side.py [--before REV] [--after REV] [--rounds N] [--repeat N] [--smallest]
        [--two-broker N]

``--smallest``: ``speed_targets.py``'s one small configuration per profile (a smoke run, not a figure).
``--two-broker N``: instead, the first ``N`` distinct states of the default 2-broker kafka-2.8 TLA+ model
(``CROSSCHECK_DEFAULT``, the model TLC is compared on; trees from ``9da68d7`` on).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import NoReturn

HERE = Path(__file__).resolve().parent
PACKAGES = {
    "spec": "spec",
    "model": "model",
    "reference_impl": "reference_impl",
    "conformance": "conformance",
}
"""Subpackage of ``kcspec`` → top-level folder of the repository (pyproject's package-dir)."""

RUNNER = r"""
import json, sys, time
try:
    from kcspec.conformance.selfcheck.explore.explorer import explore
    from kcspec.model.explore_config import ExploreConfig
except ImportError:  # trees before the explorer moved under selfcheck/
    from kcspec.conformance.explore.explorer import explore
    from kcspec.conformance.explore.config import ExploreConfig
from kcspec.model.invariants_check import InvariantChecker
from kcspec.model.step import SpecMachine

repeat = int(sys.argv[1])
configs = json.loads(sys.argv[2])
for profile in sorted({params["profile"] for params in configs}):  # the one-off compilation is not timed
    SpecMachine(profile)
    InvariantChecker(profile)
out = []
for params in configs:
    if "two_broker_states" in params:  # the default 2-broker TLA+ model, its first states
        from dataclasses import replace
        from kcspec.conformance.selfcheck.explore.explorer import search
        from kcspec.conformance.selfcheck.explore.tla_model import model_space
        from kcspec.model.tla.config import CROSSCHECK_DEFAULT
        space = replace(model_space("kafka-2.8", CROSSCHECK_DEFAULT), max_states=params["two_broker_states"])
        run, what = (lambda: search(space)), "2-broker TLA+ model (CROSSCHECK_DEFAULT), first states"
    else:
        cfg = ExploreConfig(**dict(params, faults=frozenset(params["faults"])))
        run, what = (lambda: explore(cfg)), cfg.describe().split(": ", 1)[1]
    best = None
    for _ in range(repeat):
        cpu = time.process_time()
        result = run()
        cpu = time.process_time() - cpu
        best = cpu if best is None or cpu < best else best
    if result.finding is not None:
        raise SystemExit("violation on " + what + ": " + result.finding.message)
    out.append([params["profile"], what, result.stats.distinct_states, best])
print(json.dumps(out))
"""


def fail(message: str) -> NoReturn:
    """Stop with ``message`` on standard error and exit code 2 (a revision that cannot be exported, a tree that
    cannot run the benchmark)."""
    print(f"side_by_side.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def export(rev: str, into: Path) -> Path:
    """``rev`` exported into ``into``/src and laid out as the installed package under ``into``/pkg; the latter."""
    src, pkg = into / "src", into / "pkg" / "kcspec"
    src.mkdir(parents=True)
    pkg.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", rev], capture_output=True, check=False
    )
    if archive.returncode != 0:
        fail(f"cannot export {rev!r} (git archive: {archive.stderr.decode(errors='replace').strip()})")
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
    for f in (src / "kcspec").iterdir():
        (pkg / f.name).symlink_to(f)
    for name, folder in PACKAGES.items():
        (pkg / name).symlink_to(src / folder)
    return pkg.parent


def run(pkg: Path, repeat: int, configs: str) -> list[list[object]]:
    """One fresh process of the exported tree at ``pkg``: its figures per configuration of ``configs`` (JSON)."""
    base = getattr(sys, "_base_executable", sys.executable)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pkg), sysconfig.get_paths()["purelib"]]))
    proc = subprocess.run(
        [base, "-c", RUNNER, str(repeat), configs],
        capture_output=True,
        text=True,
        env=env,
        cwd=pkg,
        check=False,
    )
    if proc.returncode != 0:
        fail(f"the exported tree at {pkg} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    figures: list[list[object]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="18f573d")
    ap.add_argument("--after", default="HEAD")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--smallest", action="store_true", help="one small configuration per profile (a smoke run)"
    )
    ap.add_argument(
        "--two-broker",
        type=int,
        metavar="N",
        help="instead: the first N distinct states of the default 2-broker kafka-2.8 TLA+ model (CROSSCHECK_DEFAULT)",
    )
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")
    sys.path.insert(0, str(HERE))
    import harness
    import speed_targets

    # the speed targets' configurations, as the fields every tree's ExploreConfig has
    fields = ("profile", "brokers", "topics", "partitions", "rf", "depth")
    configs = json.dumps(
        [{"profile": "kafka-2.8", "two_broker_states": args.two_broker}]
        if args.two_broker is not None
        else [
            {**{f: getattr(c, f) for f in fields}, "faults": sorted(c.faults)}
            for c in speed_targets.configs(args.smallest)
        ]
    )

    rates: dict[str, list[list[float]]] = {"before": [], "after": []}
    names: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        trees = {
            which: export(rev, Path(tmp) / which)
            for which, rev in (("before", args.before), ("after", args.after))
        }
        harness.print_header(f"Explorer rate side by side: {args.before} against {args.after}")
        for r in range(args.rounds):
            for which in ("before", "after"):
                figures = run(trees[which], args.repeat, configs)
                names = [f"{p}, {d}" for p, d, _, _ in figures]
                rates[which].append([float(n) / float(c) for _, _, n, c in figures])  # type: ignore[arg-type]
                print(
                    f"  round {r + 1} {which}: " + " ".join(f"{x:,.0f}" for x in rates[which][-1]), flush=True
                )
    print(f"\n| configuration | {args.before} states/CPU s | {args.after} states/CPU s | gain |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(names):
        b = [row[i] for row in rates["before"]]
        a = [row[i] for row in rates["after"]]
        print(
            f"| {name} | {min(b):,.0f}–{max(b):,.0f} | {min(a):,.0f}–{max(a):,.0f} | "
            f"{min(a) / max(b):.2f}–{max(a) / min(b):.2f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
