"""The spec's controller metrics of a state (``spec/metrics.py``), compiled once per profile.

``spec_metrics(profile, state)`` is what a controller's kept gauges must equal after a step; the explorer, the
stateful tests, the scenarios and the conformance runner compare a controller's reported ``ControllerMetrics``
with it.
"""

from __future__ import annotations

from functools import cache

from kcspec.model.codecache import compile_unit
from kcspec.model.codegen import FastCompiled
from kcspec.spec.lang import SeqLit
from kcspec.spec.metrics import metrics
from kcspec.spec.profiles import get_profile
from kcspec.spec.requests import ControllerMetrics
from kcspec.spec.state import ClusterState


@cache
def _compiled(profile: str) -> FastCompiled:
    defs = metrics(get_profile(profile))
    ordered = SeqLit(tuple(defs[name] for name in _FIELDS))
    return compile_unit("metrics", profile, {"all-metrics": (ordered, ("s",))})["all-metrics"]


_FIELDS = ("offline_partition_count", "preferred_replica_imbalance_count")
"""``ControllerMetrics``' fields, in order (``spec_metrics`` builds the record positionally)."""


def spec_metrics(profile: str, state: ClusterState) -> ControllerMetrics:
    """The metrics the spec defines for ``state`` under ``profile``."""
    values = _compiled(get_profile(profile).name).call(state)
    return ControllerMetrics(*values)
