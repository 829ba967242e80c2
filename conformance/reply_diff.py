"""Compare a SUT's reply with the expected one and list the differences as readable, path-named items.

Both replies are brought to canonical JSON first, so sets are order-free. Requests and failures are
sets (Kafka does not order a batch): they are matched by (type, recipient broker) and by partition
before their fields are compared, so a diff says "LeaderAndIsr to broker 2: partition t-0: leader_epoch
expected 3, got 4" rather than "element 5 differs". Election recipients are a set as well. Paths
listed in a vector's ``unspecified`` are removed from both sides before comparing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def _show(value: object) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def normalise(reply: object, unspecified: Iterable[str] = ()) -> dict[str, Any]:
    """The canonical JSON of a reply without its id, with set-valued lists sorted and unspecified paths removed."""
    wire = m.to_wire(0, reply)
    del wire["id"]
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


def diff_replies(expected: object, actual: object, unspecified: Iterable[str] = ()) -> list[Difference]:
    """Every difference between two replies (empty list: they agree)."""
    unspecified = tuple(unspecified)
    exp = normalise(expected, unspecified)
    act = normalise(actual, unspecified)
    out: list[Difference] = []
    if exp["type"] != act["type"]:
        detail = f"{act.get('code')}: {act.get('message')}" if act["type"] == "error" else act["type"]
        return [Difference("$.type", _show(exp["type"]), f"{act['type']!r} ({detail})")]
    for key in sorted(set(exp) | set(act)):
        e, a = exp.get(key, _MISSING), act.get(key, _MISSING)
        if key in ("requests", "failures") and isinstance(e, list) and isinstance(a, list):
            out.extend(_set_diff(f"$.{key}", e, a, _request_key if key == "requests" else _failure_key))
        else:
            out.extend(diff_values(f"$.{key}", e, a))
    return out


def _request_key(item: Any) -> str:
    if isinstance(item, dict):
        return f"{item.get('type')} to broker {item.get('broker')}"
    return json.dumps(item, sort_keys=True)


def _failure_key(item: Any) -> str:
    if isinstance(item, dict):
        return f"{item.get('machine')} {item.get('tp')}/{item.get('replica')}"
    return json.dumps(item, sort_keys=True)


def _partition_key(item: Any) -> str:
    return str(item.get("tp")) if isinstance(item, dict) else json.dumps(item, sort_keys=True)


def _set_diff(path: str, exp: list[Any], act: list[Any], key: Any) -> list[Difference]:
    """Diff two sets; elements are paired by ``key`` when it is unique on both sides."""
    exp_text = {json.dumps(x, sort_keys=True): x for x in exp}
    act_text = {json.dumps(x, sort_keys=True): x for x in act}
    only_e = [x for t, x in exp_text.items() if t not in act_text]
    only_a = [x for t, x in act_text.items() if t not in exp_text]
    ek = {key(x): x for x in only_e}
    ak = {key(x): x for x in only_a}
    out: list[Difference] = []
    if len(ek) == len(only_e) and len(ak) == len(only_a):
        for k in sorted(set(ek) | set(ak)):
            e, a = ek.get(k, _MISSING), ak.get(k, _MISSING)
            sub = f"{path}[{k}]"
            if e is _MISSING or a is _MISSING:
                out.append(Difference(sub, _show(e), _show(a)))
            else:
                out.extend(_record_diff(sub, e, a))
        return out
    out.extend(Difference(f"{path}[missing]", _show(x), "(absent)") for x in only_e)
    out.extend(Difference(f"{path}[unexpected]", "(absent)", _show(x)) for x in only_a)
    return out


def _record_diff(path: str, e: Any, a: Any) -> list[Difference]:
    if isinstance(e, dict) and isinstance(a, dict):
        out: list[Difference] = []
        for k in sorted(set(e) | set(a)):
            ev, av = e.get(k, _MISSING), a.get(k, _MISSING)
            if k == "partition_states" and isinstance(ev, list) and isinstance(av, list):
                out.extend(_set_diff(f"{path}.partition_states", ev, av, _partition_key))
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
