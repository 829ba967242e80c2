"""What an exploration counts: distinct states, transitions, depth, time, and transition coverage.

Coverage comes from the reference controller's state-change log (TRACE level, so self-loops and intermediate states
count) and from the spec's failures (rejected, invalid transitions). ``ExploreStats.merge`` adds up the counts of
several processes exploring parts of one search.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from kcspec.model.kafka_log.reference_parser import parse_lines
from kcspec.reference_impl.logs import LogLines
from kcspec.spec.requests import FailureReason, StepResult


@dataclass
class ExploreStats:
    distinct_states: int = 0
    transitions: int = 0
    depth_reached: int = 0
    seconds: float = 0.0
    frontier_left: int = 0
    truncated: bool = False
    replica_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    partition_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    invalid_attempts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    workers: int = 1
    """Processes that explored (``--workers``)."""
    level_sizes: list[int] = field(default_factory=list)
    """The states of each level (level 0: the initial state), as far as the search got."""
    level: int = 0
    """The level being expanded."""
    level_expanded: int = 0
    """Its states expanded so far."""
    level_started: float = 0.0
    """``time.perf_counter()`` when its expansion started."""
    level_estimate: float | None = None
    """Seconds the level being expanded should take, for a search that learns a level's size only when the level is
    done (``--spark``, ``spark_explore._estimate``); ``None`` where the search counts its states as it goes."""
    level_tasks: tuple[int, int] | None = None
    """(tasks done, tasks) of the running job's active stages, for a search run as Spark jobs (``--spark``)."""
    fingerprint_bytes: int = 0
    """The memory of the search's fingerprint tables (visited, and the workers' sent) when it last looked: what
    the search keeps per visited state (its frontier and trail are on disk)."""

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    def begin_level(self, level: int) -> None:
        """The expansion of ``level`` starts now."""
        self.level, self.level_expanded, self.level_started = level, 0, time.perf_counter()

    def end_level(self, level: int) -> None:
        """The levels before ``level`` are done (its size is the last of ``level_sizes``)."""
        self.level, self.level_expanded = level, 0

    def level_eta(self) -> float | None:
        """Seconds until the level being expanded is done, at the rate it has been expanded so far (``None`` before
        the first of its states is done): what remains of a level is known, what the next levels hold is not."""
        if self.level_expanded == 0 or self.level >= len(self.level_sizes):
            return None
        spent = time.perf_counter() - self.level_started
        left = self.level_sizes[self.level] - self.level_expanded
        return spent / self.level_expanded * max(0, left)

    def estimate_left(self) -> float | None:
        """Seconds until the level being worked on is done: counted (``level_eta``) or estimated
        (``level_estimate``, less the time spent on the level so far)."""
        eta = self.level_eta()
        if eta is not None or self.level_estimate is None:
            return eta
        return max(0.0, self.level_estimate - (time.perf_counter() - self.level_started))

    def restore(self, saved: ExploreStats) -> None:
        """Take over the counts of a checkpoint (a resumed search goes on counting from them)."""
        self.distinct_states = saved.distinct_states
        self.depth_reached = saved.depth_reached
        self.level_sizes = list(saved.level_sizes)
        self.merge_counts(saved)

    def merge_counts(self, other: ExploreStats) -> None:
        """Add ``other``'s transition and coverage counts (not its states, depth or time) to these."""
        self.transitions += other.transitions
        self.replica_edges.update(other.replica_edges)
        self.partition_edges.update(other.partition_edges)
        self.invalid_attempts.update(other.invalid_attempts)
        self.events.update(other.events)


_TIMESTAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ")
_EDGES: dict[str, tuple[str, tuple[str, str]] | None] = {}
"""A log line without its timestamp → the transition it records (machine, (from, to)), or ``None``. A line with
a layout head parses on its own, and its timestamp only fills the timestamp field: lines that differ only there
record the same transition, so each distinct message is parsed once."""


def _edge(line: str) -> tuple[str, tuple[str, str]] | None:
    m = _TIMESTAMP.match(line)
    key = line[m.end() :] if m is not None else line
    try:
        return _EDGES[key]
    except KeyError:
        pass
    edge = None
    for parsed in parse_lines("state-change.log", [line]):
        if parsed.status == "record" and parsed.kind in ("replica_transition", "partition_transition"):
            pair = (str(parsed.fields.get("from_state")), str(parsed.fields.get("to_state")))
            edge = (parsed.kind, pair)
    _EDGES[key] = edge
    return edge


def record_coverage(stats: ExploreStats, log_lines: list[str], result: StepResult) -> None:
    """Count the replica/partition transitions of one step from the controller's state-change log (TRACE level, so
    self-loops and intermediate states count), and the rejected (invalid) transitions from its failures.

    The reference controller's log notes the transition of each such line as it writes it (``LogLines``): those are
    read instead of parsing the lines back (the same transitions, in the same order: ``tests/conformance``
    checks both ways agree). Lines of any other list, or of a log changed other than by appending, are parsed."""
    noted = log_lines.transitions if type(log_lines) is LogLines else None
    found_edges = noted if noted is not None else filter(None, map(_edge, log_lines))
    replica_edges, partition_edges = stats.replica_edges, stats.partition_edges
    for kind, edge in found_edges:
        if kind == "replica_transition":
            replica_edges[edge] += 1
        else:
            partition_edges[edge] += 1
    for f in result.failures:
        if f.reason is FailureReason.InvalidTransition:
            stats.invalid_attempts[(f.machine, f.from_state, f.target)] += 1
