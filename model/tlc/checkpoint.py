"""The folder of a TLC run that can be stopped and continued: ``kcspec tla check --checkpoint DIR`` / ``--resume DIR``.

A model too large for one sitting (the 3-broker models: millions of states, hours of TLC) is checked in several
runs. TLC itself can do it: it writes a checkpoint of its search (the seen fingerprints, the queue of states to
expand, the trace of parents) into its run's folder, and ``-recover`` continues from the last one. This module
keeps what TLC does not: which model and options the checkpoint belongs to, so that a resumed run checks the same
module with the same fingerprints, and the outcome once the run has ended.

The folder holds:

* ``checkpoint.json`` — this module's record (``Record``): the layout ``FORMAT``, the options that must not change
  between the runs (profile, model, seed, liveness, depth), the SHA-256 of the module and configuration TLC
  checks, the status (``running``, ``stopped``, ``ended``), the last counts and, once ended, the outcome. Written
  to a temporary name and renamed, so a killed run leaves the previous record whole.
* ``<Module>.tla`` and the ``.cfg`` TLC reads: the module as it was checked.
* ``checkpoint.lock`` — locked (``flock``) by the process whose TLC runs in the folder, so that a second
  ``--resume`` of the same folder is refused while the first runs; the kernel releases it when that process dies.
* ``tlc-states/<yy-MM-dd-HH-mm-ss>/`` — TLC's run folder (``-metadir``). A checkpoint is complete when its
  ``queue.chkpt`` and ``vars.chkpt`` exist (TLC writes each to a temporary name and renames it). TLC removes the
  folder when a run ends without an error.

Decisions: the seed must be the same (it chooses TLC's fingerprint polynomial: the checkpoint's fingerprints are of
that polynomial), and so must the workers (TLC keeps one trace file per worker and cannot recover with another
count); the heap and the interval may change; a run that ended (with a pass or a violation) is not resumed;
a run killed before its first checkpoint starts again from the initial states, in the same folder, and says so.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

FORMAT = 1
"""The layout version of a checkpoint folder."""

RECORD = "checkpoint.json"
LOCK = "checkpoint.lock"
STATES = "tlc-states"
COMPLETE_MARKERS = ("queue.chkpt", "vars.chkpt")
"""The files of a complete TLC checkpoint (TLC 2.15 to 2.18)."""

DEFAULT_INTERVAL_MINUTES = 10.0


class CheckpointError(ValueError):
    """The folder cannot be checkpointed into or resumed from; the message names the folder and the reason."""


@dataclass(frozen=True)
class Record:
    """``checkpoint.json``: what the checkpoint belongs to and how far the run got."""

    format: int
    options: dict[str, Any]
    module: str
    config: str
    sha256: str
    status: str = "running"
    """``running`` (or killed while running), ``stopped`` (TLC stopped at ``--timeout`` or a signal: resumable),
    ``ended`` (TLC's search ended: ``outcome``)."""
    runs: int = 1
    distinct: int | None = None
    left_on_queue: int | None = None
    outcome: str | None = None
    tlc_version: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    """One entry per run: its start, how it began (``initial`` or ``recovered``), its end and counts."""


def hold(folder: Path) -> IO[bytes]:
    """Lock the folder for this process's run (``CheckpointError`` if another process's run holds it); the lock
    lasts as long as the returned file is open, and ends with the process."""
    handle = open(folder / LOCK, "a+b")  # noqa: SIM115 (held open for the run)
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise CheckpointError(
            f"{folder}: another kcspec process is running TLC in this folder; wait for it to end or stop it"
        ) from None
    return handle


def fingerprint(module: Path, config: Path) -> str:
    """The SHA-256 of what TLC checks: the module's text and its configuration's."""
    digest = hashlib.sha256()
    for path in (module, config):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def start(folder: Path, options: dict[str, Any], module: Path, config: Path) -> Record:
    """A new checkpoint folder for a run of ``module`` with ``config`` (``--checkpoint DIR``).

    The folder may exist, but must not hold a checkpoint already: continuing one is ``--resume``."""
    if (folder / RECORD).exists():
        raise CheckpointError(
            f"--checkpoint {folder}: the folder holds a checkpoint already ({RECORD}); "
            f"continue it with --resume {folder}, or give another folder"
        )
    if folder.exists() and not folder.is_dir():
        raise CheckpointError(f"--checkpoint {folder}: not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STATES).mkdir(exist_ok=True)
    for path in (module, config):
        (folder / path.name).write_bytes(path.read_bytes())
    record = Record(FORMAT, dict(options), module.name, config.name, fingerprint(module, config))
    save(folder, record)
    return record


def load(folder: Path) -> Record:
    """The record of ``folder`` (``--resume DIR``), checked to be whole and of this layout."""
    path = folder / RECORD
    if not folder.is_dir():
        raise CheckpointError(f"--resume {folder}: no such folder")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"--resume {folder}: no checkpoint there ({RECORD} is missing)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"--resume {folder}: {RECORD} cannot be read ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise CheckpointError(f"--resume {folder}: {RECORD} has layout {found!r}; this kcspec reads {FORMAT}")
    try:
        record = Record(**doc)
    except TypeError as exc:
        raise CheckpointError(f"--resume {folder}: {RECORD} is not a checkpoint record ({exc})") from None
    for name in (record.module, record.config):
        if not (folder / name).is_file():
            raise CheckpointError(f"--resume {folder}: {name}, the checkpointed run's file, is missing")
    return record


def check_resumable(
    folder: Path, record: Record, options: dict[str, Any], module: Path, config: Path
) -> None:
    """The run to resume is the one checkpointed: same options, same module and configuration, not ended."""
    if record.status == "ended":
        raise CheckpointError(
            f"--resume {folder}: that run has ended ({record.outcome}, {record.distinct:,} distinct states); "
            "there is nothing to continue"
            if record.distinct is not None
            else f"--resume {folder}: that run has ended ({record.outcome}); there is nothing to continue"
        )
    for key in sorted(set(record.options) | set(options)):
        if record.options.get(key) != options.get(key):
            flag = "--" + key.replace("_", "-")
            raise CheckpointError(
                f"--resume {folder}: the checkpoint was made with {flag} {_shown(record.options.get(key))}, this "
                f"run has {flag} {_shown(options.get(key))}; resume with the checkpoint's options"
            )
    if fingerprint(module, config) != record.sha256:
        raise CheckpointError(
            f"--resume {folder}: the TLA+ module or configuration generated now differs from the one "
            f"checkpointed ({record.module}, {record.config} in the folder): the spec or kcspec changed since; "
            "the checkpoint's states are of the old module, start a new checkpoint"
        )


def _shown(value: Any) -> str:
    """An option's value as the command line writes it (``None``: not given)."""
    if value is None:
        return "(not given)"
    if isinstance(value, bool):
        return "(given)" if value else "(not given)"
    return str(value)


def run_folder(folder: Path) -> Path | None:
    """TLC's run folder with the latest complete checkpoint, or ``None`` (no checkpoint was written yet)."""
    states = folder / STATES
    if not states.is_dir():
        return None
    complete = [
        d
        for d in states.iterdir()
        if d.is_dir() and all((d / marker).is_file() for marker in COMPLETE_MARKERS)
    ]
    if not complete:
        return None
    return max(complete, key=lambda d: max((d / m).stat().st_mtime for m in COMPLETE_MARKERS))


def save(folder: Path, record: Record) -> None:
    """Write ``checkpoint.json`` atomically (a temporary name, then a rename)."""
    tmp = folder / (RECORD + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(asdict(record), f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / RECORD)


def finish_run(folder: Path, record: Record, entry: dict[str, Any], **changes: Any) -> Record:
    """The record after one run: ``changes`` applied and the run's ``entry`` added to the history."""
    updated = replace(record, history=[*record.history, entry], **changes)
    save(folder, updated)
    return updated


__all__ = [
    "DEFAULT_INTERVAL_MINUTES",
    "FORMAT",
    "CheckpointError",
    "Record",
    "check_resumable",
    "fingerprint",
    "finish_run",
    "hold",
    "load",
    "run_folder",
    "save",
    "start",
]
