"""Graphviz diagrams generated from the spec: state machines, elections, reassignment flows, the event map,
and coverage overlays drawn from the output of a run.

``catalog`` lists every diagram; ``dot`` writes deterministic DOT text; ``render`` runs Graphviz's ``dot``;
``check`` compares committed files with what the spec generates today.
"""
