"""The audit's SparkSession: the shared quiet session (``kcspec.model.spark.session``) with the jar of the JVM
line parser (``jvm_parser``, compiled at first use) on the driver's class path, and for a small local audit the
class-data archive of its driver JVM (``class_cache``). Without ``javac`` there is no jar, and an audit of Kafka
logs stops saying why. A local session with the jar writes local files through ``LocalFiles`` (``LOCAL_FILES``).
"""

from __future__ import annotations

from typing import Any

from kcspec.audit import class_cache, jvm_parser
from kcspec.model.spark import session


def make_session(
    master: str = "local[*]",
    shuffle_partitions: int | None = None,
    app: str = "kcspec-audit",
    input_size: int | None = None,
    interrupts: bool = False,
) -> Any:
    """``session.make_session`` with the audit's JVM line parser and class archive (its arguments as there)."""
    return session.make_session(
        master,
        shuffle_partitions,
        app,
        input_size,
        interrupts,
        extra_settings=lambda: settings(master),
        archive=class_cache.plan,
    )


LOCAL_FILES = "kcspec.audit.LocalFiles"
"""Hadoop's local file system with its files' permissions set in the JVM (``LocalFiles.java``): Hadoop's own
runs a ``chmod`` process for every folder and file a writer creates (about 4,300 for the rules' pass on
10 M lines). Only for a local master (``local``, ``local[…]``), whose executors are the driver's JVM with the jar on
its class path: a cluster's executors (``local-cluster`` too) get the jar later than their file systems."""


def settings(master: str) -> dict[str, str]:
    """``jvm_parser.session_settings``, and for a local ``master`` with the jar, ``LOCAL_FILES`` as the file
    system of ``file:`` paths (``fs.file.impl``)."""
    out = dict(jvm_parser.session_settings())
    if out and (master == "local" or master.startswith("local[")):
        out["spark.hadoop.fs.file.impl"] = LOCAL_FILES
    return out
