"""Integration tier: every benchmark of ``benchmarks/manifest.toml`` runs at its smallest size and prints its metric.

Each runs as ``benchmarks/run.py smoke NAME`` in a subprocess (the runner stops it after its own timeout). A
benchmark that no longer runs — a renamed function, a changed output — fails here instead of when someone next
needs its figure. The smoke runs write into temporary folders only: the test checks that ``benchmarks/results/``
is byte for byte the same afterwards.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

import pytest

from tests.benchmarks.bench_modules import BENCHMARKS, run

MANIFEST = run.load_manifest()
TIMEOUT = run.SMOKE_TIMEOUT + 120.0


def _results() -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((BENCHMARKS / "results").iterdir())
        if p.is_file()
    }


def _marks(bench: run.Benchmark) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.integration]
    if "spark" in bench.needs:
        marks.append(pytest.mark.spark)
    return marks


@pytest.mark.parametrize("bench", [pytest.param(b, id=b.name, marks=_marks(b)) for b in MANIFEST.benchmarks])
def test_the_benchmark_runs_at_its_smallest_size(bench: run.Benchmark) -> None:
    before = _results()
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run.py"), "smoke", bench.name],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    tail = (proc.stdout[-3000:] + proc.stderr[-2000:]).strip()
    assert proc.returncode == 0, f"`run.py smoke {bench.name}` exited {proc.returncode}:\n{tail}"
    assert re.search(bench.figure, proc.stdout, re.M), (
        f"{bench.name}'s output no longer names its metric ({'; '.join(bench.metric)}; pattern {bench.figure!r}):\n{tail}"
    )
    assert _results() == before, f"the smoke run of {bench.name} changed benchmarks/results/"
