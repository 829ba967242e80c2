"""Cache folders for the tests of kcspec's on-disk caches (the compiled spec, the generated TLA+ modules)."""

from __future__ import annotations

from pathlib import Path

import pytest


def unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``KCSPEC_CACHE_DIR`` below a file, where no folder can be made (as a read-only home would), and
    return that path."""
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("not a folder")
    folder = blocked / "kcspec"
    monkeypatch.setenv("KCSPEC_CACHE_DIR", str(folder))
    return folder
