"""The on-disk cache of generated code: a unit loaded from the cache computes what the compiled one computes, and a
damaged, foreign or unwritable cache only costs a compilation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kcspec.model import codecache
from kcspec.model.codegen import FastCompiled
from kcspec.spec import lang as L
from kcspec.spec.vocabulary import PartitionState, ReplicaState

from tests.support.caches import unwritable_cache

ALL_REPLICA_STATES = frozenset(ReplicaState)  # 7 members: tested through a set of identities
ONLINE = frozenset({ReplicaState.OnlineReplica, ReplicaState.NewReplica})  # tested by `is`
PAIRS = frozenset({(ReplicaState.OnlineReplica, PartitionState.OnlinePartition)})

EXPRS = {
    "any-replica-state": (L.Member(L.Var("x"), L.Const(ALL_REPLICA_STATES)), ("x",)),
    "online": (L.Member(L.Var("x"), L.Const(ONLINE)), ("x",)),
    "pair": (L.Member(L.SeqLit((L.Var("x"), L.Var("y"))), L.Const(PAIRS)), ("x", "y")),
}
INPUTS = [(s, p) for s in [*ReplicaState, "OnlineReplica", 2, None] for p in [*PartitionState, None]]


def _verdicts(unit: dict[str, FastCompiled]) -> list[tuple[object, ...]]:
    return [
        (unit["any-replica-state"].call(x), unit["online"].call(x), unit["pair"].call(x, y))
        for x, y in INPUTS
    ]


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.pickle"))


def test_a_unit_loaded_from_the_cache_computes_what_the_compiled_one_computes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    compiled = codecache.compile_unit("test", "p", EXPRS)
    assert len(_files(tmp_path)) == 1, "the compiled unit was not saved"
    loaded = codecache.compile_unit("test", "p", EXPRS)
    assert all(loaded[n].fn is not compiled[n].fn for n in EXPRS), (
        "the second call did not load the saved unit"
    )
    assert _verdicts(loaded) == _verdicts(compiled)
    assert loaded["any-replica-state"].call(ReplicaState.OfflineReplica) is True
    assert loaded["any-replica-state"].call("OfflineReplica") is False


def test_a_damaged_cache_file_is_compiled_again_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    codecache.compile_unit("test", "p", EXPRS)
    (saved,) = _files(tmp_path)
    saved.write_bytes(b"not a pickle")
    unit = codecache.compile_unit("test", "p", EXPRS)
    assert _verdicts(unit)[0] == (True, True, False)  # NewReplica, NewPartition
    assert saved.read_bytes() != b"not a pickle", "the damaged file was not written again"


def test_the_key_changes_with_the_expressions_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    codecache.compile_unit("test", "p", EXPRS)
    codecache.compile_unit("test", "p", {"online": EXPRS["online"]})
    codecache.compile_unit("test", "q", EXPRS)
    assert len(_files(tmp_path)) == 3


@pytest.mark.parametrize("setting", ["off", ""])
def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", setting)
    monkeypatch.chdir(tmp_path)
    unit = codecache.compile_unit("test", "p", EXPRS)
    assert unit["online"].call(ReplicaState.NewReplica) is True
    assert codecache.cache_dir() is None
    assert not list(tmp_path.rglob("*.pickle"))


def test_an_unwritable_cache_folder_costs_only_the_compilation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unwritable_cache(tmp_path, monkeypatch)
    unit = codecache.compile_unit("test", "p", EXPRS)
    assert unit["pair"].call(ReplicaState.OnlineReplica, PartitionState.OnlinePartition) is True


def test_each_kind_keeps_its_most_recently_used_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new source version makes new keys: the older entries of a kind go once ``KEEP`` newer ones were used, an
    entry read counts as used, and other kinds, other extensions and foreign files are left alone."""

    def entry(kind: str, n: int, ext: str = ".pickle") -> Path:
        return tmp_path / f"{kind}-{n:032x}{ext}"

    others = [entry("actions-kafka-1.1", 1), entry("actions-kafka-2.8", 1, ".json"), tmp_path / "notes.txt"]
    for i, p in enumerate([entry("actions-kafka-2.8", n) for n in range(6)] + others):
        p.write_bytes(b"x")
        os.utime(p, (1000 + i, 1000 + i))
    os.utime(entry("actions-kafka-2.8", 0), (5000, 5000))  # the oldest, read just now
    codecache.save_entry(entry("actions-kafka-2.8", 9), b"new")
    kept = sorted(p.name for p in tmp_path.glob("actions-kafka-2.8-*.pickle"))
    assert kept == [entry("actions-kafka-2.8", n).name for n in (0, 4, 5, 9)], kept
    assert all(p.exists() for p in others)
    # through the cache itself: a unit written beside KEEP older ones of its kind leaves KEEP in all
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    for n in range(codecache.KEEP + 2):
        p = tmp_path / f"test-p-{n:032x}.pickle"
        p.write_bytes(b"old")
        os.utime(p, (1000 + n, 1000 + n))
    codecache.compile_unit("test", "p", EXPRS)
    assert len(list(tmp_path.glob("test-p-*.pickle"))) == codecache.KEEP
