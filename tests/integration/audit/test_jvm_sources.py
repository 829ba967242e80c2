"""The audit's jar holds every Java source of the package (``jvm_parser.SOURCES``: the line parser and the
history rules' pass), and its cache key covers each of them: a change to any one source builds a new jar."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kcspec.audit import jvm_parser

pytestmark = pytest.mark.skipif(jvm_parser._javac() is None, reason="no javac")


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Copies of the package's sources in use (and a private cache), to change one of them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    copies = []
    for source in jvm_parser.SOURCES:
        copy = tmp_path / "src" / source.name
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, copy)
        copies.append(copy)
    monkeypatch.setattr(jvm_parser, "SOURCES", tuple(copies))
    jvm_parser.build.cache_clear()
    yield copies
    jvm_parser.build.cache_clear()


def _build() -> Path:
    jvm_parser.build.cache_clear()
    jar, why = jvm_parser.build()
    assert jar is not None, why
    return jar


def test_every_source_is_compiled_and_keys_the_jar(sources: list[Path]) -> None:
    names = {s.name for s in sources}
    assert {"LineParser.java", "HistoryRules.java"} <= names
    jar = _build()
    with zipfile.ZipFile(jar) as z:
        classes = set(z.namelist())
    assert {f"kcspec/audit/{n.removesuffix('.java')}.class" for n in names} <= classes
    keys = {jvm_parser.jar_key(sources, "3.5.0", "javac 17")}
    for source in sources:  # one source changed, the others not: another key
        source.write_text(source.read_text() + "\n// changed\n")
        keys.add(jvm_parser.jar_key(sources, "3.5.0", "javac 17"))
    assert len(keys) == len(sources) + 1
    assert jvm_parser.jar_key(sources, "3.5.1", "javac 17") not in keys  # and the pyspark version
    assert jvm_parser.jar_key(sources, "3.5.0", "javac 21") not in keys  # and the compiler
    again = _build()  # the last change built: another jar, in another folder
    assert again.parent != jar.parent
