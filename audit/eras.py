"""Controller-epoch eras: where a history's controller epochs start over, and the fencing each era implies.

Kafka's controller epoch lives in ZooKeeper's ``/controller_epoch`` znode (semantics §9): each election
increments it, so within one ZooKeeper state the epochs only grow and a write by an epoch after a newer epoch
acted is a stale controller's write (I8, ``stale-controller-write``). When the znode is lost (a ZooKeeper
reset or wipe, a new cluster on the same hosts and log folders, a restored snapshot) the next controller
creates it again and logs ``Epoch incremented to 1`` (``successfully elected as the controller. Epoch
incremented to 1 and epoch zk version is now 1`` from 2.3): the epochs start over, and the earlier epochs say
nothing about the new controller's writes. Each such start is a new **era** of the history; fencing, the
tracked previous states and the leader-epoch rule compare records of one era only.

Decisions (the logs and the semantics document are silent on how to tell a reset from a stale controller):

* An era starts at a controller's **election record** (``controller_elected``: ``Epoch incremented to <e>``,
  ``successfully elected … Epoch incremented to <e>``) whose epoch is lower than an epoch that already acted
  in the current era. Kafka never elects a controller with an epoch lower than the znode's, so such an
  election is the znode starting over. (A stale controller's election line comes *before* the newer epoch's
  acts; clock skew between brokers larger than the time between two elections could hide it.)
* From the epochs themselves (no election line in the logs, e.g. state-change logs alone): an era starts at
  the first act of an epoch that has not acted in the current era, is lower than an epoch that has, and comes
  after the **last** act of every higher epoch of the era. A stale controller acted before the newer epoch
  started (it was the controller then) or acts while the newer one still does, so it fails one of the two.
* A record belongs to the era its timestamp falls in (a record without timestamp to the first); the acts are
  the reader's cells (``stats.Cell``: per file, kind and epoch, the first and last timestamp and the first
  timestamp's line), so two resets within one file whose epochs repeat exactly are seen as one. An old
  epoch's write after an era started is compared with the new era's epochs only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kcspec.audit import stats

ELECTION_KINDS = ("controller_elected",)
"""Records of a controller's election with its new epoch (the lines that show the znode's value)."""


@dataclass(frozen=True)
class Act:
    """A controller epoch acting in one file: its first and last timestamp (``ts_key``) and the first's line."""

    ts: int
    last: int
    epoch: int
    fid: int
    line: int | None
    election: bool


@dataclass(frozen=True)
class EraStart:
    """Where an era of ``history`` begins: the act of ``epoch`` at ``ts`` (file id, line), after ``after``
    (the highest epoch of the era before) had acted; ``election``: seen from an election record."""

    history: int
    era: int
    ts: int
    epoch: int
    fid: int
    line: int | None
    after: int
    election: bool

    def describe(self, names: Sequence[str]) -> str:
        where = f"{names[self.fid]}:{self.line}" if self.line is not None else names[self.fid]
        how = "a controller was elected with" if self.election else "the controller acted with"
        return (
            f"controller epochs start over at {stats.ts_text(self.ts)} ({where}): {how} epoch {self.epoch} "
            f"after epoch {self.after} had acted (a ZooKeeper reset or a new cluster); era {self.era} of its "
            f"history is audited on its own"
        )


@dataclass(frozen=True)
class Fence:
    """In era ``era`` of ``history``, ``epoch`` is fenced from ``ts`` on: the first act of ``newer`` (the
    earliest of the era's higher epochs), at file ``fid`` line ``line``."""

    history: int
    era: int
    epoch: int
    ts: int
    newer: int
    fid: int
    line: int | None


@dataclass(frozen=True)
class Eras:
    starts: tuple[EraStart, ...]
    fences: tuple[Fence, ...]

    def starts_of(self) -> dict[int, list[int]]:
        """history id → the timestamps (``ts_key``) where its eras 1, 2, … begin, ascending."""
        out: dict[int, list[int]] = {}
        for s in self.starts:
            out.setdefault(s.history, []).append(s.ts)
        return out


def acts_of(
    cells: Iterable[stats.Cell], kinds: Iterable[str], history: Sequence[int]
) -> dict[int, list[Act]]:
    """history id → the acts of its controller epochs (records of ``kinds`` with an epoch and a timestamp)."""
    wanted = set(kinds)
    out: dict[int, list[Act]] = {}
    for c in cells:
        if c.status != "record" or c.kind not in wanted or c.controller_epoch is None or c.first_ts is None:
            continue
        last = c.last_ts if c.last_ts is not None else c.first_ts
        act = Act(c.first_ts, last, c.controller_epoch, c.fid, c.first_line, c.kind in ELECTION_KINDS)
        out.setdefault(history[c.fid], []).append(act)
    return out


def find(acts: dict[int, list[Act]]) -> Eras:
    """The eras and fences of each history's acts (the module's decisions)."""
    starts: list[EraStart] = []
    fences: list[Fence] = []
    for h, mine in sorted(acts.items()):
        era = 0
        first: dict[int, Act] = {}
        last: dict[int, int] = {}
        top: int | None = None  # the highest epoch of first: most acts are of it, and no epoch is higher
        for a in sorted(mine, key=_order):
            higher = [n for n in first if n > a.epoch] if top is not None and top > a.epoch else []
            restart = bool(higher) and (
                a.election or (a.epoch not in first and all(last[n] < a.ts for n in higher))
            )
            if restart:
                fences += fences_of(h, era, first.values())
                era += 1
                starts.append(EraStart(h, era, a.ts, a.epoch, a.fid, a.line, max(higher), a.election))
                first, last, top = {}, {}, None
            if a.epoch not in first or _order(a) < _order(first[a.epoch]):
                first[a.epoch] = a
            last[a.epoch] = max(last.get(a.epoch, a.last), a.last)
            top = a.epoch if top is None else max(top, a.epoch)
        fences += fences_of(h, era, first.values())
    return Eras(tuple(starts), tuple(fences))


def _order(a: Act) -> tuple[int, int, int, int]:
    return (a.ts, a.fid, a.line if a.line is not None else -1, a.epoch)


def fences_of(history: int, era: int, acts: Iterable[Act]) -> list[Fence]:
    """Each epoch of an era (``acts``: its acts) fenced by the first act of the era's earliest higher epoch."""
    first: dict[int, Act] = {}
    for a in acts:
        if a.epoch not in first or _order(a) < _order(first[a.epoch]):
            first[a.epoch] = a
    out = []
    for e in sorted(first):
        newer = [first[n] for n in first if n > e]
        if newer:
            f = min(newer, key=_order)
            out.append(Fence(history, era, e, f.ts, f.epoch, f.fid, f.line))
    return out
