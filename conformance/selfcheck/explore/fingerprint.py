"""Fingerprints of explored states: a 64-bit digest of a canonical text of the state, and a compact set of them.

The explorer does not keep the states it has visited, only their fingerprints, as TLC does:

* **canonical text** (``canonical_text``): one string per value of the data model, equal for equal values and
  different for different ones, whatever the process, the hash seed or the order in which a map or a set was
  built. Records and tuples are their fields in declaration order, strings their ``repr``, enums their names,
  sets and maps their members' texts *sorted* (a total order on strings, so no order of Python's making leaks in).
  A record's type is not written: a state's schema fixes the type of every position.
* **digest** (``blake2b_64``): the first 8 bytes of BLAKE2b (``hashlib``) over the UTF-8 text. Not Python's
  ``hash``, which is seeded per process for strings, weak for sets and maps of small integers, and maps -1 and -2
  to the same value.
* **collision probability**: as TLC states it, two of ``n`` distinct states get one fingerprint with probability
  about ``n² / 2^(bits+1)`` (``collision_probability``): 5·10⁻⁸ for a million states at 64 bits. A collision would
  make the explorer take a new state for a visited one and not explore it (the count would be one short and part
  of the space unexplored); it cannot make it report a violation that is not there. ``Fingerprinter(audit=True)``
  detects any collision (at the cost of every text kept in memory): each fingerprint remembers the text it was
  computed from, and another text with the same fingerprint raises ``FingerprintCollision`` naming both.
* **the visited set** (``FingerprintSet``): open addressing over an ``array('Q')`` of 64-bit slots, at most 70 %
  full: 11–23 bytes per fingerprint, against ~90 for a Python ``set`` of ``int`` and 8–15 KB for a state.

The text of a successor is built mostly from sub-texts of its parent: a state's maps and records are shared with
its predecessor's, so ``Fingerprinter`` remembers the text of every map, set and record it has encoded by object
identity (the object kept alive with it, so an id is never reused while remembered), and forgets them all when
told a new state is being expanded (``Fingerprinter.forget``).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import LeaderAndIsr, LeaderIsrAndControllerEpoch, PartitionReplica, TopicPartition

Digest = Callable[[bytes], int]
"""A fingerprint function: bytes → a non-negative integer below ``2**bits``."""


def blake2b_64(data: bytes) -> int:
    """The default digest: the first 64 bits of BLAKE2b, as an unsigned integer."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


@dataclass(frozen=True)
class FingerprintScheme:
    """How states are fingerprinted: the digest, its width in bits and its name (recorded in checkpoints, so that a
    run is never resumed with another one)."""

    digest: Digest = blake2b_64
    bits: int = 64
    name: str = "blake2b-64"
    audit: bool = False
    """Keep every fingerprint's canonical text and raise ``FingerprintCollision`` on a second text (tests)."""


DEFAULT_SCHEME = FingerprintScheme()


def collision_probability(states: int, bits: int = 64) -> float:
    """TLC's estimate of the probability that two of ``states`` distinct states share a fingerprint of ``bits`` bits
    (the birthday bound ``n² / 2^(bits+1)``, at most 1)."""
    return min(1.0, states * states / 2.0 ** (bits + 1))


class FingerprintCollision(Exception):
    """Two different states with one fingerprint (only raised with ``FingerprintScheme.audit``)."""

    def __init__(self, fingerprint: int, first: str, second: str) -> None:
        super().__init__(
            f"fingerprint collision: {fingerprint:#x} is the fingerprint of two different states:\n  {first}\n  {second}"
        )
        self.fingerprint = fingerprint
        self.first = first
        self.second = second


MEMO_LIMIT = 100_000
"""The most sub-texts a ``Fingerprinter`` remembers between two ``forget`` calls."""


class Fingerprinter:
    """Canonical texts and fingerprints of states, remembering sub-texts between a state's successors."""

    def __init__(self, scheme: FingerprintScheme = DEFAULT_SCHEME) -> None:
        self.scheme = scheme
        self._digest = scheme.digest
        self._seen: dict[int, str] | None = {} if scheme.audit else None
        self._memo: dict[int, tuple[object, str]] = {}
        self._encoders: dict[type, Callable[[Any], str]] = {
            int: int.__repr__,
            bool: bool.__repr__,
            str: str.__repr__,
            type(None): _none,
            tuple: self._tuple,
            frozenset: self._remembered(self._frozenset),
            FMap: self._remembered(self._fmap),
            TopicPartition: _tp_text,
            PartitionReplica: _pr_text,
            LeaderAndIsr: _lai_text,
            LeaderIsrAndControllerEpoch: _li_text,
        }

    def forget(self) -> None:
        """Forget the remembered sub-texts (before the successors of another state are fingerprinted)."""
        self._memo.clear()

    def __call__(self, value: object) -> int:
        """The fingerprint of ``value``."""
        if len(self._memo) > MEMO_LIMIT:  # a caller that never calls ``forget`` still holds a bounded memo
            self._memo.clear()
        text = self.text(value)
        fp = self._digest(text.encode())
        if self._seen is not None:
            first = self._seen.setdefault(fp, text)
            if first != text:
                raise FingerprintCollision(fp, first, text)
        return fp

    def text(self, value: object) -> str:
        """The canonical text of ``value``."""
        enc = self._encoders.get(type(value))
        if enc is None:
            enc = self._encoder(type(value))
        return enc(value)

    def _remembered(self, encode: Callable[[Any], str]) -> Callable[[Any], str]:
        memo = self._memo

        def remembered(value: Any) -> str:
            hit = memo.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            text = encode(value)
            memo[id(value)] = (value, text)
            return text

        return remembered

    def _tuple(self, value: tuple[Any, ...]) -> str:
        return "(" + ",".join(map(self.text, value)) + ")"

    def _frozenset(self, value: frozenset[Any]) -> str:
        return "{" + ",".join(sorted(map(self.text, value))) + "}"

    def _fmap(self, value: FMap[Any, Any]) -> str:
        d = value._d
        if not d:
            return "{}"
        # a map's keys are of one type, and so are its values: their encoders are looked up once (an entry of
        # another type still goes through ``text``)
        text, encoders = self.text, self._encoders
        k0, v0 = next(iter(d.items()))
        tk, tv = type(k0), type(v0)
        ek = encoders.get(tk) or self._encoder(tk)
        ev = encoders.get(tv) or self._encoder(tv)
        items = [
            (ek(k) if type(k) is tk else text(k)) + ":" + (ev(v) if type(v) is tv else text(v))
            for k, v in d.items()
        ]
        return "{" + ",".join(sorted(items)) + "}"

    def _encoder(self, cls: type) -> Callable[[Any], str]:
        enc: Callable[[Any], str]
        if issubclass(cls, enum.Enum):
            enc = _enum_name
        elif issubclass(cls, tuple):  # the tuple records (TopicPartition, LeaderAndIsr, …): their fields
            enc = self._remembered(self._tuple)
        elif dataclasses.is_dataclass(cls):
            names = tuple(f.name for f in dataclasses.fields(cls))
            fields = " + ',' + ".join(f"text(v.{n})" for n in names) or "''"
            namespace: dict[str, Any] = {"text": self.text}
            exec(f"def record(v):\n    return '(' + {fields} + ')'\n", namespace)
            enc = self._remembered(namespace["record"])
        else:
            raise TypeError(f"no canonical text for a value of type {cls.__name__}")
        self._encoders[cls] = enc
        return enc


def _none(_: None) -> str:
    return "N"


def _enum_name(value: enum.Enum) -> str:
    return value._name_


# The four tuple records held by the thousand in a state, written directly: the text ``_tuple`` gives them, without
# a call per field (``tests/unit/explore/test_fingerprint.py`` checks both agree).


def _ints(value: tuple[int, ...]) -> str:
    return "(" + ",".join(map(int.__repr__, value)) + ")"


def _tp_text(tp: TopicPartition) -> str:
    return f"({tp[0]!r},{tp[1]!r})"


def _pr_text(pr: PartitionReplica) -> str:
    tp = pr[0]
    return f"(({tp[0]!r},{tp[1]!r}),{pr[1]!r})"


def _lai_text(lai: LeaderAndIsr) -> str:
    return f"({lai[0]!r},{lai[1]!r},{_ints(lai[2])},{lai[3]!r})"


def _li_text(li: LeaderIsrAndControllerEpoch) -> str:
    return f"({_lai_text(li[0])},{li[1]!r})"


_LOAD = 0.7
"""The most a ``FingerprintSet``'s table is filled before it doubles."""


class FingerprintSet:
    """A set of fingerprints (integers in ``[0, 2**64)``) in one flat table: 8 bytes per slot, 11–23 per member.

    Linear probing over a power-of-two table; 0 marks a free slot, so the fingerprint 0 is kept apart."""

    def __init__(self, capacity: int = 1024) -> None:
        size = 1024
        while size * _LOAD < capacity:
            size *= 2
        self._table = array("Q", bytes(8 * size))
        self._mask = size - 1
        self._count = 0
        self._zero = False

    def __len__(self) -> int:
        return self._count + self._zero

    @property
    def nbytes(self) -> int:
        """The memory the table takes."""
        return self._table.itemsize * len(self._table)

    def add(self, fp: int) -> bool:
        """Add ``fp``; ``True`` if it was not a member."""
        if fp == 0:
            new = not self._zero
            self._zero = True
            return new
        table, mask = self._table, self._mask
        i = fp & mask
        while True:
            v = table[i]
            if v == 0:
                table[i] = fp
                self._count += 1
                if self._count > _LOAD * len(table):
                    self._grow()
                return True
            if v == fp:
                return False
            i = (i + 1) & mask

    def __contains__(self, fp: object) -> bool:
        if not isinstance(fp, int):
            return False
        if fp == 0:
            return self._zero
        table, mask = self._table, self._mask
        i = fp & mask
        while True:
            v = table[i]
            if v == 0:
                return False
            if v == fp:
                return True
            i = (i + 1) & mask

    def __iter__(self) -> Iterator[int]:
        if self._zero:
            yield 0
        yield from (v for v in self._table if v)

    def _grow(self) -> None:
        old = self._table
        self._table = array("Q", bytes(16 * len(old)))
        self._mask = len(self._table) - 1
        self._count = 0
        for v in old:
            if v:
                self._insert(v)

    def _insert(self, fp: int) -> None:
        table, mask = self._table, self._mask
        i = fp & mask
        while table[i] != 0:
            i = (i + 1) & mask
        table[i] = fp
        self._count += 1

    def to_bytes(self) -> bytes:
        """The members, 8 bytes each (little-endian), for a checkpoint."""
        return array("Q", iter(self)).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, keep: Callable[[int], bool] | None = None) -> FingerprintSet:
        """The set of the members ``to_bytes`` wrote (only those ``keep`` accepts, if given)."""
        members = array("Q")
        members.frombytes(data)
        out = cls(len(members))
        for fp in members:
            if keep is None or keep(fp):
                out.add(fp)
        return out


__all__ = [
    "DEFAULT_SCHEME",
    "Digest",
    "FingerprintCollision",
    "FingerprintScheme",
    "FingerprintSet",
    "Fingerprinter",
    "blake2b_64",
    "collision_probability",
]
