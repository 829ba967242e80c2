"""An on-disk cache of the generated TLA+ modules of the built-in profiles, so that a new process does not
generate the same module again.

Generating a profile's module (``module.generate``: the rules anti-unified, the proof that every copy is its
operator's instance, the layout, the semantic checks) costs 5–10 CPU seconds (about 1 once the profile's
rules are generalised: ``generalised.py`` keeps them per profile), and the text is a function of the
profile, the model (``ModelConfig``) and kcspec's own source only. Every ``kcspec tla check``, ``crosscheck`` and
``export`` and every ``kcspec verify`` paid it again. The key is a SHA-256 of this format's number, the profile's
name, the model's fields, the text of every module of ``kcspec.spec`` and ``kcspec.model``
(``codecache.source_digest``: any change to a rule or to the generator makes a new key), and whether the TLA+
parser was installed (a module is saved only when ``generate`` could run its semantic checks on it, so a module
saved without them is never handed to a process that would have checked it).

The entry is JSON (the module's text, configurations and line origins), written to a temporary name and renamed,
so concurrent processes never read half a file; a file that cannot be read or does not have the expected shape is
ignored and written again. The folder is ``codecache.cache_dir()`` (``KCSPEC_CACHE_DIR=off`` turns every cache
of kcspec off). About 1 MB per profile, model and kcspec source version; the ``KEEP`` most recently used modules of
each profile are kept (``codecache.trim``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

from kcspec.model.codecache import cache_dir, save_entry, source_digest, touch
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.module import GeneratedModule, LineOrigin

_FORMAT = 1


KEEP = 48
"""Modules kept per profile (``codecache.trim``): one per model (the manifest's, the crosscheck's default, a
user's) and source version."""


def parser_installed() -> bool:
    """Whether ``generate`` can run the semantic checks that need the TLA+ parser (``sany_checks``)."""
    return all(importlib.util.find_spec(m) is not None for m in ("tree_sitter", "tree_sitter_tlaplus"))


def entry_path(profile: str, config: ModelConfig) -> Path | None:
    """The cache file of ``profile``'s module for ``config``, or ``None`` when the cache is off."""
    folder = cache_dir()
    if folder is None:
        return None
    h = hashlib.sha256()
    fields = json.dumps(dataclasses.asdict(config), sort_keys=True)
    for part in (str(_FORMAT), profile, fields, source_digest(), str(parser_installed())):
        h.update(part.encode())
        h.update(b"\0")
    return folder / f"tla-module-{profile}-{h.hexdigest()[:32]}.json"


def load(profile: str, config: ModelConfig) -> GeneratedModule | None:
    """The saved module, or ``None`` (no entry, the cache off, or an entry that does not read back)."""
    path = entry_path(profile, config)
    if path is None:
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            return None
        origins = tuple(LineOrigin(d, r, s) for d, r, s in data["origins"])
        module = GeneratedModule(
            name=str(data["name"]),
            tla=str(data["tla"]),
            cfg=str(data["cfg"]),
            origins=origins,
            liveness_cfg=str(data["liveness_cfg"]),
            kind_checks=tuple((str(k), int(n)) for k, n in data["kind_checks"]),
        )
    except FileNotFoundError:
        return None
    except Exception:  # a damaged or foreign file: generated again and overwritten
        return None
    if len(module.origins) != module.tla.count("\n"):
        return None
    touch(path)
    return module


def save(profile: str, config: ModelConfig, module: GeneratedModule) -> None:
    """Save ``module``; a cache that cannot be written costs only the next generation."""
    if not parser_installed():
        return
    path = entry_path(profile, config)
    if path is None:
        return
    data = {
        "format": _FORMAT,
        "name": module.name,
        "tla": module.tla,
        "cfg": module.cfg,
        "origins": [[o.definition, o.rule, o.span] for o in module.origins],
        "liveness_cfg": module.liveness_cfg,
        "kind_checks": [list(c) for c in module.kind_checks],
    }
    save_entry(path, json.dumps(data).encode("utf-8"), KEEP)
