"""Compare a SUT's reply with the expected one and list the differences as readable, path-named items.

Request order (protocol 1.1): each request carries its ``position`` among the requests to its broker. It is
compared as one more field of the paired request, so a request sent to a broker out of order is reported as
``$.requests[UpdateMetadata to broker 1].position: expected 1, got 0``. Only each broker's order is compared:
every broker has its own queue and send thread (§3.4), so the order across brokers is not observable.

Both replies are brought to canonical JSON first, so sets are order-free. Requests and failures are
sets (Kafka does not order a batch): they are paired by (type, recipient broker), then, where one broker
gets several requests of a type, by the partitions they name, and by partition within a request, before
their fields are compared, so a diff says
``$.requests[LeaderAndIsr to broker 2].partition_states[t-0].leader_epoch: expected 3, got 4`` rather
than listing whole requests as missing and unexpected; only a request with no counterpart is reported
whole (``expected {...}, got (absent)`` or the reverse). Election recipients are a set as well. Paths
listed in a vector's ``unspecified`` are removed from both sides before comparing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kcspec.conformance.protocol import messages as m

_MISSING = object()


@dataclass(frozen=True)
class Difference:
    """One mismatch: the JSON path, the expected and the actual value (``None`` text when absent)."""

    path: str
    expected: str
    actual: str

    def render(self) -> str:
        return f"{self.path}: expected {self.expected}, got {self.actual}"


def show(value: object) -> str:
    """A value as differences show it (``(absent)`` for a missing member, a string as is when it is that)."""
    if isinstance(value, str) and value == "(absent)":
        return value
    return _show(value)


def _show(value: object) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def normalise(reply: object, unspecified: Iterable[str] = (), order: bool = True) -> dict[str, Any]:
    """The canonical JSON of a reply without its id, with set-valued lists sorted and unspecified paths removed;
    without its requests' ``position`` members unless ``order``."""
    wire = m.to_wire(0, reply)
    del wire["id"]
    if not order and isinstance(wire.get("requests"), list):
        for item in wire["requests"]:
            item.pop("position", None)
    if wire["type"] == "election":
        wire["result"]["recipients"] = sorted(wire["result"]["recipients"])
    for path in unspecified:
        _remove(wire, path)
    return wire


def _remove(data: dict[str, Any], path: str) -> None:
    parts = [p for p in path.lstrip("$").split(".") if p]
    node: Any = data
    for part in parts[:-1]:
        if not isinstance(node, dict) or part not in node:
            return
        node = node[part]
    if parts and isinstance(node, dict):
        node.pop(parts[-1], None)


def diff_replies(
    expected: object,
    actual: object,
    unspecified: Iterable[str] = (),
    order: bool = True,
    metrics: bool = True,
) -> list[Difference]:
    """Every difference between two replies (empty list: they agree).

    Requests are compared with their ``position`` (each broker's send order, protocol 1.1) when ``order`` is true
    and the expected reply knows its order; otherwise as a set only (``order`` false: a SUT of protocol 1.0).
    A step reply's ``metrics`` (protocol 1.2) are compared when ``metrics`` is true (the SUT declares the
    ``metrics`` capability)."""
    unspecified = tuple(unspecified) + (() if metrics else ("$.metrics",))
    order = order and not (isinstance(expected, m.StepReply) and not expected.ordered)
    exp = normalise(expected, unspecified, order)
    act = normalise(actual, unspecified, order)
    out: list[Difference] = []
    if exp["type"] != act["type"]:
        detail = f"{act.get('code')}: {act.get('message')}" if act["type"] == "error" else act["type"]
        return [Difference("$.type", _show(exp["type"]), f"{act['type']!r} ({detail})")]
    for key in sorted(set(exp) | set(act)):
        e, a = exp.get(key, _MISSING), act.get(key, _MISSING)
        if key in ("requests", "failures") and isinstance(e, list) and isinstance(a, list):
            keys = _REQUEST_KEYS if key == "requests" else (_failure_key,)
            out.extend(_set_diff(f"$.{key}", e, a, keys))
        else:
            out.extend(diff_values(f"$.{key}", e, a))
    return out


def _request_key(item: Any) -> str:
    if isinstance(item, dict):
        return f"{item.get('type')} to broker {item.get('broker')}"
    return json.dumps(item, sort_keys=True)


def _request_partitions_key(item: Any) -> str:
    """The request key with the partitions the request is about, telling apart several requests of one type
    to one broker (a failover sends a broker several UpdateMetadata)."""
    states = item.get("partition_states") if isinstance(item, dict) else None
    if not isinstance(states, list):
        return _request_key(item)
    tps = sorted(str(s.get("tp")) if isinstance(s, dict) else "?" for s in states)
    return f"{_request_key(item)} ({', '.join(tps) if tps else 'no partitions'})"


def _failure_key(item: Any) -> str:
    if isinstance(item, dict):
        return f"{item.get('machine')} {item.get('tp')}/{item.get('replica')}"
    return json.dumps(item, sort_keys=True)


def _partition_key(item: Any) -> str:
    return str(item.get("tp")) if isinstance(item, dict) else json.dumps(item, sort_keys=True)


Key = Callable[[Any], str]
_REQUEST_KEYS: tuple[Key, ...] = (_request_key, _request_partitions_key)


def _pair(exp: list[Any], act: list[Any], keys: Sequence[Key]) -> list[tuple[str, Any, Any]]:
    """Pair the elements of two sets, each pair named by its key (``_MISSING`` for an element left unpaired).

    Elements are grouped by the first key; a group with at most one element on each side is a pair (or
    an unpaired element). A larger group is split again by the next, finer key. A group that no key
    splits is paired greedily, the two elements with the fewest differing fields first (ties in the order
    of their canonical JSON, so the result is deterministic); what is left over on the larger side is
    unpaired, i.e. genuinely missing or unexpected. Decision: pair rather than list whole elements as
    missing and unexpected, so that a SUT that gets one field wrong in every request is told that field.
    """
    groups: dict[str, tuple[list[Any], list[Any]]] = {}
    for side, items in ((0, exp), (1, act)):
        for x in items:
            groups.setdefault(keys[0](x), ([], []))[side].append(x)
    out: list[tuple[str, Any, Any]] = []
    for name in sorted(groups):
        es, as_ = groups[name]
        if len(es) <= 1 and len(as_) <= 1:
            out.append((name, es[0] if es else _MISSING, as_[0] if as_ else _MISSING))
        elif len(keys) > 1:
            out.extend(_pair(es, as_, keys[1:]))
        else:
            out.extend(_pair_closest(name, es, as_))
    return out


def _pair_closest(name: str, exp: list[Any], act: list[Any]) -> list[tuple[str, Any, Any]]:
    es = sorted(exp, key=lambda x: json.dumps(x, sort_keys=True))
    as_ = sorted(act, key=lambda x: json.dumps(x, sort_keys=True))
    out: list[tuple[str, Any, Any]] = []
    while es and as_:
        cost = [(len(_record_diff(name, e, a)), i, j) for i, e in enumerate(es) for j, a in enumerate(as_)]
        _, i, j = min(cost)
        out.append((name, es.pop(i), as_.pop(j)))
    out.extend((name, e, _MISSING) for e in es)
    out.extend((name, _MISSING, a) for a in as_)
    return out


def _set_diff(path: str, exp: list[Any], act: list[Any], keys: Sequence[Key]) -> list[Difference]:
    """Diff two sets: equal elements agree; the others are paired (``_pair``) and their fields compared, and
    an element left unpaired is reported whole, at ``path[its key]``, as absent on the other side."""
    exp_text = {json.dumps(x, sort_keys=True): x for x in exp}
    act_text = {json.dumps(x, sort_keys=True): x for x in act}
    only_e = [x for t, x in exp_text.items() if t not in act_text]
    only_a = [x for t, x in act_text.items() if t not in exp_text]
    out: list[Difference] = []
    for name, e, a in _pair(only_e, only_a, keys):
        sub = f"{path}[{name}]"
        if e is _MISSING or a is _MISSING:
            out.append(Difference(sub, _show(e), _show(a)))
        else:
            out.extend(_record_diff(sub, e, a))
    return out


def _record_diff(path: str, e: Any, a: Any) -> list[Difference]:
    if isinstance(e, dict) and isinstance(a, dict):
        out: list[Difference] = []
        for k in sorted(set(e) | set(a)):
            ev, av = e.get(k, _MISSING), a.get(k, _MISSING)
            if k == "partition_states" and isinstance(ev, list) and isinstance(av, list):
                out.extend(_set_diff(f"{path}.partition_states", ev, av, (_partition_key,)))
            else:
                out.extend(diff_values(f"{path}.{k}", ev, av))
        return out
    return diff_values(path, e, a)


def diff_values(path: str, e: Any, a: Any) -> list[Difference]:
    """Recursive structural diff of two JSON values."""
    if e == a:
        return []
    if isinstance(e, dict) and isinstance(a, dict):
        out: list[Difference] = []
        for k in sorted(set(e) | set(a)):
            sub = f"{path}.{k}" if k.isidentifier() else f"{path}[{json.dumps(k)}]"
            out.extend(diff_values(sub, e.get(k, _MISSING), a.get(k, _MISSING)))
        return out
    if (
        isinstance(e, list)
        and isinstance(a, list)
        and len(e) == len(a)
        and any(isinstance(x, dict) for x in e)
    ):
        out = []
        for i, (x, y) in enumerate(zip(e, a, strict=True)):
            out.extend(diff_values(f"{path}[{i}]", x, y))
        return out
    return [Difference(path, _show(e), _show(a))]
