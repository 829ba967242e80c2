"""The bounds that make a model finite, written once as an expression: TLC's ``CONSTRAINT`` and the explorer's cut-off.

Kafka's counters grow forever: the controller epoch (every failover), ZooKeeper's zxid (every broker
registration takes the next one as its broker epoch), a partition's leader epoch (every election) and its
znode version (every write, including ISR changes by leaders, which keep the leader epoch, §3.2). A bounded
model keeps the states where each is at most its bound. The expression below is compiled to the module's
``StateConstraint`` by the TLA+ backend and evaluated by the Python backend in the explorer's TLA+-model
mode; as in TLC, a successor outside the bounds is neither counted nor explored further.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from kcspec.model.codegen import FastCompiled, compile_fast
from kcspec.model.tla.config import ModelConfig
from kcspec.spec.lang import Expr, Var, and_
from kcspec.spec.state import ClusterState

BOUND_CONSTANTS: Mapping[str, str] = {
    "max_controller_epoch": "MaxControllerEpoch",
    "max_zxid": "MaxZxid",
    "max_leader_epoch": "MaxLeaderEpoch",
    "max_zk_version": "MaxZkVersion",
}
"""Free variable of the expression → the TLA+ constant (and ``ModelConfig`` field) it stands for."""

_s = Var("s")


def _partition_bound(field: str, bound: str) -> Expr:
    states = _s.f("zk", "partition_states")
    return states.keys().all(lambda tp: states.get(tp).f("leader_and_isr", field).le(Var(bound)))


STATE_CONSTRAINT: Expr = and_(
    _s.f("zk", "controller_epoch").le(Var("max_controller_epoch")),
    _s.f("zk", "zxid").le(Var("max_zxid")),
    _partition_bound("leader_epoch", "max_leader_epoch"),
    _partition_bound("zk_version", "max_zk_version"),
)
"""Every bounded counter of ``ClusterState`` at most its bound (over ZooKeeper, which the controller's caches copy)."""


@cache
def _compiled() -> FastCompiled:
    return compile_fast(STATE_CONSTRAINT, ("s", *BOUND_CONSTANTS))


def within_bounds(state: ClusterState, config: ModelConfig) -> bool:
    """Whether ``state`` satisfies the model's ``StateConstraint``."""
    return bool(_compiled().call(state, *[getattr(config, name) for name in BOUND_CONSTANTS]))


__all__ = ["BOUND_CONSTANTS", "STATE_CONSTRAINT", "within_bounds"]
