"""Every diagram ``kcspec diagrams`` generates, writing them to a folder, and ``--check`` against committed files.

Spec diagrams are named ``<kind>-<profile>`` (``replica-kafka-2.8``, ``elections-kafka-1.1``, …) plus the two
comparison diagrams; coverage overlays are named ``coverage-<machine>-<profile>``. Each is written as
``<name>.dot`` and rendered to ``<name>.svg`` / ``<name>.png``. ``check`` regenerates every DOT file (and every
SVG, when the committed SVG was made by the same Graphviz version as the local ``dot``) and lists the files
that differ, are missing, or are no longer generated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kcspec.model.diagrams import elections, events, machines, reassignment
from kcspec.model.diagrams.coverage import MachineCoverage
from kcspec.model.diagrams.dot import Graph, render_dot
from kcspec.model.diagrams.effects import MACHINE_NOTES, machine_effects, target_tooltips
from kcspec.model.diagrams.render import dot_version, render, svg_generator_version
from kcspec.spec.profiles import PROFILES

COVERAGE_RUNS = "coverage"
"""Sub-folder of the diagrams folder holding committed run files (``*.json``) whose overlays are checked too."""


@dataclass(frozen=True)
class Diagram:
    name: str
    graph: Graph

    @property
    def dot(self) -> str:
        return render_dot(self.graph)


def spec_diagrams(profiles: Iterable[str] | None = None) -> list[Diagram]:
    """Every diagram derived from the spec alone, for the given profiles (all by default), in a fixed order."""
    names = list(PROFILES) if profiles is None else list(profiles)
    out: list[Diagram] = []
    for name in names:
        prof = PROFILES[name]
        for m in machines.MACHINES:
            graph = machines.state_machine_graph(
                prof, m, machine_effects(prof, m), tooltips=target_tooltips(prof, m)
            )
            out.append(Diagram(f"{m}-{name}", graph))
        out.append(Diagram(f"elections-{name}", elections.elections_graph(prof)))
        out.append(Diagram(f"reassignment-{name}", reassignment.reassignment_graph(prof)))
        out.append(Diagram(f"events-{name}", events.events_graph(prof)))
    if profiles is None:
        for m in machines.MACHINES:
            effects = {n: machine_effects(p, m) for n, p in PROFILES.items()}
            tips = {n: target_tooltips(p, m) for n, p in PROFILES.items()}
            out.append(
                Diagram(f"{m}-comparison", machines.comparison_graph(m, effects, MACHINE_NOTES[m], tips))
            )
    return out


def coverage_diagrams(entries: list[MachineCoverage]) -> list[Diagram]:
    """One overlay per (profile, machine) present in a run."""
    out = []
    for mc in entries:
        prof = PROFILES[mc.profile]
        effects = machine_effects(prof, mc.machine)
        graph = machines.state_machine_graph(
            prof,
            mc.machine,
            effects,
            mc.overlay,
            MACHINE_NOTES[mc.machine],
            target_tooltips(prof, mc.machine),
        )
        out.append(Diagram(f"coverage-{mc.machine}-{mc.profile}", graph))
    return out


def write(
    diagrams: list[Diagram], out_dir: Path, formats: tuple[str, ...], log: Callable[[str], None]
) -> None:
    """Write each diagram in each of ``formats`` (``dot``, ``svg``, ``png``) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for d in diagrams:
        text = d.dot
        for fmt in formats:
            path = out_dir / f"{d.name}.{fmt}"
            data = text.encode("utf-8") if fmt == "dot" else render(text, fmt)
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)
                log(f"wrote {path}")


@dataclass(frozen=True)
class CheckResult:
    stale: tuple[str, ...]
    """Files that differ from what the spec generates, are missing, or are no longer generated."""
    checked: tuple[str, ...]
    notes: tuple[str, ...]
    """Checks that could not run, with the reason (never silent)."""


def check(diagrams: list[Diagram], out_dir: Path) -> CheckResult:
    """Compare committed ``.dot`` and ``.svg`` files in ``out_dir`` with freshly generated ones."""
    stale: list[str] = []
    checked: list[str] = []
    notes: list[str] = []
    local_version = dot_version()
    expected = set()
    for d in diagrams:
        text = d.dot
        dot_path = out_dir / f"{d.name}.dot"
        svg_path = out_dir / f"{d.name}.svg"
        expected |= {dot_path.name, svg_path.name}
        checked.append(str(dot_path))
        if not dot_path.exists():
            stale.append(f"{dot_path} (missing)")
        elif dot_path.read_bytes() != text.encode("utf-8"):
            stale.append(f"{dot_path} (differs from the spec)")
        if not svg_path.exists():
            stale.append(f"{svg_path} (missing)")
            continue
        committed = svg_path.read_bytes()
        made_by = svg_generator_version(committed)
        if made_by != local_version:
            notes.append(
                f"{svg_path}: SVG comparison skipped: made by Graphviz {made_by or 'unknown'}, local dot is "
                f"{local_version} (its DOT source was compared)"
            )
            continue
        checked.append(str(svg_path))
        if committed != render(text, "svg"):
            stale.append(f"{svg_path} (differs from its rendered DOT)")
    for path in sorted(out_dir.glob("*.dot")) + sorted(out_dir.glob("*.svg")):
        if path.name not in expected:
            stale.append(f"{path} (no longer generated)")
    return CheckResult(tuple(stale), tuple(checked), tuple(notes))


def check_folder(out_dir: Path) -> CheckResult:
    """``kcspec diagrams --check`` as a function (for ``kcspec verify``): the spec diagrams in ``out_dir`` and the
    overlays of every committed run in ``out_dir/coverage`` (``*.json``), combined."""
    from kcspec.model.diagrams.coverage import load_coverage

    results = [check(spec_diagrams(), out_dir)]
    runs = out_dir / COVERAGE_RUNS
    if runs.is_dir():
        entries = [e for path in sorted(runs.glob("*.json")) for e in load_coverage(path)]
        results.append(check(coverage_diagrams(entries), runs))
    return CheckResult(
        tuple(x for r in results for x in r.stale),
        tuple(x for r in results for x in r.checked),
        tuple(x for r in results for x in r.notes),
    )
