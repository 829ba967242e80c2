"""A SparkSession for kcspec's Spark runs (the audit, the explorer, the swarm), with Spark's own console output
kept out of the user's terminal.

The JVM is launched with its stdout and stderr captured in a log file (``spark_log_path()``), so the
JVM's start-up warnings, Spark's log-level banner and any later Spark log line land there, never on the
terminal; the JVM also gets a log4j2 configuration that keeps only ERROR lines of Spark itself. The console
progress bar and the UI are off. ``local[*]`` by default; any ``--master`` URL works. ANSI SQL mode is off
so that casts of absent numbers give NULL (the parser relies on it). Whole-stage code generation is kept
to methods HotSpot compiles (``hugeMethodLimit`` 8000 bytes): a larger generated method would run in the
bytecode interpreter, so Spark generates per-expression code for that part of the plan instead.
A caller adds its own settings (the audit: the jar of its JVM line parser on the driver's class path) and, for a
small local session, a class-data archive of the driver JVM (the audit's ``class_cache``): ``make_session``'s
``extra_settings`` and ``archive``, so that this module knows nothing of the audit.

Nothing of it is shared or predictable: each process gets its own configuration folder from ``mkdtemp``
(mode 0700, ``kcspec-audit-spark-<pid>-<random>`` in the temporary directory), which is ``SPARK_CONF_DIR``
unless the user set one (or the session is a small local one mapping archived classes: then an empty folder of
the user's private cache, the audit's ``class_cache``), and holds the log4j2 configuration and the JVM log (``spark.log``). A folder that
someone else could have prepared (say with a ``spark-defaults.conf`` injecting JVM options) is never used.
A process removes its own folder when it exits (``atexit``: a normal end, an error, Ctrl-C and SIGTERM all
leave through it; ``keep_spark_log`` first copies the JVM log of a failed run into its output folder). The
folders of processes killed outright (SIGKILL) are removed once they are a day old (``prune_spark_dirs``).
In local mode the driver binds to the loopback interface only (``spark.driver.bindAddress`` and
``spark.driver.host`` 127.0.0.1).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from kcspec.model import interrupts

LOOPBACK = "127.0.0.1"

LOG4J2 = """\
status = error
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.codegen.name = org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator
logger.codegen.level = off
logger.wscg.name = org.apache.spark.sql.execution.WholeStageCodegenExec
logger.wscg.level = off
"""


CONF_PREFIX = "kcspec-audit-spark-"
"""The name of a process's configuration folder: this prefix, the process id, ``-``, mkdtemp's random part.
Decision: the prefix the audit's sessions had before this module served the explorer and the swarm too, so that
``prune_spark_dirs`` still finds the folders that earlier versions left."""

_conf_dirs: list[Path] = []


def conf_dir() -> Path:
    """This process's private Spark configuration folder (created by ``mkdtemp``, mode 0700, at first use)."""
    if not _conf_dirs:
        made = Path(tempfile.mkdtemp(prefix=f"{CONF_PREFIX}{os.getpid()}-"))
        (made / "log4j2.properties").write_text(LOG4J2)
        _conf_dirs.append(made)
        atexit.register(remove_conf_dir)
    return _conf_dirs[0]


_keep: list[bool] = []


def remove_conf_dir() -> None:
    """Remove this process's configuration folder (and JVM log), if it made one and ``kept_spark_log`` was
    not called; run at exit."""
    while _conf_dirs:
        folder = _conf_dirs.pop()
        if not _keep:
            shutil.rmtree(folder, ignore_errors=True)


def java_options_note() -> str:
    """What a failed start should add when the user's environment passes options to every JVM: Spark's
    launcher reads the command it runs from a JVM's standard output, so an option that makes the JVM print
    there as it runs (``-Xlog:gc:stdout``) stops Spark before it starts; "" when none is set."""
    set_ = [
        f"{name}={os.environ[name]!r}"
        for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")
        if os.environ.get(name)
    ]
    if not set_:
        return ""
    subject = (
        f"{set_[0]} is set: it reaches" if len(set_) == 1 else f"{' and '.join(set_)} are set: they reach"
    )
    return (
        f"; {subject} every JVM, and an option there that prints on the JVM's standard output as it runs "
        "(-Xlog:...:stdout) stops Spark's launcher"
    )


def kept_spark_log() -> Path:
    """The JVM log, its folder kept at exit: for a failure whose only evidence it is and that has no output
    folder to copy it into (``prune_spark_dirs`` removes it a day later)."""
    _keep.append(True)
    return spark_log_path()


def keep_spark_log(out: Path) -> Path:
    """Copy the JVM log into ``out`` (``spark.log``), since the folder it is in is removed at exit; where it
    can be read after the run (the original path if the copy failed)."""
    src = spark_log_path()
    try:
        shutil.copyfile(src, out / "spark.log")
    except OSError:
        return kept_spark_log()
    return out / "spark.log"


def _log4j_file() -> Path:
    return conf_dir() / "log4j2.properties"


def spark_log_path() -> Path:
    """Where the JVM's own output (warnings, Spark's log lines) of this process's session goes."""
    return conf_dir() / "spark.log"


LOG_KEEP_SECONDS = 24 * 3600.0
"""How long the folder (and JVM log) of a process that has ended is kept (long enough to read it after a
failed run)."""


def prune_spark_dirs(directory: Path, now: float | None = None) -> list[Path]:
    """Remove this user's configuration folders (``CONF_PREFIX<pid>-…``) in ``directory`` of processes that
    are no longer running and that were last written more than ``LOG_KEEP_SECONDS`` ago; the paths removed.
    Only real directories owned by this user are touched (never a symbolic link, never someone else's)."""
    now = time.time() if now is None else now
    removed = []
    for folder in directory.glob(f"{CONF_PREFIX}*"):
        pid = folder.name.removeprefix(CONF_PREFIX).split("-", 1)[0]
        try:
            st = folder.lstat()
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or not pid.isdigit():
                continue
            newest = max([st.st_mtime, *(f.lstat().st_mtime for f in folder.iterdir())])
            if _running(int(pid)) or now - newest <= LOG_KEEP_SECONDS:
                continue
            shutil.rmtree(folder)
        except OSError:  # another process pruned it first, or it is not ours to remove
            continue
        removed.append(folder)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class ArchivePlan(Protocol):
    """What a small local session's driver JVM gets from a class-data archive (the audit's ``class_cache.Plan``):
    extra JVM options, the ``SPARK_CONF_DIR`` to use, and what to do once the JVM runs (``launched(pid)``)."""

    @property
    def options(self) -> tuple[str, ...]: ...

    @property
    def conf_dir(self) -> Path: ...

    @property
    def launched(self) -> Callable[[int], None]: ...


def make_session(
    master: str = "local[*]",
    shuffle_partitions: int | None = None,
    app: str = "kcspec",
    input_size: int | None = None,
    interrupts: bool = False,
    extra_settings: Callable[[], dict[str, str]] = dict,
    archive: Callable[[tuple[str, ...]], ArchivePlan | None] | None = None,
) -> Any:
    """Start (or reuse) a SparkSession; ``ImportError`` with an install hint if pyspark is missing.
    ``input_size``: the size of what will be read (``input_bytes``), when known before the JVM starts: a
    local session for a small input gets ``SMALL_INPUT_JVM_OPTIONS`` (only a JVM started here does).
    ``extra_settings``: the caller's own Spark settings, asked for once pyspark is known to be there (the audit's
    JVM line parser jar); ``archive``: asked, with the JVM options of a small input, for the class-data archive
    of a small local session's driver JVM (``None``: none).

    ``interrupts``: whether this call sets the process's SIGINT and SIGTERM handlers to end the run at once
    (``quiet_interrupts``): the command line's choice, made inside ``handled_interrupts``, which restores the
    earlier handlers. Without it (a library call, a test) the process's handlers are after the call what they
    were before it: pyspark's own SIGINT handler, which ``SparkContext`` installs, is undone."""
    before = _handlers()
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("pyspark is not installed: pip install 'kcspec[spark]' (needs Java 17)") from exc
    log4j = _log4j_file()
    local = master.startswith("local")
    small = local and input_size is not None and input_size <= SMALL_INPUT_BYTES
    # a small local session's JVM maps the classes an earlier one archived (class_cache): its class path, which
    # holds SPARK_CONF_DIR, must then be the same at every run: an empty private folder of the cache
    cds = (
        archive(SMALL_INPUT_JVM_OPTIONS)
        if archive is not None and small and SparkContext._active_spark_context is None
        else None
    )
    if cds is not None:
        os.environ["SPARK_CONF_DIR"] = str(cds.conf_dir)
    # Spark puts SPARK_CONF_DIR on the driver's class path; log4j2 finds log4j2.properties there.
    os.environ.setdefault("SPARK_CONF_DIR", str(log4j.parent))
    java_opt = driver_java_options(log4j, master, input_size, cds.options if cds is not None else ())
    parts = shuffle_partitions if shuffle_partitions is not None else _default_partitions(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.ansi.enabled": "false",
        "spark.sql.shuffle.partitions": str(parts),
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.codegen.hugeMethodLimit": "8000",
        "spark.driver.extraJavaOptions": java_opt,
        "spark.executor.extraJavaOptions": java_opt,
    }
    if local:  # nothing listens beyond this machine: the driver's ports are on the loopback interface
        settings.update({"spark.driver.bindAddress": LOOPBACK, "spark.driver.host": LOOPBACK})
    settings.update(extra_settings())
    if SparkContext._active_spark_context is None:
        # Python workers (the trace decoder) must run this interpreter, where kcspec is installed
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        conf = SparkConf().setMaster(master).setAppName(app)
        for key, value in settings.items():
            conf.set(key, value)
        prune_spark_dirs(log4j.parent.parent)
        launch: Callable[..., Any] = launch_gateway  # pyspark leaves it unannotated
        with _jvm_ends_with_an_interrupt() as launched:
            with spark_log_path().open("ab") as log:
                gateway = launch(conf, popen_kwargs={"stdout": log, "stderr": log})
            if cds is not None:
                cds.launched(gateway.proc.pid)  # spark-class execs the JVM: the same process
            with _sigint_kept(SparkContext):
                SparkContext(conf=conf, gateway=gateway)
            launched.clear()  # started: the JVM ends when this process's end closes its stdin
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if interrupts:
        quiet_interrupts()
    else:
        _restore(before)
    return spark


JVM_GRACE_SECONDS = 5.0
"""How long an interrupted start waits for the JVM to end by itself (its standard input closed), then after
SIGTERM, before it is killed."""


@contextmanager
def _jvm_ends_with_an_interrupt() -> Iterator[list[Any]]:
    """The JVM pyspark launches inside the block (its ``Popen``, recorded) is ended if the block does not
    complete (Ctrl-C, SIGTERM, an error): closed stdin, then SIGTERM, then SIGKILL. The list given holds the
    processes still to end; the caller empties it once the start has completed.

    Decision (from the orphaned JVMs of signals in the first seconds): a JVM whose start was interrupted
    never reaches the loop that ends it when its standard input closes (pyspark removed the folder it was to
    write its port to, and its gateway thread keeps it alive), so it is ended here, by its process id; a JVM
    that started watches its standard input, which this process's end closes."""
    from pyspark import java_gateway

    launched: list[Any] = []
    names = java_gateway.__dict__  # pyspark's module namespace: its Popen is replaced for the block
    real = names["Popen"]

    def recording(*args: Any, **kwargs: Any) -> Any:
        proc = real(*args, **kwargs)
        launched.append(proc)
        return proc

    names["Popen"] = recording
    try:
        yield launched
    finally:
        names["Popen"] = real
        for proc in launched:
            end_jvm(proc)


def end_jvm(proc: Any, grace: float = JVM_GRACE_SECONDS) -> None:
    """End the JVM process ``proc`` (a ``Popen``): close its standard input, then SIGTERM, then SIGKILL, each
    after ``grace`` seconds."""
    import subprocess

    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    for step in (None, proc.terminate, proc.kill):
        if step is not None:
            try:
                step()
            except OSError:
                return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


class _KeepSigint:
    """The ``signal`` module as pyspark's ``SparkContext`` sees it while it starts: its SIGINT handler
    (``cancelAllJobs``, then ``KeyboardInterrupt``; installed in the main thread) is not installed, so that a
    Ctrl-C while the context starts is the process's own interrupt, not a failed start."""

    def __getattr__(self, name: str) -> Any:
        return getattr(signal, name)

    @staticmethod
    def signal(signum: int, handler: Any) -> Any:
        if signum == signal.SIGINT:
            return signal.getsignal(signum)
        return signal.signal(signum, handler)


@contextmanager
def _sigint_kept(context_class: type) -> Iterator[None]:
    """``_KeepSigint`` as the ``signal`` of the module that defines ``context_class`` (pyspark's SparkContext),
    for the block."""
    names = sys.modules[context_class.__module__].__dict__
    if names.get("signal") is not signal:
        yield
        return
    names["signal"] = _KeepSigint()
    try:
        yield
    finally:
        names["signal"] = signal


def driver_java_options(
    log4j: Path, master: str, input_size: int | None, archive: tuple[str, ...] = ()
) -> str:
    """The driver's (and executors') JVM options: the log4j2 configuration, and ``SMALL_INPUT_JVM_OPTIONS``
    and ``archive`` (``ArchivePlan.options``) for a local session whose input is known to be small."""
    options = [f"-Dlog4j2.configurationFile=file:{log4j}"]
    if master.startswith("local") and input_size is not None and input_size <= SMALL_INPUT_BYTES:
        options += [*SMALL_INPUT_JVM_OPTIONS, *archive]
    return " ".join(options)


def _interrupted(signum: int, frame: object) -> None:
    # py4j reports every call that the interrupt breaks (and every later one on the broken connection) on the
    # root logger, with its traceback: the run is ending, they are not news, so logging is off from here on
    logging.disable(logging.CRITICAL)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt()
    raise interrupts.Terminated()


def quiet_interrupts() -> None:
    """Ctrl-C and SIGTERM end a run with a Spark session as any other ``kcspec`` run: one line, 130 / 143.
    Decision: pyspark's own SIGINT handler (``cancelAllJobs`` over py4j, from inside the signal handler,
    while the interrupted main thread may be in a py4j call on the same connection: "reentrant call") is
    replaced; the interrupt is raised at once and the JVM, a child that watches its stdin, ends with this
    process. (Main thread only: elsewhere signal handlers cannot be set.)"""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupted)
        signal.signal(signal.SIGTERM, _interrupted)


SIGNALS = (signal.SIGINT, signal.SIGTERM)

Handler = Callable[[int, Any], Any] | int | None


def _handlers() -> dict[int, Handler]:
    return {s: signal.getsignal(s) for s in SIGNALS}


def _restore(handlers: dict[int, Handler]) -> None:
    if threading.current_thread() is threading.main_thread():
        for s, h in handlers.items():
            if h is not None:  # None: set by no Python code, cannot be set back from here
                signal.signal(s, h)


@contextmanager
def handled_interrupts() -> Iterator[None]:
    """Inside the block, Ctrl-C and SIGTERM end the run at once (``quiet_interrupts``); after it, the process's
    handlers are what they were. For the command line; library calls leave the handlers alone
    (``make_session``'s ``interrupts``)."""
    before = _handlers()
    quiet_interrupts()
    try:
        yield
    finally:
        _restore(before)


def interrupt_in(exc: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM behind ``exc``, if any: an interrupt inside a py4j call often surfaces as a
    py4j error (the connection it broke) raised while the interrupt was being handled — which is an
    interrupt of the run, never an internal error."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (KeyboardInterrupt, interrupts.Terminated)):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def _default_partitions(master: str) -> int:
    if master.startswith("local"):
        inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
        cores = os.cpu_count() or 1 if inside in ("*", "") else int(inside) if inside.isdigit() else 2
        return max(2, 2 * cores)
    return 200


SMALL_INPUT_BYTES = 16 << 20
"""Inputs up to this size (about 70,000 log lines; a compressed file counts ``GZ_RATIO`` times its size) are
audited with ``SMALL_INPUT_SETTINGS``."""
GZ_RATIO = 10
SMALL_INPUT_SETTINGS = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}
"""Decision: on a small input an audit's ~20 Spark queries cost mostly their own compilation (Janino generating
and compiling code for every stage, then the JIT warming it) and the planning of shuffles into several
partitions, not the rows. So it evaluates expressions interpreted, without whole-stage code generation or
adaptive re-planning, into one shuffle partition. Measured on a 10,235-line simulated cluster (2 cores, load
average 7–8): the audit's JVM CPU seconds 28.0 → 22.2. The same queries and results, only evaluated otherwise."""


SMALL_INPUT_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
"""Decision: the driver JVM of a local session for a small input compiles with HotSpot's C1 compiler only (no
C2). Such a run lasts seconds and runs each of Spark's code paths a few thousand times: C2 spends more CPU
compiling them (on the JIT compiler threads) than its faster code gives back. Measured with ``kcspec audit`` on
the 10,224-line simulated cluster (2 cores, load 5–8, JVM CPU per thread): of 26.0 JVM CPU-s, 13.6 were the JIT
compiler threads; with C1 only the JVM took 13.6–13.8 CPU-s for the same outputs. A JVM option, so it is set
when the JVM starts (``spark.driver.extraJavaOptions``, which spark-submit's launcher puts on the driver's
command line in client and local mode), decided from the input's size (``make_session``'s ``input_bytes``).
Large inputs and sessions of unknown input keep the default tiered compilation (C2 pays off over minutes)."""


def input_bytes(paths: Iterable[str]) -> int:
    """The size of the input files (compressed ones ``GZ_RATIO`` times theirs); unreadable ones count 0."""
    total = 0
    for p in paths:
        try:
            size = os.stat(p).st_size
        except OSError:
            continue
        total += size * GZ_RATIO if p.endswith(".gz") else size
    return total


@contextmanager
def settings_for(spark: Any, n_bytes: int) -> Iterator[str | None]:
    """``SMALL_INPUT_SETTINGS`` for the duration of the block when ``n_bytes`` ≤ ``SMALL_INPUT_BYTES`` (the
    session's own values restored after); yields what was done, in words, or ``None``."""
    if n_bytes > SMALL_INPUT_BYTES:
        yield None
        return
    before = {k: spark.conf.get(k, None) for k in SMALL_INPUT_SETTINGS}
    for k, v in SMALL_INPUT_SETTINGS.items():
        spark.conf.set(k, v)
    try:
        yield (
            f"small input ({n_bytes / 2**20:.1f} MiB ≤ {SMALL_INPUT_BYTES >> 20} MiB): interpreted expressions, "
            "no adaptive re-planning, one shuffle partition, intermediate tables kept in memory"
        )
    finally:
        for k, old in before.items():
            if old is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, old)
