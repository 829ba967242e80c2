"""The audit's line parser as one JVM function (``LineParser.java``), compiled with the machine's ``javac``.

``LineParser`` evaluates the grammar — the regular expressions, templates, dispatch keys
and field names of ``lines``, handed to its constructor as one string by ``grammar_config`` — with the same
rules, in one call per line. It is compiled at first use against the jars of the installed pyspark and cached
under the user's cache directory (``XDG_CACHE_HOME`` or ``~/.cache``, ``kcspec/audit-jvm-<digest>/``); the
digest covers the Java source, the pyspark version and the ``javac`` version.

``session.make_session`` puts the jar on the driver's class path (and ships it with ``spark.jars``). Without
``javac``, or in a session started elsewhere, ``available`` is false and the audit of Kafka logs stops with
the reason (``status``; ``spark_job.ParserUnavailable``, exit 2): it is the only parser of Kafka logs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

from kcspec.conformance.audit import lines as g
from kcspec.conformance.audit import stats

CLASS_NAME = "kcspec.audit.LineParser"
SOURCE = Path(__file__).with_name("LineParser.java")
_RECORDS = "\u0003"
_UNITS = "\u0002"
BRACKET_REST = r"^\[Controller id=\d+(?: epoch=\d+)?\] (.{0,64})"
"""The first 64 characters after a ``[Controller id=…]`` / ``[Controller id=… epoch=…]`` prefix."""
LEAD_WIDTH = 64

DEFAULT_HEAD = rf"^\[({g.TS})\] ({g.LEVELS}) "
"""``lines.DEFAULT_HEAD_REGEX`` with the timestamp and level as groups (the head of ``lines.LAYOUTS[0]``)."""
DEFAULT_TAIL = rf"{g.LOGGER}\)"
"""``lines.LOGGER_TAIL_REGEX`` with the logger as group 1 (the tail of ``lines.LAYOUTS[0]``), matched whole."""

BROKEN_REASONS = ("corrupt-compressed-file", "unreadable-file")
"""Quarantine reasons of the line that stands for the unreadable rest of a file (``LineParser.readStored``):
a truncated or corrupt compressed stream, or any other read error. Its text names the error."""

WRAPPED = "wrapped-record"
"""The reason ``LineParser.readStored`` gives the second and later physical lines of a record it re-joined
(status ``nolayout``): ``spark_job.resolve_non_records`` attaches them to the record as continuation lines."""

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
    ``yyyyMMddHHmmssSSS``, kind, ``STORED_FIELDS``, the text of lines that are not records, and the layout
    (``lines.LAYOUTS`` name, ``+prefix`` behind a line prefix)."""
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
        spark._jsparkSession, ",".join(stats.TRANSITION_KINDS), stats.COMPLETED, cube_fields
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


@cache
def build() -> tuple[Path | None, str]:
    """``(jar, status)``: the cached jar (compiled now if needed) or ``None`` and why not."""
    javac = _javac()
    if javac is None:
        return None, "javac not found (install a JDK 17+ or set JAVA_HOME)"
    try:
        import pyspark
    except ImportError:
        return None, "pyspark is not installed"
    try:
        version = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60)
        javac_version = (version.stdout + version.stderr).strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"javac does not run: {exc}"
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + pyspark.__version__.encode() + javac_version.encode()).hexdigest()[:16]
    jar = _cache_root() / f"audit-jvm-{digest}" / "kcspec-audit-parser.jar"
    if jar.is_file():
        return jar, f"JVM line parser ({jar})"
    try:
        jar.parent.mkdir(parents=True, exist_ok=True)
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
                    str(SOURCE),
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode != 0:
                return None, f"javac failed: {(done.stdout + done.stderr).strip()[:500]}"
            partial = jar.with_suffix(f".{os.getpid()}.tmp")
            with zipfile.ZipFile(partial, "w") as z:
                z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n\n")
                for f in sorted(classes.rglob("*.class")):
                    z.write(f, f.relative_to(classes).as_posix())
            partial.replace(jar)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not build the JVM line parser: {exc}"
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
