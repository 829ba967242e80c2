"""How many tasks the JVM reader reads a folder in: by bytes, not by files, so that thousands of small rotated
files are a few tasks (issue 30: 5,000 hourly files were 1,250 tasks), and the driver's version sample is a
budget for the whole run, not 500 lines of every file."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit import layouts
from kcspec.audit.spark_job import TASK_BYTES, reading_tasks


def _spark(cores: int) -> Any:
    return SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=cores))


def test_thousands_of_small_files_are_a_few_tasks(tmp_path: Path) -> None:
    paths = []
    for i in range(2000):
        p = tmp_path / f"state-change.log.2026-01-01-{i:04d}"
        p.write_text("[2026-01-01 00:00:00,000] INFO x (y)\n")
        paths.append(str(p))
    assert reading_tasks(_spark(2), paths) == 8


def test_large_inputs_get_a_task_per_task_bytes_and_never_more_tasks_than_files(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(20 * TASK_BYTES)  # sparse: its size is what counts
    assert reading_tasks(_spark(2), [str(big)]) == 1
    assert reading_tasks(_spark(2), [str(big)] * 30) == min(30, 30 * 20)
    assert reading_tasks(_spark(2), [str(big), str(tmp_path / "gone.log")]) == 2  # a missing file: no size


def test_the_version_sample_is_a_budget_for_the_run() -> None:
    many = 5000
    each = min(layouts.SAMPLE_LINES, max(layouts.SAMPLE_MIN, layouts.SAMPLE_BUDGET // many))
    assert each * many <= 2 * layouts.SAMPLE_BUDGET, each
    assert min(layouts.SAMPLE_LINES, layouts.SAMPLE_BUDGET // 27) >= 1000  # a few files are read far in
