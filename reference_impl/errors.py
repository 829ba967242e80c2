"""The exceptions of the reference controller.

Kafka's controller signals most failures with exceptions that are caught at well-defined places (§2.3 step 7,
§7 preamble). The ``KafkaThrowable`` subclasses below model those Java/Scala exceptions: each carries the
fully qualified Java class name Kafka logs on the line after an ERROR line (§10.1). Python errors (bugs) are
deliberately *not* ``KafkaThrowable``s so that no Kafka-style ``catch Throwable`` can hide them.
"""

from __future__ import annotations


class EventNotEnabled(ValueError):
    """The event cannot happen in this state: its guard (docs/contracts.md, environment semantics) is false."""


class KafkaThrowable(Exception):
    """A modelled Java throwable; ``java_class`` is what Kafka prints before the message."""

    java_class = "java.lang.Throwable"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def log_line(self) -> str:
        """The exception line Kafka's layout prints after an ERROR line with a throwable (§10.1)."""
        return f"{self.java_class}: {self.message}"


class ControllerMovedException(KafkaThrowable):
    """The ``/controller_epoch`` CheckOp failed (2.8 fencing, §3.3, §9): the controller must resign."""

    java_class = "org.apache.kafka.common.errors.ControllerMovedException"


class StateChangeFailedException(KafkaThrowable):
    java_class = "kafka.common.StateChangeFailedException"


class IllegalStateException(KafkaThrowable):
    java_class = "java.lang.IllegalStateException"


class IllegalArgumentException(KafkaThrowable):
    java_class = "java.lang.IllegalArgumentException"


class NoSuchElementException(KafkaThrowable):
    """``Option.get`` on ``None`` or a missing map key (e.g. §7.9 ``partitionLeadershipInfo(p).get``)."""

    java_class = "java.util.NoSuchElementException"


class StaleBrokerEpochException(KafkaThrowable):
    java_class = "org.apache.kafka.common.errors.StaleBrokerEpochException"


class BrokerNotAvailableException(KafkaThrowable):
    java_class = "org.apache.kafka.common.errors.BrokerNotAvailableException"


class KafkaException(KafkaThrowable):
    java_class = "org.apache.kafka.common.KafkaException"


_KEEPER_NAMES = {
    "BADVERSION": ("BadVersionException", "BadVersion"),
    "CONNECTIONLOSS": ("ConnectionLossException", "ConnectionLoss"),
    "NODEEXISTS": ("NodeExistsException", "NodeExists"),
    "NONODE": ("NoNodeException", "NoNode"),
}


class KeeperException(KafkaThrowable):
    """A ZooKeeper error (``KeeperException.create(code[, path])``), e.g. ``KeeperErrorCode = NodeExists``."""

    def __init__(self, code: str, path: str | None = None) -> None:
        cls_name, text = _KEEPER_NAMES[code]
        self.code = code
        self.java_class = f"org.apache.zookeeper.KeeperException${cls_name}"
        super().__init__(f"KeeperErrorCode = {text}" + (f" for {path}" if path else ""))
