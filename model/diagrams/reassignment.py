"""Partition reassignment as a flow diagram, walked from the spec's ``onPartitionReassignment`` (§7.7 / §7.8).

kafka-2.8 draws the KIP-455 algorithm (``kcspec.spec.actions.reassignment_kip455``), kafka-1.1 the legacy
12-step OAR/RAR algorithm (``reassignment_legacy``). The procedure is built on free variables and outlined
in evaluation order (``outline``): named steps of the reassignment's own section become nested boxes,
state-machine calls become coloured boxes naming the target state (and the strategy of an election) and
the elements moved, loops and decisions are drawn as such. Procedures of other sections (topic deletion,
§8) are drawn collapsed. Every label is read from the spec's tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcspec.model.diagrams import style as S
from kcspec.model.diagrams.dot import Attrs, Edge, Graph, Node, Subgraph, attrs
from kcspec.model.diagrams.outline import Call, Loop, Proc, Step, outline
from kcspec.model.diagrams.pretty import wrap
from kcspec.spec import lang as L
from kcspec.spec.actions import reassignment_kip455, reassignment_legacy
from kcspec.spec.profiles import Profile

WIDTH = 46
REPLICA_FILL = "#dbe9fb"
PARTITION_FILL = "#dff3df"


@dataclass
class _Box:
    """A container being filled: the graph's top level or a cluster."""

    name: str
    attrs: Attrs
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    children: list[_Box] = field(default_factory=list)

    def freeze(self) -> Subgraph:
        return Subgraph(
            self.name,
            self.attrs,
            tuple(self.nodes),
            tuple(self.edges),
            tuple(c.freeze() for c in self.children),
        )


@dataclass
class _Builder:
    expand: tuple[str, ...]
    top: _Box = field(default_factory=lambda: _Box("top", ()))
    count: int = 0
    edges: list[Edge] = field(default_factory=list)

    def node(self, box: _Box, label: str, **a: str) -> str:
        self.count += 1
        nid = f"n{self.count}"
        box.nodes.append(Node(nid, attrs(label=label, **a)))
        return nid

    def link(self, tails: list[str], head: str, label: str | None = None) -> None:
        for t in tails:
            self.edges.append(Edge(t, head, attrs(label=label)))

    def steps(
        self, box: _Box, steps: tuple[Step, ...], tails: list[str], label: str | None = None
    ) -> list[str]:
        """Draw ``steps`` in ``box`` after ``tails``; returns the new tails."""
        for st in steps:
            first, tails_after = self.step(box, st)
            self.link(tails, first, label)
            label = None
            tails = tails_after
        return tails

    def step(self, box: _Box, st: Step) -> tuple[str, list[str]]:
        if isinstance(st, Call):
            machine = "Replica" if st.machine == "replica" else "Partition"
            strategy = f"\nelection: {st.strategy}" if st.strategy else ""
            text = f"{machine} → {st.target}{strategy}\n{wrap(st.elements, WIDTH)}"
            fill = REPLICA_FILL if st.machine == "replica" else PARTITION_FILL
            nid = self.node(box, text, shape="box", style="filled", fillcolor=fill)
            return nid, [nid]
        if isinstance(st, Proc):
            title = f"{st.name} ({st.section})"
            if not st.steps or not st.section.startswith(self.expand):
                style = "rounded" if not st.steps else "rounded,dashed"
                more = "" if not st.steps else "\n(see its own diagram/section)"
                nid = self.node(box, title + more, shape="box", style=style)
                return nid, [nid]
            inner = _Box(f"cluster_{self.count + 1}", attrs(label=title, style="rounded", color="#888888"))
            box.children.append(inner)
            head = self.node(inner, "", shape="point", width="0.08")
            return head, self.steps(inner, st.steps, [head])
        if isinstance(st, Loop):
            inner = _Box(f"cluster_{self.count + 1}", attrs(label="", style="dashed", color="#888888"))
            box.children.append(inner)
            head = self.node(
                inner, wrap(st.over, WIDTH), shape="box", style="rounded,filled", fillcolor=S.STEP_FILL
            )
            return head, self.steps(inner, st.steps, [head])
        d = self.node(
            box,
            wrap(st.cond, WIDTH) + "?",
            shape="diamond",
            style="filled",
            fillcolor=S.DECISION_FILL,
            margin="0.02",
        )
        yes = self.steps(box, st.yes, [d], "yes") if st.yes else []
        no = self.steps(box, st.no, [d], "no") if st.no else []
        join = self.node(box, "", shape="point", width="0.08")
        self.link(yes or [d], join, None if st.yes else "yes")
        self.link(no or [d], join, None if st.no else "no")
        return d, [join]


def reassignment_steps(profile: Profile) -> tuple[tuple[Step, ...], str, str]:
    """(steps, procedure module, section prefix) of ``onPartitionReassignment`` of ``profile``."""
    w, tp = L.var("w"), L.var("tp")
    if profile.kip455_reassignment:
        tree = reassignment_kip455.on_partition_reassignment(profile, w, tp, L.var("fa_new"))
        return outline(tree), "KIP-455 (adding/removing replicas)", "§7.7"
    tree = reassignment_legacy.on_partition_reassignment(profile, w, tp)
    return outline(tree), "legacy 12-step OAR/RAR algorithm", "§7.8"


def reassignment_graph(profile: Profile) -> Graph:
    steps, algorithm, prefix = reassignment_steps(profile)
    b = _Builder(expand=(prefix,))
    start = b.node(b.top, "onPartitionReassignment(tp)", shape="box", style="rounded,bold")
    tails = b.steps(b.top, steps, [start])
    end = b.node(b.top, "done", shape="box", style="rounded")
    b.link(tails, end)
    rows = (
        S.LegendRow("box", REPLICA_FILL, "replica state-machine call (§4): target state, replicas moved"),
        S.LegendRow(
            "box", PARTITION_FILL, "partition state-machine call (§5): target state, election strategy"
        ),
        S.LegendRow("box", S.DECISION_FILL, "decision (yes / no), as written in the spec"),
        S.LegendRow("box", S.STEP_FILL, "loop over a sequence (dashed frame)"),
    )
    notes = (
        f"Walked from onPartitionReassignment of {profile.name}: {algorithm} ({prefix}).",
        "Framed boxes are named procedures of the spec; dashed boxes are procedures of other sections, collapsed.",
        "Error/fencing checks (a thrown step, ControllerMovedException) are not drawn: each stops the flow.",
    )
    top = b.top.freeze()
    return Graph(
        name=f"reassignment-{profile.name}",
        attrs=(
            *S.GRAPH_DEFAULTS,
            *S.title_attr(f"Partition reassignment — {profile.name}: {algorithm} ({prefix})"),
        ),
        node_defaults=attrs(fontname=S.FONT, fontsize="10"),
        edge_defaults=S.EDGE_DEFAULTS,
        nodes=top.nodes,
        edges=(*top.edges, *b.edges),
        subgraphs=(*top.subgraphs, S.legend("Legend", rows, notes, anchor=end)),
        comment=f"Generated by 'kcspec diagrams' from the spec's onPartitionReassignment ({prefix}); do not edit.",
    )
