"""DESIGN.md rule 2: ``reference_impl`` imports only the spec's vocabulary, never its rules or the model."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.support.paths import ROOT

REFERENCE_IMPL = ROOT / "reference_impl"
ALLOWED_SPEC = {
    "kcspec.spec.vocabulary",
    "kcspec.spec.state",
    "kcspec.spec.events",
    "kcspec.spec.requests",
    "kcspec.spec.fmap",
    "kcspec.spec.codec",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                out.append((node.lineno, "." * node.level + (node.module or "")))
            else:
                base = node.module or ""
                out.append((node.lineno, base))
                if base == "kcspec.spec":
                    out.extend((node.lineno, f"kcspec.spec.{alias.name}") for alias in node.names)
    return out


def _allowed(name: str) -> bool:
    if name == "__future__" or name.split(".")[0] in sys.stdlib_module_names:
        return True
    if name.startswith("kcspec.reference_impl"):
        return True
    return name in ALLOWED_SPEC


def test_reference_impl_imports_only_the_vocabulary() -> None:
    modules = sorted(REFERENCE_IMPL.glob("*.py"))
    assert modules, f"no modules found under {REFERENCE_IMPL}"
    bad = [
        f"{path.name}:{line} imports {name}"
        for path in modules
        for line, name in _imports(path)
        if not _allowed(name)
    ]
    assert not bad, (
        "reference_impl must import only " + ", ".join(sorted(ALLOWED_SPEC)) + ":\n" + "\n".join(bad)
    )


def test_the_checker_rejects_a_rule_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from kcspec.spec import tables\nimport kcspec.model.step\nfrom kcspec.spec.events import X\n"
    )
    names = [name for _, name in _imports(module)]
    rejected = [n for n in names if not _allowed(n)]
    assert rejected == ["kcspec.spec", "kcspec.spec.tables", "kcspec.model.step"] or set(rejected) >= {
        "kcspec.spec.tables",
        "kcspec.model.step",
    }, rejected
