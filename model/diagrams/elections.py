"""The four leader-election strategies of a profile as decision diagrams, read off the spec's rule trees (§6).

For each strategy, ``kcspec.spec.elections.elect`` is built on a free ``inp`` and its tree is walked: the
top-level ``let`` definitions become step boxes, the leader expression becomes the decision flow
(``if`` → a yes/no diamond, "first r in a sequence with a property" → the candidate order and the check,
the constant −1 → "no leader"), and the ``ElectionResult`` record's ``isr`` and ``recipients`` fields become
the result box. Every text is the spec's own expression, printed by ``pretty`` with the document's
abbreviations (AR, ISR, TRS/RAR …); how ``ElectionInput`` is computed is listed in the legend.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcspec.model.diagrams import style as S
from kcspec.model.diagrams.dot import Edge, Graph, Node, Subgraph, attrs
from kcspec.model.diagrams.pretty import pretty, var_name, wrap
from kcspec.spec import lang as L
from kcspec.spec.elections import elect, election_input
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import NO_LEADER, ElectionResult, ElectionStrategy, LeaderElection

INPUT_ABBREV = {
    "inp.assignment": "AR",
    "inp.leader_and_isr.isr": "ISR",
    "inp.leader_and_isr.leader": "L",
    "inp.online": "online",
    "inp.online_or_shutting_down": "onlineOrSD",
    "inp.shutting_down": "shuttingDown",
    "inp.allow_unclean": "allowUnclean",
    "inp.unclean_enabled": "uncleanEnabled",
    "inp.target_replicas": "targets",
}
"""Names of the ``ElectionInput`` fields as the diagrams print them (the legend says how each is computed)."""
WIDTH = 40


@dataclass
class _Flow:
    """Nodes and edges of one strategy's cluster, with ids prefixed by the strategy."""

    prefix: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def node(self, text: str, **a: str) -> str:
        nid = f"{self.prefix}_{len(self.nodes)}"
        self.nodes.append(Node(nid, attrs(label=text, **a)))
        return nid

    def edge(self, tail: str, head: str, label: str | None = None, **a: str) -> None:
        self.edges.append(Edge(tail, head, attrs(label=label, **a)))

    def text(self, e: L.Expr) -> str:
        return pretty(e, self.env, inline_lets=False, depth=1, abbrev=INPUT_ABBREV)


def _peel(e: L.Expr) -> tuple[str, str, list[tuple[str, L.Expr]], L.Rec]:
    """(rule name, section, top-level lets, the ElectionResult record) of a strategy's tree (procedure calls
    inlined; a ``let`` that only renames a variable — a procedure parameter — is not a definition)."""
    e = L.inline_calls(e)
    name, section = "", ""
    defs: list[tuple[str, L.Expr]] = []
    while True:
        if isinstance(e, L.Rule):
            name, section = name or e.name, section or e.section
            e = e.body
        elif isinstance(e, L.Let):
            if not isinstance(e.value, L.Var):
                defs.append((e.name, e.value))
            e = e.body
        else:
            break
    if not (isinstance(e, L.Rec) and e.cls is ElectionResult):
        raise ValueError(
            f"strategy {name or '?'}: expected an ElectionResult record, found {type(e).__name__}"
        )
    return name, section, defs, e


def _is_no_leader(e: L.Expr) -> bool:
    return isinstance(e, L.Const) and e.value == NO_LEADER


def _leader_flow(f: _Flow, e: L.Expr, defs: dict[str, L.Expr], result: str, fail: str) -> str:
    """Nodes deciding the leader from ``e``; returns the entry node. Leaves lead to ``result`` or ``fail``.
    ``defs`` holds the definitions to expand in place (those not already drawn as step boxes)."""
    if isinstance(e, L.Var) and e.name in defs:
        return _leader_flow(f, defs[e.name], defs, result, fail)
    if isinstance(e, L.Rule):
        return _leader_flow(f, e.body, defs, result, fail)
    if isinstance(e, L.If):
        cond = f.text(e.cond)
        rule = e.cond if isinstance(e.cond, L.Rule) else None
        label = f"{rule.name} ({rule.section}):\n{wrap(cond, WIDTH)}?" if rule else f"{wrap(cond, WIDTH)}?"
        d = f.node(label, shape="diamond", style="filled", fillcolor=S.DECISION_FILL, margin="0.02")
        f.edge(d, _leader_flow(f, e.then, defs, result, fail), "yes")
        f.edge(d, _leader_flow(f, e.els, defs, result, fail), "no")
        return d
    if isinstance(e, L.First):
        v = var_name(e.var)
        cands = f.node(
            f"candidates, in order:\n{wrap(f.text(e.seq), WIDTH)}",
            shape="box",
            style="filled",
            fillcolor=S.STEP_FILL,
        )
        f.env[e.var] = v
        check = f.node(
            f"some {v} with\n{wrap(f.text(e.pred), WIDTH)}?",
            shape="diamond",
            style="filled",
            fillcolor=S.DECISION_FILL,
            margin="0.02",
        )
        f.edge(cands, check)
        leaf = f.node(
            f"leader := first such {v}", shape="box", style="rounded,filled", fillcolor=S.ACTION_FILL
        )
        f.edge(check, leaf, "yes")
        f.edge(leaf, result)
        f.edge(check, _leader_flow(f, e.default, defs, result, fail), "no")
        return cands
    if _is_no_leader(e):
        return fail
    leaf = f.node(
        f"leader := {wrap(f.text(e), WIDTH)}", shape="box", style="rounded,filled", fillcolor=S.ACTION_FILL
    )
    f.edge(leaf, result)
    return leaf


def _cases(f: _Flow, e: L.Expr) -> list[str]:
    """An if-chain as "condition: value" lines (one line when ``e`` is not an ``if``)."""
    lines: list[str] = []
    while isinstance(e, L.If):
        lines.append(f"• {f.text(e.cond)}: {f.text(e.then)}")
        e = e.els
    lines.append(f"• otherwise: {f.text(e)}" if lines else f.text(e))
    return lines


def strategy_cluster(profile: Profile, strategy: ElectionStrategy) -> tuple[Subgraph, tuple[str, str]]:
    """One strategy's decision diagram, as a cluster, and the ids of its two outcome boxes."""
    tree = elect(profile, strategy, L.var("inp"))
    name, section, defs, rec = _peel(tree)
    f = _Flow(prefix=strategy.value)
    fields = dict(rec.fields)
    leader = fields["leader"]
    defs_map = dict(defs)
    for n, _ in defs:
        f.env[n] = var_name(n)
    entry = f.node("ElectionInput inp\n(ZK-fresh leader and ISR)", shape="box", style="rounded")
    prev = entry
    for n, value in defs:
        if isinstance(leader, L.Var) and leader.name == n:
            continue
        step = f.node(
            f"{var_name(n)} :=\n{wrap(f.text(value), WIDTH)}",
            shape="box",
            style="filled",
            fillcolor=S.STEP_FILL,
        )
        f.edge(prev, step)
        prev = step
    isr_lines = [wrap(x, WIDTH + 10) for x in _cases(f, fields["isr"])]
    result_text = "\n".join(
        [
            "leader found → ElectionResult",
            "ISR :=",
            *isr_lines,
            "recipients :=",
            wrap(f.text(fields["recipients"]), WIDTH + 10),
        ]
    )
    result = f.node(result_text, shape="box", style="rounded,filled", fillcolor=S.ACTION_FILL)
    fail = f.node(
        "leader = −1:\nno electable leader", shape="box", style="rounded,filled", fillcolor=S.FAIL_FILL
    )
    expandable = {n: v for n, v in defs_map.items() if isinstance(leader, L.Var) and leader.name == n}
    first = _leader_flow(f, leader, expandable, result, fail)
    f.edge(prev, first)
    cluster = Subgraph(
        f"cluster_{strategy.value}",
        attrs(label=f"{name} ({section})", style="rounded", color="#999999", fontsize="12"),
        nodes=tuple(f.nodes),
        edges=tuple(f.edges),
    )
    return cluster, (result, fail)


def input_notes(profile: Profile) -> tuple[str, ...]:
    """How each abbreviated ``ElectionInput`` field is computed, printed from ``election_input``."""
    tree = election_input(
        profile,
        L.var("s"),
        L.var("p"),
        L.var("zkLeaderAndIsr"),
        LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy),
    )
    tree = L.inline_calls(tree)
    while isinstance(tree, L.Let | L.Rule):
        tree = tree.body
    if not isinstance(tree, L.Rec):
        raise ValueError(f"election_input of {profile.name} is not a record construction")
    abbrev = {"s.controller": "ctx", "s.config": "config"}
    by_field = dict(tree.fields)
    out = []
    for path, short in INPUT_ABBREV.items():
        fld = path.removeprefix("inp.").split(".")[0]
        if fld in by_field and fld not in ("leader_and_isr", "allow_unclean"):
            out.append(f"{short} = {pretty(by_field[fld], abbrev=abbrev)}")
    out.append(
        "ISR, L = leader and ISR read from ZooKeeper; allowUnclean = set only by an admin UNCLEAN election"
    )
    return tuple(out)


def elections_graph(profile: Profile) -> Graph:
    """All four strategies of ``profile`` side by side, with a legend."""
    built = [strategy_cluster(profile, s) for s in ElectionStrategy]
    clusters = tuple(c for c, _ in built)
    rows = (
        S.LegendRow("box", S.STEP_FILL, "a definition or the candidate order"),
        S.LegendRow("box", S.DECISION_FILL, "a check (yes / no)"),
        S.LegendRow("box", S.ACTION_FILL, "leader chosen: resulting ISR and LAIR recipients"),
        S.LegendRow("box", S.FAIL_FILL, "no electable leader"),
    )
    anchor = tuple(i for _, outcomes in built for i in outcomes)
    return Graph(
        name=f"elections-{profile.name}",
        attrs=(*S.GRAPH_DEFAULTS, *S.title_attr(f"Leader-election strategies — {profile.name} (§6)")),
        node_defaults=attrs(fontname=S.FONT, fontsize="10"),
        edge_defaults=S.EDGE_DEFAULTS,
        subgraphs=(*clusters, S.legend("Legend", rows, input_notes(profile), anchor=anchor)),
        comment="Generated by 'kcspec diagrams' from kcspec.spec.elections (§6); do not edit.",
    )
