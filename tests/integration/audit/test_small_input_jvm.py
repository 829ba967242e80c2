"""The JVM options of the audit's driver: C1 only (``session.SMALL_INPUT_JVM_OPTIONS``) for a local session whose
input is known to be small, the JVM's defaults otherwise (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

from kcspec.model.spark import session

LOG4J = Path("/nonexistent/log4j2.properties")


def test_small_local_input_gets_the_small_input_jvm_options() -> None:
    opts = session.driver_java_options(LOG4J, "local[*]", 2 << 20).split()
    assert opts[0] == f"-Dlog4j2.configurationFile=file:{LOG4J}"
    assert opts[1:] == list(session.SMALL_INPUT_JVM_OPTIONS)
    assert session.driver_java_options(LOG4J, "local[2]", session.SMALL_INPUT_BYTES).split()[1:] == list(
        session.SMALL_INPUT_JVM_OPTIONS
    )


def test_large_unknown_or_remote_input_keeps_the_jvm_defaults() -> None:
    only_log4j = f"-Dlog4j2.configurationFile=file:{LOG4J}"
    assert session.driver_java_options(LOG4J, "local[*]", session.SMALL_INPUT_BYTES + 1) == only_log4j
    assert session.driver_java_options(LOG4J, "local[*]", None) == only_log4j
    assert session.driver_java_options(LOG4J, "spark://host:7077", 1024) == only_log4j
