"""An on-disk cache of the spec's generated code, so that a new process does not compile the spec for seconds.

Compiling a profile's actions (``model/step.py``) generates and compiles about 5 MB of Python: 2–3 CPU seconds on
a quiet machine and ten times that on a busy one, paid again by every process that runs the spec (each
``serve-reference --engine spec``, each worker, each test subprocess). ``compile_unit`` compiles a named set of
expressions as one isolated unit (``codegen.isolated_unit``) and saves what rebuilds it: the constants, the
record makers and update sites, and the marshalled code objects. The next process with the same key loads that
instead of generating code.

The key is a SHA-256 of the unit's kind and profile, the names of its expressions, the Python version (marshal
and byte code change with it) and the text of every module of ``kcspec.spec`` and ``kcspec.model`` (any change to
a rule or to the generator makes a new key). A file that cannot be read, unpickled or replayed is ignored and
written again; a cache that cannot be written (a read-only home) costs only the compilation. The folder is
``$KCSPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/kcspec``, else ``~/.cache/kcspec``; ``KCSPEC_CACHE_DIR=off``
turns the cache off. Files are written to a temporary name and renamed, so concurrent processes (test workers,
explorer workers) never read half a file.

Decision: the cache is trusted like any file of the user's own cache folder (it is unpickled). Each kind of entry
(a unit kind and profile, ``actions-kafka-2.8``…) keeps its ``KEEP`` most recently used files: every change of
``kcspec.spec`` or ``kcspec.model`` (a new version, or a developer's edit) makes new keys, 2–5 MB each, and a day
of development left 260 MB of them. An entry read is touched, an entry written trims the older ones of its kind
(``trim``); a process that loses an entry to another's trim reads nothing and compiles again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import pickle
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kcspec.model import codegen
from kcspec.model.codegen import FastCompiled
from kcspec.spec import lang as L

_FORMAT = 1

KEEP = 4
"""Entries kept per kind (``trim``): the source versions in use at once (a checkout, a second one, an installed
wheel) and some to spare."""

_ENTRY = re.compile(r"^(?P<kind>.+)-[0-9a-f]{32}(?P<ext>\.[a-z]+)$")


def cache_dir() -> Path | None:
    """Where units are saved, or ``None`` when the cache is off."""
    configured = os.environ.get("KCSPEC_CACHE_DIR")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kcspec"


@functools.cache
def source_digest() -> str:
    """A digest of every module of ``kcspec.spec`` and ``kcspec.model`` (their text, by relative path)."""
    import kcspec.model
    import kcspec.spec

    h = hashlib.sha256()
    for package in (kcspec.spec, kcspec.model):
        root = Path(package.__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _key(kind: str, profile: str, names: list[str]) -> str:
    h = hashlib.sha256()
    for part in (str(_FORMAT), kind, profile, sys.version, source_digest(), *names):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def compile_unit(
    kind: str, profile: str, exprs: Mapping[str, tuple[L.Expr, tuple[str, ...]]]
) -> dict[str, FastCompiled]:
    """Each of ``exprs`` (name → expression and its free variables) compiled, loaded from the cache when a unit
    of the same key was saved, else compiled in an isolated unit and saved."""
    names = sorted(exprs)
    folder = cache_dir()
    path = None if folder is None else folder / f"{kind}-{profile}-{_key(kind, profile, names)}.pickle"
    if path is not None:
        loaded = _load(path, exprs)
        if loaded is not None:
            return loaded
    with codegen.isolated_unit() as (_ns, recipes):
        compiled = {name: codegen.compile_fast(expr, free) for name, (expr, free) in exprs.items()}
    if path is not None:
        functions = {name: _function_name(fc) for name, fc in compiled.items()}
        _save(path, functions, recipes)
    return compiled


def _function_name(fc: FastCompiled) -> str:
    return fc.fn.__name__


def _load(path: Path, exprs: Mapping[str, tuple[L.Expr, tuple[str, ...]]]) -> dict[str, FastCompiled] | None:
    try:
        with path.open("rb") as f:
            saved = pickle.load(f)
        if saved.get("format") != _FORMAT or sorted(saved["functions"]) != sorted(exprs):
            return None
        recipes = [("code", marshal.loads(r[1])) if r[0] == "code" else r for r in saved["recipes"]]
        ns = codegen.replay(recipes)
        touch(path)
        return {
            name: FastCompiled.restored(expr, free, ns[saved["functions"][name]])
            for name, (expr, free) in exprs.items()
        }
    except FileNotFoundError:
        return None
    except Exception:  # a damaged or foreign file: compiled again and overwritten
        return None


def _save(path: Path, functions: dict[str, str], recipes: list[codegen.Recipe]) -> None:
    saved: dict[str, Any] = {
        "format": _FORMAT,
        "functions": functions,
        "recipes": [("code", marshal.dumps(r[1])) if r[0] == "code" else r for r in recipes],
    }
    try:
        data = pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a constant that does not pickle: nothing is saved, the unit still works
        return
    save_entry(path, data)


def touch(path: Path) -> None:
    """Mark the entry at ``path`` as just used (``trim`` keeps the most recently used); nothing is raised."""
    with contextlib.suppress(OSError):
        os.utime(path)


def trim(path: Path, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently used entries of ``path``'s kind (the name before its 32-digit key,
    and the same extension), never ``path`` itself; an entry another process removes first, or a folder that
    cannot be listed, is left as it is."""
    m = _ENTRY.match(path.name)
    if m is None:
        return
    kind, ext = m.group("kind"), m.group("ext")
    aged: list[tuple[float, Path]] = []
    with contextlib.suppress(OSError):
        for other in path.parent.iterdir():
            o = _ENTRY.match(other.name)
            if other != path and o is not None and o.group("kind") == kind and o.group("ext") == ext:
                with contextlib.suppress(OSError):
                    aged.append((other.stat().st_mtime, other))
    aged.sort(reverse=True)
    for _, old in aged[max(0, keep - 1) :]:
        with contextlib.suppress(OSError):
            old.unlink()


def save_entry(path: Path, data: bytes, keep: int = KEEP) -> None:
    """``write_atomically``, then ``trim`` the older entries of its kind."""
    write_atomically(path, data)
    trim(path, keep)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` under a temporary name, then rename it, so that concurrent processes never read
    half an entry; a cache that cannot be written costs only the next computation (nothing is raised)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
