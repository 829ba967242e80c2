"""The audit's line parser as one JVM function (``LineParser.java``), compiled with the machine's ``javac``.

``LineParser`` evaluates the grammar — the regular expressions, templates, dispatch keys
and field names of ``lines``, handed to its constructor as one string by ``grammar_config`` — with the same
rules, in one call per line. It is compiled at first use against the jars of the installed pyspark and cached
under the user's cache directory (``XDG_CACHE_HOME`` or ``~/.cache``, ``kcspec/audit-jvm-<digest>/``, both
folders mode 0700); the digest covers the Java sources (``SOURCES``: ``HistoryRules.java`` is compiled into
the same jar), the pyspark version and the compiler (its path, size, time and JDK version). A cached jar is
used only if its folder is the user's alone and its bytes match the SHA-256 written beside it (``build``).

``session.make_session`` puts the jar on the driver's class path (and ships it with ``spark.jars``). Without
``javac``, or in a session started elsewhere, ``available`` is false and the audit of Kafka logs stops with
the reason (``status``; ``spark_job.ParserUnavailable``, exit 2): it is the only parser of Kafka logs.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from kcspec.audit import stats
from kcspec.model.kafka_log import lines as g

CLASS_NAME = "kcspec.audit.LineParser"
SOURCES = tuple(sorted(Path(__file__).parent.glob("*.java")))
"""The package's Java sources (``LineParser.java``, ``HistoryRules.java``, …): compiled together into one jar."""
_RECORDS = "\u0003"
_UNITS = "\u0002"
BRACKET_REST = r"^\[Controller id=\d+(?: epoch=\d+)?\] (.{0,64})"
"""The first 64 characters after a ``[Controller id=…]`` / ``[Controller id=… epoch=…]`` prefix."""
LEAD_WIDTH = 64

DEFAULT_HEAD = rf"^\[({g.TS})\] +({g.LEVELS}) +"
"""``lines.DEFAULT_HEAD_REGEX`` with the timestamp and level as groups (the head of ``lines.LAYOUTS[0]``)."""
DEFAULT_TAIL = rf"{g.LOGGER}\)"
"""``lines.LOGGER_TAIL_REGEX`` with the logger as group 1 (the tail of ``lines.LAYOUTS[0]``), matched whole."""

BROKEN_REASONS = ("corrupt-compressed-file", "unreadable-file")
"""Quarantine reasons of the line that stands for the unreadable rest of a file (``LineParser.readStored``):
a truncated or corrupt compressed stream, or any other read error. Its text names the error."""

WRAPPED = "wrapped-record"
"""The reason ``LineParser`` gives the second and later physical lines of a record it re-joined (status
``nolayout``): they are attached to the record as continuation lines (by ``readStored`` itself, or by
``spark_job.resolve_non_records`` after the line-by-line parser)."""

HEAD_COLUMNS = ("layout", "ts", "level", "logger", "message", "kind", "template", "reason")
"""The columns ``LineParser`` returns before the fields of ``lines.ALL_FIELDS`` (then ``status``)."""


def result_schema() -> str:
    """The DDL of ``LineParser``'s result struct."""
    fields = [f"{c}: string" for c in HEAD_COLUMNS]
    fields += [f"{f}: {'int' if f in g.INT_FIELDS else 'string'}" for f in g.ALL_FIELDS]
    return "struct<" + ", ".join([*fields, "status: string"]) + ">"


STORED_FIELDS = (
    "controller_id",
    "controller_epoch",
    "broker",
    "replica",
    "topic",
    "partition",
    "from_state",
    "to_state",
    "leader",
    "leader_epoch",
    "isr",
    "topics",
)
"""The fields of ``lines.ALL_FIELDS`` that the stored parse keeps (what replay and statistics read)."""


def stored_schema() -> str:
    """The DDL of the stored parse (``LineParser.readStored``): ids, line, status, reason, ``ts`` as a long
    ``yyyyMMddHHmmssSSS``, kind, ``STORED_FIELDS``, the text of lines that are not records, the layout
    (``lines.LAYOUTS`` name, ``+prefix`` behind a line prefix), for a continuation or blank line the line of
    the record it belongs to (``owner``), and for a record the first of its continuation lines (``exception``).

    Statuses are final: ``record``, ``continuation``, ``blank`` or ``quarantined`` (with ``reason``), resolved
    while each file is read in order (as ``reference_parser.parse_lines``)."""
    fields = [f"{f} {'int' if f in g.INT_FIELDS else 'string'}" for f in STORED_FIELDS]
    return ", ".join(
        [
            "fid int",
            "hid int",
            "line long",
            "status string",
            "reason string",
            "ts long",
            "kind string",
            *fields,
            "text string",
            "layout string",
            "owner long",
            "exception string",
        ]
    )


def read_stored(spark: Any, files: list[tuple[str, int, int]], slices: int) -> tuple[Any, Any]:
    """The stored parse of ``files`` (path, file id, history id), read and parsed by ``LineParser.readStored``
    in ``slices`` tasks (whole files each): a DataFrame of ``stored_schema``, and the JVM accumulator that
    holds the statistics' cells once the DataFrame has been computed (``cube_text``). Compute it once: a
    second computation would count every line again."""
    from pyspark.sql import DataFrame
    from pyspark.sql.types import _parse_datatype_string

    jvm = spark.sparkContext._jvm
    jtype = spark._jsparkSession.parseDataType(_parse_datatype_string(stored_schema()).json())
    # "fid,hid,length:path" per file, the length in UTF-16 units (Java's): any character may be in a path
    listing = "".join(f"{fid},{hid},{len(p.encode('utf-16-le')) // 2}:{p}" for p, fid, hid in files)
    index = ",".join(str(g.ALL_FIELDS.index(f)) for f in STORED_FIELDS)
    cube_fields = ",".join(str(g.ALL_FIELDS.index(f)) for f in CUBE_FIELDS)
    cube = jvm.kcspec.audit.LineParser.Cube.register(
        spark._jsparkSession, ",".join(stats.TRANSITION_KINDS), ",".join(stats.DELETION_KINDS), cube_fields
    )
    jdf = jvm.kcspec.audit.LineParser.readStored(
        spark._jsparkSession, grammar_config(), listing, index, jtype, slices, cube
    )
    return DataFrame(jdf, spark), cube


CUBE_FIELDS = ("controller_id", "broker", "controller_epoch", "from_state", "to_state", "topics")
"""The fields the JVM reader's cube groups by (``stats.GROUP``), in the order ``LineParser.Cube`` takes them."""


def cube_text(cube: Any) -> str:
    """The cells of ``read_stored``'s accumulator as text (``stats.cells_from_text`` reads it)."""
    return str(cube.text())


def grammar_config() -> str:
    """The grammar of ``lines`` as the string ``LineParser``'s constructor reads (nothing restated here)."""
    head = [
        g.SEPARATOR,
        g.STATE_CHANGE_LOGGER,
        BRACKET_REST,
        g.CONTROLLER_SIDE_STATE_CHANGE,
        g.LEGACY_CONTROLLER_SIDE,
        g.CONTROLLER_ID_PREFIX,
        g.BROKER_ID_PREFIX,
        DEFAULT_HEAD,
        DEFAULT_TAIL,
        g.PREFIX_REGEX,
        g.PREFIXED,
        str(g.WRAP_MAX),
        WRAPPED,
        str(g.PREFIX_MAX),
        g.BLANK_REGEX,
        g.CONTINUATION_REGEX,
        rf"^(?:{g.CONTINUATION_BODY})$",
        g.CONTAINER_PREFIX_REGEX,
    ]
    for layout in g.LAYOUTS:
        roles = ",".join(str(layout.group(r)) for r in g.LAYOUT_ROLES)
        head += [layout.name, layout.regex, roles, layout.head]
    fields = [f"{f}:{'i' if f in g.INT_FIELDS else 'l' if f in g.LIST_FIELDS else 's'}" for f in g.ALL_FIELDS]
    records = [_UNITS.join(head), _UNITS.join(fields)]
    index = {f: j for j, f in enumerate(g.ALL_FIELDS)}
    for key, t in zip(g.DISPATCH, g.TEMPLATES, strict=True):
        prefix = "bracket" if key.prefix in ("new", "ctrl") else key.prefix or ""
        lead = key.lead[:LEAD_WIDTH] if prefix == "bracket" else key.lead
        groups = ",".join(str(index[f]) for f in t.fields)
        records.append(_UNITS.join([t.name, t.kind, t.regex, prefix, lead, key.start, groups]))
    text = _RECORDS.join(records)
    return text


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kcspec"


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


JAR_NAME = "kcspec-audit-parser.jar"
DIGEST_NAME = JAR_NAME + ".sha256"
"""Beside the jar: the SHA-256 of its bytes, written after it; a jar that does not match is never used."""
CLASS_ENTRY = CLASS_NAME.replace(".", "/") + ".class"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""Every entry's time in the jar: the same source and javac give the same bytes (runs that build at once agree)."""
_temp_dirs: list[Path] = []


def _javac_identity(javac: str) -> str:
    """What the jar's cache key says of the compiler: its real path, size and time, and its JDK's ``release``
    file (the JDK's version); without that file, what ``javac -version`` prints (a JVM start, ≈ 0.3 s, which
    the common case no longer pays on every run). ``OSError``/``SubprocessError`` if javac cannot be read or
    run."""
    real = Path(javac).resolve()
    st = real.stat()
    release = real.parent.parent / "release"
    try:
        version = release.read_text(errors="replace")
    except OSError:
        done = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60)
        version = done.stdout + done.stderr
    return f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0{version.strip()}"


def private_dir(path: Path, create: bool) -> bool:
    """Whether ``path`` is a real directory (not a symbolic link) owned by this user that no one else can
    read or write (mode 0700); with ``create``, a missing one is made so first."""
    if create:
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError:
            return False
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def owned_file(path: Path) -> bool:
    """A regular file (not a link) owned by this user, which no one else can write."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o022 == 0


def verified_jar(folder: Path) -> Path | None:
    """The jar in ``folder`` if it may be used: ``folder`` private (``_private_dir``), jar and digest owned by
    this user, the jar's SHA-256 equal to the digest file's, and ``LineParser`` in it; else ``None``."""
    jar, digest = folder / JAR_NAME, folder / DIGEST_NAME
    if not (private_dir(folder, create=False) and owned_file(jar) and owned_file(digest)):
        return None
    try:
        data = jar.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest.read_text().strip():
            return None
        with zipfile.ZipFile(jar) as z:
            if CLASS_ENTRY not in z.namelist():
                return None
    except (OSError, zipfile.BadZipFile):
        return None
    return jar


def cache_folder(name: str) -> Path | None:
    """``<cache>/kcspec/<name>/`` if it and the cache folder are private to the user (``private_dir``; made
    0700 if missing, and the user's own cache folder made private if an older kcspec left it 0755), else
    ``None``. A folder of the user's that others can read or write, or that is not a folder, is removed and
    made anew; one owned by someone else is never used."""
    root = _cache_root()
    with contextlib.suppress(OSError):
        root.parent.mkdir(parents=True, exist_ok=True)
        root.mkdir(mode=0o700)
    with contextlib.suppress(OSError):
        st = root.lstat()
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
            root.chmod(0o700)
    if not private_dir(root, create=False):
        return None
    folder = root / name
    if private_dir(folder, create=True):
        return folder
    try:  # ours but readable or writable by others, or not a folder: not trusted, made anew
        if folder.lstat().st_uid == os.getuid():
            if folder.is_symlink() or not folder.is_dir():
                folder.unlink()
            else:
                shutil.rmtree(folder)
            if private_dir(folder, create=True):
                return folder
    except OSError:
        pass
    return None


def _jar_dir(key: str) -> Path:
    """Where the jar of ``key`` lives: ``<cache>/kcspec/audit-jvm-<key>/`` (``cache_folder``); when the cache
    cannot be private, a fresh private folder of this process (removed at exit)."""
    folder = cache_folder(f"audit-jvm-{key}")
    if folder is not None:
        return folder
    made = Path(tempfile.mkdtemp(prefix="kcspec-audit-jvm-"))
    if not _temp_dirs:
        atexit.register(_remove_temp_dirs)
    _temp_dirs.append(made)
    return made


def _remove_temp_dirs() -> None:
    for folder in _temp_dirs:
        shutil.rmtree(folder, ignore_errors=True)


def _write_jar(classes: Path, folder: Path) -> Path:
    """Write the jar of ``classes`` and its digest into ``folder``, each atomically (a temporary file renamed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", _ZIP_TIME), "Manifest-Version: 1.0\n\n")
        for f in sorted(classes.rglob("*.class")):
            z.writestr(zipfile.ZipInfo(f.relative_to(classes).as_posix(), _ZIP_TIME), f.read_bytes())
    data = buf.getvalue()
    for name, content in ((JAR_NAME, data), (DIGEST_NAME, hashlib.sha256(data).hexdigest().encode() + b"\n")):
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(content)
            os.replace(tmp, folder / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return folder / JAR_NAME


def jar_key(sources: Sequence[Path], pyspark_version: str, compiler: str) -> str:
    """The jar's cache key: every source by name, length and bytes (so no two sets of sources share a key), the
    pyspark version and the compiler's identity."""
    digest = hashlib.sha256()
    for source in sources:
        data = source.read_bytes()
        digest.update(f"{source.name}\0{len(data)}\0".encode() + data)
    digest.update(b"\0" + pyspark_version.encode() + b"\0" + compiler.encode())
    return digest.hexdigest()


@cache
def build() -> tuple[Path | None, str]:
    """``(jar, status)``: the cached jar (compiled now if needed) or ``None`` and why not.

    Decision: the jar is cached per user, keyed by the Java sources (``SOURCES``, each by name and bytes), the
    pyspark version and the compiler (``_javac_identity``), in a folder only the user can read and write, and
    checked before each use (``verified_jar``): a folder someone else owns or can write, a jar that does not
    match its digest or is not a jar, are never used: the jar is compiled again (into a private folder of the
    run when the cache cannot be made private)."""
    javac = _javac()
    if javac is None:
        return None, "javac not found (install a JDK 17+ or set JAVA_HOME)"
    try:
        import pyspark
    except ImportError:
        return None, "pyspark is not installed"
    try:
        identity = _javac_identity(javac)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"javac does not run: {exc}"
    key = jar_key(SOURCES, pyspark.__version__, identity)
    folder = _jar_dir(key[:16])
    jar = verified_jar(folder)
    if jar is not None:
        return jar, f"JVM line parser ({jar})"
    try:
        with tempfile.TemporaryDirectory(prefix="kcspec-javac-") as tmp:
            classes = Path(tmp) / "classes"
            done = subprocess.run(
                [
                    javac,
                    "--release",
                    "17",
                    "-nowarn",
                    "-cp",
                    str(_pyspark_jars() / "*"),
                    "-d",
                    str(classes),
                    *[str(source) for source in SOURCES],
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode != 0:
                return None, f"javac failed: {(done.stdout + done.stderr).strip()[:500]}"
            _write_jar(classes, folder)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not build the JVM line parser: {exc}"
    jar = verified_jar(folder)
    if jar is None:
        return None, f"could not build the JVM line parser: the jar written in {folder} does not verify"
    return jar, f"JVM line parser ({jar}, compiled now)"


def session_settings() -> dict[str, str]:
    """Spark settings that put the jar on the driver's class path and ship it to executors (empty without it)."""
    jar, _ = build()
    if jar is None:
        return {}
    return {"spark.driver.extraClassPath": str(jar), "spark.jars": str(jar)}


def available(spark: Any) -> bool:
    """Whether ``spark``'s JVM can load ``LineParser`` (a session from ``make_session`` with a built jar)."""
    jvm = spark.sparkContext._jvm
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(CLASS_NAME, False, loader)
    except Exception:  # py4j raises its own error types for a missing class
        return False
    return True


def status(spark: Any) -> str:
    """Which parser the audit uses in ``spark``, in words."""
    if available(spark):
        return "JVM line parser"
    jar, why = build()
    if jar is not None:
        why = "this Spark session was started without the JVM line parser's jar"
    return (
        f"the JVM line parser is not available ({why}): the audit of Kafka logs needs a JDK's javac "
        "(Java 17; JAVA_HOME or PATH)"
    )


def parse_column(spark: Any, text: Any) -> Any:
    """A column with ``LineParser``'s result struct (``result_schema``) for the string column ``text``."""
    from pyspark.sql.classic.column import Column
    from pyspark.sql.types import _parse_datatype_string

    jvm = spark.sparkContext._jvm
    jtype = spark._jsparkSession.parseDataType(_parse_datatype_string(result_schema()).json())
    return Column(jvm.kcspec.audit.LineParser.parse(grammar_config(), jtype, text._jc))
