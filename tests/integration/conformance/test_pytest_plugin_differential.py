"""The pytest plugin's differential part: at level controller, each divergence group is one test item."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.timing import scaled

EXAMPLE = ROOT / "conformance" / "examples" / "mutant_controller.py"


@pytest.mark.integration
def test_a_session_mutant_fails_one_differential_item_per_group(tmp_path: Path) -> None:
    (tmp_path / "test_empty.py").write_text("")
    temp = tmp_path / "tmp"  # where the plugin keeps the divergences' traces (not the machine's /tmp)
    temp.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "kcspec.conformance.pytest_plugin",
            "--kcspec-sut",
            f"{sys.executable} {EXAMPLE} mutant-live-brokers-never-shrink",
            "--kcspec-level",
            "controller",
            "--kcspec-differential",
            "120",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=scaled(900),
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    out = result.stdout
    assert result.returncode == 1, out[-3000:] + result.stderr[-2000:]
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    # every vector passes this mutant: the failures are the differential's groups, at most 3 for one bug
    assert 1 <= len(failed) <= 3 and all(".differential." in line for line in failed), failed
    # the divergences' traces are kept for the user to read
    assert list(temp.glob("kcspec-traces-*/*.json")), sorted(p.name for p in temp.rglob("*"))
