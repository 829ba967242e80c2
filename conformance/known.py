"""The ``--known FILE`` of a conformance run: a SUT's acknowledged deviations, each with its reason.

The file is JSON::

    {
      "format": "kcspec-known-deviations/1",
      "deviations": [
        {"vector": "kafka-2.8.elect.offline.isr-1.live-2_3.down-none.allow-0.unclean-0",
         "reason": "we elect unclean leaders on purpose (ticket 12)"},
        {"signature": {"event": "BrokerFailure",
                       "paths": ["$.state.zk.partition_states[*].leader_and_isr.leader"]},
         "reason": "same deviation, seen by differential testing"}
      ]
    }

Each deviation names exactly one of ``vector`` (a vector id, as printed in the report) or ``signature``
(a divergence signature, as the differential part prints it, ``kcspec.conformance.signature``), and a
non-empty ``reason``. A divergence matches a signature entry when its event kind is the entry's and each
of its paths is among the entry's paths. A signature may also name values, and then matches only them::

    {"signature": {"event": "ControllerFailover", "paths": ["$.state.controller.controller_id"],
                   "values": [{"path": "$.state.controller.controller_id", "expected": 1, "actual": -1}]},
     "reason": "we resign where Kafka does not (ticket 7)"}

Each value names a path of the entry (general, as the report prints it) and the reference's ``expected`` value,
the SUT's ``actual`` value, or both (JSON values; a string is compared as the report shows it, ``"(absent)"``
for a missing member): a difference at that path matches only those values, so the entry cannot hide another
wrong value at the same place. A matching failure is reported with the verdict *known* and does
not fail the run.

Stale entries (decided here, and shown in the report):

* a ``vector`` entry whose vector ran and **passed** is stale and **fails the run** (the verdict *failed*,
  "stale known deviation: remove the entry"), as pytest's strict xfail does: the vectors are deterministic,
  so a pass means the deviation is gone and the file is out of date;
* a ``signature`` entry that the differential search did not meet is reported as *not seen* in a note and
  does **not** fail the run: the search is random and bounded, so not meeting a divergence is no proof that
  it is gone;
* an entry whose vector or search was not run (not selected, not supported, skipped) is reported as *not
  checked* in a note.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kcspec.conformance.reply_diff import Difference, show
from kcspec.conformance.signature import Signature, general_path
from kcspec.conformance.verdicts import Outcome, Verdict
from kcspec.spec import bounded_json

FORMAT = "kcspec-known-deviations/1"
MAX_BYTES = 4 * 1024 * 1024


class KnownFileError(ValueError):
    """A ``--known`` file that cannot be used; the message names the file and the JSON path."""


@dataclass(frozen=True)
class KnownDeviation:
    """One acknowledged deviation: a vector id or a divergence signature, the reason, and where it is written."""

    reason: str
    where: str
    """``FILE $.deviations[i]``, for the report."""
    vector: str | None = None
    signature: Signature | None = None
    values: tuple[NamedValue, ...] = ()
    """Values the entry names (``signature.values``): a difference at a named path matches only them."""

    def describe(self) -> str:
        what = f"vector {self.vector}" if self.vector is not None else f"signature {self.render_signature()}"
        return f"{what} ({self.where})"

    def render_signature(self) -> str:
        return self.signature.render() if self.signature is not None else ""


@dataclass(frozen=True)
class KnownDeviations:
    path: Path | None
    deviations: tuple[KnownDeviation, ...]

    @property
    def vectors(self) -> dict[str, KnownDeviation]:
        return {d.vector: d for d in self.deviations if d.vector is not None}

    @property
    def signatures(self) -> tuple[KnownDeviation, ...]:
        return tuple(d for d in self.deviations if d.signature is not None)

    def match(
        self, signature: Signature, differences: Sequence[Difference] | None = None
    ) -> KnownDeviation | None:
        """The first signature entry that covers ``signature`` and, where it names values, ``differences``."""
        return next(
            (
                d
                for d in self.signatures
                if d.signature is not None
                and d.signature.covers(signature)
                and (differences is None or all(_values_match(d.values, x) for x in differences))
            ),
            None,
        )


def _values_match(values: tuple[NamedValue, ...], d: Difference) -> bool:
    """``d`` agrees with every value entry naming its (general) path; a path no entry names is any value."""
    path = general_path(d.path)
    named = [v for v in values if v.path == path]
    return not named or any(v.accepts(d) for v in named)


@dataclass(frozen=True)
class NamedValue:
    """A known difference's values: at ``path`` (general, as in a signature), the reference's ``expected`` and
    the SUT's ``actual`` JSON values (``None``: any value). A difference at that path matches only these."""

    path: str
    expected: str | None
    actual: str | None

    def accepts(self, d: Difference) -> bool:
        return (self.expected is None or d.expected == self.expected) and (
            self.actual is None or d.actual == self.actual
        )


NO_KNOWN = KnownDeviations(None, ())


def _fail(where: str, message: str) -> KnownFileError:
    return KnownFileError(f"{where}: {message}")


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"expected a non-empty string, got {json.dumps(value)[:80]}")
    return value


def parse(data: Any, name: str) -> KnownDeviations:
    """Validate the decoded JSON of a known-deviations file named ``name``."""
    if not isinstance(data, dict):
        raise _fail(
            f"{name} $", f"expected a JSON object with 'format' and 'deviations', got {type(data).__name__}"
        )
    extra = sorted(set(data) - {"format", "deviations"})
    if extra:
        raise _fail(f"{name} $", f"unknown member(s) {', '.join(extra)} (known: format, deviations)")
    if data.get("format") != FORMAT:
        raise _fail(f"{name} $.format", f"expected {FORMAT!r}, got {json.dumps(data.get('format'))}")
    entries = data.get("deviations")
    if not isinstance(entries, list):
        raise _fail(f"{name} $.deviations", "expected a list of deviations")
    out: list[KnownDeviation] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(entries):
        where = f"{name} $.deviations[{i}]"
        if not isinstance(entry, dict):
            raise _fail(where, "expected an object with 'vector' or 'signature', and 'reason'")
        extra = sorted(set(entry) - {"vector", "signature", "reason"})
        if extra:
            raise _fail(where, f"unknown member(s) {', '.join(extra)} (known: vector, signature, reason)")
        if ("vector" in entry) == ("signature" in entry):
            raise _fail(where, "give exactly one of 'vector' (a vector id) or 'signature'")
        if "reason" not in entry:
            raise _fail(where, "every deviation needs a 'reason'")
        reason = _string(entry["reason"], f"{where}.reason")
        if "vector" in entry:
            vector = _string(entry["vector"], f"{where}.vector")
            key = f"vector {vector}"
            deviation = KnownDeviation(reason, where, vector=vector)
        else:
            signature, values = _signature(entry["signature"], f"{where}.signature")
            key = f"signature {signature.render()} {values}"
            deviation = KnownDeviation(reason, where, signature=signature, values=values)
        if key in seen:
            raise _fail(where, f"{key} is already listed at {seen[key]}")
        seen[key] = where
        out.append(deviation)
    return KnownDeviations(None, tuple(out))


def _values(value: Any, paths: tuple[str, ...], where: str) -> tuple[NamedValue, ...]:
    if not isinstance(value, list) or not value:
        raise _fail(where, 'expected a non-empty list of {"path": P, "expected": V, "actual": V}')
    out: list[NamedValue] = []
    for j, item in enumerate(value):
        at = f"{where}[{j}]"
        if (
            not isinstance(item, dict)
            or "path" not in item
            or not set(item) <= {"path", "expected", "actual"}
        ):
            raise _fail(at, 'expected {"path": P, "expected": V, "actual": V} (expected and actual optional)')
        path = general_path(_string(item["path"], f"{at}.path"))
        if path not in paths:
            raise _fail(f"{at}.path", f"{path!r} is not one of the entry's paths")
        if "expected" not in item and "actual" not in item:
            raise _fail(at, "name the expected value, the actual value or both")
        out.append(
            NamedValue(
                path,
                show(item["expected"]) if "expected" in item else None,
                show(item["actual"]) if "actual" in item else None,
            )
        )
    return tuple(out)


def _signature(value: Any, where: str) -> tuple[Signature, tuple[NamedValue, ...]]:
    if not isinstance(value, dict) or not {"event", "paths"} <= set(value) <= {"event", "paths", "values"}:
        raise _fail(
            where,
            'expected {"event": KIND, "paths": [JSON paths]} as the report prints it, optionally with '
            '"values": [{"path": P, "expected": V, "actual": V}]',
        )
    from kcspec.spec.events import EVENTS_BY_KIND

    event = _string(value["event"], f"{where}.event")
    if event not in EVENTS_BY_KIND:
        raise _fail(
            f"{where}.event", f"unknown event kind {event!r} (known: {', '.join(sorted(EVENTS_BY_KIND))})"
        )
    paths = value["paths"]
    if not isinstance(paths, list) or not paths:
        raise _fail(f"{where}.paths", "expected a non-empty list of JSON paths")
    for j, p in enumerate(paths):
        text = _string(p, f"{where}.paths[{j}]")
        if not (text.startswith("$") or (text.startswith("<") and text.endswith(">"))):
            raise _fail(
                f"{where}.paths[{j}]", f"expected a JSON path starting with '$' or a <failure>, got {text!r}"
            )
    signature = Signature(event, tuple(sorted(set(paths))))
    values = _values(value["values"], signature.paths, f"{where}.values") if "values" in value else ()
    return signature, values


def load(path: Path) -> KnownDeviations:
    """Read and validate a known-deviations file; ``KnownFileError`` names the file and what is wrong."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _fail(
                str(path), f"the file has {size} bytes; a known-deviations file is at most {MAX_BYTES}"
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(str(path), f"cannot read: {exc}") from None
    try:
        data = bounded_json.loads(text)
    except (json.JSONDecodeError, ValueError) as exc:
        raise _fail(str(path), f"not JSON: {exc}") from None
    return replace(parse(data, str(path)), path=path)


def apply_to_vectors(outcomes: Sequence[Outcome], known: KnownDeviations) -> tuple[list[Outcome], list[str]]:
    """Vector outcomes with the known deviations applied, and the notes about entries (not checked)."""
    entries = known.vectors
    out: list[Outcome] = []
    checked: set[str] = set()
    for o in outcomes:
        entry = entries.get(o.id)
        if entry is None:
            out.append(o)
            continue
        if o.verdict in (Verdict.failed, Verdict.errored):
            checked.add(o.id)
            out.append(
                replace(
                    o,
                    verdict=Verdict.known,
                    reason=f"known deviation ({entry.where}: {entry.reason}); {o.verdict.value}: {o.reason}",
                )
            )
        elif o.verdict is Verdict.passed:
            checked.add(o.id)
            out.append(
                replace(
                    o,
                    verdict=Verdict.failed,
                    reason=f"stale known deviation: the vector passes, remove {entry.describe()}",
                )
            )
        else:
            out.append(o)
    notes = [
        f"known deviation not checked (the vector did not run): {d.describe()}"
        for ident, d in entries.items()
        if ident not in checked
    ]
    return out, notes
