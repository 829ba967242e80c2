"""The subprocess adapter: protocol v1 as JSON lines over a child process's stdin and stdout.

Robustness is the point of this module: it must never hang or crash the runner. Every write and
read has a deadline (``poll`` on non-blocking pipes — not ``select``, which fails for descriptors
numbered 1024 or more, as a long run inside a busy process can get); reply lines longer than
``max_line_bytes`` are rejected without reading the rest; stderr is drained by a thread into a bounded
tail that goes into the report; end of output is turned into "crashed" (non-zero exit or a signal) or
"exited" (exit code 0 mid-run). After such a failure the session is killed and the runner starts a new
one.

The SUT runs in a process group of its own (``start_new_session``), and ending a session always ends the
whole group, not only the direct child: a SUT started through a wrapper script, or one that leaves a
grandchild behind holding its stdout, leaves nothing running. The group is killed on a timeout or any
other failure, when the SUT exits by itself (the exit is noticed while waiting for a reply, even when a
grandchild keeps the pipe open), on ``close``, when the run is interrupted (``KeyboardInterrupt`` or any
other ``BaseException`` while waiting) and, as a last resort, when the interpreter exits
(``atexit``) with a session still open.

A process that leaves the group (``setsid``, a daemonising helper) escapes a group kill, so on Linux the kcspec
process also makes itself the *subreaper* of its SUTs (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphan among their
descendants is re-parented to kcspec instead of init. Ending a session then also kills, by process id, every
descendant of the SUT found in ``/proc`` and every child of kcspec born since the session started (those orphans),
and reaps them. Where neither exists (not Linux), the group kill is all there is.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence

from kcspec.conformance.adapters.base import FailureKind, SutFailure
from kcspec.conformance.protocol import messages as m

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_LINE = 16 * 1024 * 1024
STDERR_TAIL_BYTES = 16 * 1024
_READ_CHUNK = 1 << 20
_POLL_SECONDS = 0.2
"""While no reply is readable, how often to check whether the SUT has exited (its pipe may stay open)."""
_TERM_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL to the SUT's process group."""

_live_groups: set[int] = set()
"""Process groups of running SUT sessions, killed at interpreter exit if still there."""
_live_lock = threading.Lock()


def _ready(fd: int, events: int, seconds: float) -> bool:
    """Whether ``fd`` is ready for ``events`` (or hung up / in error) within ``seconds``."""
    poller = select.poll()
    poller.register(fd, events)
    return bool(poller.poll(max(0, int(seconds * 1000 + 0.999))))


PR_SET_CHILD_SUBREAPER = 36
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); whether it is one."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def _parents() -> dict[int, int]:
    """Every process's parent, from ``/proc`` (empty where there is no ``/proc``)."""
    out: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1:
                out[int(entry.name)] = int(fields[1])
    return out


def descendants(roots: set[int], parents: dict[int, int] | None = None) -> set[int]:
    """``roots`` and every process below them."""
    parents = _parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    out: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


def own_children() -> set[int]:
    """The current children of this process."""
    me = os.getpid()
    return {pid for pid, ppid in _parents().items() if ppid == me}


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to process group ``pgid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@atexit.register
def _kill_live_groups() -> None:
    with _live_lock:
        groups = list(_live_groups)
        _live_groups.clear()
    for pgid in groups:
        kill_group(pgid)


class _StderrTail:
    """Drains a pipe on a daemon thread, keeping the last ``limit`` bytes."""

    def __init__(self, pipe: object, limit: int = STDERR_TAIL_BYTES) -> None:
        self._pipe = pipe
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="sut-stderr", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        read = getattr(self._pipe, "read1", None) or self._pipe.read  # type: ignore[attr-defined]
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._lock:
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size > self._limit and len(self._chunks) > 1:
                    self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)
        if len(data) > self._limit:
            data = data[-self._limit :]
        return data.decode("utf-8", "replace")

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


class SubprocessAdapter:
    """A SUT started as ``argv``; one instance is one session at a time (``start``/``close`` repeatable)."""

    def __init__(
        self,
        argv: Sequence[str] | str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        startup_timeout: float | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = shlex.split(argv) if isinstance(argv, str) else list(argv)
        if not self.argv:
            raise ValueError("the SUT command is empty")
        self.timeout = timeout
        self.startup_timeout = startup_timeout if startup_timeout is not None else max(timeout, 30.0)
        self.max_line_bytes = max_line_bytes
        self.cwd = cwd
        self.env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: _StderrTail | None = None
        self._buffer = bytearray()
        self._next_id = 1
        self._last_stderr = ""
        self._first_call = True

    @property
    def description(self) -> str:
        return shlex.join(self.argv)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # ------------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.close()
        become_subreaper()
        self._children_before = own_children()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
            )
        except OSError as exc:
            raise SutFailure(FailureKind.cannot_start, f"{self.description}: {exc}") from None
        with _live_lock:
            _live_groups.add(self._proc.pid)  # start_new_session: the group id is the child's pid
        assert self._proc.stdin is not None and self._proc.stdout is not None
        os.set_blocking(self._proc.stdin.fileno(), False)
        os.set_blocking(self._proc.stdout.fileno(), False)
        self._stderr = _StderrTail(self._proc.stderr)
        self._buffer = bytearray()
        self._first_call = True

    def close(self) -> None:
        """End the session: ``shutdown`` if the SUT is healthy, then terminate, then kill."""
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        try:
            if proc.poll() is None:
                self._write(proc, m.to_line(self._take_id(), m.Shutdown()), time.monotonic() + 1.0)
                proc.wait(timeout=2.0)
        except (SutFailure, subprocess.TimeoutExpired, OSError):
            pass
        finally:  # also when interrupted while saying goodbye
            self._kill(proc)
        if self._stderr is not None:
            self._stderr.join(1.0)
            self._last_stderr = self._stderr.text()
            self._stderr = None

    def _kill(self, proc: subprocess.Popen[bytes], grace: float = _TERM_GRACE) -> None:
        """End the SUT's whole process group: SIGTERM, up to ``grace`` seconds for the SUT to exit, then
        SIGKILL to the group (whatever is left of it: grandchildren, a program behind a wrapper)."""
        pgid = proc.pid
        tree = descendants({pgid}) - {pgid}  # before the group goes: setsid descendants are still below it
        if proc.poll() is None and grace > 0:
            kill_group(pgid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace)
        kill_group(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)
        with _live_lock:
            _live_groups.discard(pgid)
        self._kill_escaped(tree)
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def _kill_escaped(self, tree: set[int]) -> None:
        """Kill what left the SUT's group: its other descendants, and the orphans re-parented to this process
        since the session started (as subreaper), with their descendants; reap those that are our children."""
        parents = _parents()
        me = os.getpid()
        orphans = {p for p, pp in parents.items() if pp == me} - getattr(self, "_children_before", set())
        with _live_lock:
            others = set(_live_groups)  # other sessions still running (ours is already discarded)
        victims = descendants((tree | orphans) & set(parents), parents) - descendants(others, parents)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        pending = victims & (orphans | {p for p in victims if parents.get(p) == me})
        while pending and time.monotonic() < deadline:
            for pid in list(pending):
                try:
                    done, _status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    pending.discard(pid)
            if pending:
                time.sleep(0.01)

    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr is not None else self._last_stderr

    # ------------------------------------------------------------------------------------- exchange

    def _take_id(self) -> int:
        msg_id = self._next_id
        self._next_id += 1
        return msg_id

    def call(self, request: m.RequestMessage) -> m.ResponseMessage:
        proc = self._proc
        if proc is None:
            raise SutFailure(FailureKind.exited, "no session: the SUT is not running")
        timeout = self.startup_timeout if self._first_call else self.timeout
        self._first_call = False
        deadline = time.monotonic() + timeout
        msg_id = self._take_id()
        try:
            self._write(proc, m.to_line(msg_id, request), deadline)
            line = self._read_line(proc, deadline, timeout)
            try:
                reply_id, reply = m.parse_response(line)
            except m.ProtocolError as exc:
                raise SutFailure(FailureKind.malformed, str(exc), self.stderr_tail()) from None
            if reply_id != msg_id:
                raise SutFailure(
                    FailureKind.wrong_id,
                    f"sent request id {msg_id}, got a reply with id {reply_id}",
                    self.stderr_tail(),
                )
            expected = m.EXPECTED_REPLY[type(request)]
            if not isinstance(reply, (*expected, m.ErrorReply)):
                raise SutFailure(
                    FailureKind.unexpected_reply,
                    f"{m.REQUEST_NAMES[type(request)]} answered with {m.RESPONSE_NAMES[type(reply)]!r}",
                    self.stderr_tail(),
                    restart=False,
                )
            return reply
        except SutFailure as failure:
            if failure.restart:
                self._kill(proc)
                self._proc = None
                if self._stderr is not None:
                    self._stderr.join(0.5)
                    self._last_stderr = self._stderr.text()
                    failure.stderr = self._last_stderr
                    self._stderr = None
            raise
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM) while waiting: no goodbye, the group is killed at once
            self._kill(proc, grace=0)
            self._proc = None
            raise

    def _write(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SutFailure(FailureKind.timeout, "the SUT stopped reading its input", self.stderr_tail())
            if not _ready(fd, select.POLLOUT, remaining):
                continue
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise self._ended(proc) from None
            view = view[written:]

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float, timeout: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = self._buffer
        scan = 0
        while True:
            nl = buf.find(b"\n", scan)
            if nl >= 0:
                line = bytes(buf[: nl + 1])
                del buf[: nl + 1]
                if not line.strip():
                    scan = 0
                    continue
                return line
            scan = len(buf)
            if len(buf) > self.max_line_bytes:
                raise SutFailure(
                    FailureKind.oversized,
                    f"a reply line exceeded {self.max_line_bytes} bytes (read {len(buf)} bytes without a newline)",
                    self.stderr_tail(),
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SutFailure(FailureKind.timeout, f"no reply within {timeout:g} s", self.stderr_tail())
            if not _ready(fd, select.POLLIN, min(remaining, _POLL_SECONDS)):
                if proc.poll() is not None and not _ready(fd, select.POLLIN, 0):
                    raise self._ended(proc, "it exited, and another process still holds its output open")
                continue
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                raise self._ended(proc)
            buf += chunk

    def _ended(self, proc: subprocess.Popen[bytes], note: str = "") -> SutFailure:
        try:
            code = proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return SutFailure(
                FailureKind.crashed, "the SUT closed its output but did not exit", self.stderr_tail()
            )
        if note:
            kill_group(proc.pid)  # whatever holds the pipes open goes with the SUT (stderr can then end)
        if self._stderr is not None:
            self._stderr.join(0.5)
        suffix = f"; {note}" if note else ""
        if code == 0:
            return SutFailure(
                FailureKind.exited, f"the SUT exited with code 0 before answering{suffix}", self.stderr_tail()
            )
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return SutFailure(FailureKind.crashed, f"the SUT died ({how}){suffix}", self.stderr_tail())
