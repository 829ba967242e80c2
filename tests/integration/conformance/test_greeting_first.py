"""``kcspec conformance run`` starts and greets the SUT before any vector work: a wrong ``--sut`` is reported at
once (exit 2), with no vector generated or read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.timing import scaled


@pytest.mark.integration
def test_a_wrong_sut_is_reported_before_any_vector(tmp_path: Path) -> None:
    env = {**os.environ, "KCSPEC_VECTOR_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-m", "kcspec", "conformance", "run", "--sut", str(tmp_path / "no-such-sut")],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=tmp_path,
        env=env,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "could not be started" in out and "no-such-sut" in out, out
    assert "vectors:" not in out, out  # nothing generated or read before the SUT answered
    assert not (tmp_path / "cache").exists()
