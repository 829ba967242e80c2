"""Throughput of the conformance subprocess path and wall time of the full vector suite.

Usage: .venv/bin/python benchmarks/conformance_throughput.py [--engine spec|reference] [--sut "CMD"] [--seconds 5]
       [--no-suite]

1. exchanges/s: ``elect`` requests (round-robin over every election vector) sent to
   ``kcspec serve-reference --engine ENGINE`` (or to ``--sut CMD``) through ``SubprocessAdapter``, for
   ``--seconds``;
2. the full suite: every generated vector of both profiles run through the same path (with
   generation time reported separately); the time includes starting and shutting down each session;
3. the cost of the bounded JSON reader (``kcspec.spec.bounded_json``) against plain ``json.loads`` on the
   reply lines of step 1 and on the largest state reply of the vectors (the one that takes the scanning
   path: more brackets than the depth bound).

The load average (before and after) and the CPU seconds of this process and of its finished children are
printed with the figures: on a shared machine, wall-clock rates mean little without them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

from kcspec.conformance import runner
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.vectors import generate
from kcspec.conformance.vectors.model import Level
from kcspec.spec import bounded_json


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def _cpu() -> str:
    t = os.times()
    return f"CPU {t.user + t.system:.1f} s here + {t.children_user + t.children_system:.1f} s in finished children"


def _per_call(fn: object, lines: list[bytes], seconds: float = 1.0) -> float:
    """Microseconds per call of ``fn`` over ``lines`` (round-robin, for about ``seconds``)."""
    assert callable(fn)
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for line in lines:
            fn(line)
        n += len(lines)
    return (time.perf_counter() - start) / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", choices=("spec", "reference"), default="reference")
    parser.add_argument("--sut", default=None, help="measure this SUT command instead of serve-reference")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--no-suite", action="store_true", help="skip the full-suite run (step 2)")
    args = parser.parse_args()
    print(f"start: {_load()}")
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
    replies: list[bytes] = []
    cpu0 = os.times()
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        reply = adapter.call(elect[n % len(elect)])
        if not isinstance(reply, m.ElectionReply | m.ErrorReply):
            print(f"unexpected reply {reply!r}")
            return 1
        if len(replies) < 500:
            replies.append(m.to_line(n, reply))
        n += 1
    elapsed = time.perf_counter() - start
    cpu1 = os.times()
    adapter.close()
    here = (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)
    print(
        f"elect exchanges: {n} in {elapsed:.2f} s = {n / elapsed:.0f} exchanges/s ({shlex.join(argv)}); "
        f"{here:.2f} CPU s in the suite's process; {_load()}"
    )

    states = [v.state for v in gen.vectors if v.state is not None]
    biggest = max((m.to_line(0, m.StateReply(st)) for st in states), key=len) if states else b"{}"
    for what, lines in (
        ("elect replies", replies),
        (f"largest state reply ({len(biggest)} bytes)", [biggest]),
    ):
        plain = _per_call(json.loads, lines)
        bounded = _per_call(bounded_json.loads, lines)
        print(
            f"JSON reader on {what}: json.loads {plain:.1f} us, bounded_json.loads {bounded:.1f} us "
            f"(+{bounded - plain:.1f} us per reply)"
        )
    if args.no_suite:
        print(f"end: {_load()}; {_cpu()}")
        return 0

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
    print(f"end: {_load()}; {_cpu()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
