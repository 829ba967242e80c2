"""The merge of a level's successors (``merge.py``): written to sorted runs and merged back when they pass the memory
budget, it gives what the merge in memory gives — the same new states, parents, order (ties in rank included) and
count — and leaves no run file behind."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.explore.fingerprint import FingerprintSet
from kcspec.conformance.selfcheck.explore.merge import LevelMerge, MergeRecord


def _arrivals(seed: int, senders: int = 3, per_sender: int = 400) -> list[list[MergeRecord]]:
    """Records as senders send them: fingerprints drawn from a small pool (duplicates within and across senders,
    across runs), ranks from a smaller one (many ties, between records of one fingerprint and of several), states of
    different sizes; some states held unpickled, as a worker holds its own."""
    rng = random.Random(seed)
    out: list[list[MergeRecord]] = []
    for sender in range(senders):
        records: list[MergeRecord] = []
        for i in range(per_sender):
            fp = rng.randrange(1, 300)
            rank = bytes([rng.randrange(4), rng.randrange(6)])
            state = {"sender": sender, "i": i, "pad": "x" * rng.randrange(0, 200)}
            data: object = state if sender == 0 and i % 2 else pickle.dumps(state)
            records.append((fp, 1000 * sender + i, rank, data))
        out.append(records)
    return out


def _expected(arrivals: list[list[MergeRecord]], visited: set[int]) -> list[MergeRecord]:
    """The definition: per fingerprint not visited, its first record of least rank; in the order (rank, arrival of
    the record kept)."""
    flat = [r for records in arrivals for r in records]
    kept: dict[int, tuple[bytes, int]] = {}
    for at, r in enumerate(flat):
        if r[0] not in visited and (r[0] not in kept or r[2] < kept[r[0]][0]):
            kept[r[0]] = (r[2], at)
    return [flat[at] for _rank, at in sorted(kept.values())]


def _plain(record: MergeRecord) -> MergeRecord:
    """A record with its state pickled (a state held in memory comes back pickled from a run file)."""
    fp, parent, rank, data = record
    return fp, parent, rank, data if type(data) is bytes else pickle.dumps(data, pickle.HIGHEST_PROTOCOL)


def _merge(
    tmp_path: Path, arrivals: list[list[MergeRecord]], visited: set[int], budget: int, fanin: int = 64
) -> tuple[list[MergeRecord], int, FingerprintSet, bool]:
    fps = FingerprintSet()
    for fp in visited:
        fps.add(fp)
    with LevelMerge(fps, lambda n: tmp_path / f"run-0001-0-{n}.bin", budget, fanin) as merge:
        for records in arrivals:
            merge.add(records)
        out = [_plain(r) for r in merge.records()]
        return out, merge.new_states(), fps, merge.spilled


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("budget", "fanin"), [(4_000, 64), (4_000, 3), (20_000, 2), (1, 16)])
def test_runs_on_disk_give_what_the_merge_in_memory_gives(
    tmp_path: Path, seed: int, budget: int, fanin: int
) -> None:
    arrivals = _arrivals(seed)
    visited = set(random.Random(-seed).sample(range(1, 300), 40))
    expected = [_plain(r) for r in _expected(arrivals, visited)]

    in_memory, count, fps, spilled = _merge(tmp_path, arrivals, visited, 1 << 30)
    assert not spilled
    assert in_memory == expected
    assert count == len(expected)
    assert sorted(fps) == sorted(visited | {r[0] for r in expected})

    on_disk, count, fps, spilled = _merge(tmp_path, arrivals, visited, budget, fanin)
    assert spilled
    assert on_disk == expected
    assert count == len(expected)
    assert sorted(fps) == sorted(visited | {r[0] for r in expected})
    assert list(tmp_path.iterdir()) == []


def test_the_tie_break_is_the_arrival_of_the_record_kept(tmp_path: Path) -> None:
    # 7 first arrives with rank 9, then 8 with rank 1, then 7 with rank 1: 8's record arrived before 7's kept one
    arrivals: list[list[MergeRecord]] = [
        [(7, 1, b"\x09", b"a"), (8, 2, b"\x01", b"b")],
        [(7, 3, b"\x01", b"c")],
    ]
    for budget in (1 << 30, 1):
        out, count, _fps, _spilled = _merge(tmp_path, arrivals, set(), budget)
        assert out == [(8, 2, b"\x01", b"b"), (7, 3, b"\x01", b"c")], budget
        assert count == 2


@pytest.mark.parametrize("budget", [1 << 30, 3_000])
def test_a_merge_left_early_counts_every_new_state_and_visits_only_those_given(
    tmp_path: Path, budget: int
) -> None:
    arrivals = _arrivals(7)
    expected = _expected(arrivals, set())
    fps = FingerprintSet()
    with LevelMerge(fps, lambda n: tmp_path / f"run-0002-1-{n}.bin", budget) as merge:
        merge.add([r for records in arrivals for r in records])
        given = []
        for record in merge.records():
            given.append(record[0])
            if len(given) == 25:
                break
        assert merge.new_states() == len(expected)
        assert merge.spilled == (budget < 1 << 30)
    assert given == [r[0] for r in expected[:25]]
    assert sorted(fps) == sorted(given)
    assert list(tmp_path.iterdir()) == []


def test_run_files_are_removed_when_the_merge_fails(tmp_path: Path) -> None:
    arrivals = _arrivals(11)
    with (
        pytest.raises(RuntimeError),
        LevelMerge(FingerprintSet(), lambda n: tmp_path / f"run-{n}.bin", 2_000) as m,
    ):
        m.add(arrivals[0])
        assert any(tmp_path.iterdir())
        raise RuntimeError("the merge's reader failed")
    assert list(tmp_path.iterdir()) == []
