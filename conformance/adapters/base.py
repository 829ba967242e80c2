"""What the runner needs from an adapter, and how an adapter reports a misbehaving system under test.

An adapter carries one protocol request to the SUT and returns its reply. Anything that is not a
well-formed reply to that request (a crash, a hang, garbage, a wrong id, an oversized line, an exit
in the middle of a run, an exception in an in-process SUT) is a ``SutFailure`` with a ``kind`` and
the tail of the SUT's stderr, so the runner can give that vector an "errored" verdict and go on.
"""

from __future__ import annotations

import enum
from typing import Protocol

from kcspec.conformance.protocol.messages import RequestMessage, ResponseMessage


class FailureKind(enum.Enum):
    cannot_start = "the SUT could not be started"
    crashed = "the SUT exited with an error"
    exited = "the SUT exited in the middle of the run"
    timeout = "the SUT did not answer in time"
    malformed = "the SUT's reply is not a valid protocol message"
    oversized = "the SUT's reply line is longer than the limit"
    wrong_id = "the SUT's reply carries the wrong id"
    unexpected_reply = "the SUT's reply has the wrong type for the request"
    exception = "the in-process SUT raised an exception"


class SutFailure(Exception):
    """The SUT did not answer a request properly; ``restart`` says whether the session is unusable."""

    def __init__(
        self, kind: FailureKind, detail: str, stderr: str = "", restart: bool = True, stop_run: bool = False
    ) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail
        self.stderr = stderr
        self.restart = restart
        self.stop_run = stop_run
        """The SUT cannot be used again in this process (an in-process call that never returned): the runner
        reports what it has and skips the rest."""


class Adapter(Protocol):
    """One session with a SUT. ``call`` raises ``SutFailure``; after a failure with ``restart`` the
    runner calls ``close`` and ``start`` again before the next request."""

    @property
    def description(self) -> str: ...

    def start(self) -> None: ...

    def call(self, request: RequestMessage) -> ResponseMessage: ...

    def close(self) -> None: ...

    def stderr_tail(self) -> str: ...
