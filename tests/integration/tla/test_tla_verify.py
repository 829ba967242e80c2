"""``kcspec verify`` with TLC present crosschecks every manifest model of both profiles marked for it, checked
with the stand-in TLC (``fakes/fake_tlc.py``), which reports, as TLC's states, the explorer's states of the model
that its ``.cfg`` describes. Each model is explored once here and the exploration reused by every step."""

from __future__ import annotations

import functools
import hashlib
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from kcspec.conformance.selfcheck.explore import tla_model
from kcspec.conformance.selfcheck.explore.explorer import search
from kcspec.conformance.selfcheck.gate.cases import VerifyOptions
from kcspec.conformance.selfcheck.gate.tla import verify_cases
from kcspec.conformance.verdicts import Verdict
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.manifest import load
from kcspec.model.tla.module import generate
from kcspec.spec import codec
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState

from tests.support.paths import SUPPORT

FAKE = SUPPORT / "fakes" / "fake_tlc.py"


@pytest.mark.parametrize(
    "scope",
    [
        "the smallest model of each profile",
        pytest.param("every model", marks=pytest.mark.slow),
    ],
)
def test_verify_with_tlc_crosschecks_every_manifest_model(
    scope: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every manifest model marked for verify is crosschecked (slow tier: each is explored twice, for the listing
    and by the crosscheck). ``make test`` runs the same wiring on the smallest model of each profile; every
    manifest model's TLC count is checked there against the real TLC (``test_tlc_real.py``)."""
    if scope != "every model":
        from kcspec.conformance.selfcheck.gate import tla as gate_tla

        smallest = {
            p: min(
                (e for e in load() if e.profile == p and e.in_verify), key=lambda e: e.distinct_states
            ).name
            for p in ("kafka-2.8", "kafka-1.1")
        }
        chosen = [e for e in load() if not e.in_verify or e.name in smallest.values()]
        monkeypatch.setattr(gate_tla, "load_manifest", lambda: chosen)
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"")
    explore = functools.cache(
        lambda profile, config, *a, **k: search(tla_model.model_space(profile, config), keep_states=True)
    )

    def cached(profile: str, config: ModelConfig, *args: Any, **kwargs: Any) -> Any:
        return explore(profile, config)

    monkeypatch.setattr(tla_model, "explore_model", cached)  # the count checks; the crosscheck explores anew
    listings = tmp_path / "listings"
    listings.mkdir()
    expected = [e for e in load() if e.in_verify and (scope == "every model" or e.name in smallest.values())]
    for e in expected:
        states = explore(e.profile, e.config).states
        assert states is not None  # explored with keep_states=True
        cfg = generate(get_profile(e.profile), e.config).cfg
        name = hashlib.sha256(cfg.encode()).hexdigest()[:16]
        lines = [codec.dumps(s) for s in states if isinstance(s, ClusterState)]
        (listings / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("JAVA_HOME", str(java.parent.parent))
    monkeypatch.setenv("FAKE_TLC_STATES_DIR", str(listings))
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    monkeypatch.delenv("FAKE_TLC_STATES", raising=False)
    opts = VerifyOptions(profiles=("kafka-2.8", "kafka-1.1"), out=tmp_path, tla2tools=str(jar))
    cases = list(verify_cases(opts))
    tlc = {c.name: c for c in cases if c.check == "tlc"}
    assert {e.profile for e in expected} == {"kafka-2.8", "kafka-1.1"}
    assert sorted(n for n in tlc if n.startswith("TLC crosscheck on ")) == sorted(
        f"TLC crosscheck on {e.name} [{e.profile}]" for e in expected
    )
    for e in expected:
        case = tlc[f"TLC crosscheck on {e.name} [{e.profile}]"]
        assert case.status is Verdict.passed, f"{e.name}: {case.message}"
        assert f"{e.distinct_states:,} distinct states" in case.message
    # the liveness cases need a real TLC (tests/integration/tla/test_tlc_liveness_real.py): this fake answers
    # crosschecks only
    others = [c for c in cases if c.check != "tlc-liveness"]
    assert len(cases) - len(others) == 6, "three liveness properties per profile"
    assert all(c.status is Verdict.passed for c in others), [(c.name, c.message) for c in others]
