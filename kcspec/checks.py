"""The checks ``kcspec verify`` runs, in order. Each yields ``CaseResult``s (see ``kcspec.verify``)."""

from __future__ import annotations

from collections.abc import Iterator

from kcspec.verify import CaseResult, Check, Status, VerifyOptions, timed


def crosscheck_scenarios(opts: VerifyOptions) -> Iterator[CaseResult]:
    """The reference controller against the spec on the built-in scenarios, with §11 invariants on every step."""
    from kcspec.conformance.crosscheck import crosscheck
    from kcspec.conformance.scenarios import SCENARIOS

    for profile in opts.profiles:
        for scenario in SCENARIOS:
            if opts.only and scenario.name not in opts.only:
                continue

            def case(scenario=scenario, profile=profile) -> tuple[Status, str, str, str | None]:  # type: ignore[no-untyped-def]
                outcome = crosscheck(scenario.name, profile, scenario.events(profile))
                if outcome.ok:
                    return Status.PASSED, f"{outcome.steps_run} steps agree", "", None
                path = outcome.write(opts.out / "counterexamples")
                return (
                    Status.FAILED,
                    outcome.divergence.message if outcome.divergence else "",
                    outcome.report(),
                    str(path),
                )

            yield timed("spec-vs-reference", f"{scenario.name} [{profile}]", case)


CHECKS: tuple[Check, ...] = (
    Check(
        "spec-vs-reference",
        "reference controller refines the spec on built-in scenarios; §11 invariants hold on every step",
        crosscheck_scenarios,
        cost=22,
    ),
)
