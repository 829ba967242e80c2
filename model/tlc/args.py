"""``TlcArgs``: everything one TLC run needs, as a typed, frozen value (no paths are resolved here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FINGERPRINT_POLYNOMIALS = 131
"""TLC's ``-fp`` takes 0 to 130 (the irreducible polynomials of ``tlc2.util.FP64``, 2.15 and later)."""


@dataclass(frozen=True)
class TlcArgs:
    """The arguments of one TLC model-checking run.

    ``module`` is the ``.tla`` file; ``config`` the ``.cfg`` file (defaults to the module's name with
    ``.cfg``). ``workers`` is TLC's ``-workers`` (``0`` = TLC's ``auto``); ``heap_mb`` the JVM's
    ``-Xmx`` in MiB (``None`` = the JVM default); ``depth`` bounds the search depth (``None`` = no bound,
    TLC's breadth-first search); ``timeout_s`` kills the run after that many seconds of wall-clock time;
    ``dump_trace_json`` asks TLC to write the counterexample as JSON to that path; ``dump_states`` asks TLC
    to write every distinct state it reaches to that path (``-dump``, TLC's text format); ``check_deadlock``
    is TLC's deadlock check (``-deadlock`` turns it *off*); ``extra`` is passed to TLC verbatim.

    A run that can be continued (``model/tlc/checkpoint.py``): ``metadir`` is the folder in which TLC makes its
    run's folder (``-metadir``; without it, a temporary folder that goes with the run); ``checkpoint_ms`` is the
    interval between TLC's checkpoints (TLC's system property ``tlc2.TLCGlobals.chkpt``, in milliseconds: TLC
    2.15 and later read it; TLC takes a checkpoint at its first periodic report after the interval, and reports
    come a few seconds after the start, then every minute); ``recover`` is the run folder of an earlier run
    whose last checkpoint TLC continues from (``-recover``); ``stop_after_s`` makes TLC stop itself after that
    many seconds (``tlc2.TLC.stopAfter``), and with ``checkpoint_ms`` it takes a last checkpoint as it stops,
    which a kill on ``timeout_s`` cannot give.

    ``seed`` fixes TLC's two random choices, which it otherwise makes afresh on every run: the fingerprint
    polynomial (``-fp``, one of TLC's 131, ``seed % 131``) and its random seed (``-seed``). The polynomial decides
    the order in which TLC's liveness checker walks the behaviour graph, so without it two runs of one model can
    report two different lassos (measured: six polynomials gave five different lassos on one model). With one worker and a fixed
    seed, a run is repeatable; the report prints the seed so that a user can re-run it.

    ``liveness_at_end`` checks the temporal properties once, on the whole behaviour graph (``-lncheck final``).
    Without it TLC also checks them at its progress reports, on the part of the graph found so far, and a
    report comes after a number of seconds, not of states: on a busy machine the first check falls earlier in
    the search and can report another lasso than on a quiet one (seen: the ZooKeeper-error stall of a deletion
    instead of the failed-StopReplica halt, on the same model and seed). A liveness run is repeatable only with
    it; the price is that a violation is reported when the search ends, not as soon as a partial graph shows it.
    """

    module: Path
    config: Path | None = None
    workers: int = 1
    heap_mb: int | None = None
    depth: int | None = None
    timeout_s: float | None = None
    dump_trace_json: Path | None = None
    dump_states: Path | None = None
    check_deadlock: bool = False
    seed: int = 0
    liveness_at_end: bool = False
    extra: tuple[str, ...] = ()
    metadir: Path | None = None
    checkpoint_ms: int | None = None
    recover: Path | None = None
    stop_after_s: int | None = None

    def __post_init__(self) -> None:
        if self.module.suffix != ".tla":
            raise ValueError(f"TLC module must be a .tla file, got {self.module}")
        if self.workers < 0:
            raise ValueError(f"workers must be >= 0 (0 = auto), got {self.workers}")
        if self.heap_mb is not None and self.heap_mb < 64:
            raise ValueError(f"heap must be at least 64 MiB, got {self.heap_mb}")
        if self.depth is not None and self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth}")
        if not -(2**63) <= self.seed < 2**63:
            raise ValueError(f"seed must fit in a signed 64-bit integer (TLC's -seed), got {self.seed}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout_s}")
        if self.checkpoint_ms is not None and self.checkpoint_ms < 1:
            raise ValueError(f"the checkpoint interval must be >= 1 ms, got {self.checkpoint_ms}")
        if self.stop_after_s is not None and self.stop_after_s < 1:
            raise ValueError(f"TLC's stop must come after >= 1 s, got {self.stop_after_s}")

    @property
    def fingerprint(self) -> int:
        """TLC's ``-fp``: the index of the fingerprint polynomial, ``0 <= fp <= 130``."""
        return self.seed % FINGERPRINT_POLYNOMIALS

    @property
    def config_path(self) -> Path:
        return self.config if self.config is not None else self.module.with_suffix(".cfg")

    @property
    def module_name(self) -> str:
        return self.module.stem
