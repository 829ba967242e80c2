"""Historical bugs re-injected into the reference controller, each with a configuration whose exploration finds
it: shared by the one-process, ``--workers`` and ``--spark`` exploration tests."""

from __future__ import annotations

from kcspec.model.explore_config import ExploreConfig

CASES = [
    # (mutant, what is broken, configuration)
    ("kafka-1503", "election: offline candidates in ISR order", ExploreConfig("kafka-2.8", 3, 1, 1, 3, 3)),
    (
        "kafka-8237",
        "replica state machine: 1.1 valid-previous set",
        ExploreConfig("kafka-2.8", 3, 1, 1, 2, 3),
    ),
    (
        "kafka-10314",
        "reassignment: adding replicas get isNew=false",
        ExploreConfig("kafka-2.8", 3, 1, 1, 2, 2),
    ),
]
