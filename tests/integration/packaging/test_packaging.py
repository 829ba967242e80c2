"""The package as a user installs it: every folder is discovered, every data file is shipped, the declared
runtime dependencies are exactly what runtime code imports, and the pytest plugin is registered.

The full check (build the sdist and the wheel, install the wheel into a fresh virtualenv, run the installed
tool from outside the repository) needs the package registry and is run by ``make package-check`` in CI;
these tests catch the same mistakes statically, in seconds.
"""

from __future__ import annotations

import ast
import fnmatch
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import ROOT, SUPPORT
from tests.support.timing import scaled

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUP = runpy.run_path(str(ROOT / "setup.py"), run_name="kcspec_setup_under_test")
FOLDERS: dict[str, str] = SETUP["FOLDERS"]

# Distribution name -> the top-level module it provides (where the two differ in more than '-' vs '_').
_MODULE_OF = {"z3-solver": "z3"}


def _module_of(requirement: str) -> str:
    name = requirement.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip()
    return _MODULE_OF.get(name, name.replace("-", "_"))


def _package_folders() -> dict[str, Path]:
    """Every folder that holds installed code or data, by the dotted name it installs as."""
    found: dict[str, Path] = {}
    for name, folder in FOLDERS.items():
        base = ROOT / folder
        for path in [base, *sorted(p for p in base.rglob("*") if p.is_dir())]:
            if "__pycache__" in path.parts or any(part.endswith(".egg-info") for part in path.parts):
                continue
            rel = path.relative_to(base)
            found[".".join([name, *rel.parts])] = path
    return found


def _third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "kcspec"}


def test_every_folder_is_a_discovered_package() -> None:
    discovered = set(SETUP["discover"]())
    missing = sorted(set(_package_folders()) - discovered)
    assert not missing, f"folders that would be left out of the wheel: {missing}"


def test_every_data_file_matches_a_package_data_pattern() -> None:
    patterns: dict[str, list[str]] = PYPROJECT["tool"]["setuptools"]["package-data"]
    unshipped: list[str] = []
    for package, folder in _package_folders().items():
        data = (p for p in folder.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc"))
        for file in sorted(p for p in data if not p.name.startswith(".")):  # .gitignore and such are not data
            ok = False
            for owner, globs in patterns.items():
                if owner == "*" or owner == package:
                    ok |= any(fnmatch.fnmatch(file.name, g) for g in globs)
                elif package.startswith(owner + "."):
                    rel = "/".join([*package[len(owner) + 1 :].split("."), file.name])
                    ok |= any(fnmatch.fnmatch(rel, g) for g in globs)
            if not ok:
                unshipped.append(str(file.relative_to(ROOT)))
    assert not unshipped, f"files in installed folders that no package-data pattern ships: {unshipped}"


def test_runtime_dependencies_are_exactly_what_runtime_code_imports() -> None:
    project = PYPROJECT["project"]
    required = {_module_of(r) for r in project["dependencies"]}
    optional = {
        _module_of(r) for group in ("spark", "tla", "pytest") for r in project["optional-dependencies"][group]
    }
    imported: dict[str, list[str]] = {}
    for folder in FOLDERS.values():
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _third_party_imports(path):
                imported.setdefault(name, []).append(str(path.relative_to(ROOT)))
    undeclared = {n: files[:3] for n, files in imported.items() if n not in required | optional}
    assert not undeclared, f"runtime code imports packages no dependency provides: {undeclared}"
    unused = sorted(required - set(imported))
    assert not unused, f"declared runtime dependencies that no runtime code imports: {unused}"


def test_the_pytest_plugin_is_registered_and_runs_the_vectors(tmp_path: Path) -> None:
    """An implementer's own pytest run picks the plugin up from the installation: ``--kcspec-sut`` alone turns
    the vectors into items, and a controller with a known bug fails them."""
    (tmp_path / "test_own.py").write_text("def test_own():\n    pass\n")
    buggy = f"{sys.executable} {ROOT / 'conformance' / 'examples' / 'buggy_controller.py'}"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--kcspec-level", "elections"]
    clean = subprocess.run(
        [*cmd, "--kcspec-sut", f"{sys.executable} -m kcspec serve-reference"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-3000:]
    assert "1 passed" not in clean.stdout.splitlines()[-1], "the plugin added no vector items"
    broken = subprocess.run(
        [*cmd, "--kcspec-sut", buggy], cwd=tmp_path, capture_output=True, text=True, timeout=scaled(600)
    )
    assert broken.returncode == 1, broken.stdout[-3000:] + broken.stderr[-3000:]
    assert "failed" in broken.stdout.splitlines()[-1]


@pytest.mark.parametrize("spelling", ["-p kcspec.conformance.pytest_plugin", ""])
def test_the_plugin_can_also_be_named_explicitly(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "test_own.py").write_text("def test_own():\n    pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *spelling.split(), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "--kcspec-sut" in run.stdout


def test_the_plugin_does_not_pass_a_run_in_which_no_vector_ran(tmp_path: Path) -> None:
    """A SUT that declares no capability has every vector skipped: that is not a pass (exit 4, NOTHING RAN)."""
    (tmp_path / "test_own.py").write_text("def test_own():\n    pass\n")
    fake = SUPPORT / "fakes" / "fake_sut.py"
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("--kcspec-level", "elections", "--kcspec-sut", f"{sys.executable} {fake} no_capabilities"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert run.returncode == 4, run.stdout[-3000:] + run.stderr[-3000:]
    assert "NOTHING RAN" in run.stdout
