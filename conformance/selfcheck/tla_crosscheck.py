"""``kcspec tla crosscheck``: TLC on the generated module and the explorer on the reference controller, same model.

Both sides explore the same abstraction (``conformance/selfcheck/explore/tla_model.py``): the empty cluster as the
initial state, every action of the spec with every parameter value of the model's domains, the model's
bounds as a constraint, no symmetry reduction on either side, no depth bound. TLC writes every distinct
state it reaches (``-dump``); the explorer (one process, or ``explorer_workers`` processes; the reference controller
alone unless ``lockstep`` asks for the spec beside it and the refinement check) keeps the 64-bit
fingerprint of every distinct state of the reference controller, level by level on disk with the parent of
each (its checkpoint files), as ``kcspec explore`` does. The two agree when TLC's distinct-state count equals
the explorer's **and** the fingerprints of TLC's states are exactly the explorer's (a collision between two
states of the model, at most n²/2⁶⁵, could hide a difference; the counts are compared too); when they differ,
states reachable in one and not the other are reported — the explorer's with the shortest event sequence that
reaches them (rebuilt from the parents' fingerprints by re-executing the path), TLC's as TLC wrote them (in
breadth-first order, so the first ones are the shallowest). The comparison holds a fingerprint per state in
memory (about 18 bytes), not the state, so it is bounded by the explorer's time, not by memory.

Layers: ``CrosscheckArgs`` (typed arguments) → ``run_crosscheck`` (generates the module, runs TLC
hermetically through ``model/tlc``, runs the explorer, compares) → ``CrosscheckResult`` → the CLI.
"""

from __future__ import annotations

import enum
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kcspec.conformance.selfcheck.explore.explorer import (
    ExploreResult,
    ExploreStats,
    SearchSpace,
    fingerprint_path,
    replay,
    search,
    start_state,
    stepper_of,
)
from kcspec.conformance.selfcheck.explore.fingerprint import FingerprintSet
from kcspec.conformance.selfcheck.explore.levels import LevelStore, read_checkpoint
from kcspec.conformance.selfcheck.explore.tla_model import model_space
from kcspec.conformance.selfcheck.tla_dump_read import DumpError, read_dump_against
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.module import generate
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import Outcome, Stats
from kcspec.model.tlc.run import TlcResult, run_tlc
from kcspec.spec.events import ControllerEvent
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState


class CrosscheckOutcome(enum.Enum):
    """How TLC's run and the explorer's run of one model compare. Not a test verdict: ``exit_code`` and the gate
    (``gate/tla.py``) turn it into one."""

    AGREE = "agree"
    DIFFER = "differ"
    TLC_FAILED = "tlc-failed"
    """TLC did not finish with "no error" (violation, deadlock, error, timeout): nothing to compare."""
    EXPLORER_FINDING = "explorer-finding"
    """The explorer found a refinement or invariant violation: nothing to compare."""
    EXPLORER_TRUNCATED = "explorer-truncated"
    """The explorer reached ``max_states`` before the fixed point: nothing to compare."""


def default_explorer_workers() -> int:
    """``kcspec tla crosscheck``'s explorer processes when none are asked for: the cores this process may run
    on, at most 2. Decision (measured on the default kafka-1.1 model, a quiet 2-core machine: 4 min 9 s with
    two, see ``benchmarks/results/tla_cost.md``): TLC's side takes well under half the explorer's CPU (about 190
    of 440 CPU s on kafka-2.8's default model, the explorer on the reference controller alone), so one explorer
    process leaves a core idle for most of the run; more than two add little on the machines
    this runs on and take memory (each holds its share of a level)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


EXPLORER_NICE = 5
"""How much lower than TLC's the explorer's worker processes run (``os.nice``), when there are two or more of them.
TLC searches on one thread; the explorer's processes share whatever cores are free, so TLC is the part of the
run that cannot be spread. At equal priority, two explorer processes and TLC's thread share two cores by thirds
and TLC, the last to end, runs on alone while a core idles (the default kafka-2.8 model: the explorer done at
4:41, TLC at 5:17). Lowered, the explorer yields TLC its core and takes both once TLC is done: 5:25 → 4:51 wall
(606 → 567 CPU s) on a quiet 2-core machine, the same 87,528 states (``benchmarks/results/tla_cost.md``). On a
machine busy with other work the explorer gets less of it too; TLC's JVM is left at this process's priority."""


@dataclass(frozen=True)
class CrosscheckArgs:
    profile: str
    model: ModelConfig
    workers: int = 1
    heap_mb: int | None = None
    timeout_s: float | None = None
    max_states: int = 1_000_000
    samples: int = 3
    """How many states reachable on one side only to report, per side."""
    explorer_workers: int = 1
    """Processes of the explorer (``workers`` is TLC's threads): TLC ends before the explorer, whose work per
    transition is the reference controller's step, guards and checks (``benchmarks/results/tla_cost.md``), so a
    second explorer process uses the core TLC leaves."""
    lockstep: bool = False
    """Step the spec beside the reference controller and compare every transition (the refinement check of
    ``kcspec explore``). Off by default: the crosscheck compares the reference controller with TLC on the module
    generated from the spec, two independent implementations; the spec beside the reference controller costs
    about a third of the explorer's time (``benchmarks/results/tla_cost.md``), and ``kcspec verify`` checks the
    refinement on every manifest model anyway (``tla_model.check_count``)."""

    def __post_init__(self) -> None:
        if self.explorer_workers < 1:
            raise ValueError(f"--explorer-workers must be at least 1, got {self.explorer_workers}")
        if self.max_states < 1:
            raise ValueError(f"--max-states must be at least 1, got {self.max_states}")
        if self.samples < 0:
            raise ValueError(f"--samples must be at least 0, got {self.samples}")
        # TLC's own options are validated where they are defined (the module path is a placeholder)
        TlcArgs(
            module=Path("model.tla"), workers=self.workers, heap_mb=self.heap_mb, timeout_s=self.timeout_s
        )


@dataclass(frozen=True)
class StateSample:
    """A state reachable on one side only; ``path`` is the explorer's event sequence to it (``None`` for TLC's)."""

    state: ClusterState
    path: tuple[ControllerEvent, ...] | None


@dataclass(frozen=True)
class CrosscheckResult:
    verdict: CrosscheckOutcome
    message: str
    tlc: TlcResult
    explored: ExploreResult | None
    tlc_distinct: int | None
    """TLC's own count (its final statistics)."""
    dumped: int
    """States in TLC's dump (equals ``tlc_distinct`` when TLC wrote every state)."""
    explorer_distinct: int
    only_tlc: int = 0
    only_explorer: int = 0
    tlc_samples: tuple[StateSample, ...] = ()
    explorer_samples: tuple[StateSample, ...] = ()

    @property
    def exit_code(self) -> int:
        if self.verdict is CrosscheckOutcome.AGREE:
            return 0
        if self.verdict is CrosscheckOutcome.EXPLORER_TRUNCATED:
            return 2
        if self.verdict is CrosscheckOutcome.TLC_FAILED and self.tlc.outcome not in (
            Outcome.INVARIANT_VIOLATED,
            Outcome.PROPERTY_VIOLATED,
            Outcome.DEADLOCK,
        ):
            return 2
        return 1


class CrosscheckError(RuntimeError):
    """The comparison could not be made (an unreadable dump, a state outside the data model); names the cause."""


class _TlcFailed(Exception):
    """Raised in the explorer's progress report to stop it: TLC has already failed, nothing will be compared."""


class _TlcThread:
    """TLC's run in a thread of its own (``run_tlc`` waits on the JVM and only then returns)."""

    def __init__(
        self,
        args: TlcArgs,
        tools: Toolchain,
        on_progress: Callable[[Stats], None] | None,
        remove_on_death: tuple[Path, ...],
    ) -> None:
        self._stop = threading.Event()
        self._result: TlcResult | None = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._result = run_tlc(
                    args, tools, on_progress=on_progress, remove_on_death=remove_on_death, stop=self._stop
                )
            except BaseException as exc:  # re-raised in the caller's thread by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name="kcspec-tlc", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def failed(self) -> bool:
        """TLC has ended, and not with "no error"."""
        if self._thread.is_alive():
            return False
        return self._error is not None or (
            self._result is not None and self._result.outcome is not Outcome.OK
        )

    def check_progress(self, report: Callable[[ExploreStats], None] | None) -> Callable[[ExploreStats], None]:
        """The explorer's progress callback: reports, and stops the explorer once TLC has failed."""

        def progress(stats: ExploreStats) -> None:
            if report is not None:
                report(stats)
            if self.failed():
                raise _TlcFailed

        return progress

    def _join(self) -> None:
        while self._thread.is_alive():  # short joins: a signal handler runs in between
            self._thread.join(timeout=0.2)

    def stop(self) -> None:
        """Stop TLC (its process group is killed) and wait for the thread to end."""
        self._stop.set()
        self._join()

    def result(self) -> TlcResult:
        """Wait for TLC's result (re-raising what its thread raised)."""
        self._join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


def run_crosscheck(
    args: CrosscheckArgs,
    tools: Toolchain,
    *,
    on_tlc_progress: Callable[[Stats], None] | None = None,
    on_explore_progress: Callable[[ExploreStats], None] | None = None,
) -> CrosscheckResult:
    """Run TLC and the explorer on the same model and compare their state spaces.

    The two run at the same time: TLC (a JVM of its own) is waited for by a thread of this process while the
    explorer works in this one or in ``explorer_workers`` processes of lower priority (``EXPLORER_NICE``), so on a
    machine with two cores the check takes about as long as its CPU time shared over both rather than the sum
    of the two sides. When TLC fails (an error, a violation), the explorer is stopped at its next
    progress report; when the explorer fails or this process is interrupted, TLC is stopped."""
    module = generate(get_profile(args.profile), args.model)
    with tempfile.TemporaryDirectory(prefix="kcspec-crosscheck-") as tmp:
        work = Path(tmp)
        tla = work / f"{module.name}.tla"
        tla.write_text(module.tla, encoding="utf-8")
        tla.with_suffix(".cfg").write_text(module.cfg, encoding="utf-8")
        dump = work / "states.dump"
        tlc_args = TlcArgs(
            module=tla, workers=args.workers, heap_mb=args.heap_mb, timeout_s=args.timeout_s, dump_states=dump
        )
        side = _TlcThread(tlc_args, tools, on_tlc_progress, (work,))
        side.start()
        space = model_space(args.profile, args.model, args.max_states, args.lockstep)
        levels = work / "explorer"  # its level files go where the watchdog cleans up too
        try:
            explored: ExploreResult | None = search(
                space,
                side.check_progress(on_explore_progress),
                workers=args.explorer_workers,
                checkpoint=levels,
                nice=EXPLORER_NICE,
            )
        except _TlcFailed:
            explored = None
        except BaseException:
            side.stop()  # the explorer failed or this process is interrupted (Ctrl-C, SIGTERM): TLC goes too
            raise
        tlc = side.result()
        tlc_distinct = tlc.report.stats.distinct
        if tlc.outcome is not Outcome.OK:
            return CrosscheckResult(
                CrosscheckOutcome.TLC_FAILED,
                f"TLC did not finish without error ({tlc.outcome.value}"
                + (f": {tlc.report.violated}" if tlc.report.violated else "")
                + "); the state spaces were not compared",
                tlc,
                None,
                tlc_distinct,
                0,
                0,
            )
        if not dump.is_file():
            raise CrosscheckError("TLC finished but wrote no state dump (-dump); is this TLC's command line?")
        assert explored is not None  # the explorer is stopped early only when TLC failed
        n_explored = explored.stats.distinct_states
        if explored.finding is not None or explored.stats.truncated:
            finding = explored.finding
            return CrosscheckResult(
                CrosscheckOutcome.EXPLORER_FINDING
                if finding is not None
                else CrosscheckOutcome.EXPLORER_TRUNCATED,
                (
                    f"the explorer found a {finding.kind} violation: {finding.message}"
                    if finding is not None
                    else f"the explorer stopped at --max-states {args.max_states} before the fixed point"
                    " (raise --max-states or shrink the model)"
                )
                + "; the state spaces were not compared",
                tlc,
                explored,
                tlc_distinct,
                0,
                n_explored,
            )
        return _compare(args, tlc, explored, dump, space, levels)


def _compare(
    args: CrosscheckArgs,
    tlc: TlcResult,
    explored: ExploreResult,
    dump: Path,
    space: SearchSpace,
    levels: Path,
) -> CrosscheckResult:
    """TLC's dumped states against the explorer's fingerprints (its level files in ``levels``); the dump is read by
    as many processes as the explorer had (``tla_dump_read``)."""
    meta, _stats = read_checkpoint(levels)
    store = LevelStore(levels)
    visited = FingerprintSet()
    for path in store.files("visited", meta.level):
        for fp in FingerprintSet.from_bytes(path.read_bytes()):
            visited.add(fp)
    if space.symmetry:  # the fingerprints of TLC's states are of the states themselves
        raise CrosscheckError("the crosscheck's model has no symmetry reduction (TLC's has none)")
    try:
        reading = read_dump_against(
            dump, visited, space.fingerprints, args.samples, default_explorer_workers()
        )
    except DumpError as exc:
        raise CrosscheckError(str(exc)) from None
    seen, dumped, only_tlc = reading.seen, reading.dumped, reading.only_tlc
    tlc_only = [StateSample(state, None) for state in reading.samples]
    explorer_only: list[StateSample] = []
    only_explorer = 0
    if len(seen) != len(visited) or only_tlc:
        stepper = stepper_of(space)
        root, prefix, _finding = start_state(space, stepper.spec, stepper.checker.check_state)
        for level in range(1, meta.level + 1):  # breadth-first: the first ones have the shortest paths
            for fp in store.first_reached(level):
                if fp in seen:
                    continue
                only_explorer += 1
                if len(explorer_only) < args.samples:
                    events = replay(space, stepper, root, fingerprint_path(store, level, fp))
                    state = root
                    for ev in events:
                        state = stepper.step(state, ev)
                    explorer_only.append(StateSample(state, (*prefix, *events)))
    tlc_distinct = tlc.report.stats.distinct
    n_explored = explored.stats.distinct_states
    same = only_tlc == 0 and only_explorer == 0 and tlc_distinct == n_explored == dumped
    message = (
        f"TLC and the explorer agree: {n_explored:,} distinct states"
        if same
        else (
            f"the state spaces differ: TLC {tlc_distinct if tlc_distinct is not None else '?'} distinct states "
            f"({dumped:,} dumped), explorer {n_explored:,}; {only_tlc:,} reachable only in TLC's model, "
            f"{only_explorer:,} only in the reference controller's"
        )
    )
    return CrosscheckResult(
        CrosscheckOutcome.AGREE if same else CrosscheckOutcome.DIFFER,
        message,
        tlc,
        explored,
        tlc_distinct,
        dumped,
        n_explored,
        only_tlc,
        only_explorer,
        tuple(tlc_only),
        tuple(explorer_only),
    )


def record(names: tuple[str, ...] = (), workers: int = 1) -> int:
    """Crosscheck manifest models with TLC (those named, else every one) and write TLC's count, version and time
    and the explorer's time beside the explorer's count into ``state_counts.json``; exit status 1 when a model
    does not agree (nothing is written for it)."""
    import datetime
    from dataclasses import replace

    from kcspec.model.tla.manifest import TlcRecord, load, save
    from kcspec.model.tlc.locate import find_toolchain

    tools = find_toolchain()
    entries = list(load())
    status = 0
    for i, entry in enumerate(entries):
        if names and entry.name not in names:
            continue
        result = run_crosscheck(CrosscheckArgs(entry.profile, entry.config, workers=workers), tools)
        print(f"{entry.name}: {result.message} (TLC {result.tlc.wall_s:.1f} s)", flush=True)
        if result.verdict is not CrosscheckOutcome.AGREE or result.tlc_distinct != entry.distinct_states:
            status = 1
            continue
        assert result.explored is not None and result.tlc_distinct is not None
        entries[i] = replace(
            entry,
            tlc=TlcRecord(
                distinct_states=result.tlc_distinct,
                version=str(tools.version),
                workers=workers,
                tlc_seconds=round(result.tlc.wall_s, 1),
                explorer_seconds=round(result.explored.stats.seconds, 1),
                recorded=datetime.date.today().isoformat(),
            ),
        )
        save(tuple(entries))
    return status


def main(argv: list[str] | None = None) -> int:
    """``python -m kcspec.conformance.selfcheck.tla_crosscheck --record [NAME ...]``: see ``record``."""
    import argparse

    parser = argparse.ArgumentParser(description=record.__doc__)
    parser.add_argument("--record", action="store_true", required=True, help="write TLC's figures")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("names", nargs="*", help="manifest model names (default: all)")
    args = parser.parse_args(argv)
    return record(tuple(args.names), args.workers)


__all__ = [
    "CrosscheckArgs",
    "CrosscheckError",
    "CrosscheckOutcome",
    "CrosscheckResult",
    "StateSample",
    "run_crosscheck",
]


if __name__ == "__main__":
    raise SystemExit(main())
