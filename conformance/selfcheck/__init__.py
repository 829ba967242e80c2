"""The checks of kcspec itself: the reference controller against the spec, for kcspec's maintainers.

Exploration (``explore/``), Hypothesis stateful testing (``fuzz/``), the bug zoo (``bugzoo/``), the
spec-vs-reference cross-check (``crosscheck``), seeded random walks and swarms (``simulate``, ``swarm``) and the
TLC-vs-explorer comparison (``tla_crosscheck``). Implementers of other controllers use the kit one level up
(``kcspec.conformance``); operators use the audit (``kcspec.audit``). This package runs the reference
controller and the kit's reply comparison, so it sits above both (ARCHITECTURE.md, "Layers and imports").
"""
