"""The expected distinct-state counts of small models (``state_counts.json``): a regression guard for the spec.

Each entry is a profile, a ``ModelConfig`` and the number of distinct states of that model — the same
number for TLC on the generated module and for the explorer's TLA+-model mode on the reference controller
(``kcspec tla crosscheck`` compares the two). A change to the spec or to the reference controller that
changes a count fails the tests until the manifest is updated on purpose
(``python -m kcspec.conformance.selfcheck.explore.tla_model --update`` recomputes it with the explorer).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from kcspec.model.tla.config import ModelConfig

MANIFEST = Path(__file__).with_name("state_counts.json")


class ManifestError(ValueError):
    """The manifest file is malformed (the message names the entry and field)."""


@dataclass(frozen=True)
class Expected:
    name: str
    profile: str
    config: ModelConfig
    distinct_states: int
    in_verify: bool = True
    """Whether ``kcspec verify`` explores this model and crosschecks it with TLC (the larger 2-broker models,
    minutes each, are left to ``kcspec tla crosscheck``, whose default model they are)."""
    tlc: TlcRecord | None = None
    """TLC's own count and time on this model, as last recorded (``python -m
    kcspec.conformance.selfcheck.tla_crosscheck --record``), beside the explorer's."""


@dataclass(frozen=True)
class TlcRecord:
    """One recorded crosscheck of a manifest model: TLC's distinct states, its version and workers, and the wall
    time of each side (seconds, on the machine and load of that day: a record, never a test's bound)."""

    distinct_states: int
    version: str
    workers: int
    tlc_seconds: float
    explorer_seconds: float
    recorded: str
    """The date (YYYY-MM-DD)."""


def _config(data: Any, where: str) -> ModelConfig:
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: config must be an object")
    known = {f.name for f in fields(ModelConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ManifestError(f"{where}: unknown config field(s) {unknown}; known: {sorted(known)}")
    try:
        return ModelConfig(**data)
    except (TypeError, ValueError) as exc:
        raise ManifestError(f"{where}: {exc}") from None


def load(path: Path = MANIFEST) -> tuple[Expected, ...]:
    """The manifest's entries."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from None
    out: list[Expected] = []
    for i, entry in enumerate(data.get("models", []) if isinstance(data, dict) else []):
        where = f"{path}: models[{i}]"
        try:
            out.append(
                Expected(
                    str(entry["name"]),
                    str(entry["profile"]),
                    _config(entry["config"], where),
                    int(entry["distinct_states"]),
                    bool(entry.get("verify", True)),
                    TlcRecord(**entry["tlc"]) if "tlc" in entry else None,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ManifestError(f"{where}: missing or malformed field {exc}") from None
    if not out:
        raise ManifestError(f"{path}: no models listed under 'models'")
    return tuple(out)


def _config_fields(config: ModelConfig) -> dict[str, Any]:
    """The config's fields, the queue's bound left out when 0 (models without the queue keep their entries)."""
    return {k: v for k, v in asdict(config).items() if k != "max_queued_requests" or v}


def save(entries: tuple[Expected, ...], path: Path = MANIFEST) -> None:
    """Rewrite the manifest's entries (its other keys are kept)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["models"] = [
        {
            "name": e.name,
            "profile": e.profile,
            "config": _config_fields(e.config),
            "distinct_states": e.distinct_states,
            **({} if e.in_verify else {"verify": False}),
            **({} if e.tlc is None else {"tlc": asdict(e.tlc)}),
        }
        for e in entries
    ]
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
