"""Package discovery for the folder-to-namespace mapping of pyproject.toml.

The repository's top-level folders ``spec/``, ``model/``, ``reference_impl/``, ``conformance/`` and ``audit/``
install as ``kcspec.spec``, ``kcspec.model``, ... (DESIGN.md: nothing installs a top-level ``model`` or ``spec``);
``diagrams/`` (data only) as ``kcspec.diagrams``, so that ``kcspec verify`` from a wheel checks the diagrams the
package ships.
``[tool.setuptools.packages.find]`` cannot combine discovery with such a mapping, so the packages are
discovered here, folder by folder: every directory is a package (those without ``__init__.py``, such as the
protocol's schema folder and the example SUTs, as namespace packages that carry data), and a new subpackage
needs no edit anywhere. Everything else (metadata, dependencies, package data) is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

FOLDERS = {
    "kcspec": "kcspec",
    "kcspec.spec": "spec",
    "kcspec.model": "model",
    "kcspec.reference_impl": "reference_impl",
    "kcspec.conformance": "conformance",
    "kcspec.audit": "audit",
    "kcspec.diagrams": "diagrams",
}

_NOT_PACKAGES = ("*__pycache__*", "*.egg-info*", "*node_modules*")


def discover() -> list[str]:
    packages: list[str] = []
    for name, folder in FOLDERS.items():
        packages.append(name)
        packages.extend(
            f"{name}.{sub}" for sub in find_namespace_packages(where=folder, exclude=_NOT_PACKAGES)
        )
    return sorted(packages)


if __name__ == "__main__":  # setuptools runs this file as __main__; the tests import discover()
    setup(packages=discover(), package_dir=FOLDERS)
