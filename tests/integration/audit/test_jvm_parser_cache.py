"""The cache of the JVM line parser's jar: private to the user (folders 0700), keyed by source, pyspark and
compiler, written atomically and verified before each use. A cached jar whose folder someone else owns or can
write, a folder that is a symbolic link, a jar that does not match its digest or is no jar: never used, the jar
is compiled again."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from kcspec.audit import jvm_parser

pytestmark = pytest.mark.skipif(jvm_parser._javac() is None, reason="no javac")


@pytest.fixture
def real_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private cache root for the test; every build runs the real ``javac``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    jvm_parser.build.cache_clear()
    yield tmp_path / "xdg" / "kcspec"
    jvm_parser.build.cache_clear()


_COMPILED: list[Path] = []
"""The classes of this worker's first real compilation (``_replaying_javac``)."""


def _replaying_javac(
    real: Callable[..., subprocess.CompletedProcess[str]], store: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``subprocess.run`` for ``build``: the first ``javac`` call of the worker compiles for real and keeps its
    classes; later ones copy those classes into the ``-d`` folder instead of compiling the same sources again
    (seconds of CPU each). Everything ``build`` does around the compiler (the key, the private folders, the jar,
    its digest, the checks before use) runs as it does in a real run."""

    def run(argv: Sequence[str], *args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if "-d" not in argv:
            return real(argv, *args, **kwargs)
        out = Path(argv[list(argv).index("-d") + 1])
        if _COMPILED:
            shutil.copytree(_COMPILED[0], out)
            return subprocess.CompletedProcess(list(argv), 0, "", "")
        done = real(argv, *args, **kwargs)
        if done.returncode == 0:
            shutil.copytree(out, store)
            _COMPILED.append(store)
        return done

    return run


@pytest.fixture
def cache(
    real_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A private cache root; the sources are compiled once per worker (``_replaying_javac``): these tests are about
    the cache's rules, and ``test_same_source_same_bytes`` compiles for real each time."""
    store = tmp_path_factory.getbasetemp() / "jvm-parser-classes"
    monkeypatch.setattr(
        subprocess, "run", _replaying_javac(subprocess.run, store)
    )  # the module jvm_parser calls
    yield real_cache


def _build() -> tuple[Path, str]:
    jvm_parser.build.cache_clear()
    jar, why = jvm_parser.build()
    assert jar is not None, why
    return jar, why


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_jar_is_cached_in_private_folders_and_verified(cache: Path) -> None:
    jar, why = _build()
    assert "compiled now" in why
    assert jar.parent.parent == cache and jar.parent.name.startswith("audit-jvm-")
    assert _mode(cache) == 0o700 and _mode(jar.parent) == 0o700
    digest = (jar.parent / jvm_parser.DIGEST_NAME).read_text().strip()
    assert hashlib.sha256(jar.read_bytes()).hexdigest() == digest
    again, why = _build()
    assert again == jar and "compiled now" not in why


def test_same_source_same_bytes(real_cache: Path) -> None:
    jar, _ = _build()
    first = jar.read_bytes()
    shutil.rmtree(jar.parent)
    again, why = _build()
    assert "compiled now" in why and again.read_bytes() == first


@pytest.mark.parametrize("damage", ["truncated", "not-a-jar", "digest"])
def test_a_corrupt_jar_is_rebuilt_never_used(cache: Path, damage: str) -> None:
    jar, _ = _build()
    good = jar.read_bytes()
    if damage == "truncated":
        jar.write_bytes(good[: len(good) // 2])
    elif damage == "not-a-jar":
        jar.write_bytes(b"x" * len(good))
    else:
        (jar.parent / jvm_parser.DIGEST_NAME).write_text("0" * 64 + "\n")
    assert jvm_parser.verified_jar(jar.parent) is None
    again, why = _build()
    assert "compiled now" in why and jvm_parser.verified_jar(again.parent) == again
    assert again.read_bytes() == good


def test_a_folder_others_can_read_or_write_is_rebuilt(cache: Path) -> None:
    jar, _ = _build()
    jar.parent.chmod(0o775)
    assert jvm_parser.verified_jar(jar.parent) is None
    again, why = _build()
    assert "compiled now" in why and again == jar and _mode(jar.parent) == 0o700


def test_an_older_cache_root_of_the_user_is_made_private(cache: Path) -> None:
    cache.mkdir(parents=True, mode=0o755)
    cache.chmod(0o755)
    jar, _ = _build()
    assert _mode(cache) == 0o700 and jar.parent.parent == cache


def test_a_linked_folder_is_never_followed(cache: Path, tmp_path: Path) -> None:
    jar, _ = _build()
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(jar.parent), elsewhere)
    jar.parent.symlink_to(elsewhere, target_is_directory=True)
    again, why = _build()
    assert "compiled now" in why and not again.parent.is_symlink()
    assert (elsewhere / jvm_parser.JAR_NAME).exists(), "the link's target was touched"


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_of_someone_else_is_never_used(cache: Path) -> None:
    jar, _ = _build()
    os.chown(cache, 65534, 65534)
    again, why = _build()
    assert "compiled now" in why and cache not in again.parents
    assert cache.lstat().st_uid == 65534 and _mode(cache) == 0o700 and jar.exists(), (
        "another user's cache changed"
    )


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_jar_folder_owned_by_someone_else_is_never_used(cache: Path) -> None:
    jar, _ = _build()
    os.chown(jar.parent, 65534, 65534)
    again, why = _build()
    assert "compiled now" in why and cache not in again.parents
    assert jar.parent.lstat().st_uid == 65534 and jar.exists()
