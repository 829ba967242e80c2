"""A checkpoint folder's files when a run is killed or a file is cut short (``levels.py``): a resume with another
number of workers rewrites the frontier as one switch that no kill can leave half done, and a cut trail is an error
naming its file, never a wrong counterexample."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.explore.levels import (
    FrontierWriter,
    LevelFileError,
    LevelStore,
    TrailWriter,
    owner_of,
    read_records,
)

LEVEL = 3


def _store(tmp_path: Path, workers: int, states: int = 500) -> tuple[LevelStore, set[int]]:
    """A checkpoint folder whose level ``LEVEL`` frontier is written by ``workers`` workers (each file in ascending
    rank), and the fingerprints it holds."""
    rng = random.Random(7)
    fps = set(rng.sample(range(1, 1 << 40), states))
    store = LevelStore(tmp_path / "ck")
    writers = [FrontierWriter(store.frontier(LEVEL, w)) for w in range(workers)]
    for fp in sorted(fps, key=lambda f: f.to_bytes(8, "big")):
        writers[owner_of(fp, workers)].add(fp, 1, fp.to_bytes(8, "big"), {"fp": fp})
    for w in writers:
        w.close()
    return store, fps


def _frontier(store: LevelStore) -> dict[int, int]:
    """Each fingerprint of the level's frontier files, with how many times it is there."""
    seen: dict[int, int] = {}
    for path in store.files("frontier", LEVEL):
        for fp, *_ in read_records(path):
            seen[fp] = seen.get(fp, 0) + 1
    return seen


def _owners_hold(store: LevelStore, workers: int) -> None:
    for w, path in enumerate(store.files("frontier", LEVEL)):
        assert path == store.frontier(LEVEL, w)
        assert all(owner_of(fp, workers) == w for fp, *_ in read_records(path)), (
            f"{path.name}: a state of another"
        )


@pytest.mark.parametrize(("before", "after"), [(2, 3), (3, 1), (2, 2)])
def test_a_repartition_gives_every_state_once_to_its_owner(tmp_path: Path, before: int, after: int) -> None:
    store, fps = _store(tmp_path, before)
    store.repartition(LEVEL, after)
    assert _frontier(store) == dict.fromkeys(fps, 1)
    assert len(store.files("frontier", LEVEL)) == after
    _owners_hold(store, after)
    assert not list(store.folder.glob("*.tmp")) and not list(store.folder.glob("switch-*"))


class _Killed(BaseException):
    """The process killed at this point (nothing after it runs)."""


@pytest.mark.parametrize("at", range(1, 6))
def test_a_run_killed_in_the_switch_is_finished_by_the_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    """Killed after the ``at``-th removal or rename of the switch (2 → 3 workers: 3 renames; the note's own rename
    is the first): the resume's ``drop_after`` finishes it, and every state is there once."""
    store, fps = _store(tmp_path, 2)
    real = os.replace
    calls = {"n": 0}

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real(src, dst)
        calls["n"] += 1
        if calls["n"] == at:
            raise _Killed

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(_Killed):
        store.repartition(LEVEL, 3)
        raise _Killed  # ``at`` past the switch's last rename: killed just after it
    monkeypatch.setattr(os, "replace", real)

    LevelStore(store.folder).drop_after(LEVEL)
    assert _frontier(store) == dict.fromkeys(fps, 1), f"killed after rename {at}: states lost or doubled"
    _owners_hold(store, 3)
    assert not list(store.folder.glob("*.tmp")) and not list(store.folder.glob("switch-*"))


def test_a_run_killed_while_writing_the_new_files_keeps_the_old_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, fps = _store(tmp_path, 2)
    real_add = FrontierWriter.add_record
    calls = {"n": 0}

    def add_record(self: FrontierWriter, record: tuple[int, int, bytes, bytes]) -> None:
        calls["n"] += 1
        if calls["n"] == 200:
            raise _Killed
        real_add(self, record)

    monkeypatch.setattr(FrontierWriter, "add_record", add_record)
    with pytest.raises(_Killed):
        store.repartition(LEVEL, 3)
    monkeypatch.setattr(FrontierWriter, "add_record", real_add)
    # a kill outright leaves the new files: the resume drops them
    (store.folder / "frontier-0003-0.bin.tmp").write_bytes(b"half")
    LevelStore(store.folder).drop_after(LEVEL)
    assert _frontier(store) == dict.fromkeys(fps, 1)
    assert len(store.files("frontier", LEVEL)) == 2
    assert not list(store.folder.glob("*.tmp"))


def test_an_unreadable_switch_note_is_an_error_naming_it(tmp_path: Path) -> None:
    store, _ = _store(tmp_path, 2)
    (store.folder / "switch-0003.json").write_text("{not json")
    with pytest.raises(
        LevelFileError, match=r"switch-0003\.json: the note of a frontier's switch cannot be read"
    ):
        store.drop_after(LEVEL)


@pytest.mark.parametrize("cut", [1, 8, 15])
def test_a_cut_trail_is_an_error_naming_the_file(tmp_path: Path, cut: int) -> None:
    store = LevelStore(tmp_path / "ck")
    trail = TrailWriter(store.trail(LEVEL, 0))
    for fp in range(1, 10):
        trail.add(fp, fp + 100)
    trail.close()
    assert store.parent_of(LEVEL, 4) == 104
    path = store.trail(LEVEL, 0)
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(LevelFileError, match=r"trail-0003-0\.bin: truncated: .* not a whole number of"):
        store.parent_of(LEVEL, 4)
