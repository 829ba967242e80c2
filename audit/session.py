"""The audit's SparkSession: the shared quiet session (``kcspec.model.spark.session``) with the jar of the JVM
line parser (``jvm_parser``, compiled at first use) on the driver's class path, and for a small local audit the
class-data archive of its driver JVM (``class_cache``). Without ``javac`` there is no jar, and an audit of Kafka
logs stops saying why.
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
        extra_settings=jvm_parser.session_settings,
        archive=class_cache.plan,
    )
