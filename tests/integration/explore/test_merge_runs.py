"""``--workers``' merge with a memory budget small enough that every level is sorted in runs on disk (``merge.py``)
finds what the merge in memory finds: the same count, the same frontier and trail files of a checkpoint, the same
counterexample; and no run file is left in the checkpoint folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.bugzoo.historical import HISTORICAL_BY_NAME
from kcspec.conformance.selfcheck.explore import merge
from kcspec.conformance.selfcheck.explore.explorer import explore, search
from kcspec.conformance.selfcheck.explore.levels import LevelStore
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.model.tla.manifest import load

from tests.support.explore_cases import CASES

pytestmark = pytest.mark.integration

MODEL = next(e for e in load() if e.name == "one-broker-queue-2.8")
"""A manifest model whose middle levels hold hundreds of states (4,252 in all)."""

TINY = 40_000
"""A budget of about 25 states: the middle levels are merged from a dozen runs and more."""


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".bin"}


@pytest.fixture
def runs_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file where the (forked) workers log each run file they name, a line each."""
    made = tmp_path / "runs.log"
    made.touch()
    run = LevelStore.run

    def logged(store: LevelStore, level: int, worker: int, n: int) -> Path:
        with made.open("a") as log:
            log.write(f"{level} {worker} {n}\n")
        return run(store, level, worker, n)

    monkeypatch.setattr(LevelStore, "run", logged)
    return made


def test_runs_on_disk_find_the_count_and_files_of_the_merge_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs_made: Path
) -> None:
    in_memory = search(model_space(MODEL.profile, MODEL.config, 1_500), workers=2, checkpoint=tmp_path / "a")
    assert runs_made.read_text() == ""

    monkeypatch.setattr(merge, "MERGE_BUDGET", TINY)
    monkeypatch.setattr(merge, "MERGE_FANIN", 3)  # many runs: merged in groups first
    on_disk = search(model_space(MODEL.profile, MODEL.config, 1_500), workers=2, checkpoint=tmp_path / "b")
    assert len(runs_made.read_text().splitlines()) >= 20, "the tiny budget made few runs"
    assert in_memory.stats.truncated and on_disk.stats.truncated
    assert on_disk.stats.distinct_states == in_memory.stats.distinct_states
    assert on_disk.stats.level_sizes == in_memory.stats.level_sizes
    files = _files(tmp_path / "a")
    assert any(name.startswith("frontier-") for name in files) and any(n.startswith("trail-") for n in files)
    assert _files(tmp_path / "b") == files  # frontier, trail and visited files, byte for byte
    assert not list((tmp_path / "b").glob("run-*"))


def test_runs_on_disk_report_the_counterexample_of_the_merge_in_memory(
    monkeypatch: pytest.MonkeyPatch, runs_made: Path
) -> None:
    mutant, _what, cfg = CASES[1]
    with HISTORICAL_BY_NAME[mutant].active():
        in_memory = explore(cfg, workers=2)
        monkeypatch.setattr(merge, "MERGE_BUDGET", 8_000)
        on_disk = explore(cfg, workers=2)
    assert len(runs_made.read_text().splitlines()) >= 10, "the tiny budget made few runs"
    assert in_memory.finding is not None and on_disk.finding is not None
    assert on_disk.finding.events == in_memory.finding.events
    assert (on_disk.finding.kind, on_disk.finding.message) == (
        in_memory.finding.kind,
        in_memory.finding.message,
    )
    assert on_disk.stats.distinct_states == in_memory.stats.distinct_states


def test_a_resumed_checkpoint_drops_the_runs_a_killed_merge_left(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    first = search(model_space(MODEL.profile, MODEL.config, 1_000), workers=2, checkpoint=folder)
    assert first.stats.truncated
    stale = [LevelStore(folder).run(9, w, n) for w in (0, 1) for n in (0, 1)]
    for path in stale:
        path.write_bytes(b"KCLV half a run")
    assert all(path.exists() for path in stale)
    resumed = search(
        model_space(MODEL.profile, MODEL.config, 1_500), workers=2, checkpoint=folder, resume=True
    )
    assert resumed.stats.distinct_states > first.stats.distinct_states
    assert not list(folder.glob("run-*"))
