"""The reference controller: an independent, imperative implementation of Kafka's ZooKeeper-mode controller.

``ReferenceController(profile, state)`` answers the step contract of docs/contracts.md: ``handle(event)`` runs the
environment part of the event (ZooKeeper, brokers, admin clients) and then the controller's handling of it, and
returns a ``StepResult`` (canonical post-state, the set of requests sent, the set of per-element failures).
It imports only the spec's vocabulary (DESIGN.md rule 2); every rule is re-implemented here in Kafka's structure.
"""

from __future__ import annotations

from kcspec.reference_impl.errors import EventNotEnabled
from kcspec.reference_impl.reference import ReferenceController
from kcspec.reference_impl.version import PROFILES, KafkaVersion

__all__ = ["PROFILES", "EventNotEnabled", "KafkaVersion", "ReferenceController"]
