"""Shared look of every diagram: fonts, colours, node shapes, and the legend box.

Every diagram carries a legend (a table node on the bottom rank) explaining the colours and line styles
it uses; ``legend`` builds it from (sample, meaning) rows so each diagram lists exactly what it draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.model.diagrams.dot import Attrs, Edge, Html, Node, Subgraph, attrs, html_escape

FONT = "Helvetica"
GRAPH_DEFAULTS: Attrs = attrs(fontname=FONT, labelloc="t", nodesep="0.5")
NODE_DEFAULTS: Attrs = attrs(fontname=FONT, fontsize="11")
EDGE_DEFAULTS: Attrs = attrs(fontname=FONT, fontsize="9")

STATE_FILL = "#eef3fb"
INITIAL_FILL = "#fff6d5"
COMMON = "#555555"
ONLY_28 = "#1a7f37"
ONLY_11 = "#c2410c"
DIFFERS = "#6d28d9"
INVALID = "#d00000"
NEVER = "#9a9a9a"
DECISION_FILL = "#fdf2d0"
ACTION_FILL = "#e8f1e4"
FAIL_FILL = "#fbe3e3"
STEP_FILL = "#eef3fb"
EVENT_FILL = "#f3e8ff"
STRATEGY_FILL = "#fdf2d0"


@dataclass(frozen=True)
class LegendRow:
    """One legend line: a coloured sample (``kind`` ``line``/``dashed``/``dotted``/``box``) and its meaning."""

    kind: str
    color: str
    meaning: str
    width: int = 1


def _sample(row: LegendRow) -> str:
    if row.kind == "box":
        return f'<font color="{row.color}" point-size="14">█</font>'
    glyph = {"line": "━━━", "dashed": "╍╍╍", "dotted": "┈┈┈"}.get(row.kind, "━━━")
    size = str(9 + 2 * row.width)
    return f'<font color="{row.color}" point-size="{size}">{glyph}</font>'


def legend(
    title: str, rows: tuple[LegendRow, ...], notes: tuple[str, ...] = (), anchor: str | tuple[str, ...] = ""
) -> Subgraph:
    """A table node on the bottom rank: the legend of a diagram.

    ``anchor`` names one or more nodes of the diagram; invisible edges from them keep the legend in the same
    connected component and below them, so Graphviz places it under the drawing instead of beside it.
    """
    cells = [f'<tr><td align="left"><b>{html_escape(title)}</b></td></tr>']
    for r in rows:
        cells.append(f'<tr><td align="left">{_sample(r)}  {html_escape(r.meaning)}</td></tr>')
    for n in notes:
        cells.append(f'<tr><td align="left"><font point-size="9">{html_escape(n)}</font></td></tr>')
    table = (
        '<table border="1" color="#bbbbbb" style="rounded" cellborder="0" cellspacing="1" cellpadding="2">'
        + "".join(cells)
        + "</table>"
    )
    node = Node("legend", attrs(shape="plaintext", label=Html(table)))
    anchors = (anchor,) if isinstance(anchor, str) else anchor
    edges = tuple(Edge(a, "legend", attrs(style="invis")) for a in anchors if a)
    sink = Subgraph("legend_rank", attrs(rank="sink"), nodes=(node,))
    return Subgraph("legend_group", edges=edges, subgraphs=(sink,))


def title_attr(text: str) -> Attrs:
    return attrs(label=text, fontsize="14")
