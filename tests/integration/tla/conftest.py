"""Fixtures of the real-TLC tests: the toolchain (a missing TLC fails, never skips) and the generated modules,
written once per (profile, model) and pytest-xdist worker under ``tmp_path_factory``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.module import generate
from kcspec.model.tlc.locate import MINIMUM_VERSION, Toolchain, find_toolchain, tlc_unavailable_reason
from kcspec.spec.profiles import get_profile


@pytest.fixture(scope="session")
def tools() -> Toolchain:
    reason = tlc_unavailable_reason()
    if reason is not None:
        pytest.fail(f"no TLC for the TLC tests (make setup installs it with the dev extra): {reason}")
    found = find_toolchain()
    assert found.version is not None and found.version.key >= MINIMUM_VERSION
    return found


@pytest.fixture(scope="session")
def module_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, ModelConfig], Path]:
    """The folder holding the generated ``.tla`` and ``.cfg`` of (profile, model), written once per worker."""
    made: dict[tuple[str, ModelConfig], Path] = {}

    def get(profile: str, config: ModelConfig) -> Path:
        key = (profile, config)
        if key not in made:
            module = generate(get_profile(profile), config)
            folder = tmp_path_factory.mktemp(f"tla-{profile}")
            (folder / f"{module.name}.tla").write_text(module.tla, encoding="utf-8")
            (folder / f"{module.name}.cfg").write_text(module.cfg, encoding="utf-8")
            made[key] = folder / f"{module.name}.tla"
        return made[key]

    return get
