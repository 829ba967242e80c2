"""The layer rules of ARCHITECTURE.md ("Layers and imports"), as the contracts of ``[tool.importlinter]`` in
pyproject.toml that ``make lint`` checks with ``lint-imports``: spec/ imports nothing above it, reference_impl/ none of
the spec's rules, nothing below the command line imports it (or click), the kit and the maintainers' checks nothing
of the audit, the audit none of the checks, and the kit none of the checks.

The contracts are run here too, on the package laid out as installed (``.ci/import-tree``), together with a copy in
which the kit imports the audit, which they must reject. What a contract cannot see is checked here as well: that
importing the gate of ``kcspec verify`` loads no CLI module, also through imports made at run time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.timing import scaled

CLI_MODULES = ("kcspec.commands", "kcspec.cli", "kcspec.options", "click")
GATE = (
    "kcspec.conformance.selfcheck.gate",
    "kcspec.conformance.selfcheck.gate.cases",
    "kcspec.conformance.selfcheck.gate.checks",
    "kcspec.conformance.selfcheck.gate.reports",
    "kcspec.conformance.selfcheck.gate.tla",
)
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _import_tree(where: Path) -> Path:
    subprocess.run(["bash", str(ROOT / ".ci" / "import-tree"), str(where)], check=True, timeout=scaled(60))
    return where


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS.exists(), f"{LINT_IMPORTS} is missing: install the dev extra (make setup)"
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )


def test_the_layer_contracts_hold(tmp_path: Path) -> None:
    done = _lint_imports(_import_tree(tmp_path / "tree"))
    assert done.returncode == 0, f"lint-imports found broken layer contracts:\n{done.stdout}{done.stderr}"
    analyzed = int(done.stdout.split("Analyzed ", 1)[1].split(" files", 1)[0])
    assert analyzed > 300, (
        f"lint-imports read only {analyzed} files: it does not see the whole package (the import tree)"
    )


def test_the_contracts_reject_a_kit_module_that_imports_the_audit(tmp_path: Path) -> None:
    tree = _import_tree(tmp_path / "tree")
    kit = tree / "kcspec" / "conformance"
    kit.unlink()
    shutil.copytree(ROOT / "conformance", kit, ignore=shutil.ignore_patterns("__pycache__"))
    with (kit / "known.py").open("a", encoding="utf-8") as known:
        known.write("\n\ndef _upward() -> None:\n    from kcspec.audit import verdict  # noqa: F401\n")
    done = _lint_imports(tree)
    assert done.returncode != 0, f"lint-imports accepted the kit importing the audit:\n{done.stdout}"
    assert "kcspec.conformance.known -> kcspec.audit.verdict" in done.stdout, done.stdout
    assert " kept, 1 broken." in done.stdout, done.stdout  # only the contract of the products apart


def test_importing_the_gate_loads_no_cli_module() -> None:
    """Run in a fresh interpreter, so that modules other tests imported do not hide a transitive import."""
    code = (
        "import importlib, sys\n"
        f"for name in {GATE!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if any(m == c or m.startswith(c + '.') for c in {CLI_MODULES!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(120), check=True
    )
    assert out.stdout.strip() == "[]", f"importing the gate loaded CLI modules: {out.stdout.strip()}"
