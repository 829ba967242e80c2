"""The command line is the top layer: nothing under ``spec/``, ``model/``, ``reference_impl/``, ``conformance/`` or
``audit/`` (the gate of ``kcspec verify`` included) imports ``kcspec.commands``, ``kcspec.cli``, ``kcspec.options`` or
click; and the kit for implementers (``conformance/`` and its subpackages other than ``selfcheck/``) imports
neither the checks of kcspec itself (``conformance/selfcheck/``) nor the Spark audit (``audit/``).

Every import statement counts, also those inside functions (the checks import lazily), so a violation is found
whether or not a test happens to run the function.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.timing import scaled

REPO = ROOT
BELOW_THE_CLI = ("spec", "model", "reference_impl", "conformance", "audit")
CLI_MODULES = ("kcspec.commands", "kcspec.cli", "kcspec.options", "click")
KIT = "conformance"
ABOVE_THE_KIT = ("kcspec.conformance.selfcheck", "kcspec.audit")
GATE = (
    "kcspec.conformance.selfcheck.gate",
    "kcspec.conformance.selfcheck.gate.cases",
    "kcspec.conformance.selfcheck.gate.checks",
    "kcspec.conformance.selfcheck.gate.reports",
    "kcspec.conformance.selfcheck.gate.tla",
)


def _imported(source: str, filename: str) -> list[tuple[int, str]]:
    """Every module an import statement of ``source`` names (``from kcspec import cli`` names ``kcspec.cli``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return sorted(found)


def _is_cli(module: str) -> bool:
    return any(module == cli or module.startswith(cli + ".") for cli in CLI_MODULES)


def _cli_imports(source: str, filename: str) -> list[str]:
    return [
        f"{filename}:{line}: imports {name}" for line, name in _imported(source, filename) if _is_cli(name)
    ]


def _is_above_the_kit(module: str) -> bool:
    return any(module == above or module.startswith(above + ".") for above in ABOVE_THE_KIT)


def _upward_imports(source: str, filename: str) -> list[str]:
    return [
        f"{filename}:{line}: imports {name}"
        for line, name in _imported(source, filename)
        if _is_above_the_kit(name)
    ]


def _kit_modules() -> list[Path]:
    """Every module of the kit: ``conformance/`` without ``selfcheck/``."""
    root = REPO / KIT
    return [p for p in sorted(root.rglob("*.py")) if not p.is_relative_to(root / "selfcheck")]


def test_the_detector_finds_cli_imports_in_every_form() -> None:
    source = (
        "import click\n"
        "from kcspec import cli\n"
        "def f():\n"
        "    from kcspec.commands.explore import describe_trace\n"
        "from kcspec.options import profile\n"
        "from kcspec.conformance.runner import run\n"
    )
    assert _cli_imports(source, "x.py") == [
        "x.py:1: imports click",
        "x.py:2: imports kcspec.cli",
        "x.py:4: imports kcspec.commands.explore",
        "x.py:4: imports kcspec.commands.explore.describe_trace",
        "x.py:5: imports kcspec.options",
        "x.py:5: imports kcspec.options.profile",
    ]


def test_no_module_below_the_cli_imports_it() -> None:
    problems: list[str] = []
    checked = 0
    for folder in BELOW_THE_CLI:
        for path in sorted((REPO / folder).rglob("*.py")):
            checked += 1
            problems += _cli_imports(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    assert checked > 200, (
        f"only {checked} modules found under {BELOW_THE_CLI}: is the layout as ARCHITECTURE.md says?"
    )
    assert not problems, "the command line is imported from below it:\n" + "\n".join(problems)


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


def test_the_detector_finds_imports_from_the_kit_upward() -> None:
    source = (
        "from kcspec.conformance.selfcheck.explore.events import candidates\n"
        "def f():\n"
        "    import kcspec.audit.lines\n"
        "from kcspec.conformance import selfcheck\n"
        "from kcspec.conformance.runner import run\n"
        "from kcspec.auditing import x\n"
    )
    assert _upward_imports(source, "x.py") == [
        "x.py:1: imports kcspec.conformance.selfcheck.explore.events",
        "x.py:1: imports kcspec.conformance.selfcheck.explore.events.candidates",
        "x.py:3: imports kcspec.audit.lines",
        "x.py:4: imports kcspec.conformance.selfcheck",
    ]


def test_the_kit_imports_neither_selfcheck_nor_the_audit() -> None:
    """The kit is what implementers install and import: it must not pull in kcspec's own checks or the audit."""
    modules = _kit_modules()
    assert len(modules) > 30, (
        f"only {len(modules)} modules of the kit found under {KIT}/: is the layout as ARCHITECTURE.md says?"
    )
    assert (
        REPO / KIT / "differential.py" in modules
        and REPO / KIT / "examples" / "mutant_controller.py" in modules
    )
    problems: list[str] = []
    for path in modules:
        problems += _upward_imports(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    assert not problems, (
        "the kit for implementers imports from conformance/selfcheck/ or audit/ (move what it needs\n"
        "into the kit or below it, as ARCHITECTURE.md's 'Layers and imports' says):\n" + "\n".join(problems)
    )
