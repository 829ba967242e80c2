"""The audit's Spark configuration folder: private to the process (mkdtemp, mode 0700, owned by the user, a name
no one can prepare in advance), holding the JVM log; kept while its process runs or for a day, then removed
(no Spark needed)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kcspec.model.spark.session import (
    CONF_PREFIX,
    LOG4J2,
    LOG_KEEP_SECONDS,
    conf_dir,
    prune_spark_dirs,
    spark_log_path,
)


def _ended_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)


def _folder(directory: Path, name: str, age: float, now: float) -> Path:
    path = directory / name
    path.mkdir(mode=0o700)
    (path / "spark.log").write_text("spark: WARN something\n")
    for p in (path / "spark.log", path):
        os.utime(p, (now - age, now - age))
    return path


def test_configuration_folder_is_private_and_unpredictable() -> None:
    folder = conf_dir()
    st = folder.lstat()
    assert stat.S_ISDIR(st.st_mode), f"{folder} is not a directory"
    assert st.st_uid == os.getuid(), f"{folder} is owned by uid {st.st_uid}, not {os.getuid()}"
    assert stat.S_IMODE(st.st_mode) == 0o700, f"{folder} has mode {oct(stat.S_IMODE(st.st_mode))}, not 0o700"
    legacy = Path(tempfile.gettempdir()) / f"kcspec-audit-spark-conf-{os.getuid()}"
    assert folder != legacy
    assert folder.name.startswith(f"{CONF_PREFIX}{os.getpid()}-") and len(folder.name) > len(
        f"{CONF_PREFIX}{os.getpid()}-"
    ), f"{folder.name}: no random part"
    assert (folder / "log4j2.properties").read_text() == LOG4J2
    assert spark_log_path().parent == folder
    assert conf_dir() == folder, "one folder per process"


def test_old_folders_of_ended_processes_go_and_everything_else_stays(tmp_path: Path) -> None:
    now = time.time()
    ended = _ended_pid()
    old_ended = _folder(tmp_path, f"{CONF_PREFIX}{ended}-abc", LOG_KEEP_SECONDS + 60, now)
    recent_ended = _folder(tmp_path, f"{CONF_PREFIX}{ended}-def", 60, now)
    old_running = _folder(tmp_path, f"{CONF_PREFIX}{os.getpid()}-ghi", LOG_KEEP_SECONDS + 60, now)
    other_name = _folder(tmp_path, f"{CONF_PREFIX}notes", LOG_KEEP_SECONDS + 60, now)
    target = _folder(tmp_path, "elsewhere", LOG_KEEP_SECONDS + 60, now)
    link = tmp_path / f"{CONF_PREFIX}{ended}-link"
    link.symlink_to(target)

    removed = prune_spark_dirs(tmp_path, now=now)

    assert removed == [old_ended], f"removed {removed}"
    kept = {p for p in (recent_ended, old_running, other_name, target, link) if p.exists()}
    assert kept == {recent_ended, old_running, other_name, target, link}, f"kept only {sorted(kept)}"
    assert (target / "spark.log").exists(), "a symbolic link was followed"
