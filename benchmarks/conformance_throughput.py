"""Throughput of the conformance subprocess path and wall time of the full vector suite.

Usage: .venv/bin/python benchmarks/conformance_throughput.py [--engine spec|reference] [--sut "CMD"] [--seconds 5]

1. exchanges/s: ``elect`` requests (round-robin over every election vector) sent to
   ``kcspec serve-reference --engine ENGINE`` (or to ``--sut CMD``) through ``SubprocessAdapter``, for
   ``--seconds``;
2. the full suite: every generated vector of both profiles run through the same path (with
   generation time reported separately); the time includes starting and shutting down each session.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from kcspec.conformance import runner
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.vectors import generate
from kcspec.conformance.vectors.model import Level


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", choices=("spec", "reference"), default="reference")
    parser.add_argument("--sut", default=None, help="measure this SUT command instead of serve-reference")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    kcspec = str(Path(sys.executable).with_name("kcspec"))
    argv = shlex.split(args.sut) if args.sut else [kcspec, "serve-reference", "--engine", args.engine]

    t0 = time.perf_counter()
    gen = generate.generate()
    gen_seconds = time.perf_counter() - t0
    elect = [v.request for v in gen.vectors if isinstance(v.request, m.Elect)]
    print(
        f"generated {len(gen.vectors)} vectors in {gen_seconds:.2f} s "
        f"({len(gen.unanswered)} inputs unanswered, {len(gen.disagreements)} disagreements)"
    )

    adapter = SubprocessAdapter(argv)
    adapter.start()
    adapter.call(m.Hello(m.PROTOCOL_VERSION, "kafka-2.8"))
    if not elect:
        print("no election vectors: cannot measure exchanges/s")
        return 2
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        reply = adapter.call(elect[n % len(elect)])
        if not isinstance(reply, m.ElectionReply | m.ErrorReply):
            print(f"unexpected reply {reply!r}")
            return 1
        n += 1
    elapsed = time.perf_counter() - start
    adapter.close()
    print(f"elect exchanges: {n} in {elapsed:.2f} s = {n / elapsed:.0f} exchanges/s ({shlex.join(argv)})")

    total = 0
    exchanges = 0
    start = time.perf_counter()
    verdicts: dict[str, int] = {}
    for profile in generate.PROFILES:
        report = runner.run(SubprocessAdapter(argv), gen.vectors, profile=profile, level=Level.controller)
        total += len(report.outcomes)
        exchanges += report.exchanges
        for verdict, count in report.counts().items():
            verdicts[verdict.value] = verdicts.get(verdict.value, 0) + count
    elapsed = time.perf_counter() - start
    print(
        f"full suite: {total} vectors, {exchanges} exchanges in {elapsed:.2f} s "
        f"({exchanges / elapsed:.0f} exchanges/s); verdicts {verdicts}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
