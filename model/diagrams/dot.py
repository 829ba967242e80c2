"""A small, deterministic DOT writer: graphs as frozen values, rendered to byte-identical text.

Attributes keep the order they were given in (callers pass them in a fixed order), identifiers and values
are always double-quoted, and nothing depends on hash order, object ids or the clock, so the same graph
value always renders to the same bytes. Values wrapped in ``Html`` are written as Graphviz HTML-like
labels (``<...>``); ``html_escape`` escapes text placed inside them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Html:
    """An HTML-like label value, written between ``<`` and ``>`` instead of quotes."""

    markup: str


AttrValue = str | Html
Attrs = tuple[tuple[str, AttrValue], ...]


def attrs(**kwargs: AttrValue | None) -> Attrs:
    """Attributes in keyword order, dropping ``None`` values (``class_`` style names lose the underscore)."""
    return tuple((k.rstrip("_"), v) for k, v in kwargs.items() if v is not None)


@dataclass(frozen=True)
class Node:
    id: str
    attrs: Attrs = ()


@dataclass(frozen=True)
class Edge:
    tail: str
    head: str
    attrs: Attrs = ()


@dataclass(frozen=True)
class Subgraph:
    """A subgraph: a cluster when ``name`` starts with ``cluster``, otherwise e.g. a ``rank=same`` group."""

    name: str
    attrs: Attrs = ()
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    subgraphs: tuple[Subgraph, ...] = ()


@dataclass(frozen=True)
class Graph:
    name: str
    attrs: Attrs = ()
    node_defaults: Attrs = ()
    edge_defaults: Attrs = ()
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    subgraphs: tuple[Subgraph, ...] = field(default_factory=tuple)
    comment: str = ""


def quote(text: str) -> str:
    """A double-quoted DOT string. ``\\n``/``\\l`` escapes written by callers as two characters are kept."""
    out = text.replace('"', '\\"').replace("\n", "\\n")
    return f'"{out}"'


def html_escape(text: str) -> str:
    """Escape text for use inside an ``Html`` label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _value(v: AttrValue) -> str:
    return f"<{v.markup}>" if isinstance(v, Html) else quote(v)


def _attr_list(a: Attrs) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in a)


def _lines(
    indent: str,
    attrs_: Attrs,
    nodes: Iterable[Node],
    edges: Iterable[Edge],
    subgraphs: Iterable[Subgraph],
) -> list[str]:
    out = [f"{indent}{k}={_value(v)};" for k, v in attrs_]
    for n in nodes:
        out.append(
            f"{indent}{quote(n.id)} [{_attr_list(n.attrs)}];" if n.attrs else f"{indent}{quote(n.id)};"
        )
    for sg in subgraphs:
        out.append(f"{indent}subgraph {quote(sg.name)} {{")
        out.extend(_lines(indent + "  ", sg.attrs, sg.nodes, sg.edges, sg.subgraphs))
        out.append(f"{indent}}}")
    for e in edges:
        head = f"{indent}{quote(e.tail)} -> {quote(e.head)}"
        out.append(f"{head} [{_attr_list(e.attrs)}];" if e.attrs else f"{head};")
    return out


def render_dot(g: Graph) -> str:
    """The DOT text of ``g`` (ends with a newline)."""
    out: list[str] = []
    if g.comment:
        out.extend(f"// {line}" for line in g.comment.splitlines())
    out.append(f"digraph {quote(g.name)} {{")
    if g.node_defaults:
        out.append(f"  node [{_attr_list(g.node_defaults)}];")
    if g.edge_defaults:
        out.append(f"  edge [{_attr_list(g.edge_defaults)}];")
    out.extend(_lines("  ", g.attrs, g.nodes, g.edges, g.subgraphs))
    out.append("}")
    return "\n".join(out) + "\n"
