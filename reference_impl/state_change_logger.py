"""``StateChangeLogger``: the controller side of ``state.change.logger`` (§10.1, §10.3, §10.4).

Lines carry the prefix ``[Controller id=<id> epoch=<E>] `` (``withControllerEpoch``) or ``[Controller id=<id>] ``
for the few lines Kafka logs without an epoch. This module also writes the failed-transition lines of both state
machines, whose text is shared by 1.1.1 and 2.8.2 (§10.3, §10.4).
"""

from __future__ import annotations

from kcspec.reference_impl.errors import KafkaThrowable
from kcspec.reference_impl.logs import STATE_CHANGE_LOGGER, ControllerLog, Logger


class StateChangeLogger:
    """``new StateChangeLogger(brokerId, inControllerContext = true, controllerEpoch)``."""

    def __init__(self, log: ControllerLog, controller_id: int) -> None:
        self.log = log
        self.controller_id = controller_id
        self._with_epoch: dict[int, Logger] = {}
        """The loggers ``with_controller_epoch`` made, by epoch (a ``Logger`` holds no state of its own)."""

    def with_controller_epoch(self, epoch: int) -> Logger:
        logger = self._with_epoch.get(epoch)
        if logger is None:
            prefix = f"[Controller id={self.controller_id} epoch={epoch}] "
            logger = self._with_epoch[epoch] = Logger(
                self.log, self.log.state_change, STATE_CHANGE_LOGGER, prefix
            )
        return logger

    def without_epoch(self) -> Logger:
        return Logger(
            self.log, self.log.state_change, STATE_CHANGE_LOGGER, f"[Controller id={self.controller_id}] "
        )

    def trace_enabled(self) -> bool:
        return self.log.trace_enabled

    def replica_failed(
        self, epoch: int, replica: int, tp: object, current: str, target: str, exc: KafkaThrowable
    ) -> None:
        """§10.3 replica machine ERROR line (``logFailedStateChange``) followed by the exception line."""
        self.with_controller_epoch(epoch).error(
            f"Controller {self.controller_id} epoch {epoch} initiated state change of replica {replica} "
            f"for partition {tp} from {current} to {target} failed",
            exc,
        )

    def partition_failed(
        self, epoch: int, tp: object, current: str, target: str, exc: KafkaThrowable
    ) -> None:
        """§10.3 partition machine ERROR line (``logFailedStateChange``) followed by the exception line."""
        self.with_controller_epoch(epoch).error(
            f"Controller {self.controller_id} epoch {epoch} failed to change state for partition {tp} "
            f"from {current} to {target}",
            exc,
        )
