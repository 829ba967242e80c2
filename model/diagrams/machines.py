"""The replica and partition state machines of a profile, and the kafka-1.1 / kafka-2.8 comparison, as DOT graphs.

States and edges come from the profile's valid-previous-state tables (§2.1, §2.2); edge labels are the
effects ``effects.machine_effects`` reads from the spec's per-target rules. An optional coverage overlay
(``coverage.Overlay``) recolours edges by how often a run took them and adds the invalid transitions it
attempted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from kcspec.model.diagrams import style as S
from kcspec.model.diagrams.dot import Attrs, Edge, Graph, Node, Subgraph, attrs
from kcspec.spec.profiles import PROFILES, Profile, differences
from kcspec.spec.tables import PARTITION_INITIAL, REPLICA_INITIAL
from kcspec.spec.vocabulary import PartitionState, ReplicaState

MACHINES = ("replica", "partition")
LABEL_WIDTH = 44
EdgeKey = tuple[str, str]
EdgeEffects = Mapping[EdgeKey, tuple[str, ...]]

_SECTION = {"replica": "§2.1, §4", "partition": "§2.2, §5"}
_FLAG_SECTIONS = {"replica": ("§2.1", "§2.3", "§4"), "partition": ("§2.2", "§2.3", "§5")}
# Rank hints: states drawn on the same row (purely visual; every state and edge comes from the tables).
_SAME_RANK: dict[str, tuple[tuple[str, ...], ...]] = {
    "replica": (),
    "partition": (),
}


@dataclass(frozen=True)
class Overlay:
    """Edge counts from one run of one machine: valid edges taken, and invalid transitions attempted."""

    source: str
    taken: Mapping[EdgeKey, int]
    invalid: Mapping[EdgeKey, int]


def states(machine: str) -> tuple[str, ...]:
    """State names of a machine in Kafka's code order."""
    enum = ReplicaState if machine == "replica" else PartitionState
    return tuple(s.name for s in sorted(enum, key=lambda s: s.value))


def initial_state(machine: str) -> str:
    return REPLICA_INITIAL.name if machine == "replica" else PARTITION_INITIAL.name


def valid_edges(profile: Profile, machine: str) -> tuple[EdgeKey, ...]:
    """Every valid (from, to) of the machine, in table order (target, then Kafka's previous-state order)."""
    if machine == "replica":
        return tuple((p.name, t.name) for t, prevs in profile.replica_valid_previous.items() for p in prevs)
    return tuple((p.name, t.name) for t, prevs in profile.partition_valid_previous.items() for p in prevs)


def _state_nodes(machine: str) -> tuple[tuple[Node, ...], tuple[Subgraph, ...]]:
    code_of = {s.name: s.value for s in (ReplicaState if machine == "replica" else PartitionState)}
    nodes = [Node("start", attrs(shape="point", width="0.12", label=""))]
    for name in states(machine):
        initial = name == initial_state(machine)
        nodes.append(
            Node(
                name,
                attrs(
                    label=f"{name}\n(code {code_of[name]})",
                    shape="box",
                    style="rounded,filled",
                    fillcolor=S.INITIAL_FILL if initial else S.STATE_FILL,
                    peripheries="2" if initial else None,
                ),
            )
        )
    ranks = (
        *(
            Subgraph(f"rank_{i}", attrs(rank="same"), nodes=tuple(Node(n) for n in group))
            for i, group in enumerate(_SAME_RANK[machine])
        ),
    )
    return tuple(nodes), ranks


def _edge(machine: str, edge: EdgeKey, a: Attrs, tooltip: str | None = None) -> Edge:
    """A transition edge. Edges back into the initial state are written head-first with ``dir=back`` (drawn
    the same) so that Graphviz ranks the initial state at the top. ``tooltip`` (where the spec writes the
    target's rule) shows when the pointer rests on the edge or its label in the SVG."""
    if tooltip is not None:
        a = (*a, ("tooltip", tooltip), ("labeltooltip", tooltip))
    if edge[1] == initial_state(machine) and edge[0] != edge[1]:
        return Edge(edge[1], edge[0], (*a, ("dir", "back")))
    return Edge(edge[0], edge[1], a)


def _start_edge(machine: str) -> Edge:
    return Edge("start", initial_state(machine), attrs(label="implicit\ninitial state", style="dashed"))


def _label(lines: tuple[str, ...]) -> str:
    """Effect lines, each wrapped at "; " boundaries so labels stay narrow."""
    out: list[str] = []
    for line in lines:
        cur = ""
        for part in line.split("; "):
            if cur and len(cur) + 2 + len(part) > LABEL_WIDTH:
                out.append(cur + ";")
                cur = "   " + part
            else:
                cur = f"{cur}; {part}" if cur else part
        out.append(cur)
    return "\n".join(out)


def _effects_or_fail(effects: EdgeEffects, edge: EdgeKey, where: str) -> tuple[str, ...]:
    try:
        return effects[edge]
    except KeyError:
        raise KeyError(
            f"{where}: no effect derived from the spec for transition {edge[0]} -> {edge[1]}"
        ) from None


def state_machine_graph(
    profile: Profile,
    machine: str,
    effects: EdgeEffects,
    overlay: Overlay | None = None,
    notes: tuple[str, ...] = (),
    tooltips: Mapping[str, str] | None = None,
) -> Graph:
    """The state machine of ``profile``; with ``overlay``, coloured by coverage. ``tooltips`` maps a target
    state to where the spec writes its rule (``effects.target_tooltips``), shown on the edges into it."""
    tips = tooltips or {}
    nodes, ranks = _state_nodes(machine)
    edges = [_start_edge(machine)]
    table_edges = valid_edges(profile, machine)
    rows: list[S.LegendRow] = [
        S.LegendRow("box", S.INITIAL_FILL, "implicit initial state (double border)"),
        S.LegendRow("line", S.COMMON, "valid transition, labelled with its effect"),
    ]
    legend_notes = [
        f"Tables §{'2.1' if machine == 'replica' else '2.2'} of profile {profile.name}; effects {_SECTION[machine]}.",
        *notes,
    ]
    title = f"{machine.capitalize()} state machine — {profile.name} (Kafka {profile.kafka_version})"
    if overlay is None:
        for e in table_edges:
            lines = _effects_or_fail(effects, e, f"{profile.name} {machine} machine")
            edges.append(_edge(machine, e, attrs(label=_label(lines), color=S.COMMON), tips.get(e[1])))
    else:
        title = f"Coverage: {title}"
        edges.extend(_overlay_edges(profile, machine, effects, table_edges, overlay, tips))
        rows = [
            S.LegendRow("box", S.INITIAL_FILL, "implicit initial state (double border)"),
            S.LegendRow("line", _heat(1, 10), "taken rarely (thin, light); label: times taken, §", 1),
            S.LegendRow("line", _heat(10, 10), "taken most often (thick, dark)", 4),
            S.LegendRow("dotted", S.NEVER, "valid but never taken"),
            S.LegendRow("dashed", S.INVALID, "invalid transition attempted (rejected, §2.3 step 4)"),
        ]
        total = sum(overlay.taken.values())
        covered = sum(1 for e in table_edges if overlay.taken.get(e, 0) > 0)
        legend_notes.append(f"Run: {overlay.source}")
        legend_notes.append(f"What each edge does: see the {machine}-{profile.name} diagram.")
        legend_notes.append(
            f"{total} transitions; {covered} of {len(table_edges)} valid edges taken; "
            f"{sum(overlay.invalid.values())} invalid attempts."
        )
    return Graph(
        name=f"{machine}-{profile.name}",
        attrs=(*S.GRAPH_DEFAULTS, *S.title_attr(title)),
        node_defaults=S.NODE_DEFAULTS,
        edge_defaults=S.EDGE_DEFAULTS,
        nodes=nodes,
        edges=tuple(edges),
        subgraphs=(
            *ranks,
            S.legend("Legend", tuple(rows), tuple(legend_notes), anchor=initial_state(machine)),
        ),
        comment=f"Generated by 'kcspec diagrams' from the spec ({_SECTION[machine]}); do not edit.",
    )


def _heat(count: int, top: int) -> str:
    """A blue from light (rare) to dark (most frequent), on a log scale."""
    t = 0.0 if top <= 1 else math.log(count) / math.log(top)
    t = min(max(t, 0.0), 1.0)
    light, dark = (0x9E, 0xC5, 0xF0), (0x08, 0x30, 0x8C)
    rgb = tuple(round(a + (b - a) * t) for a, b in zip(light, dark, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _width(count: int, top: int) -> str:
    t = 0.0 if top <= 1 else math.log(count) / math.log(top)
    return f"{1.5 + 4.5 * min(max(t, 0.0), 1.0):.2f}"


def _overlay_edges(
    profile: Profile,
    machine: str,
    effects: EdgeEffects,
    table_edges: tuple[EdgeKey, ...],
    overlay: Overlay,
    tips: Mapping[str, str],
) -> list[Edge]:
    top = max([*overlay.taken.values(), *overlay.invalid.values(), 1])
    out: list[Edge] = []
    for e in table_edges:
        lines = _effects_or_fail(effects, e, f"{profile.name} {machine} machine")
        n = overlay.taken.get(e, 0)
        if n > 0:
            a = attrs(label=f"×{n}\n{lines[-1]}", color=_heat(n, top), penwidth=_width(n, top))
        else:
            a = attrs(label=f"never taken\n{lines[-1]}", color=S.NEVER, fontcolor=S.NEVER, style="dotted")
        out.append(_edge(machine, e, a, tips.get(e[1])))
    for e in sorted(overlay.invalid):
        n = overlay.invalid[e]
        out.append(
            Edge(
                e[0],
                e[1],
                attrs(
                    label=f"invalid ×{n}",
                    color=S.INVALID,
                    fontcolor=S.INVALID,
                    style="dashed",
                    penwidth=_width(n, top),
                    constraint="false",
                ),
            )
        )
    return out


def machine_flag_differences(machine: str) -> list[tuple[str, str, bool, bool]]:
    """Profile flags that change this machine's behaviour (their doc cites the machine's sections)."""
    pattern = re.compile("|".join(re.escape(p) + r"(?![0-9])" for p in _FLAG_SECTIONS[machine]))
    return [d for d in differences() if pattern.search(d[1])]


def comparison_graph(
    machine: str,
    effects_by_profile: Mapping[str, EdgeEffects],
    notes: tuple[str, ...] = (),
    tooltips_by_profile: Mapping[str, Mapping[str, str]] | None = None,
) -> Graph:
    """Both profiles' machine in one drawing: common edges grey, edges or effects that differ highlighted; an
    edge's tooltip says where each profile's spec writes the target's rule."""
    tips_by = tooltips_by_profile or {}

    def tip(e: EdgeKey) -> str | None:
        found = {
            t for name in ("kafka-2.8", "kafka-1.1") if (t := tips_by.get(name, {}).get(e[1])) is not None
        }
        return " / ".join(sorted(found)) if found else None

    new, old = PROFILES["kafka-2.8"], PROFILES["kafka-1.1"]
    e_new, e_old = valid_edges(new, machine), valid_edges(old, machine)
    eff_new, eff_old = effects_by_profile[new.name], effects_by_profile[old.name]
    nodes, ranks = _state_nodes(machine)
    edges = [_start_edge(machine)]
    for e in (*e_new, *(x for x in e_old if x not in e_new)):
        if e in e_new and e in e_old:
            a, b = _effects_or_fail(eff_new, e, "kafka-2.8"), _effects_or_fail(eff_old, e, "kafka-1.1")
            if a == b:
                edges.append(_edge(machine, e, attrs(label=_label(a), color=S.COMMON), tip(e)))
            else:
                same = tuple(x for x in a if x in b)
                label = _label(
                    (
                        *same,
                        *(f"2.8 only: {x}" for x in a if x not in b),
                        *(f"1.1 only: {x}" for x in b if x not in a),
                    )
                )
                edges.append(
                    _edge(
                        machine,
                        e,
                        attrs(label=label, color=S.DIFFERS, fontcolor=S.DIFFERS, penwidth="2"),
                        tip(e),
                    )
                )
        elif e in e_new:
            label = _label(("kafka-2.8 only", *_effects_or_fail(eff_new, e, "kafka-2.8")))
            edges.append(
                _edge(
                    machine,
                    e,
                    attrs(label=label, color=S.ONLY_28, fontcolor=S.ONLY_28, penwidth="2.5"),
                    tip(e),
                )
            )
        else:
            label = _label(("kafka-1.1 only", *_effects_or_fail(eff_old, e, "kafka-1.1")))
            edges.append(
                _edge(
                    machine,
                    e,
                    attrs(label=label, color=S.ONLY_11, fontcolor=S.ONLY_11, penwidth="2.5"),
                    tip(e),
                )
            )
    rows = (
        S.LegendRow("line", S.COMMON, "same transition and effect in both profiles"),
        S.LegendRow("line", S.ONLY_28, "valid only in kafka-2.8", 2),
        S.LegendRow("line", S.ONLY_11, "valid only in kafka-1.1", 2),
        S.LegendRow("line", S.DIFFERS, "valid in both, effect differs", 2),
    )
    flag_notes = tuple(
        f"{flag}: 2.8={a}, 1.1={b} — {doc}" for flag, doc, a, b in machine_flag_differences(machine)
    )
    title = f"{machine.capitalize()} state machine — kafka-1.1 vs kafka-2.8"
    return Graph(
        name=f"{machine}-comparison",
        attrs=(*S.GRAPH_DEFAULTS, *S.title_attr(title)),
        node_defaults=S.NODE_DEFAULTS,
        edge_defaults=S.EDGE_DEFAULTS,
        nodes=nodes,
        edges=tuple(edges),
        subgraphs=(
            *ranks,
            S.legend(
                "Legend",
                rows,
                (*notes, "Profile flags of this machine that differ:", *flag_notes),
                anchor=initial_state(machine),
            ),
        ),
        comment=f"Generated by 'kcspec diagrams' from the spec ({_SECTION[machine]}); do not edit.",
    )
