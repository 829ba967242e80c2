"""Writing outputs safely: a file is written under a temporary name beside it and renamed into place, so a full
disk or an interrupt never leaves a half-written report that reads as complete; a write the system refuses is an
``OSError`` that names the path (``OSError.filename``), which the command line reports in one line with exit 2.

(Here in ``model/`` so that every layer that writes reports can use it without importing upward.)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def with_path(exc: OSError, path: Path | str) -> OSError:
    """``exc`` naming ``path`` (a failed ``write`` carries no file name: ENOSPC is raised by the data, not the
    open)."""
    if exc.filename is not None:
        return exc
    named = OSError(exc.errno, exc.strerror or str(exc), str(path))
    named.__cause__ = exc
    return named


def write_atomically(path: Path, data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` (its folder made first): to a temporary file in the same folder, flushed to
    disk, then renamed over ``path``. On any failure the temporary file is removed, ``path`` is as it was, and
    the ``OSError`` names ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:
        raise with_path(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode(encoding) if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise with_path(exc, path) from None
        raise
