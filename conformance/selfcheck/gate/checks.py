"""The checks ``kcspec verify`` runs, cheapest first. Each yields ``CaseResult``s (see ``cases``)."""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from kcspec.conformance.selfcheck.gate.cases import CaseResult, Check, VerifyOptions, started, timed
from kcspec.conformance.verdicts import Verdict

Outcome = tuple[Verdict, str, str, str | None]

EXPLORE_DEFAULTS: tuple[dict[str, object], ...] = (
    {"brokers": 3, "topics": 1, "partitions": 1, "rf": 2, "depth": 3},
    {
        "brokers": 3,
        "topics": 1,
        "partitions": 1,
        "rf": 2,
        "depth": 2,
        "faults": frozenset({"zk", "controller"}),
    },
)
"""The default exploration configurations of the gate (both profiles each)."""


def crosscheck_scenarios(opts: VerifyOptions) -> Iterator[CaseResult]:
    """The reference controller against the spec on the built-in scenarios, with §11 invariants on every step."""
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.conformance.selfcheck.crosscheck import crosscheck

    for profile in opts.profiles:
        for scenario in SCENARIOS:
            if opts.only and scenario.name not in opts.only:
                continue

            def case(scenario: object = scenario, profile: str = profile) -> Outcome:
                sc = scenario
                outcome = crosscheck(sc.name, profile, sc.events(profile))  # type: ignore[attr-defined]
                if outcome.ok:
                    return Verdict.passed, f"{outcome.steps_run} steps agree", "", None
                path = outcome.write(opts.out / "counterexamples")
                message = outcome.divergence.message if outcome.divergence else ""
                return Verdict.failed, message, outcome.report(), str(path)

            yield timed("spec-vs-reference", f"{scenario.name} [{profile}]", case)


def explore_defaults(opts: VerifyOptions) -> Iterator[CaseResult]:
    """Exhaustive bounded exploration of the reference controller with refinement against the spec."""
    from kcspec.conformance.selfcheck.explore.counterexample import describe_trace, write_counterexample
    from kcspec.conformance.selfcheck.explore.explorer import explore
    from kcspec.model.explore_config import ExploreConfig

    for profile in opts.profiles:
        for params in EXPLORE_DEFAULTS:
            cfg = ExploreConfig(profile=profile, **params)  # type: ignore[arg-type]

            def case(cfg: ExploreConfig = cfg) -> Outcome:
                result = explore(cfg)
                s = result.stats
                summary = f"{s.distinct_states} states, {s.transitions} transitions, depth {s.depth_reached}"
                if result.finding is None:
                    if s.truncated:
                        return (
                            Verdict.failed,
                            f"stopped at {cfg.max_states} states before the depth bound",
                            "",
                            None,
                        )
                    return Verdict.passed, summary, "", None
                assert result.trace is not None
                paths = write_counterexample(
                    result.trace, opts.out / "counterexamples", f"explore-{cfg.profile}"
                )
                return Verdict.failed, result.finding.message, describe_trace(result), str(paths[0])

            yield timed("explore", cfg.describe(), case)
    yield from two_broker_model(opts)


TWO_BROKER_PROFILE = "kafka-1.1"
"""The profile whose 2-broker model the gate explores when it is asked for: the smaller of the two default
crosscheck models (51,608 distinct states against kafka-2.8's 70,328), to stay within the gate's 5 minutes."""


def two_broker_model(opts: VerifyOptions) -> Iterator[CaseResult]:
    """The 2-broker, RF 2 TLA+ model of ``kcspec tla crosscheck`` (``CROSSCHECK_DEFAULT``) of one profile explored to
    the fixed point on every core (``--workers``): refinement and invariants on every step of every state; when the
    manifest (``model/tla/state_counts.json``) lists the model, its count must match."""
    from kcspec.conformance.selfcheck.explore.counterexample import describe_trace, write_counterexample
    from kcspec.conformance.selfcheck.explore.explorer import search
    from kcspec.conformance.selfcheck.explore.parallel import default_workers
    from kcspec.conformance.selfcheck.explore.tla_model import model_space
    from kcspec.model.tla.config import CROSSCHECK_DEFAULT as config
    from kcspec.model.tla.manifest import load

    if not opts.profiles:
        return
    profile = TWO_BROKER_PROFILE if TWO_BROKER_PROFILE in opts.profiles else opts.profiles[0]
    workers = default_workers()
    expected = [e.distinct_states for e in load() if e.profile == profile and e.config == config]

    def case() -> Outcome:
        result = search(model_space(profile, config), workers=workers)
        s = result.stats
        summary = f"{s.distinct_states:,} states, {s.transitions:,} transitions, depth {s.depth_reached}"
        if result.finding is not None:
            assert result.trace is not None
            paths = write_counterexample(
                result.trace, opts.out / "counterexamples", f"explore-model-{profile}"
            )
            return Verdict.failed, result.finding.message, describe_trace(result), str(paths[0])
        if s.truncated:
            return Verdict.failed, f"stopped at {s.distinct_states:,} states before the fixed point", "", None
        if expected and s.distinct_states != expected[0]:
            return (
                Verdict.failed,
                f"{summary}; the manifest expects {expected[0]:,} distinct states",
                "",
                None,
            )
        return Verdict.passed, f"{summary}, fixed point ({workers} workers)", "", None

    yield timed("explore", f"TLA+ model to the fixed point [{profile}]: {config.describe()}", case)


def conformance_self_check(opts: VerifyOptions) -> Iterator[CaseResult]:
    """Conformance vectors generated from the spec and the reference controller (they must agree on every
    input), then run against ``kcspec serve-reference`` through the real subprocess path."""
    from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
    from kcspec.conformance.runner import SessionError, run
    from kcspec.conformance.vectors import generate
    from kcspec.conformance.vectors.model import Level

    for profile in opts.profiles:

        def case(profile: str = profile) -> Outcome:
            gen = generate.generate([profile])
            if gen.disagreements:
                details = "\n".join(
                    f"{case_id}: " + "; ".join(d.render() for d in diffs[:3])
                    for case_id, diffs in gen.disagreements
                )
                return (
                    Verdict.failed,
                    f"spec and reference disagree on {len(gen.disagreements)} inputs",
                    details,
                    None,
                )
            # -P: the installed kcspec, never a ``kcspec/`` folder that happens to be in the working directory
            command = f"{shlex.quote(sys.executable)} -P -m kcspec serve-reference"
            try:
                report = run(
                    SubprocessAdapter(command, timeout=30.0),
                    gen.vectors,
                    profile=profile,
                    level=Level.controller,
                )
            except SessionError as exc:
                return Verdict.errored, f"serve-reference did not start: {exc}", "", None
            counts = {v.name: n for v, n in report.counts().items() if n}
            bad = [o for o in report.outcomes if o.verdict.name in ("failed", "errored")]
            if bad:
                details = "\n".join(
                    f"{o.id}: {o.reason} " + "; ".join(d.render() for d in o.differences[:3])
                    for o in bad[:20]
                )
                return Verdict.failed, f"{len(bad)} of {len(report.outcomes)} vectors failed", details, None
            return (
                Verdict.passed,
                f"{len(report.outcomes)} vectors {counts}, {report.exchanges} exchanges",
                "",
                None,
            )

        yield timed("conformance", f"reference controller over the protocol [{profile}]", case)


def proofs(opts: VerifyOptions) -> Iterator[CaseResult]:
    """Z3 proofs over the spec: election lemmas up to 8 brokers, transition-table sanity and inductiveness of the
    §11 invariants. Expected counterexamples pass; skipped proofs say why."""
    from kcspec.model import interrupts
    from kcspec.model.z3 import interrupt
    from kcspec.model.z3.prove import run_proofs

    for profile in opts.profiles:
        started("prove", f"proof suite [{profile}]")
        start = time.perf_counter()
        try:
            with interrupts.stopper(interrupt):  # an interrupt stops the query in progress
                results = run_proofs(profile)
        except Exception as exc:  # the gate reports a broken check instead of dying
            yield CaseResult(
                "prove", f"proof suite [{profile}]", Verdict.errored, f"{type(exc).__name__}: {exc}"
            )
            continue
        share = (time.perf_counter() - start) / max(1, len(results))
        for r in results:
            status = {
                "proved": Verdict.passed,
                "expected-counterexample": Verdict.passed,
                "counterexample": Verdict.failed,
                "skipped": Verdict.skipped,
            }.get(r.status, Verdict.errored)
            message = (
                r.status
                if status is not Verdict.skipped
                else r.detail.splitlines()[0]
                if r.detail
                else r.status
            )
            yield CaseResult(
                "prove",
                f"{r.name} ({r.section}) [{profile}]",
                status,
                message,
                r.detail if status is Verdict.failed else "",
                None,
                r.seconds or share,
            )


def shipped_diagrams() -> Path | None:
    """The diagrams folder of the installed package (``kcspec.diagrams``: the checkout's ``diagrams/`` in an
    editable install, the copy shipped in the wheel otherwise), or ``None`` when the package has none."""
    from importlib.resources import files

    try:
        folder = Path(str(files("kcspec.diagrams")))
    except ModuleNotFoundError:
        return None
    return folder if folder.is_dir() else None


def regenerate_hint(folder: Path) -> str:
    """How to bring the diagrams of ``folder`` (and its recorded coverage runs) up to date with the spec."""
    runs = folder / "coverage"
    return (
        f"regenerate with `kcspec diagrams --out {folder}`; a recorded run under {runs} is re-recorded with "
        f"`kcspec diagrams --record-run {runs}/scenarios.json` and its overlays redrawn with "
        f"`kcspec diagrams --coverage {runs}/scenarios.json --out {folder}`"
    )


def diagrams_fresh(opts: VerifyOptions) -> Iterator[CaseResult]:
    """The committed diagrams are what the spec generates (``kcspec diagrams --check``), wherever kcspec runs: the
    diagrams checked are the installed package's (never a ``diagrams/`` folder that happens to be in the working
    directory)."""

    def case() -> Outcome:
        from kcspec.model.diagrams.catalog import check_folder
        from kcspec.model.diagrams.coverage import CoverageError

        folder = shipped_diagrams()
        if folder is None:
            return (
                Verdict.skipped,
                "this installation of kcspec ships no diagrams (kcspec.diagrams)",
                "",
                None,
            )
        try:
            result = check_folder(folder)
        except FileNotFoundError as exc:
            return Verdict.skipped, f"Graphviz is missing: {exc} (install Debian's graphviz)", "", None
        except CoverageError as exc:  # a recorded run the spec no longer accepts (a state renamed, ...)
            return Verdict.failed, f"{exc}; {regenerate_hint(folder)}", "", None
        notes = "\n".join(result.notes)
        if result.stale:
            return (
                Verdict.failed,
                f"{len(result.stale)} stale diagram(s) in {folder}; {regenerate_hint(folder)}",
                "\n".join(str(x) for x in result.stale) + ("\n" + notes if notes else ""),
                None,
            )
        return Verdict.passed, f"{len(result.checked)} files in {folder} match the spec", notes, None

    yield timed("diagrams", "committed diagrams match the spec", case)


def tla_cases(opts: VerifyOptions) -> Iterator[CaseResult]:
    """The generated TLA+ modules parse; TLC model-checks them (skipped, with how to get TLC, when absent)."""
    from kcspec.conformance.selfcheck.gate.tla import verify_cases

    yield from verify_cases(opts)


CHECKS: tuple[Check, ...] = (
    Check(
        "spec-vs-reference",
        "reference controller = spec on the built-in scenarios; §11 invariants on every step",
        crosscheck_scenarios,
        cost=11,
    ),
    Check(
        "explore",
        "every reachable state of small clusters and of a 2-broker TLA+ model: refinement and invariants",
        explore_defaults,
        cost=len(EXPLORE_DEFAULTS) + 4,
    ),
    Check(
        "conformance",
        "vectors (spec = reference) pass through the protocol's subprocess path",
        conformance_self_check,
    ),
    Check("prove", "Z3: election lemmas (≤ 8 brokers), table sanity, inductiveness", proofs, cost=2),
    Check("diagrams", "committed diagrams are what the spec generates", diagrams_fresh),
    Check("tla", "generated TLA+ parses; TLC model check and liveness", tla_cases, cost=2),
)
