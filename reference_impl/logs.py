"""Kafka's log layout and the two log files of a controller, with a deterministic clock (§10.1, §10.2).

A ``ControllerLog`` is two lists of lines, ``state_change`` (``state-change.log``) and ``controller``
(``controller.log``), each line in the layout ``[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)``; an ERROR
line with a throwable is followed by the exception line ``<java class>: <message>``. Lines below INFO (TRACE,
DEBUG) are kept only when ``trace`` is on. The clock starts at ``start`` and advances 1 ms per logged event, so
runs are reproducible.

This module also holds the value renderings of §10.2 that log messages use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Self, SupportsIndex

from kcspec.reference_impl.errors import KafkaThrowable
from kcspec.reference_impl.version import KAFKA_2_4, KafkaVersion
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment

DEFAULT_START = datetime(2021, 9, 1, 0, 0, 0)
"""Where the deterministic clock starts unless told otherwise."""

LEVELS = {"TRACE": 0, "DEBUG": 1, "INFO": 2, "WARN": 3, "ERROR": 4}

STATE_CHANGE_LOGGER = "state.change.logger"

_BELOW_INFO = frozenset(level for level, rank in LEVELS.items() if rank < LEVELS["INFO"])
_MILLIS = tuple(f"{ms:03d}" for ms in range(1000))


Transition = tuple[str, tuple[str, str]]
"""A state-machine transition a log line records: ``("replica_transition" | "partition_transition", (from, to))``
(the line's kind and states as the audit's line templates name them)."""


class LogLines(list[str]):
    """The lines of one log file, and the state-machine transitions that the controller's lines among them record.

    Where speed bent the shape (not log4j: Kafka's log is text only): the explorer counts, for every transition it
    checks, the state-machine transitions the reference controller logged, which meant parsing its lines back
    (``conformance/selfcheck/explore/stats.py``). A line written with ``Logger.transition`` (or noted by
    ``note_transition`` right after being appended) also notes its transition here, in line order.
    ``transitions`` is ``None`` (unknown: read the text) once the list is changed other than by appending or
    ``clear``; a line appended by anyone but those writers is not noted. The text is the same either way.

    Noting starts at the first ``clear()`` (a fresh log notes nothing: its transitions are unknown). The explorer
    clears the log before every step it checks; a run that only writes the log (a million-partition failover
    logs a million transitions) does not keep a second record of every line."""

    __slots__ = ("transitions",)

    def __init__(self) -> None:
        super().__init__()
        self.transitions: list[Transition] | None = None

    def note_transition(self, transition: Transition) -> None:
        if self.transitions is not None:
            self.transitions.append(transition)

    def clear(self) -> None:
        super().clear()
        self.transitions = []

    def __copy__(self) -> LogLines:
        """A copy with its own list of transitions (``copy.copy`` would share it)."""
        c = LogLines()
        list.extend(c, self)
        c.transitions = None if self.transitions is None else self.transitions.copy()
        return c

    def _unknown(self) -> None:
        self.transitions = None

    # every other change makes the noted transitions unknown
    def __setitem__(self, index: Any, value: Any) -> None:
        self._unknown()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self._unknown()
        super().__delitem__(index)

    def __iadd__(self, values: Iterable[str]) -> Self:  # type: ignore[override,misc]
        self._unknown()
        return super().__iadd__(values)

    def __imul__(self, n: SupportsIndex) -> Self:
        self._unknown()
        return super().__imul__(n)

    def extend(self, values: Iterable[str]) -> None:
        self._unknown()
        super().extend(values)

    def insert(self, index: SupportsIndex, value: str) -> None:
        self._unknown()
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1) -> str:
        self._unknown()
        return super().pop(index)

    def remove(self, value: str) -> None:
        self._unknown()
        super().remove(value)

    def reverse(self) -> None:
        self._unknown()
        super().reverse()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._unknown()
        super().sort(*args, **kwargs)


class ControllerLog:
    """The two log files of one controller process and the clock that stamps their lines."""

    def __init__(self, *, trace: bool = False, start: datetime = DEFAULT_START, tick_ms: int = 1) -> None:
        self.trace_enabled = trace
        self.state_change: list[str] = LogLines()
        self.controller: list[str] = []
        self._base = start.replace(microsecond=0)
        self._us = start.microsecond
        """Microseconds since ``_base`` of the next line's timestamp."""
        self._tick_us = tick_ms * 1000
        self._second = -1
        self._second_text = ""

    @property
    def now(self) -> datetime:
        """The timestamp the next line will carry."""
        return self._base + timedelta(microseconds=self._us)

    def enabled(self, level: str) -> bool:
        return LEVELS[level] >= LEVELS["INFO"] or self.trace_enabled

    def _date_text(self, second: int) -> str:
        """``yyyy-MM-dd HH:mm:ss,`` of the clock's ``second`` (formatted once per second of log time)."""
        return (self._base + timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S,")

    def emit(
        self, sink: list[str], level: str, message: str, logger: str, exc: KafkaThrowable | None = None
    ) -> None:
        if level in _BELOW_INFO and not self.trace_enabled:
            return
        # the clock's ``yyyy-MM-dd HH:mm:ss,SSS``, then advance it: the date and time of day are formatted once per
        # second, the milliseconds come from a table (inline here: a dozen lines per explored transition)
        us = self._us
        self._us = us + self._tick_us
        second, rest = divmod(us, 1_000_000)
        if second != self._second:
            self._second = second
            self._second_text = self._date_text(second)
        sink.append(f"[{self._second_text}{_MILLIS[rest // 1000]}] {level} {message} ({logger})")
        if exc is not None:
            sink.append(exc.log_line())

    def emit_all(
        self, sink: list[str], level: str, messages: Iterable[str], logger: str, prefix: str = ""
    ) -> None:
        """``emit`` of ``prefix + message`` for each message in turn (consecutive lines, nothing logged in
        between)."""
        if level in _BELOW_INFO and not self.trace_enabled:
            return
        append = sink.append
        tick = self._tick_us
        us = self._us
        second = self._second
        text = self._second_text
        suffix = f" ({logger})"
        head = f"] {level} {prefix}"
        try:
            for message in messages:
                current, rest = divmod(us, 1_000_000)
                if current != second:
                    second = current
                    text = self._date_text(second)
                us += tick
                append(f"[{text}{_MILLIS[rest // 1000]}{head}{message}{suffix}")
        finally:
            self._us = us
            self._second = second
            self._second_text = text

    def heads(self, level: str, count: int, prefix: str = "") -> list[str]:
        """The beginnings ``[<timestamp>] LEVEL <prefix>`` of the next ``count`` lines at ``level`` (none when the level
        is off), the clock advanced past them as ``emit_all`` of ``count`` messages would: a caller that renders many
        lines builds each one as head, message and `` (<logger>)`` in one step.

        Where speed bent the shape (not log4j's: a bulk step logs up to a million lines, and ``emit_all`` builds each
        line from a message built before it): with the default 1 ms tick, the heads of one second of log time are
        made by one comprehension over the millisecond table."""
        if count <= 0 or (level in _BELOW_INFO and not self.trace_enabled):
            return []
        head = f"] {level} {prefix}"
        tick = self._tick_us
        us = self._us
        second = self._second
        text = self._second_text
        out: list[str] = []
        while count:
            current, rest = divmod(us, 1_000_000)
            if current != second:
                second = current
                text = self._date_text(second)
            if tick == 1000 and rest % 1000 == 0:
                first = rest // 1000
                n = min(count, 1000 - first)
                stamp = "[" + text
                out += [f"{stamp}{ms}{head}" for ms in _MILLIS[first : first + n]]
                us += 1000 * n
                count -= n
            else:
                out.append(f"[{text}{_MILLIS[rest // 1000]}{head}")
                us += tick
                count -= 1
        self._us = us
        self._second = second
        self._second_text = text
        return out


class Logger:
    """One named logger writing to one file with a fixed message prefix (Kafka's ``logIdent``)."""

    def __init__(self, log: ControllerLog, sink: list[str], name: str, prefix: str) -> None:
        self.log = log
        self.sink = sink
        self.name = name
        self.prefix = prefix

    def enabled(self, level: str) -> bool:
        return self.log.enabled(level)

    def write(self, level: str, message: str, exc: KafkaThrowable | None = None) -> None:
        self.log.emit(self.sink, level, self.prefix + message, self.name, exc)

    def transition(self, level: str, message: str, transition: Transition) -> None:
        """``write(level, message)`` of a line that records a state-machine transition: when the line is kept, the
        transition is noted in the sink too (see ``LogLines``)."""
        sink = self.sink
        count = len(sink)
        self.log.emit(sink, level, self.prefix + message, self.name)
        if len(sink) != count and type(sink) is LogLines:
            noted = sink.transitions  # (``note_transition``, inline: a few lines per explored transition)
            if noted is not None:
                noted.append(transition)

    def write_all(self, level: str, messages: Iterable[str]) -> None:
        """``write(level, m)`` for each message, in order."""
        self.log.emit_all(self.sink, level, messages, self.name, self.prefix)

    def heads(self, level: str, count: int) -> list[str]:
        """``ControllerLog.heads`` with this logger's prefix: line ``i`` of ``count`` written at ``level`` is
        ``heads[i] + message + self.suffix`` (appended to ``self.sink`` in order; nothing logged in between)."""
        return self.log.heads(level, count, self.prefix)

    @property
    def suffix(self) -> str:
        return f" ({self.name})"

    # the levels call ``ControllerLog.emit`` as ``write`` does (one call fewer per line)

    def trace(self, message: str) -> None:
        self.log.emit(self.sink, "TRACE", self.prefix + message, self.name)

    def debug(self, message: str) -> None:
        self.log.emit(self.sink, "DEBUG", self.prefix + message, self.name)

    def info(self, message: str) -> None:
        self.log.emit(self.sink, "INFO", self.prefix + message, self.name)

    def warn(self, message: str) -> None:
        self.log.emit(self.sink, "WARN", self.prefix + message, self.name)

    def error(self, message: str, exc: KafkaThrowable | None = None) -> None:
        self.write("ERROR", message, exc)


# ------------------------------------------------------------------------------------- §10.2 renderings


def mk_string(values: Iterable[object], sep: str = ",") -> str:
    """Scala ``mkString(sep)``."""
    return sep.join(str(v) for v in values)


def scala_set(values: Iterable[object]) -> str:
    """A Scala set, elements in ascending order. Decision: always ``Set(…)`` (2.12 rendering), never ``HashSet``."""
    return "Set(" + ", ".join(str(v) for v in sorted(values, key=_sort_key)) + ")"


def scala_list(values: Iterable[object]) -> str:
    return "List(" + ", ".join(str(v) for v in values) + ")"


def _sort_key(v: object) -> tuple[int, str, int]:
    if isinstance(v, int):
        return (0, "", v)
    topic = getattr(v, "topic", None)
    part = getattr(v, "partition", None)
    if isinstance(topic, str) and isinstance(part, int):
        return (1, topic, part)
    return (2, str(v), 0)


_ISR_LISTS: dict[tuple[int, ...], str] = {}
"""``scala_list`` of broker-id tuples already rendered (bounded: at most ``_ISR_LISTS_MAX`` entries)."""
_ISR_LISTS_MAX = 4096
_ISR_STRINGS: dict[tuple[int, ...], str] = {}
"""``mk_string`` of broker-id tuples already rendered (bounded like ``_ISR_LISTS``)."""


def scala_int_list(values: tuple[int, ...]) -> str:
    """``scala_list`` of a tuple of broker ids, memoised (a cluster has few distinct ISRs)."""
    text = _ISR_LISTS.get(values)
    if text is None:
        text = scala_list(values)
        if len(_ISR_LISTS) < _ISR_LISTS_MAX:
            _ISR_LISTS[values] = text
    return text


def _memo(
    cache: dict[tuple[int, ...], str], values: tuple[int, ...], render: Callable[[tuple[int, ...]], str]
) -> str:
    """``render(values)``, memoised in ``cache`` (bounded like ``_ISR_LISTS``)."""
    text = cache.get(values)
    if text is None:
        text = render(values)
        if len(cache) < _ISR_LISTS_MAX:
            cache[values] = text
    return text


_JAVA_LISTS: dict[tuple[int, ...], str] = {}
_MK_STRINGS: dict[tuple[int, ...], str] = {}
_SCALA_SETS: dict[tuple[int, ...], str] = {}


def java_int_list(values: tuple[int, ...]) -> str:
    """``java_list`` of a tuple of broker ids, memoised (request TRACE lines render a few lists per partition)."""
    return _memo(_JAVA_LISTS, values, java_list)


def mk_int_string(values: tuple[int, ...]) -> str:
    """``mk_string`` of a tuple of broker ids, memoised."""
    return _memo(_MK_STRINGS, values, mk_string)


def scala_int_set(values: Iterable[int]) -> str:
    """``scala_set`` of broker ids (ascending), memoised by the sorted ids."""
    return _memo(_SCALA_SETS, tuple(sorted(values)), scala_set)


def render_leader_and_isr(lai: LeaderAndIsr) -> str:
    """``LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0)`` (both versions)."""
    return (
        f"LeaderAndIsr(leader={lai.leader}, leaderEpoch={lai.leader_epoch}, "
        f"isr={scala_int_list(lai.isr)}, zkVersion={lai.zk_version})"
    )


def render_leader_isr_and_epoch(li: LeaderIsrAndControllerEpoch, version: KafkaVersion) -> str:
    """2.8: ``(Leader:1,ISR:1,2,LeaderEpoch:0,ZkVersion:0,ControllerEpoch:1)``; 1.1 has no ZkVersion."""
    lai = li.leader_and_isr
    zk = f"ZkVersion:{lai.zk_version}," if version >= KAFKA_2_4 else ""
    isr = _ISR_STRINGS.get(lai.isr)
    if isr is None:
        isr = mk_string(lai.isr)
        if len(_ISR_STRINGS) < _ISR_LISTS_MAX:
            _ISR_STRINGS[lai.isr] = isr
    return (
        f"(Leader:{lai.leader},ISR:{isr},LeaderEpoch:{lai.leader_epoch},"
        f"{zk}ControllerEpoch:{li.controller_epoch})"
    )


def render_assignment(fa: ReplicaAssignment) -> str:
    """``ReplicaAssignment(replicas=1,2, addingReplicas=3, removingReplicas=)`` (2.4+)."""
    return (
        f"ReplicaAssignment(replicas={mk_string(fa.replicas)}, addingReplicas={mk_string(fa.adding)}, "
        f"removingReplicas={mk_string(fa.removing)})"
    )


def java_list(values: Iterable[object]) -> str:
    """A Java ``List.toString``: ``[1, 2]``."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def bool_text(value: bool) -> str:
    return "true" if value else "false"
