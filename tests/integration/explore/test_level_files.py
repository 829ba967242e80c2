"""The level files of a checkpoint are compact, and a damaged one, or a checkpoint of the old layout, is a clear error:
one line naming the file (or the folder and its format), exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.explore.levels import FORMAT, FrontierWriter, LevelFileError, read_records
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from kcspec.cli import main

pytestmark = pytest.mark.integration

MODEL = next(e for e in load() if e.name == "one-broker-queue-2.8")
"""A manifest model whose middle levels hold hundreds of states (4,252 in all)."""

BYTES_PER_STATE = 150
"""The most a frontier state may take on disk. Measured on this model's levels of 350-900 states: 47-54 bytes a
state, where format 1 (each state pickled on its own, uncompressed) took 1,640-1,740."""


def _checkpoint(folder: Path, max_states: int, workers: int = 2) -> int:
    """Checkpoint ``MODEL``'s search in ``folder``, stopped at the end of the level that passes ``max_states``; the
    level checkpointed."""
    result = search(model_space(MODEL.profile, MODEL.config, max_states), workers=workers, checkpoint=folder)
    assert result.stats.truncated
    return int(json.loads((folder / "checkpoint.json").read_text())["level"])


def test_the_frontier_files_of_a_checkpoint_are_compact(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    level = _checkpoint(folder, 1_500)
    doc = json.loads((folder / "checkpoint.json").read_text())
    assert doc["format"] == FORMAT
    states = doc["level_sizes"][level]
    assert states >= 300, doc["level_sizes"]
    files = sorted(folder.glob(f"frontier-{level:04d}-*.bin"))
    assert len(files) == 2
    on_disk = sum(f.stat().st_size for f in files)
    assert on_disk / states < BYTES_PER_STATE, f"{on_disk / states:.0f} bytes a state"
    assert sum(1 for f in files for _ in read_records(f)) == states

    resumed = search(model_space(MODEL.profile, MODEL.config), workers=1, checkpoint=folder, resume=True)
    assert resumed.stats.distinct_states == MODEL.distinct_states


def test_records_come_back_as_written_across_blocks(tmp_path: Path) -> None:
    path = tmp_path / "frontier-0001-0.bin"
    writer = FrontierWriter(path)
    records = [
        (i * 7919 + 1, i // 3, bytes([i % 256, i // 256]), b"state %d " % i * (i % 50)) for i in range(3000)
    ]
    for record in records:
        writer.add_record(record)
    writer.close()
    assert list(read_records(path)) == records
    empty = tmp_path / "frontier-0002-0.bin"
    FrontierWriter(empty).close()
    assert list(read_records(empty)) == []


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_block_is_an_error_naming_the_file(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "send-0003-1-0.bin"
    writer = FrontierWriter(path)
    for i in range(2000):
        writer.add_record((i + 1, 1, b"\x00\x01", b"%d" % i * 40))
    writer.close()
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) - 10])
    else:
        path.write_bytes(data[:-60] + b"\xff" * 50 + data[-10:])
    with pytest.raises(LevelFileError, match=str(path)):
        list(read_records(path))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_resuming_a_checkpoint_with_a_damaged_frontier_fails_naming_it(tmp_path: Path, workers: str) -> None:
    runner = CliRunner()
    folder = tmp_path / "ck"
    model = ["explore", "--brokers", "2", "--depth", "6", "--workers", "2"]
    first = runner.invoke(main, [*model, "--max-states", "100", "--checkpoint", str(folder)])
    assert first.exit_code == 0, first.output
    level = int(json.loads((folder / "checkpoint.json").read_text())["level"])
    damaged = max(folder.glob(f"frontier-{level:04d}-*.bin"), key=lambda f: f.stat().st_size)
    damaged.write_bytes(damaged.read_bytes()[:-10])

    again = runner.invoke(main, [*model[:-1], workers, "--resume", str(folder)])
    assert again.exit_code == 2, again.output
    assert damaged.name in again.output and "truncated" in again.output, again.output


def test_a_checkpoint_of_the_old_layout_is_refused_naming_its_format(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "old"
    model = ["explore", "--brokers", "2", "--depth", "2", "--workers", "1"]
    assert runner.invoke(main, [*model, "--checkpoint", str(folder)]).exit_code == 0
    doc = json.loads((folder / "checkpoint.json").read_text())
    (folder / "checkpoint.json").write_text(json.dumps({**doc, "format": 1}))

    again = runner.invoke(main, [*model, "--resume", str(folder)])
    assert again.exit_code == 2, again.output
    assert str(folder) in again.output.replace("\n", "") and "format 1" in again.output, again.output
