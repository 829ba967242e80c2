"""The TLA+ modules of the manifest's small models, committed under ``docs/tla/`` and checked for staleness.

A change to a rule of ``spec/`` shows its TLA+ diff in review: each model of ``state_counts.json`` has a folder
``docs/tla/<model>/`` with the generated ``<Module>.tla``, its ``.cfg`` and ``_liveness.cfg`` — exactly
what ``kcspec tla export`` writes for that model (the line-to-rule ``.map.json`` is left out: it is derived, and
every operator's comment already cites its rule's § and the line of ``spec/`` that writes it).

``kcspec tla modules`` rewrites the folder; ``kcspec tla modules --check`` (run by the tests) fails when a file is
stale, missing or left over from a model that is no longer in the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kcspec.model.tla.manifest import Expected
from kcspec.model.tla.manifest import load as load_manifest
from kcspec.model.tla.module import generate
from kcspec.spec.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
"""The checkout's root (the folder holding ``model/``); in an installed package, the package's folder."""

MODULES = ROOT / "docs" / "tla"
"""The committed modules' folder in a checkout: beside ``docs/rules.md``, outside the installed packages (a wheel
ships no modules: they are review material, and ``kcspec tla export`` writes any model's)."""


def expected_files(entries: tuple[Expected, ...] | None = None) -> dict[str, str]:
    """Relative path → text of every committed file, generated from the spec now."""
    out: dict[str, str] = {}
    for entry in load_manifest() if entries is None else entries:
        module = generate(get_profile(entry.profile), entry.config)
        base = f"{entry.name}/{module.name}"
        out[f"{base}.tla"] = module.tla
        out[f"{base}.cfg"] = module.cfg
        out[f"{base}_liveness.cfg"] = module.liveness_cfg
    return out


@dataclass(frozen=True)
class Staleness:
    """What differs between a folder and the modules the spec generates now (relative paths)."""

    stale: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    checked: int

    @property
    def up_to_date(self) -> bool:
        return not (self.stale or self.missing or self.extra)

    def lines(self) -> list[str]:
        return [
            *(f"stale: {p}" for p in self.stale),
            *(f"missing: {p}" for p in self.missing),
            *(f"not a manifest model's file: {p}" for p in self.extra),
        ]


def _present(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def check(folder: Path = MODULES, expected: Mapping[str, str] | None = None) -> Staleness:
    """Compare ``folder`` with the generated files (byte for byte, UTF-8)."""
    want = expected_files() if expected is None else dict(expected)
    have = _present(folder)
    stale = sorted(p for p in want if p in have and (folder / p).read_text(encoding="utf-8") != want[p])
    return Staleness(
        stale=tuple(stale),
        missing=tuple(sorted(set(want) - have)),
        extra=tuple(sorted(have - set(want))),
        checked=len(want),
    )


def write(folder: Path = MODULES, expected: Mapping[str, str] | None = None) -> list[Path]:
    """Write every generated file into ``folder`` and remove the files of models no longer in the manifest;
    the paths written or removed."""
    want = expected_files() if expected is None else dict(expected)
    changed: list[Path] = []
    for rel in sorted(_present(folder) - set(want)):
        (folder / rel).unlink()
        changed.append(folder / rel)
    for rel, text in sorted(want.items()):
        path = folder / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(path)
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    return changed


def module_path(model: str, module_name: str, folder: Path = MODULES) -> Path:
    """Where the committed module of the manifest model ``model`` is (it may not exist: an installed package)."""
    return folder / model / f"{module_name}.tla"


__all__ = ["MODULES", "Staleness", "check", "expected_files", "module_path", "write"]
