"""The generated TLA+ modules the tests read, each generated once per test process (a module of a 2-broker model
takes seconds of CPU to generate), and the models the module tests are run on."""

from __future__ import annotations

import functools

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.manifest import load as load_manifest
from kcspec.model.tla.module import GeneratedModule, generate
from kcspec.spec.profiles import get_profile


@functools.cache
def generated(profile: str, config: ModelConfig) -> GeneratedModule:
    """``generate(profile, config)``, once per process (a module is an immutable value)."""
    return generate(get_profile(profile), config)


def models() -> list[object]:
    """The default model of each profile and every manifest model, as test parameters: the 2-broker manifest
    models (their modules the largest after the default's) in the slow tier."""
    out: list[object] = [
        pytest.param(p, ModelConfig(), id=f"{p}-default") for p in ("kafka-2.8", "kafka-1.1")
    ]
    for e in load_manifest():
        marks = [pytest.mark.slow] if e.config.brokers > 1 else []
        out.append(pytest.param(e.profile, e.config, id=e.name, marks=marks))
    return out
