"""The generalised rules of a built-in profile are computed once and reused by every model: a module whose rules
were read back from the cache folder, or kept from another model in the same process, is the module generated
from scratch, byte for byte; a damaged or foreign entry is computed again and written over."""

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

PROFILE = "kafka-1.1"  # its rules generalise in about 2 s, kafka-2.8's in about 8 s
ONE_BROKER = ModelConfig(brokers=1, rf=1, max_controller_epoch=1, max_leader_epoch=1, max_zxid=2)
TWO_BROKERS = replace(ONE_BROKER, brokers=2, rf=2)


def _fresh(config: ModelConfig) -> GeneratedModule:
    """The module generated with nothing kept in this process (the cache folder as the environment says)."""
    generalised.forget()
    _generate_builtin.cache_clear()
    return generate(get_profile(PROFILE), config)


@pytest.fixture(scope="module")
def from_scratch() -> Iterator[dict[ModelConfig, GeneratedModule]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KCSPEC_CACHE_DIR", "off")
        yield {c: _fresh(c) for c in (ONE_BROKER, TWO_BROKERS)}
    generalised.forget()
    _generate_builtin.cache_clear()


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


def test_rules_read_back_give_the_module_generated_from_scratch(
    cache: Path, from_scratch: dict[ModelConfig, GeneratedModule]
) -> None:
    assert _fresh(ONE_BROKER) == from_scratch[ONE_BROKER]
    entry = generalised.entry_path(PROFILE)
    assert entry is not None and entry.is_file(), sorted(p.name for p in cache.iterdir())
    _without_modules(cache)
    assert _fresh(TWO_BROKERS) == from_scratch[TWO_BROKERS]  # another model: the rules from the file
    _generate_builtin.cache_clear()
    _without_modules(cache)
    entry.unlink()
    assert generate(get_profile(PROFILE), ONE_BROKER) == from_scratch[ONE_BROKER]  # kept in this process
    assert not entry.exists()


@pytest.mark.parametrize("damage", ["garbage", "other-names", "other-format"])
def test_a_damaged_or_foreign_entry_is_computed_again_and_written_over(
    cache: Path, from_scratch: dict[ModelConfig, GeneratedModule], damage: str
) -> None:
    entry = generalised.entry_path(PROFILE)
    assert entry is not None
    if damage == "garbage":
        entry.write_bytes(b"\x80\x05not a pickle")
    else:
        data = {"format": 1, "names": ["invariant X"], "rewritten": [], "rule_defs": [], "problems": []}
        if damage == "other-format":
            data = {**data, "format": 99}
        entry.write_bytes(pickle.dumps(data))
    assert _fresh(ONE_BROKER) == from_scratch[ONE_BROKER]
    saved = pickle.loads(entry.read_bytes())
    assert saved["format"] == 1 and len(saved["names"]) == len(saved["rewritten"]) > 1


def test_the_cache_off_keeps_nothing_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", "off")
    assert generalised.entry_path(PROFILE) is None
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    assert generalised.entry_path(PROFILE) == generalised.entry_path(PROFILE)
    assert generalised.entry_path("kafka-2.8") != generalised.entry_path(PROFILE)
