"""The signature of a divergence: which event kind diverged, and where (the JSON paths that differ).

Differential testing finds the same bug again and again, in different event sequences, on different
partitions and brokers. Two divergences are *the same* when they have the same signature: the kind of
the event whose reply differed and the set of differing JSON paths with the concrete names taken out
(``$.state.zk.partition_states["t0-1"].leader_and_isr.leader`` and the same path on ``"t0-0"`` are one
path, ``$.state.zk.partition_states[*].leader_and_isr.leader``; a request keeps its type but not its
recipient or partitions). A SUT that crashes or hangs on an event has the failure's kind as its single path
(``<timeout>``). The signature is what a ``--known`` file names to acknowledge a deviation.

Signatures are too fine to count bugs: one wrong election changes the leader in ZooKeeper, in the cache, in
every request and in the failures, on every event kind that elects, and each combination is another signature.
The differential search therefore groups divergences by their ``Cause``: the *part* of the reply that differs
first, in the order ``PARTS`` (the reply's type, a resignation, ZooKeeper, the controller's context, the
configuration, the requests, the failures, the results), and the first differing path in that part down to the
part's member, with request types merged (``$.state.zk.partition_states``, ``$.requests[*].controller_epoch``). Decisions: the earliest part is the cause, because the later
parts follow from it (a controller writes ZooKeeper, updates its cache from what it wrote, then tells the
brokers); neither the event kind nor the path is part of the cause, because one bug shows on every event kind that
runs the faulty code and in several members of a part (an unclean election changes a partition's leader, ISR and
faults consumed); the group's outcome names the event and path of its shrunk trace and every signature met.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kcspec.conformance.reply_diff import Difference

_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_TO_BROKER = re.compile(r"^(\w+) to broker -?\d+(?: \([^()]*\))?$")
"""A request's key (``kcspec.conformance.reply_diff``): its type, recipient and, where several requests of one
type go to one broker, its partitions; the signature keeps only the type."""
_KEEP = frozenset({"missing", "unexpected"})


def general_path(path: str) -> str:
    """``path`` without the concrete partition, replica, broker and index names in its brackets."""

    def repl(match: re.Match[str]) -> str:
        inner = match.group(1)
        request = _TO_BROKER.match(inner)
        if request:
            return f"[{request.group(1)}]"
        return f"[{inner}]" if inner in _KEEP else "[*]"

    return _BRACKET.sub(repl, path)


@dataclass(frozen=True, order=True)
class Signature:
    """The event kind that diverged and the general paths that differ."""

    event: str
    paths: tuple[str, ...]
    """Sorted, without duplicates."""

    @staticmethod
    def of(event_kind: str, differences: Iterable[Difference]) -> Signature:
        return Signature(event_kind, tuple(sorted({general_path(d.path) for d in differences})))

    @staticmethod
    def of_failure(event_kind: str, failure_kind: str) -> Signature:
        """A SUT that failed (crashed, hung, garbled its reply) on an event of ``event_kind``."""
        return Signature(event_kind, (f"<{failure_kind}>",))

    def covers(self, other: Signature) -> bool:
        """``other`` is this deviation: the same event kind and no path outside this one's paths."""
        return self.event == other.event and set(other.paths) <= set(self.paths)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "paths": list(self.paths)}

    def render(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    @property
    def slug(self) -> str:
        """A short stable name: the event kind and a hash of the paths."""
        digest = hashlib.sha256("\n".join(self.paths).encode()).hexdigest()[:8]
        return f"{self.event}.{digest}"


PARTS: tuple[tuple[str, str], ...] = (
    ("reply type", "$.type"),
    ("resignation", "$.state.controller.controller_id"),
    ("ZooKeeper state", "$.state.zk"),
    ("controller state", "$.state.controller"),
    ("configuration", "$.state.config"),
    ("requests", "$.requests"),
    ("failures", "$.failures"),
    ("results", "$.results"),
)
"""The parts of a reply, in cause order, each with the JSON path prefix of its members."""


def part_of(path: str) -> str:
    """The part of the reply ``path`` is in (``other`` for a path outside every part)."""
    if path.startswith("<"):
        return path.strip("<>")
    for name, prefix in PARTS:
        if path == prefix or path.startswith((prefix + ".", prefix + "[")):
            return name
    return "other"


@dataclass(frozen=True, order=True)
class Cause:
    """A group of divergences: the first part of the reply that differs (its identity), with the first differing
    path in it and the event kind of the divergence the group was first met with (information only)."""

    part: str
    path: str = field(default="", compare=False)
    event: str = field(default="", compare=False)
    """The event kind of the divergence the group was first met with (not part of the group's identity)."""

    @staticmethod
    def of(signature: Signature) -> Cause:
        order = [name for name, _prefix in PARTS]
        rank = {name: i for i, name in enumerate(order)}
        first = min(signature.paths, key=lambda p: (rank.get(part_of(p), len(order)), p))
        part = part_of(first)
        path = _REQUEST_TYPE.sub("$.requests[*]", first)
        prefix = dict(PARTS).get(part, "")
        if prefix and path.startswith(prefix):  # down to the part's member (a request's field), no deeper
            member = _MEMBER.match(path[len(prefix) :])
            path = prefix + (member.group(0) if member else "")
        return Cause(part, path, signature.event)

    def render(self) -> str:
        return f"{self.part}: {self.path}"

    @property
    def slug(self) -> str:
        return self.part.replace(" ", "-")


_MEMBER = re.compile(r"^(\[[^\]]*\])?(\.[A-Za-z_0-9]+)?")
_REQUEST_TYPE = re.compile(r"^\$\.requests\[(?:LeaderAndIsr|UpdateMetadata|StopReplica)\]")
