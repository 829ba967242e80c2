"""The benchmarks' runner and harness, imported as their scripts import each other (``benchmarks/`` on the path;
``make typecheck`` gives mypy the same path, so both are type-checked as the benchmarks' own modules)."""

from __future__ import annotations

import sys

from tests.support.paths import ROOT

BENCHMARKS = ROOT / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import harness  # noqa: E402
import run  # noqa: E402

__all__ = ["BENCHMARKS", "harness", "run"]
