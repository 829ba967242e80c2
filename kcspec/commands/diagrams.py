"""``kcspec diagrams``: generate the Graphviz diagrams from the spec, draw coverage overlays, check staleness."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from kcspec import options
from kcspec.conformance.selfcheck.gate.checks import regenerate_hint
from kcspec.model.diagrams import catalog
from kcspec.model.diagrams.coverage import CoverageError, load_coverage
from kcspec.model.diagrams.render import GraphvizMissing
from kcspec.model.files import with_path, write_atomically
from kcspec.spec import profiles

FORMAT_CHOICES = ("svg", "png", "dot", "all")
_REPLICA_LINE = re.compile(r"Changed state of replica \d+ for partition \S+ from (\w+) to (\w+)")
_PARTITION_LINE = re.compile(r"Changed partition \S+ (?:state )?from (\w+) to (\w+)")


def record_scenario_run(profile_names: list[str]) -> list[dict[str, object]]:
    """Transition counts of the reference controller over every built-in scenario (``kcspec verify``'s), read
    from its state-change log with TRACE enabled (successful transitions) and from the failures it reports
    (invalid transitions), in the coverage input format."""
    from kcspec.conformance.scenarios import SCENARIOS
    from kcspec.reference_impl.reference import ReferenceController
    from kcspec.spec.requests import FailureReason

    out: list[dict[str, object]] = []
    for name in profile_names:
        counts: dict[tuple[str, str, str, bool], int] = {}
        for scenario in SCENARIOS:
            rc = ReferenceController(name, trace=True)
            for event in scenario.events(name):
                if not rc.enabled(event):
                    continue
                result = rc.handle(event)
                for f in result.failures:
                    if f.reason is FailureReason.InvalidTransition:
                        key = (f.machine, f.from_state, f.target, False)
                        counts[key] = counts.get(key, 0) + 1
            for line in rc.state_change_log:
                for machine, pattern in (("replica", _REPLICA_LINE), ("partition", _PARTITION_LINE)):
                    m = pattern.search(line)
                    if m:
                        key = (machine, m.group(1), m.group(2), True)
                        counts[key] = counts.get(key, 0) + 1
        source = f"reference controller, {len(SCENARIOS)} built-in scenarios of 'kcspec verify', TRACE state-change log"
        for machine in ("replica", "partition"):
            edges = [
                {"from": a, "to": b, "count": n, "valid": v}
                for (m, a, b, v), n in sorted(counts.items())
                if m == machine
            ]
            out.append({"profile": name, "machine": machine, "source": source, "edges": edges})
    return out


def _formats(choice: str) -> tuple[str, ...]:
    """DOT is always written (it is the source of every render)."""
    return ("dot", "svg", "png") if choice == "all" else tuple(dict.fromkeys(("dot", choice)))


@click.command(name="diagrams")
@options.profile(
    optional=True, help="Only this profile's diagrams (default: every profile, plus the comparison diagrams)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMAT_CHOICES),
    default="svg",
    show_default=True,
    help="Render format; the DOT source is always written too.",
)
@options.out_dir(default="diagrams", help="Folder to write to (and to check with --check).", name="out_dir")
@click.option(
    "--coverage",
    "coverage_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Draw coverage overlays from a run's transition counts (JSON; format in kcspec.model.diagrams.coverage) "
    "into OUT/coverage instead of the spec diagrams.",
)
@click.option(
    "--record-run",
    "record_path",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=options.output_file,
    default=None,
    help="Run the built-in scenarios on the reference controller and write their transition counts to this "
    "coverage file (then draw it with --coverage).",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; exit 1 listing every committed file in OUT (and OUT/coverage) that is stale.",
)
def command(
    profile: str | None,
    fmt: str,
    out_dir: Path,
    coverage_file: Path | None,
    record_path: Path | None,
    check_only: bool,
) -> None:
    """Render the state machines, elections, reassignment flows and event map from the spec (never by hand).

    \b
    Examples:
      kcspec diagrams                                  regenerate diagrams/*.dot and *.svg
      kcspec diagrams --profile kafka-1.1 --format png --out /tmp/d
      kcspec diagrams --coverage run.json              coverage overlays into diagrams/coverage/
      kcspec diagrams --check                          exit 1 if committed diagrams are stale
      kcspec diagrams --record-run diagrams/coverage/scenarios.json
    """
    try:
        if record_path is not None:
            names = sorted(profiles.PROFILES) if profile is None else [profile]
            write_atomically(record_path, json.dumps(record_scenario_run(names), indent=1) + "\n")
            click.echo(f"wrote {record_path}")
            return
        if check_only:
            sys.exit(_check(out_dir, profile, coverage_file))
        if coverage_file is not None:
            entries = load_coverage(coverage_file)
            if profile is not None:
                entries = [e for e in entries if e.profile == profile]
                if not entries:
                    raise CoverageError(f"{coverage_file}: no entry for profile {profile}")
            catalog.write(
                catalog.coverage_diagrams(entries), out_dir / catalog.COVERAGE_RUNS, _formats(fmt), click.echo
            )
        else:
            diagrams = catalog.spec_diagrams(None if profile is None else [profile])
            catalog.write(diagrams, out_dir, _formats(fmt), click.echo)
    except (CoverageError, GraphvizMissing) as e:
        options.usage_error(str(e))
    except OSError as e:  # a write's error names no file (a full disk): the folder is named instead
        raise with_path(e, out_dir) from None


def _check(out_dir: Path, profile: str | None, coverage_file: Path | None) -> int:
    if profile is not None or coverage_file is not None:
        options.usage_error(
            "--check compares the whole folder; do not combine it with --profile or --coverage"
        )
    if not out_dir.is_dir():
        options.fail(f"{out_dir} is not a folder of diagrams (run 'kcspec diagrams' first)")
    try:
        result = catalog.check_folder(out_dir)
    except CoverageError as e:  # a recorded run the spec no longer accepts (a state renamed, ...)
        options.fail(f"{e}; {regenerate_hint(out_dir)}")
    for note in result.notes:
        click.echo(f"note: {note}")
    if result.stale:
        runs = out_dir / catalog.COVERAGE_RUNS
        click.echo(
            f"{len(result.stale)} stale diagram file(s); regenerate with 'kcspec diagrams --out {out_dir}' "
            f"(and 'kcspec diagrams --coverage {runs}/<run>.json --out {out_dir}'):"
        )
        for s in result.stale:
            click.echo(f"  {s}")
        return 1
    click.echo(f"diagrams up to date: {len(result.checked)} file(s) in {out_dir} match the spec")
    return 0
