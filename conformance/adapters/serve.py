"""Serve an in-process ``ControllerSut`` over protocol v1 on stdin/stdout (the SUT side of the subprocess path).

``kcspec serve-reference`` and the example SUTs use this loop. A request that cannot be decoded gets
an ``error`` reply with code ``invalid_input`` (id -1 when even the id cannot be read); an exception in
the SUT gets code ``internal`` with the exception's text, and the loop goes on. ``shutdown`` and end
of input end the loop.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from kcspec.conformance.adapters.inprocess import ControllerSut, dispatch
from kcspec.conformance.protocol import messages as m


def serve(sut: ControllerSut, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Answer requests until ``shutdown`` or end of input; returns the process exit code (0)."""
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout.buffer
    for line in inp:
        if not line.strip():
            continue
        try:
            msg_id, request = m.parse_request(line)
        except m.ProtocolError as exc:
            rid = m.request_id_of(line)
            out.write(
                m.to_line(-1 if rid is None else rid, m.ErrorReply(m.ErrorCode.invalid_input, str(exc)))
            )
            out.flush()
            continue
        try:
            reply = dispatch(sut, request)
        except Exception as exc:
            reply = m.ErrorReply(m.ErrorCode.internal, f"{type(exc).__name__}: {exc}")
            print(f"error while handling request {msg_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
        out.write(m.to_line(msg_id, reply))
        out.flush()
        if isinstance(request, m.Shutdown):
            break
    return 0
