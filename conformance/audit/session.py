"""A SparkSession for the audit, with Spark's own console output kept quiet.

The JVM gets a log4j2 configuration that only prints ERROR lines of Spark itself (to stderr), the
console progress bar is off and the UI is off. ``local[*]`` by default; any ``--master`` URL works.
ANSI SQL mode is off so that casts of absent numbers give NULL (the parser relies on it).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

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


def _log4j_file() -> Path:
    conf_dir = Path(tempfile.gettempdir()) / f"kcspec-audit-spark-conf-{os.getuid()}"
    conf_dir.mkdir(exist_ok=True)
    path = conf_dir / "log4j2.properties"
    if not path.exists() or path.read_text() != LOG4J2:
        path.write_text(LOG4J2)
    return path


def make_session(
    master: str = "local[*]", shuffle_partitions: int | None = None, app: str = "kcspec-audit"
) -> Any:
    """Start (or reuse) a SparkSession; ``ImportError`` with an install hint if pyspark is missing."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("pyspark is not installed: pip install 'kcspec[spark]' (needs Java 17)") from exc
    log4j = _log4j_file()
    # Spark puts SPARK_CONF_DIR on the driver's class path; log4j2 finds log4j2.properties there.
    os.environ.setdefault("SPARK_CONF_DIR", str(log4j.parent))
    java_opt = f"-Dlog4j2.configurationFile=file:{log4j}"
    parts = shuffle_partitions if shuffle_partitions is not None else _default_partitions(master)
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(parts))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.driver.extraJavaOptions", java_opt)
        .config("spark.executor.extraJavaOptions", java_opt)
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _default_partitions(master: str) -> int:
    if master.startswith("local"):
        inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
        cores = os.cpu_count() or 1 if inside in ("*", "") else int(inside) if inside.isdigit() else 2
        return max(2, 2 * cores)
    return 200
