"""Where things are, for every tier: the checkout's root and the ``shared/`` folder beside it.

Tests locate files through these constants instead of counting ``Path(__file__).parents[N]``, so that a test file
can move between tiers without its paths breaking.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The checkout (the folder holding ``pyproject.toml``)."""

SHARED = ROOT.parent / "shared"
"""``../shared`` beside the checkout: the semantics document, real logs and TLC fixtures."""

SUPPORT = Path(__file__).resolve().parent
"""This folder: fakes, transcripts and corpora the tests share."""
