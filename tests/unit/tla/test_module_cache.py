"""The on-disk cache of generated TLA+ modules: an entry reads back as the module that was saved, a model or a
profile of its own has its own entry, and a damaged, foreign or switched-off cache only costs a generation."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcspec.model.tla import module_cache
from kcspec.model.tla.config import CROSSCHECK_DEFAULT, ModelConfig
from kcspec.model.tla.module import GeneratedModule, LineOrigin

from tests.support.caches import unwritable_cache

MODULE = GeneratedModule(
    name="KafkaController_2_8_2",
    tla="---- MODULE KafkaController_2_8_2 ----\nInit == TRUE\n====\n",
    cfg="INIT Init\n",
    origins=(
        LineOrigin("<header>", None),
        LineOrigin("Init", "§4 init", "spec/x.py:3"),
        LineOrigin("<end>", None),
    ),
    liveness_cfg="SPECIFICATION FairSpec\n",
    kind_checks=(("=", 3), ("\\in", 1)),
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_cache, "parser_installed", lambda: True)
    return tmp_path


def test_a_saved_module_reads_back_as_it_was(cache: Path) -> None:
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)
    assert module_cache.load("kafka-2.8", CROSSCHECK_DEFAULT) == MODULE
    assert [p.name.startswith("tla-module-kafka-2.8-") for p in cache.iterdir()] == [True]


def test_another_model_or_profile_is_another_entry(cache: Path) -> None:
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)
    assert module_cache.load("kafka-2.8", ModelConfig()) is None
    assert module_cache.load("kafka-1.1", CROSSCHECK_DEFAULT) is None
    bigger = ModelConfig(brokers=2, max_queued_requests=1)
    assert module_cache.entry_path("kafka-2.8", bigger) != module_cache.entry_path("kafka-2.8", ModelConfig())


@pytest.mark.parametrize("content", ["", "{", '{"format": 1}', '{"format": 99}', "[]"])
def test_a_damaged_entry_is_not_used(cache: Path, content: str) -> None:
    path = module_cache.entry_path("kafka-2.8", CROSSCHECK_DEFAULT)
    assert path is not None
    path.write_text(content)
    assert module_cache.load("kafka-2.8", CROSSCHECK_DEFAULT) is None
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)  # written again over it
    assert module_cache.load("kafka-2.8", CROSSCHECK_DEFAULT) == MODULE


def test_an_entry_whose_origins_do_not_match_its_lines_is_not_used(cache: Path) -> None:
    short = GeneratedModule(MODULE.name, MODULE.tla, MODULE.cfg, MODULE.origins[:1])
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, short)
    assert module_cache.load("kafka-2.8", CROSSCHECK_DEFAULT) is None


def test_nothing_is_saved_without_the_parser_or_with_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_cache, "parser_installed", lambda: False)
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)  # generate could not run its semantic checks
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(module_cache, "parser_installed", lambda: True)
    monkeypatch.setenv("KCSPEC_CACHE_DIR", "off")
    assert module_cache.entry_path("kafka-2.8", CROSSCHECK_DEFAULT) is None
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_cache_costs_nothing_but_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unwritable_cache(tmp_path, monkeypatch)
    monkeypatch.setattr(module_cache, "parser_installed", lambda: True)
    module_cache.save("kafka-2.8", CROSSCHECK_DEFAULT, MODULE)
    assert module_cache.load("kafka-2.8", CROSSCHECK_DEFAULT) is None
