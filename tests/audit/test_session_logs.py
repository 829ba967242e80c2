"""The audit's per-process JVM logs: kept while their process runs or for a day, then removed (no Spark needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kcspec.conformance.audit.session import LOG_KEEP_SECONDS, prune_spark_logs


def _ended_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)


def _log(directory: Path, name: str, age: float, now: float) -> Path:
    path = directory / name
    path.write_text("spark: WARN something\n")
    os.utime(path, (now - age, now - age))
    return path


def test_old_logs_of_ended_processes_go_and_everything_else_stays(tmp_path: Path) -> None:
    now = time.time()
    ended = _ended_pid()
    old_ended = _log(tmp_path, f"spark-{ended}.log", LOG_KEEP_SECONDS + 60, now)
    recent_ended = _log(tmp_path, f"spark-{ended + 1000000}.log", 60, now)
    old_running = _log(tmp_path, f"spark-{os.getpid()}.log", LOG_KEEP_SECONDS + 60, now)
    not_a_log = _log(tmp_path, "log4j2.properties", LOG_KEEP_SECONDS + 60, now)
    other_name = _log(tmp_path, "spark-notes.log", LOG_KEEP_SECONDS + 60, now)

    removed = prune_spark_logs(tmp_path, now=now)

    assert removed == [old_ended], f"removed {removed}"
    kept = {p for p in (recent_ended, old_running, not_a_log, other_name) if p.exists()}
    assert kept == {recent_ended, old_running, not_a_log, other_name}, (
        f"missing after pruning: {sorted(kept)}"
    )
    assert not old_ended.exists()
