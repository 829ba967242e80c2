"""The gate's TLA+ cases: the generated modules parse, the explorer finds the manifest's state counts, TLC
agrees with the explorer on the same models, and TLC checks the liveness properties on the smallest model of each
profile (skipped, with how to get TLC, when Java or tla2tools.jar is missing and the user named no jar). Those TLC
runs last seconds: their JVM compiles with C1 only unless the user set options of their own
(``locate.for_short_runs``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kcspec.conformance.selfcheck.gate.cases import CaseResult, VerifyOptions, timed
from kcspec.conformance.verdicts import Verdict
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.manifest import Expected
from kcspec.model.tla.manifest import load as load_manifest
from kcspec.model.tla.module import generate
from kcspec.model.tla.syntax import SyntaxCheckUnavailable, check_syntax
from kcspec.model.tlc.locate import find_toolchain, for_short_runs, tlc_unavailable_reason
from kcspec.spec import profiles

EXIT_USAGE = 2
"""The exit code of a crosscheck whose TLC run was refused as bad usage (DESIGN.md's exit codes): the gate
reports it as errored, a broken check rather than a violation."""


def verify_cases(opts: VerifyOptions) -> Iterator[CaseResult]:
    """Cases for ``kcspec verify``: per profile, the generated module of the default model parses (and passed
    the static kind check, which generation runs); for every manifest model of the profile marked for verify
    (``model/tla/state_counts.json``), the explorer finds the manifest's number of distinct states and TLC agrees
    with the explorer (``crosscheck``: same count, same states) — reported as skipped, with how to get TLC, when
    Java or tla2tools.jar is missing (``--tla2tools`` or ``TLA2TOOLS_JAR``)."""
    config = ModelConfig()
    jar = Path(opts.tla2tools) if opts.tla2tools else None
    for profile in opts.profiles:

        def syntax(profile: str = profile) -> tuple[Verdict, str, str, str | None]:
            module = generate(profiles.get_profile(profile), config)
            try:
                problems = check_syntax(module.tla)
            except SyntaxCheckUnavailable as exc:
                return Verdict.skipped, str(exc), "", None
            if not problems:
                return Verdict.passed, f"{module.name}: {len(module.tla.splitlines())} lines parse", "", None
            details = "\n".join(
                f"{p} [{o.definition}; {o.rule or '-'}]" if (o := module.origin(p.line)) else str(p)
                for p in problems
            )
            return Verdict.failed, f"{len(problems)} syntax error(s) in {module.name}", details, None

        yield timed("tla-syntax", f"generated module [{profile}]", syntax)

        for entry in (e for e in load_manifest() if e.profile == profile and e.in_verify):

            def count(entry: Expected = entry) -> tuple[Verdict, str, str, str | None]:
                from kcspec.conformance.selfcheck.explore.tla_model import check_count

                checked = check_count(entry)
                if checked.problem is not None:
                    return Verdict.failed, checked.problem, "", None
                return Verdict.passed, f"{checked.count:,} distinct states, as the manifest expects", "", None

            yield timed("tla-model", f"explorer on the TLA+ model {entry.name} [{profile}]", count)

            def tlc(entry: Expected = entry) -> tuple[Verdict, str, str, str | None]:
                from kcspec.conformance.selfcheck.tla_crosscheck import (
                    CrosscheckArgs,
                    CrosscheckOutcome,
                    run_crosscheck,
                )

                # a jar the user named that cannot run never gets here: verify.py stops with exit 2
                reason = tlc_unavailable_reason(jar)
                if reason is not None:
                    return Verdict.skipped, reason, "", None
                tools = for_short_runs(find_toolchain(jar))  # 1-broker models: seconds
                result = run_crosscheck(CrosscheckArgs(entry.profile, entry.config, timeout_s=1800), tools)
                if result.verdict is CrosscheckOutcome.AGREE and result.tlc_distinct == entry.distinct_states:
                    return Verdict.passed, f"{result.message} ({tools.version})", "", None
                if result.verdict is CrosscheckOutcome.TLC_FAILED and result.exit_code == EXIT_USAGE:
                    return Verdict.errored, result.message, result.tlc.report.error or "", None
                return Verdict.failed, result.message, "", None

            yield timed("tlc", f"TLC crosscheck on {entry.name} [{profile}]", tlc)

        yield from _liveness_cases(profile, jar)


LIVENESS_MODEL = "one-broker-minimal"
"""The manifest model (``<name>-<2.8|1.1>``) on which verify checks liveness: seconds per property."""


def _liveness_cases(profile: str, jar: Path | None) -> Iterator[CaseResult]:
    """One case per liveness property on the profile's smallest manifest model: passed when the property holds
    or TLC's lasso is one of Kafka's known gaps (named in the message), failed on any other lasso."""
    from kcspec.model.tla.liveness import PROPERTIES

    entry = next(
        (e for e in load_manifest() if e.profile == profile and e.name.startswith(LIVENESS_MODEL)), None
    )
    if entry is None:
        return
    for prop in (p.name for p in PROPERTIES):

        def live(prop: str = prop, entry: Expected = entry) -> tuple[Verdict, str, str, str | None]:
            from kcspec.conformance.selfcheck.tla_liveness import LivenessOutcome, check_property

            reason = tlc_unavailable_reason(jar)
            if reason is not None:
                return Verdict.skipped, reason, "", None
            tools = for_short_runs(find_toolchain(jar))  # 1-broker models: seconds
            result = check_property(entry.profile, entry.config, prop, tools, timeout_s=1800)
            details = "" if result.finding is None else result.finding.lasso.trace.to_json()
            if result.outcome in (LivenessOutcome.HOLDS, LivenessOutcome.EXPECTED_GAP):
                return Verdict.passed, f"{result.message} ({tools.version})", "", None
            if result.outcome is LivenessOutcome.TLC_FAILED:
                return Verdict.errored, result.message, result.tlc.report.error or "", None
            return Verdict.failed, result.message, details, None

        yield timed("tlc-liveness", f"TLC liveness {prop} on {entry.name} [{profile}]", live)
