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
import time
from pathlib import Path

import pytest

from tests.support.bench_modules import BENCHMARKS, run

MANIFEST = run.load_manifest()
TIMEOUT = run.SMOKE_TIMEOUT + 120.0


def _results() -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((BENCHMARKS / "results").iterdir())
        if p.is_file()
    }


def _marks(bench: run.Benchmark) -> list[pytest.MarkDecorator]:
    """The tier of a benchmark's smoke run.

    The benchmarks that start Spark (audit_throughput, explore_spark, swarm_rate) cost 25–60 s each at their
    smallest size — a Spark driver or two per run, what their figures measure — and the code they drive is tested
    in ``make test`` by the audit's and the Spark explorer's own integration tests. Their smoke runs are in the
    slow tier (``make test-slow``), so that CI's ``make test`` keeps to its time; every other benchmark's smoke run
    stays in ``make test``.
    """
    marks = [pytest.mark.integration]
    if "spark" in bench.needs:
        marks += [pytest.mark.spark, pytest.mark.slow]
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


def _calibration_bench(**fields: object) -> run.Benchmark:
    """A benchmark entry running ``calibration.py`` (a second's work), with ``fields`` changed."""
    base: dict[str, object] = dict(
        name="calibration-as-benchmark",
        script="calibration.py",
        metric=("calibration",),
        configuration="c",
        target="none",
        args=(),
        smoke=("--repeat", "1"),
        smoke_exit=(0,),
        log="results/none.md",
        figure=r"calibration ([\d.]+) CPU s",
        unit="CPU s",
        recorded="",
        recorded_on="",
        needs=(),
    )
    return run.Benchmark(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.integration
def test_smoke_names_each_benchmark_that_failed(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = run.Manifest(
        (
            _calibration_bench(),
            _calibration_bench(name="lost-its-metric", figure="no such figure"),
            _calibration_bench(name="wrong-exit", smoke=("--repeat", "0")),
        ),
        (),
    )
    assert run.cmd_smoke(manifest, [], timeout=300.0) == 1
    out, err = capsys.readouterr()
    assert "smoke run failed: lost-its-metric, wrong-exit" in err
    assert "| calibration-as-benchmark | ok |" in out
    assert "the output does not name its metric" in out and "FAILED: exit 2 (expected 0)" in out


@pytest.mark.integration
def test_a_run_over_its_timeout_is_stopped() -> None:
    outcome = run.execute(
        [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(600)"],
        env=None,
        timeout=2.0,
        echo=False,
    )
    assert outcome.timed_out and outcome.returncode != 0
    assert outcome.output == "started\n"


@pytest.mark.integration
def test_what_a_benchmark_leaves_running_is_stopped() -> None:
    left = "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); print(p.pid)"
    outcome = run.execute([sys.executable, "-c", left], env=None, timeout=300.0, echo=False)
    assert outcome.returncode == 0 and not outcome.timed_out
    pid = int(outcome.output.split()[0])
    deadline = time.monotonic() + 60
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _running(pid), f"process {pid}, started by the benchmark, still runs"


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
