"""A class-data sharing archive (AppCDS) for the driver JVM of a small local audit, and one for the local
engine's JVM (``local_engine``): Spark's classes, parsed and verified once, mapped from a file by later runs.

Decision: a small audit's driver JVM spends about half of its start-up CPU loading and verifying the classes of
Spark, Hadoop, Parquet and Scala (≈ 9,000). HotSpot can write the classes a run loaded into an archive when it
exits (``-XX:ArchiveClassesAtExit``) and map them at a later start (``-XX:SharedArchiveFile``). Measured with
the audit of the 10,224-line simulated cluster (C1 only, 2 cores, load 7.7–8.5): the session's start-up 4.3 →
2.0–2.2 JVM CPU-s, the whole run's JVM 14.5–15.8 → 9.7–11.2 CPU-s; the same outputs.

How, so that an archive never breaks a run:

* Everything lives in ``<cache>/kcspec/spark-cds/`` (the cache of ``jvm_parser``): a folder of the user alone
  (0700, owned, not a link, checked at every use), or no archive at all.
* The archive's name carries a key of what it depends on (the ``java`` the launcher runs, its JDK's ``release``
  file, pyspark's version and jars folder, the JVM options) and its size: another JDK or Spark never finds it,
  a shortened file is not used. The JVM itself refuses (and runs on without it) an archive whose class path or
  JVM does not match.
* A run with no archive has its JVM write one at exit under a temporary name (``.partial``) and records the
  JVM's process id beside it. A later run promotes it only once that JVM has ended and a separate ``java
  -version`` with ``-XX:+VerifySharedSpaces`` (a checksum of the whole file) mapped it and exited 0: a file cut
  short by a killed JVM would crash the JVM that maps it, so it is removed instead. Archives of other keys:
  the two newest promoted ones are kept, and a finished ``.partial`` over an hour old is removed.
* The local engine's JVM (role ``local``; the driver's is ``driver``) has archives of its own, under their own
  key: its class path (the parser's jar and pyspark's jars) and options are not the driver's. Decision
  (measured on a folder of 5,000 rotated files, C1 only, load 4): it loads about 3,300 classes from the jars;
  with them mapped its CPU 11.2 → 10.8 s and 11.0 → 10.1 s (two rounds), the same outputs. Its JVM writes the archive when
  its standard input closes, and ``local_engine`` then waits for it to end (see ``LocalJvm``).
* The class path must be the same at every run, so such a session's ``SPARK_CONF_DIR`` (on the class path) is
  an empty private folder of this cache (``conf``), not the process's own folder; the log4j2 configuration is
  given to the JVM by its path (``-Dlog4j2.configurationFile``), and the JVM's log still goes to the process's
  folder. A ``SPARK_CONF_DIR`` the user set is kept, without an archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kcspec.audit import jvm_parser

FOLDER = "spark-cds"
OPT_OUT = "KCSPEC_AUDIT_CLASS_CACHE"
"""Set to ``0`` (or ``off``/``no``/``false``) to run without an archive: none is written, none is used."""
PARTIAL = ".partial"
ABANDONED_SECONDS = 3600.0
"""A ``.partial`` archive whose JVM never recorded its process id is removed after this long."""


@dataclass(frozen=True)
class Plan:
    """What a JVM gets: extra JVM options, the ``SPARK_CONF_DIR`` to use (a driver's only), what to do once the
    JVM runs (``launched(pid)``: record the process id of a JVM that writes an archive), and ``writes``: whether
    the JVM writes an archive when it ends."""

    options: tuple[str, ...]
    conf_dir: Path
    launched: Callable[[int], None]
    writes: bool = False


def _java() -> str | None:
    """The ``java`` that Spark's launcher runs (``JAVA_HOME/bin/java``, else the one on ``PATH``)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def _identity(java: str) -> str:
    real = Path(java).resolve()
    st = real.stat()
    try:
        release = (real.parent.parent / "release").read_text(errors="replace")
    except OSError:
        release = ""
    return f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0{release.strip()}"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _maps(java: str, archive: Path, options: tuple[str, ...]) -> bool:
    """Whether a separate ``java -version`` maps every region of ``archive`` and their checksums hold
    (``-XX:+VerifySharedSpaces``; its class path is not this one, which the JVM checks only after that). A file
    cut short crashes it; a damaged one fails the checksum; one that is no archive maps nothing."""
    crash_report = archive.with_name(archive.name + ".hs_err")  # not in the working directory
    try:
        done = subprocess.run(
            [
                java,
                *options,
                f"-XX:SharedArchiveFile={archive}",
                "-XX:+VerifySharedSpaces",
                "-Xlog:cds=info",
                f"-XX:ErrorFile={crash_report}",
                "-XX:-CreateCoredumpOnCrash",
                "-version",
            ],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        crash_report.unlink(missing_ok=True)
    log = done.stdout + done.stderr
    mapped = all(f"Mapped dynamic region #{i}" in log for i in range(3))
    return done.returncode == 0 and mapped and "Checksum verification failed" not in log


def _writer_ended(pid_file: Path) -> bool:
    """Whether the JVM whose process id ``pid_file`` (the user's own) records has ended; ``OSError`` or
    ``ValueError`` when the file cannot be read as one."""
    if not jvm_parser.owned_file(pid_file):
        return False
    pid = int(pid_file.read_text().strip() or "0")
    return not (pid > 0 and _running(pid))


def _promote(java: str, folder: Path, stem: str, options: tuple[str, ...]) -> Path | None:
    """Promote a finished ``.partial`` archive of ``stem`` (its JVM has ended) that maps (``_maps``) to
    ``<stem>-<size>.jsa``; remove those that do not, and what abandoned runs left. The archive promoted."""
    promoted = None
    for pid_file in sorted(folder.glob(f"{stem}.*{PARTIAL}.pid")):
        partial = pid_file.with_name(pid_file.name[: -len(".pid")])
        try:
            if not _writer_ended(pid_file):
                continue  # its JVM still runs (or is writing the archive), or the file is not the user's
            if promoted is None and jvm_parser.owned_file(partial):
                size = partial.lstat().st_size
                if size > 0 and _maps(java, partial, options):
                    promoted = folder / f"{stem}-{size}.jsa"
                    os.replace(partial, promoted)
                    _prune(folder, promoted)
            partial.unlink(missing_ok=True)
            pid_file.unlink()
        except (OSError, ValueError):
            continue
    for partial in folder.glob(f"{stem}.*{PARTIAL}"):  # its run ended before its JVM's id was recorded
        with contextlib.suppress(OSError):
            old = time.time() - partial.lstat().st_mtime > ABANDONED_SECONDS
            if (
                old
                and jvm_parser.owned_file(partial)
                and not partial.with_name(partial.name + ".pid").exists()
            ):
                partial.unlink()
    return promoted


def _drop_other_keys_partials(folder: Path, stem: str, role: str) -> None:
    """Remove the ``.partial`` archives (≈ 175 MB each) of keys other than ``stem`` whose JVM has ended and that
    are over ``ABANDONED_SECONDS`` old, with their process-id files.

    Only a run with the same key promotes a partial, and the key changes with the parser's jar, pyspark, the JDK
    or the JVM options: after an upgrade the partial of the old key would stay forever. Decision: one that is
    still there an hour after it was written is taken as orphaned; if a run of another installation sharing this
    cache wanted it after all, that run writes a new one (it runs once without an archive)."""
    now = time.time()
    for partial in folder.glob(f"{role}-*{PARTIAL}"):
        if partial.name.startswith(f"{stem}."):
            continue
        pid_file = partial.with_name(partial.name + ".pid")
        with contextlib.suppress(OSError, ValueError):
            if now - partial.lstat().st_mtime <= ABANDONED_SECONDS or not jvm_parser.owned_file(partial):
                continue
            if pid_file.exists() and not _writer_ended(pid_file):
                continue
            partial.unlink()
            pid_file.unlink(missing_ok=True)


KEEP = 2
"""Archives kept (≈ 185 MB each): the one just promoted and the newest other (say another pyspark's)."""


def _prune(folder: Path, promoted: Path) -> None:
    """Remove the user's archives of ``promoted``'s role beyond the ``KEEP`` newest (by modification time),
    never ``promoted``."""
    role = promoted.name.split("-", 1)[0]
    archives = [p for p in folder.glob(f"{role}-*.jsa") if p != promoted and jvm_parser.owned_file(p)]
    archives.sort(key=lambda p: p.lstat().st_mtime, reverse=True)
    for old in archives[KEEP - 1 :]:
        with contextlib.suppress(OSError):
            old.unlink()


def _usable(folder: Path, stem: str) -> Path | None:
    """A promoted archive of ``stem`` owned by the user whose size is the one in its name."""
    for archive in sorted(folder.glob(f"{stem}-*.jsa")):
        size = archive.name[len(stem) + 1 : -len(".jsa")]
        try:
            if size.isdigit() and jvm_parser.owned_file(archive) and archive.lstat().st_size == int(size):
                return archive
        except OSError:
            continue
    return None


def opted_out() -> bool:
    """Whether the user turned the archive off (``OPT_OUT`` set to 0, off, no or false)."""
    return os.environ.get(OPT_OUT, "").strip().lower() in {"0", "off", "no", "false"}


ROLES = ("driver", "local")
"""The JVMs with archives of their own: a small local session's driver, and the local engine's JVM."""


def plan(options: tuple[str, ...], role: str = "driver") -> Plan | None:
    """The archive's part of a small local session whose driver JVM gets ``options`` (``role`` ``local``: of
    the local engine's JVM, whose class path holds no ``SPARK_CONF_DIR``); ``None``: no archive (no ``java``, a
    ``SPARK_CONF_DIR`` set by the user for the driver, ``KCSPEC_AUDIT_CLASS_CACHE=0``, or a cache that is not
    the user's alone)."""
    if role not in ROLES:
        raise ValueError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    if (role == "driver" and "SPARK_CONF_DIR" in os.environ) or opted_out():
        return None
    java = _java()
    jar, _ = jvm_parser.build()
    if java is None or jar is None:
        return None
    try:
        import pyspark

        identity = _identity(java)
    except (ImportError, OSError):
        return None
    folder = jvm_parser.cache_folder(FOLDER)
    if folder is None:
        return None
    conf = folder / "conf"
    if role == "driver" and (not jvm_parser.private_dir(conf, create=True) or any(conf.iterdir())):
        return None
    parts = [identity, pyspark.__version__, str(Path(pyspark.__file__).resolve().parent), str(jar)]
    if role == "driver":
        parts.append(str(conf))
    stem = f"{role}-" + hashlib.sha256("\0".join([*parts, *options]).encode()).hexdigest()[:16]
    _drop_other_keys_partials(folder, stem, role)
    archive = _usable(folder, stem) or _promote(java, folder, stem, options)
    if archive is not None:
        # the checksum of every region is checked as it is mapped (≈ 0.1 CPU-s): a damaged file is not used
        return Plan((f"-XX:SharedArchiveFile={archive}", "-XX:+VerifySharedSpaces"), conf, lambda pid: None)
    if any(folder.glob(f"{stem}.*{PARTIAL}.pid")):
        return Plan((), conf, lambda pid: None)  # another run's JVM will write one
    partial = folder / f"{stem}.{os.getpid()}-{secrets.token_hex(4)}{PARTIAL}"

    def launched(pid: int) -> None:
        pid_file = partial.with_name(partial.name + ".pid")
        try:
            fd = os.open(pid_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(f"{pid}\n")
        except OSError:
            pass

    return Plan((f"-XX:ArchiveClassesAtExit={partial}",), conf, launched, writes=True)
