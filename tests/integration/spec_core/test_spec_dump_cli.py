"""``kcspec spec dump``: every action, invariant and procedure of both profiles, the same text in two processes
with different hash seeds (sets, maps and fresh names do not leak their order into it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kcspec.spec.actions import build_actions
from kcspec.spec.invariants import invariants
from kcspec.spec.profiles import PROFILES

from tests.support.timing import scaled


def _dump(out: Path, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    cmd = [sys.executable, "-m", "kcspec", "spec", "dump", "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0, done.stdout + done.stderr
    return out.read_text(encoding="utf-8")


def test_the_dump_is_deterministic_and_names_every_unit_of_both_profiles(tmp_path: Path) -> None:
    a = _dump(tmp_path / "a.txt", "1")
    b = _dump(tmp_path / "b.txt", "2")
    assert a == b, "two runs of 'kcspec spec dump' with different hash seeds differ"
    for name, profile in PROFILES.items():
        section = a.split(f"=== profile {name}\n", 1)[1].split("=== profile", 1)[0]
        for action in build_actions(profile):
            assert f"\n--- action {action} (" in section, f"{name}: action {action} missing from the dump"
        for inv in invariants(profile):
            assert f"\n--- invariant {inv.name} (" in section, f"{name}: invariant {inv.name} missing"
        assert "\n--- procedure " in section


def test_a_bad_profile_is_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kcspec", "spec", "dump", "--profile", "kafka-0.8"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == 2 and "kafka-0.8" in done.stderr, done.stdout + done.stderr
