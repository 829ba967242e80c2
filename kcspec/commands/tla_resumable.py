"""``kcspec tla check --checkpoint DIR`` / ``--resume DIR``: a TLC run in several sittings, on the command line.

``model/tlc/checkpoint.py`` keeps the folder; this module turns the command's options into TLC's (where TLC
writes its checkpoints, from which one it continues, when it stops itself) and says to the user where the run
stands after each sitting. With ``--timeout``, TLC stops itself (``tlc2.TLC.stopAfter``) and takes a last
checkpoint as it stops; kcspec's own kill comes ``STOP_GRACE_S`` later, for a TLC that does not stop. Ctrl-C,
SIGTERM and a kill end TLC at once: the run continues from its last periodic checkpoint.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from rich.console import Console

from kcspec import options
from kcspec.model.tlc import checkpoint as ckpt
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.output import Outcome, TlcReport

STOP_GRACE_S = 300.0
"""How long after ``--timeout`` kcspec kills a TLC that has not stopped itself (its last checkpoint writes the
fingerprints and the queue to disk: seconds for millions of states)."""

DEFAULT_MINUTES = ckpt.DEFAULT_INTERVAL_MINUTES

ENDED = (Outcome.OK, Outcome.INVARIANT_VIOLATED, Outcome.PROPERTY_VIOLATED, Outcome.DEADLOCK)
"""Outcomes after which the search is over: nothing is left to resume."""


@dataclass(frozen=True)
class Sitting:
    """One run of a checkpointed check: its folder, its record, and how it begins."""

    folder: Path
    record: ckpt.Record
    recover: Path | None
    started: float
    lock: IO[bytes]
    """The folder's lock, held until the sitting ends (``end``)."""

    @property
    def flag(self) -> str:
        return f"--resume {self.folder}"


def run_options(
    kw: dict[str, Any], *, liveness: bool, seed: int, depth: int | None, workers: int, module: str
) -> dict[str, Any]:
    """The options a resumed run must repeat: what decides the module, the configuration and the fingerprints,
    and TLC's workers (TLC keeps a trace file per worker: TLC 2.15 given 2 workers for a 1-worker checkpoint
    stops with ``FileNotFoundException: …/<Module>-1.chkpt``)."""
    fixed = {"liveness": liveness, "seed": seed, "depth": depth, "workers": workers, "module": module}
    return {**dict(sorted(kw.items())), **fixed}


def begin(
    checkpoint_dir: Path | None,
    resume_dir: Path | None,
    opts: dict[str, Any],
    module: Path,
    config: Path,
    console: Console,
) -> Sitting | None:
    """The sitting (``None`` without ``--checkpoint`` or ``--resume``); a folder that cannot be used is exit 2."""
    try:
        if checkpoint_dir is not None:
            record = ckpt.start(checkpoint_dir, opts, module, config)
            lock = ckpt.hold(checkpoint_dir)
            console.print(
                f"checkpoints: {checkpoint_dir} (continue a stopped run with --resume {checkpoint_dir})"
            )
            return Sitting(checkpoint_dir, record, None, time.time(), lock)
        if resume_dir is None:
            return None
        ckpt.load(resume_dir)
        lock = ckpt.hold(resume_dir)
        record = ckpt.load(resume_dir)  # again, under the lock: the run that held it may have just ended
        try:
            ckpt.check_resumable(resume_dir, record, opts, module, config)
        except ckpt.CheckpointError:
            lock.close()
            raise
    except ckpt.CheckpointError as exc:
        options.fail(str(exc))
    except OSError as exc:
        options.fail(f"{checkpoint_dir or resume_dir}: {exc.strerror or exc}")
    recover = ckpt.run_folder(resume_dir)
    if recover is None:
        console.print(
            f"{resume_dir}: no checkpoint had been written (TLC writes its first a few seconds after it starts); "
            "starting again from the initial states"
        )
    else:
        done = (
            f"{record.distinct:,} distinct states" if record.distinct is not None else "the last checkpoint"
        )
        console.print(f"continuing from the checkpoint in {recover} (the last run stopped at {done})")
    record = replace(record, status="running", runs=record.runs + 1)
    ckpt.save(resume_dir, record)
    return Sitting(resume_dir, record, recover, time.time(), lock)


def tlc_args(args: TlcArgs, sitting: Sitting, interval_minutes: float) -> TlcArgs:
    """``args`` with TLC's checkpoints in the sitting's folder, and ``--timeout`` as TLC's own stop."""
    stop_after = None if args.timeout_s is None else max(1, math.ceil(args.timeout_s))
    workers = args.workers
    if sitting.recover is not None and workers == 0:
        # "auto" is the machine's core count: the checkpoint's own count of workers is what TLC can recover
        workers = len(list(sitting.recover.glob(f"{args.module_name}-*.chkpt"))) or workers
    return replace(
        args,
        workers=workers,
        metadir=(sitting.folder / ckpt.STATES).resolve(),
        recover=None if sitting.recover is None else sitting.recover.resolve(),
        checkpoint_ms=max(1, round(interval_minutes * 60_000)),
        stop_after_s=stop_after,
        timeout_s=None if args.timeout_s is None else args.timeout_s + STOP_GRACE_S,
    )


def end(sitting: Sitting, report: TlcReport | None, raw_output: str, console: Console) -> None:
    """Record the sitting's end (``report`` ``None``: stopped by a signal), say how to go on, and let the folder
    go."""
    try:
        _record_end(sitting, report, raw_output, console)
    finally:
        sitting.lock.close()


def _record_end(sitting: Sitting, report: TlcReport | None, raw_output: str, console: Console) -> None:
    folder = sitting.folder
    number = sitting.record.runs
    if raw_output:
        (folder / f"tlc-output-{number}.txt").write_text(raw_output, encoding="utf-8")
    entry: dict[str, Any] = {
        "run": number,
        "began": "recovered" if sitting.recover is not None else "initial",
        "started": _iso(sitting.started),
        "ended": _iso(time.time()),
    }
    if report is None:
        entry["outcome"] = "interrupted"
        ckpt.finish_run(folder, sitting.record, entry, status="stopped")
        console.print(f"continue from the last checkpoint with {sitting.flag} (and the same options)")
        return
    stats = report.stats
    ended = report.outcome in ENDED
    entry.update(
        outcome=report.outcome.value,
        distinct=stats.distinct,
        left_on_queue=stats.left_on_queue,
        checkpoints=report.checkpoints,
        tlc=report.version,
    )
    ckpt.finish_run(
        folder,
        sitting.record,
        entry,
        status="ended" if ended else "stopped",
        distinct=stats.distinct if stats.distinct is not None else sitting.record.distinct,
        left_on_queue=stats.left_on_queue,
        outcome=report.outcome.value if ended else None,
        tlc_version=report.version,
    )
    if ended:
        return
    if sitting.recover is not None and not report.recovered:
        console.print(
            f"TLC could not continue from the checkpoint in {sitting.recover} (above): it is damaged or not of this "
            f"TLC. Remove that folder to start this run again from the initial states ({sitting.flag}), or start "
            "a new checkpoint in another folder"
        )
        return
    if report.checkpoints == 0 and sitting.recover is None and ckpt.run_folder(folder) is None:
        console.print(
            f"no checkpoint was written before TLC stopped; {sitting.flag} starts again from the initial states"
        )
        return
    queue = f", {stats.left_on_queue:,} on its queue" if stats.left_on_queue is not None else ""
    seen = f"{stats.distinct:,} distinct states checked" if stats.distinct is not None else "stopped"
    console.print(f"checkpoint: {seen}{queue}; continue with {sitting.flag} (and the same options)")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
