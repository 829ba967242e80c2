"""Benchmark: the memory an exploration keeps per visited state, now that it keeps fingerprints, not states.

1. ``FingerprintSet`` (the visited set of ``conformance/selfcheck/explore/fingerprint.py``) filled with ``n`` 64-bit
   fingerprints: the bytes ``tracemalloc`` sees allocated for it, per fingerprint, beside a Python ``set`` of the
   same integers (what a plain visited set of fingerprints would take).
2. A real search (``--model NAME`` of ``model/tla/state_counts.json``, ``--workers N``) to the fixed point: its
   fingerprint tables at the end (``ExploreStats.fingerprint_bytes``: the visited sets and, with workers, the
   tables of fingerprints each worker sent) per distinct state, and the process's peak resident memory.

    .venv/bin/python benchmarks/fingerprint_memory.py [--sizes 100000,1000000,4000000] [--model NAME] [--workers N]
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.fingerprint import FingerprintSet, blake2b_64
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load


def table_bytes(n: int) -> tuple[float, float]:
    """Bytes per member of a ``FingerprintSet`` and of a ``set`` of ``n`` fingerprints (allocated, tracemalloc)."""
    fps = [blake2b_64(i.to_bytes(8, "little")) for i in range(n)]
    tracemalloc.start()
    table = FingerprintSet()
    for fp in fps:
        table.add(fp)
    ours = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    tracemalloc.start()
    plain = {fp + 0 for fp in fps}  # fresh int objects, as a search that computes them would hold
    theirs = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(table) == len(plain) == n
    return ours / n, theirs / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000,4000000")
    ap.add_argument("--model", default=None, help="a model of the manifest, explored to its fixed point")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    for n in (int(x) for x in args.sizes.split(",") if x):
        ours, theirs = table_bytes(n)
        print(
            f"{n:>9,} fingerprints: FingerprintSet {ours:5.1f} B each; Python set of int {theirs:5.1f} B each"
        )
    if args.model:
        entry = next((e for e in load() if e.name == args.model), None)
        if entry is None:
            ap.error(f"--model {args.model}: not a model of the manifest")
        t0 = time.perf_counter()
        result = search(model_space(entry.profile, entry.config), workers=args.workers)
        s = result.stats
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{entry.name}, {args.workers} worker(s): {s.distinct_states:,} states in {time.perf_counter() - t0:.0f} s; "
            f"fingerprint tables {s.fingerprint_bytes:,} B = {s.fingerprint_bytes / s.distinct_states:.1f} B per "
            f"visited state; peak resident memory of the coordinator {peak:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
