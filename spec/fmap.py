"""An immutable, hashable finite map: the value type of every map-valued field of the data model.

The spec's expression language treats maps as finite functions (TLA+ functions, Z3 arrays over a
finite domain); ``FMap`` is their Python value. Iteration order is insertion order, but equality
and hashing ignore order, and the canonical JSON form sorts keys, so two equal maps always
serialise identically.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")


class FMap(Mapping[K, V], Generic[K, V]):
    """A frozen dict: ``Mapping`` plus functional updates that return new maps."""

    __slots__ = ("_d", "_h")

    # A mapping is told apart from an iterable of pairs by these overloads: a map keyed by a tuple record
    # (``TopicPartition``) is also an iterable of tuples, which a single union parameter would let match both.
    @overload
    def __init__(self, items: Mapping[K, V]) -> None: ...

    @overload
    def __init__(self, items: Iterable[tuple[K, V]] = ()) -> None: ...

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        # another FMap is copied as a dict (C-level), not key by key through ``__getitem__``; a dict (the common
        # case) is told apart first, by its exact type: ``isinstance`` against this ABC-derived class costs more
        # than the copy of a small map
        self._d: dict[K, V] = dict(
            items if type(items) is dict else items._d if isinstance(items, FMap) else items
        )
        self._h: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    # The read-only views and ``get`` of the underlying dict, instead of ``Mapping``'s Python-level mixins (which
    # go through ``__iter__`` and ``__getitem__`` per entry): same contents, same order.

    def keys(self) -> KeysView[K]:
        return self._d.keys()

    def values(self) -> ValuesView[V]:
        return self._d.values()

    def items(self) -> ItemsView[K, V]:
        return self._d.items()

    def get(self, key: K, default: Any = None) -> Any:
        return self._d.get(key, default)

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self._d.items()))
        return self._h

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FMap):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FMap({self._d!r})"

    def __reduce__(self) -> tuple[Callable[[dict[K, V]], FMap[K, V]], tuple[dict[K, V]]]:
        # the entries only: the cached hash is not pickled, as another process may hash strings differently
        return _unpickle, (self._d,)

    @classmethod
    def adopt(cls, d: dict[K, V]) -> FMap[K, V]:
        """The map of a fresh dict nobody else holds (no copy)."""
        m: FMap[K, V] = cls.__new__(cls)
        m._d = d
        m._h = None
        return m

    def set(self, key: K, value: V) -> FMap[K, V]:
        d = self._d.copy()
        d[key] = value
        return FMap.adopt(d)

    def remove(self, key: K) -> FMap[K, V]:
        if key not in self._d:
            return self
        d = self._d.copy()
        del d[key]
        return FMap.adopt(d)

    def remove_all(self, keys: Iterable[K]) -> FMap[K, V]:
        ks = set(keys)
        return FMap.adopt({k: v for k, v in self._d.items() if k not in ks})

    def merge(self, other: Mapping[K, V]) -> FMap[K, V]:
        d = self._d.copy()
        d.update(other._d if isinstance(other, FMap) else other)
        return FMap.adopt(d)

    def keys_set(self) -> frozenset[K]:
        """``frozenset(self)``, reusing the stored hashes of the keys."""
        return frozenset(self._d)

    def map_values(self, fn: Callable[[V], Any]) -> FMap[K, Any]:
        return FMap((k, fn(v)) for k, v in self._d.items())

    def as_dict(self) -> dict[K, V]:
        return dict(self._d)


def _unpickle(d: dict[K, V]) -> FMap[K, V]:
    """The map of an unpickled dict (nobody else holds it)."""
    return FMap.adopt(d)


EMPTY: FMap[Any, Any] = FMap()
