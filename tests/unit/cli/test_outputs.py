"""Outputs are safe, with the full disk simulated (``ENOSPC`` raised where the data reaches the disk): the write
leaves the file as it was and no temporary file behind, the error names the path, and a command reports it in
one line with exit 2 (never as an internal error of kcspec)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.model import files

from kcspec.cli import main


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)  # the module that kcspec.model.files calls


def test_a_failed_write_leaves_the_old_file_and_names_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "report.json"
    report.write_text("the previous, complete report")
    _full_disk(monkeypatch)
    with pytest.raises(OSError) as caught:
        files.write_atomically(report, "a new report")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(report)
    assert report.read_text() == "the previous, complete report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_command_meeting_a_full_disk_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _full_disk(monkeypatch)
    logs = tmp_path / "logs"
    result = CliRunner().invoke(main, ["simulate", "--emit-logs", str(logs), "--events", "5", "--seed", "1"])
    assert result.exit_code == 2, result.output
    assert (
        f"error: cannot write {logs / 'broker-0' / 'state-change.log'}: No space left on device"
        in result.output
    )
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_an_unnamed_write_error_names_the_command_line_s_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write refused without a file name (the data met the full disk in code that did not name it)."""
    import kcspec.commands.spec_show as spec_show

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(spec_show.show, "callback", full)
    monkeypatch.setattr("kcspec.options.OUTPUTS", {tmp_path / "out.json"})
    result = CliRunner().invoke(main, ["spec", "show"])
    assert result.exit_code == 2, result.output
    assert f"error: cannot write {tmp_path / 'out.json'}: No space left on device" in result.output
