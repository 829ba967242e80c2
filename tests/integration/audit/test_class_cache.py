"""The class-data sharing archive of small audits' driver JVM (``class_cache``): kept in a folder of the user
alone, promoted only once its JVM has ended and a separate JVM mapped it whole, and never used when it is someone
else's, cut short, corrupt, a link, or when the folder is not private (no Spark needed; a JDK's ``java`` is)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kcspec.audit import class_cache, jvm_parser

pytestmark = pytest.mark.skipif(class_cache._java() is None, reason="no java")
OPTIONS = ("-XX:TieredStopAtLevel=1",)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.setattr(jvm_parser, "build", lambda: (tmp_path / "parser.jar", "test"))
    yield tmp_path / "xdg" / "kcspec" / class_cache.FOLDER


def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def _dump_plan() -> tuple[class_cache.Plan, Path]:
    plan = class_cache.plan(OPTIONS)
    assert plan is not None and len(plan.options) == 1
    assert plan.options[0].startswith("-XX:ArchiveClassesAtExit=")
    return plan, Path(plan.options[0].split("=", 1)[1])


def _write_archive(plan: class_cache.Plan, partial: Path, pid: int) -> None:
    """What the session's JVM does: record its process id, write the archive when it exits."""
    java = class_cache._java()
    assert java is not None
    subprocess.run(
        [java, *OPTIONS, f"-XX:ArchiveClassesAtExit={partial}", "-version"], check=True, capture_output=True
    )
    plan.launched(pid)


def _used(plan: class_cache.Plan | None) -> Path | None:
    assert plan is not None
    shared = [o for o in plan.options if o.startswith("-XX:SharedArchiveFile=")]
    return Path(shared[0].split("=", 1)[1]) if shared else None


def test_first_run_dumps_later_runs_map_the_verified_archive(folder: Path) -> None:
    plan, partial = _dump_plan()
    assert partial.parent == folder and stat.S_IMODE(folder.lstat().st_mode) == 0o700
    assert plan.conf_dir == folder / "conf" and not any(plan.conf_dir.iterdir())
    assert stat.S_IMODE(plan.conf_dir.lstat().st_mode) == 0o700
    _write_archive(plan, partial, _dead_pid())
    archive = _used(class_cache.plan(OPTIONS))
    assert archive is not None and archive.name.endswith(f"-{archive.stat().st_size}.jsa")
    assert not partial.exists() and _used(class_cache.plan(OPTIONS)) == archive


def test_an_archive_still_being_written_is_not_promoted(folder: Path) -> None:
    plan, partial = _dump_plan()
    _write_archive(plan, partial, os.getpid())  # "its JVM" still runs
    again = class_cache.plan(OPTIONS)
    assert again is not None and again.options == () and partial.exists()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_corrupt_archive_is_removed_never_used(
    folder: Path, damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plan, partial = _dump_plan()
    _write_archive(plan, partial, _dead_pid())
    data = partial.read_bytes()
    partial.chmod(0o600)
    partial.write_bytes(
        {"truncated": data[: len(data) // 3], "garbage": b"\x00" * 4096, "empty": b""}[damage]
    )
    again = class_cache.plan(OPTIONS)
    assert _used(again) is None and not partial.exists()
    assert again is not None and again.options[0].startswith("-XX:ArchiveClassesAtExit="), (
        "a new one is written"
    )
    assert not list(tmp_path.glob("hs_err*")) and not list(folder.glob("*hs_err*")), "a crash report was left"


def _promoted(folder: Path) -> Path:
    plan, partial = _dump_plan()
    _write_archive(plan, partial, _dead_pid())
    archive = _used(class_cache.plan(OPTIONS))
    assert archive is not None
    return archive


def test_a_shortened_or_linked_archive_is_never_used(folder: Path, tmp_path: Path) -> None:
    archive = _promoted(folder)
    data = archive.read_bytes()
    archive.chmod(0o600)
    archive.write_bytes(data[:-4096])
    assert _used(class_cache.plan(OPTIONS)) is None
    archive.unlink()
    real = tmp_path / "real.jsa"
    real.write_bytes(data)
    archive.symlink_to(real)
    assert _used(class_cache.plan(OPTIONS)) is None


def test_a_folder_others_can_write_is_made_anew(folder: Path) -> None:
    archive = _promoted(folder)
    folder.chmod(0o777)
    plan = class_cache.plan(OPTIONS)
    assert _used(plan) is None and not archive.exists() and stat.S_IMODE(folder.lstat().st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_an_archive_or_folder_of_someone_else_is_never_used(folder: Path) -> None:
    archive = _promoted(folder)
    os.chown(archive, 65534, 65534)
    assert _used(class_cache.plan(OPTIONS)) is None
    os.chown(archive, 0, 0)
    os.chown(folder, 65534, 65534)
    assert class_cache.plan(OPTIONS) is None and archive.exists()


def test_a_users_spark_conf_dir_or_a_non_empty_conf_folder_means_no_archive(
    folder: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plan, _ = _dump_plan()
    (plan.conf_dir / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions -Dx=y\n")
    assert class_cache.plan(OPTIONS) is None
    shutil.rmtree(plan.conf_dir)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert class_cache.plan(OPTIONS) is None


def test_only_the_newest_archives_are_kept(folder: Path) -> None:
    folder.mkdir(parents=True, mode=0o700)
    folder.parent.chmod(0o700)
    old = [folder / f"driver-{n:016x}-{n}.jsa" for n in (1, 2, 3)]
    for age, path in enumerate(old):
        path.write_bytes(b"x")
        os.utime(path, (1_000_000 - age, 1_000_000 - age))
    archive = _promoted(folder)
    kept = sorted(folder.glob("driver-*.jsa"))
    assert kept == sorted([archive, old[0]]), kept


@pytest.mark.parametrize("value", ["0", "off", "No", " false "])
def test_the_user_can_turn_the_archive_off(folder: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(class_cache.OPT_OUT, value)
    assert class_cache.plan(OPTIONS) is None
    assert not folder.exists()  # nothing written either
    monkeypatch.setenv(class_cache.OPT_OUT, "1")
    assert class_cache.plan(OPTIONS) is not None


def test_finished_partials_of_other_keys_are_removed_after_an_hour(folder: Path) -> None:
    """A ``.partial`` archive is promoted only by a run with its key (the jar, pyspark, JDK and options): after
    an upgrade the old key's would stay forever. One whose JVM has ended and that is over an hour old goes; one
    still being written, one under an hour old and one of someone else's are kept."""
    folder.mkdir(parents=True, mode=0o700)
    folder.parent.chmod(0o700)
    hour_ago = time.time() - class_cache.ABANDONED_SECONDS - 60

    def partial(name: str, pid: int | None, old: bool = True) -> Path:
        path = folder / f"driver-{name}.1-ab{class_cache.PARTIAL}"
        path.write_bytes(b"x" * 1000)
        if pid is not None:
            path.with_name(path.name + ".pid").write_text(f"{pid}\n")
        if old:
            os.utime(path, (hour_ago, hour_ago))
        return path

    finished = partial("00000000000000a1", _dead_pid())
    no_pid = partial("00000000000000a2", None)
    running = partial("00000000000000a3", os.getpid())
    young = partial("00000000000000a4", _dead_pid(), old=False)
    archive = _promoted(folder)
    assert not finished.exists() and not finished.with_name(finished.name + ".pid").exists()
    assert not no_pid.exists()
    assert running.exists() and young.exists()
    # and when this key's archive is already there (no promotion to do)
    later = partial("00000000000000a5", _dead_pid())
    assert _used(class_cache.plan(OPTIONS)) == archive and not later.exists()


def test_the_local_engines_jvm_archives_its_classes_once_and_maps_them_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local engine's JVM (role ``local``, beside the driver's archives, never one of theirs): the first run
    writes the archive as its JVM exits (the audit waits for it), the next promotes it, the third maps the
    engine's classes from it; the outputs of the three runs are the same."""
    pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")
    from kcspec.audit import local_engine
    from kcspec.audit.spark_job import expand_inputs
    from kcspec.spec.profiles import KAFKA_2_8

    from tests.support.paths import SHARED

    jar, why = jvm_parser.build()
    if jar is None:
        pytest.skip(f"the JVM line parser is not available: {why}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(jvm_parser, "build", lambda: (jar, "built"))
    folder = tmp_path / "xdg" / "kcspec" / class_cache.FOLDER
    inputs = expand_inputs(sorted(str(p) for p in (SHARED / "real-logs").iterdir())[:4])
    loaded = tmp_path / "classes.log"

    def audit(n: int) -> dict[str, bytes]:
        out = tmp_path / f"out-{n}"
        local_engine.run_local(inputs, out, KAFKA_2_8, lambda s: None)
        return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}

    first = audit(1)
    assert not list(folder.glob("*.jsa")) and len(list(folder.glob(f"local-*{class_cache.PARTIAL}"))) == 1
    assert audit(2) == first
    archives = [p.name for p in folder.glob("*.jsa")]
    assert len(archives) == 1 and archives[0].startswith("local-"), archives
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", f"-Xlog:class+load=info:file={loaded}")
    assert audit(3) == first
    log = loaded.read_text()
    assert "kcspec.audit.LineParser source: shared objects file (top)" in log, log[-2000:]
