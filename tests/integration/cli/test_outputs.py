"""Outputs are safe: a full disk is exit 2 with one line naming the path and no half-written file; an output
folder holds one run's files (a folder kcspec made is emptied for the next run, one it did not make is refused
unless ``--overwrite``), and a second run into a folder another run is writing stops instead of mixing.

The full disk is a real one (a 64 KB tmpfs, mounted when the test may: root on Linux); the same cases with a
simulated ``ENOSPC`` are in ``tests/unit/cli/test_outputs.py``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.timing import scaled

pytestmark = pytest.mark.integration


def kcspec(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "kcspec", *args],
        capture_output=True,
        text=True,
        timeout=scaled(600),
        cwd=cwd,
    )


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KB tmpfs (skipped, with the reason, where it cannot be mounted)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({made.stderr.decode().strip()}); tests/unit/cli/test_outputs.py simulates it"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _one_error_line(result: subprocess.CompletedProcess[str], path: Path) -> None:
    assert result.returncode == 2, (
        f"exit {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    )
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert errors == [f"error: cannot write {path}: No space left on device"], result.stderr[-2000:]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_full_disk_is_exit_2_naming_the_path_with_no_half_written_file(
    full_disk: Path, tmp_path: Path
) -> None:
    logs = full_disk / "logs"
    result = kcspec("simulate", "--emit-logs", str(logs), "--events", "3000", "--seed", "1")
    _one_error_line(result, logs / "broker-0" / "state-change.log")
    assert [f for f in _files(logs) if not f.endswith(".kcspec-output")] == [], _files(logs)

    filler = full_disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as f:
        f.write(b"\0" * 128 * 1024)  # whatever is left of the 64 KB
    report = full_disk / "verify.json"
    result = kcspec("verify", "--check", "diagrams", "--out", str(tmp_path / "out"), "--json", str(report))
    _one_error_line(result, report)
    assert not report.exists() and [p.name for p in full_disk.iterdir() if "verify" in p.name] == []


def test_a_second_log_set_replaces_the_first_and_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    logs, fresh = tmp_path / "logs", tmp_path / "fresh"
    five = ["--brokers", "5", "--events", "500", "--seed", "3"]
    three = ["--brokers", "3", "--rf", "2", "--events", "50", "--seed", "3"]
    assert kcspec("simulate", "--emit-logs", str(logs), *five).returncode == 0
    assert {"broker-3", "broker-4"} & {p.name for p in logs.iterdir()}, (
        "the 5-broker run wrote no broker-3/4 logs"
    )
    assert kcspec("simulate", "--emit-logs", str(logs), *three).returncode == 0
    assert kcspec("simulate", "--emit-logs", str(fresh), *three).returncode == 0
    assert _files(logs) == _files(fresh), "files of the first run are left beside the second run's"

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not kcspec's")
    refused = kcspec("simulate", "--emit-logs", str(foreign), "--events", "10", "--seed", "3")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "is not empty and kcspec did not make it" in refused.stderr and "--overwrite" in refused.stderr
    forced = kcspec("simulate", "--emit-logs", str(foreign), "--events", "10", "--seed", "3", "--overwrite")
    assert forced.returncode == 0, forced.stderr
    assert (foreign / "notes.txt").read_text() == "not kcspec's" and (foreign / "broker-0").is_dir()


def test_two_runs_into_one_folder_cannot_mix(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    first = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "kcspec",
            "simulate",
            "--emit-logs",
            str(logs),
            "--events",
            "10000",
            "--seed",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        marker = logs / ".kcspec-output"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (marker.exists() and marker.read_text()):
            time.sleep(0.1)
        assert marker.exists(), "the first run never claimed the folder"
        second = kcspec("simulate", "--emit-logs", str(logs), "--brokers", "3", "--rf", "2", "--events", "10")
        if first.poll() is not None:
            pytest.fail("the first run ended before the second one started: give it more --events")
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"kcspec run {first.pid}" in second.stderr and "is writing there now" in second.stderr, (
            second.stderr
        )
        _, err = first.communicate(timeout=scaled(600))
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert {p.name for p in logs.iterdir() if p.is_dir()} == {f"broker-{i}" for i in range(5)}, _files(logs)


@pytest.mark.slow  # two vector generations: over a minute on a loaded machine
def test_vectors_exported_twice_into_one_folder_are_one_export(tmp_path: Path) -> None:
    out = tmp_path / "vectors"
    assert kcspec("conformance", "export", str(out), "--profile", "kafka-1.1").returncode == 0
    (out / "kafka-1.1" / "stale-from-an-older-export.json").write_text("{}")
    assert kcspec("conformance", "export", str(out), "--profile", "kafka-2.8").returncode == 0
    assert not (out / "kafka-1.1").exists(), "the first export's files are mixed with the second's"
    index = json.loads((out / "index.json").read_text())
    assert {v["profile"] for v in index} == {"kafka-2.8"}
    assert os.path.exists(out / ".kcspec-output")
