"""The generalised rules of a built-in profile are computed once and reused by every model: a module whose rules
were read back from the cache folder is the module generated from scratch, byte for byte, another model uses the
rules kept in the process, and a damaged or foreign entry is not read (it is computed again and written over)."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from kcspec.model.tla import generalised
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.module import GeneratedModule, _generate_builtin, generate
from kcspec.spec.profiles import get_profile

PROFILE = "kafka-1.1"  # its rules generalise in about 3 s, kafka-2.8's in about 9 s
MODEL = ModelConfig(brokers=2, rf=2, max_controller_epoch=1, max_leader_epoch=1, max_zxid=2)


def _fresh() -> GeneratedModule:
    """The module generated with nothing kept in this process (the cache folder as the environment says)."""
    generalised.forget()
    _generate_builtin.cache_clear()
    return generate(get_profile(PROFILE), MODEL)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    yield tmp_path
    generalised.forget()
    _generate_builtin.cache_clear()


def _without_modules(folder: Path) -> None:
    """Drop the saved modules, so that the next generation runs and reads only the saved rules."""
    for p in folder.glob("tla-module-*"):
        p.unlink()


def test_rules_read_back_give_the_module_generated_from_scratch(cache: Path) -> None:
    scratch = _fresh()  # nothing saved yet: the rules generalised here, and saved
    entry = generalised.entry_path(PROFILE)
    assert entry is not None and entry.is_file(), sorted(p.name for p in cache.iterdir())
    _without_modules(cache)
    assert _fresh() == scratch  # the rules read back from the file
    another = replace(MODEL, brokers=1, rf=1)
    _without_modules(cache)
    entry.unlink()
    _generate_builtin.cache_clear()
    assert generate(get_profile(PROFILE), another).tla.count("\n") > 100  # kept in this process
    assert not entry.exists()
    entry.write_bytes(b"\x80\x05not a pickle")  # damaged: computed again and written over
    _without_modules(cache)
    assert _fresh() == scratch
    saved = pickle.loads(entry.read_bytes())
    assert saved["format"] == 1 and len(saved["names"]) == len(saved["rewritten"]) > 1


NAMES = ["invariant X", "action Y guard"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x80\x05not a pickle",
        pickle.dumps([]),
        pickle.dumps({"format": 99, "names": NAMES, "rewritten": [], "rule_defs": [], "problems": []}),
        pickle.dumps(
            {"format": 1, "names": ["invariant Z"], "rewritten": [], "rule_defs": [], "problems": []}
        ),
    ],
    ids=["empty", "not-a-pickle", "not-a-mapping", "other-format", "other-roots"],
)
def test_a_damaged_or_foreign_entry_is_not_read(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "entry.pickle"
    path.write_bytes(content)
    assert generalised._load(path, NAMES) is None
    good = {"format": 1, "names": NAMES, "rewritten": [], "rule_defs": [], "problems": []}
    path.write_bytes(pickle.dumps(good))
    assert generalised._load(path, NAMES) == ((), (), ())


def test_the_cache_off_keeps_nothing_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", "off")
    assert generalised.entry_path(PROFILE) is None
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    assert generalised.entry_path(PROFILE) == generalised.entry_path(PROFILE)
    assert generalised.entry_path("kafka-2.8") != generalised.entry_path(PROFILE)
