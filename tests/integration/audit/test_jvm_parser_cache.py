"""The cache of the JVM line parser's jar: private to the user (folders 0700), keyed by source, pyspark and
compiler, written atomically and verified before each use. A cached jar whose folder someone else owns or can
write, a folder that is a symbolic link, a jar that does not match its digest or is no jar: never used, the jar
is compiled again."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from kcspec.audit import jvm_parser

pytestmark = pytest.mark.skipif(jvm_parser._javac() is None, reason="no javac")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    jvm_parser.build.cache_clear()
    yield tmp_path / "xdg" / "kcspec"
    jvm_parser.build.cache_clear()


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


def test_same_source_same_bytes(cache: Path) -> None:
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
