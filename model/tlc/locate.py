"""Find Java and ``tla2tools.jar``; when either is missing, say how to get it.

The jar comes from ``--tla2tools PATH`` or the ``TLA2TOOLS_JAR`` environment variable; Java from
``JAVA_HOME`` (``$JAVA_HOME/bin/java``) or ``java`` on ``PATH``. Nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

JAR_ENV = "TLA2TOOLS_JAR"

HOW_TO_GET_TLC = (
    "TLC is the model checker in tla2tools.jar. Download tla2tools.jar from the TLA+ project's releases "
    "(github.com/tlaplus/tlaplus/releases) and pass it with --tla2tools PATH or set "
    f"{JAR_ENV}=/path/to/tla2tools.jar."
)
HOW_TO_GET_JAVA = (
    "TLC needs a Java runtime (11 or newer). Install one (e.g. `apt-get install default-jre-headless`) "
    "and put `java` on PATH or set JAVA_HOME."
)


class ToolNotFound(RuntimeError):
    """Java or tla2tools.jar is missing; the message says what was looked at and how to get it."""


@dataclass(frozen=True)
class Toolchain:
    java: Path
    jar: Path


def find_jar(explicit: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The tla2tools.jar to use: ``explicit`` if given, else ``$TLA2TOOLS_JAR``."""
    environ = os.environ if env is None else env
    if explicit is not None:
        source, candidate = "--tla2tools", explicit
    elif environ.get(JAR_ENV):
        source, candidate = JAR_ENV, Path(environ[JAR_ENV])
    else:
        raise ToolNotFound(f"TLC not found: neither --tla2tools nor {JAR_ENV} is set. {HOW_TO_GET_TLC}")
    if not candidate.is_file():
        raise ToolNotFound(
            f"TLC not found: {source} points to {candidate}, which is not a file. {HOW_TO_GET_TLC}"
        )
    return candidate


def find_java(env: Mapping[str, str] | None = None) -> Path:
    """The java executable: ``$JAVA_HOME/bin/java`` if JAVA_HOME is set, else ``java`` on PATH."""
    environ = os.environ if env is None else env
    home = environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise ToolNotFound(f"Java not found: JAVA_HOME={home} has no executable bin/java. {HOW_TO_GET_JAVA}")
    found = shutil.which("java", path=environ.get("PATH", ""))
    if found is None:
        raise ToolNotFound(
            f"Java not found: JAVA_HOME is unset and there is no `java` on PATH. {HOW_TO_GET_JAVA}"
        )
    return Path(found)


def find_toolchain(jar: Path | None = None, env: Mapping[str, str] | None = None) -> Toolchain:
    """Both tools, or ``ToolNotFound`` for the first one missing (the jar is checked first)."""
    found_jar = find_jar(jar, env)
    return Toolchain(java=find_java(env), jar=found_jar)


def tlc_unavailable_reason(jar: Path | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """``None`` when TLC can run, else the reason it cannot (for reporting a check as skipped)."""
    try:
        find_toolchain(jar, env)
    except ToolNotFound as exc:
        return str(exc)
    return None
