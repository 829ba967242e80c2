"""The on-disk cache of generated vectors, so that a default ``kcspec conformance run`` does not regenerate them.

Generating the ~2,400 vectors of a profile asks both oracles every input and takes longer than running them.
The cache holds one exported vector directory per key: the kcspec version, the profile and a digest of the
sources the vectors are computed from (the spec, the reference controller, the inputs, the scenarios and the
message types: ``SOURCES``), so that a changed rule in a checkout is never answered from an old cache. It lives
under ``$XDG_CACHE_HOME/kcspec/vectors/`` (``~/.cache`` by default; ``KCSPEC_VECTOR_CACHE`` overrides the folder).
A cache entry is written to a temporary folder and renamed into place, so a run interrupted while writing leaves
no half entry; an entry that cannot be read is regenerated.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from importlib import metadata
from pathlib import Path

from kcspec.conformance.vectors import files
from kcspec.conformance.vectors.model import Vector, VectorError

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "spec",
    "reference_impl",
    "conformance/vectors",
    "conformance/protocol",
    "conformance/scenarios.py",
)
"""What the vectors are computed from, relative to the package root (each a folder of ``.py`` files or a file)."""


def cache_root() -> Path:
    explicit = os.environ.get("KCSPEC_VECTOR_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kcspec" / "vectors"


def _version() -> str:
    try:
        return metadata.version("kcspec")
    except metadata.PackageNotFoundError:
        return "0"


def sources_digest() -> str:
    """A digest of every source file the vectors depend on (path and content)."""
    h = hashlib.sha256()
    for name in SOURCES:
        base = ROOT / name
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base]
        for path in paths:
            if path.is_file():
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def entry_dir(profile: str) -> Path:
    """The cache folder of ``profile`` for this kcspec version and these sources."""
    return cache_root() / f"{_version()}-{profile}-{sources_digest()}"


def load(profile: str) -> list[Vector] | None:
    """The cached vectors of ``profile``, or ``None`` when there are none (or they cannot be read)."""
    where = entry_dir(profile)
    if not where.is_dir():
        return None
    try:
        return files.load_dir(where)
    except (VectorError, OSError):
        return None


def store(profile: str, vectors: list[Vector]) -> Path | None:
    """Write ``vectors`` as the cache entry of ``profile``; the folder, or ``None`` if it cannot be written."""
    where = entry_dir(profile)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=where.parent))
        files.export(vectors, tmp)
        try:
            tmp.rename(where)
        except OSError:  # another run stored it first
            shutil.rmtree(tmp, ignore_errors=True)
        return where
    except OSError:
        return None
