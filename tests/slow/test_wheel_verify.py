"""``pip install . && kcspec verify`` works anywhere: the wheel is built from a copy of the checkout, installed into
a fresh virtualenv, and its ``kcspec verify`` runs a fast subset of the gate — the diagrams check (against the
diagrams the package ships, never skipped), the conformance check (whose ``serve-reference`` subprocess must run
the installed package, not a ``kcspec/`` folder of the working directory) and the spec-vs-reference check — both
in the checkout and in an empty folder.

The fresh virtualenv gets the wheel without its dependencies from the registry: the dependencies are those of
this test's own environment, seen through a ``.pth`` file placed after the virtualenv's own site-packages (where
the wheel's ``kcspec`` is, and which therefore comes first)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SOURCES = (
    "setup.py",
    "pyproject.toml",
    "README.md",
    "kcspec",
    "spec",
    "model",
    "reference_impl",
    "conformance",
    "audit",
    "diagrams",
)
CHECKS = ("spec-vs-reference", "conformance", "diagrams")


def _run(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh virtualenv with the wheel built from this checkout installed."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "node_modules", "*.pyc")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(work / "dist"),
            str(src),
        ],
        work,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next((work / "dist").glob("kcspec-*.whl"))
    env = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    got = _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], work)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work
        ).stdout.strip()
    )
    (site / "zz_kcspec_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = _run(
        [str(python), "-P", "-c", "import kcspec.cli, kcspec.diagrams; print(kcspec.cli.__file__)"], ROOT
    )
    assert where.returncode == 0 and where.stdout.startswith(str(env)), where.stdout + where.stderr
    return env / "bin"


@pytest.mark.parametrize("where", ["checkout", "empty-folder"])
def test_the_installed_wheel_verifies_in_a_checkout_and_anywhere(
    installed: Path, tmp_path: Path, where: str
) -> None:
    cwd = ROOT if where == "checkout" else tmp_path / "empty"
    cwd.mkdir(exist_ok=True)
    report = tmp_path / "verify.json"
    args = [
        str(installed / "kcspec"),
        "verify",
        "--profile",
        "kafka-2.8",
        "--out",
        str(tmp_path / "out"),
        "--json",
        str(report),
    ]
    for check in CHECKS:
        args += ["--check", check]
    result = _run(args, cwd)
    assert result.returncode == 0, (
        f"exit {result.returncode} in the {where}:\n{result.stdout[-4000:]}\n{result.stderr[-3000:]}"
    )
    cases = json.loads(report.read_text())["cases"]
    by_check = {check: [c["status"] for c in cases if c["check"] == check] for check in CHECKS}
    assert all(statuses and set(statuses) == {"passed"} for statuses in by_check.values()), by_check
    diagrams = next(c for c in cases if c["check"] == "diagrams")
    assert str(installed.parent) in diagrams["message"], f"not the shipped diagrams: {diagrams['message']}"


def test_the_shipped_node_example_is_found_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    result = _run([str(installed / "kcspec"), "conformance", "example-sut"], tmp_path)
    assert result.returncode == 0, result.stderr
    path = Path(result.stdout.strip())
    assert path.is_file() and path.name == "sut.js" and str(installed.parent) in str(path), result.stdout
