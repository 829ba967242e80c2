"""The symbolic pre-states of the induction checks: every ``ClusterState`` of a small bounded shape.

A *family* is one symbolic ``ClusterState`` (``values.SRec``) plus the constraints that delimit it. The
shape is fixed — brokers ``0..B-1``, one topic ``t`` with one partition ``t-0`` whose assignment is
``[0, 1, …, B-1]`` in ZooKeeper and in the context, no reassignment in flight, no pending admin znodes
(preferred election, ISR notifications), no armed ZooKeeper fault, ``delete.topic.enable`` and auto
rebalance on — and everything else the §11 invariants talk about is symbolic:

* ZooKeeper: ``/controller`` (−1 or any broker), ``/controller_epoch`` and its version, which brokers are
  registered and their epochs (below ``zxid``), whether the state znode of ``t-0`` exists and its whole
  content (leader −1..B-1, leader epoch, ISR = any sequence of distinct brokers, version, controller
  epoch), whether ``t`` is queued in ``/admin/delete_topics``;
* the context (family ``active``: ``controller_id`` any broker): epoch and epoch version, live brokers and
  their epochs, the shutting-down set, offline replicas of ``t-0``, the cached leadership of ``t-0``
  (present or not, content independent of ZooKeeper's), the replica state of every ``(t-0, b)`` (present
  or not, any of the seven states), the partition state of ``t-0``, and the three deletion sets;
* config: the cluster-wide unclean flag and ``t``'s unclean override.

Family ``inactive`` is ZooKeeper as above with no active controller and the reset context (W4 says that
is the only context an inactive controller has). Integers are bounded (``EPOCHS``), so Z3's finite-domain
engine (QF_FD, bit-blasting) decides every query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3
from kcspec.model.z3 import values as V
from kcspec.spec.fmap import FMap
from kcspec.spec.state import ClusterState, ControllerContext, ZkState
from kcspec.spec.vocabulary import (
    ClusterConfig,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    PartitionState,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

TOPIC = "t"
TP = TopicPartition(TOPIC, 0)
EPOCHS = 6
"""Every symbolic epoch, version and zxid lies in 0..EPOCHS (a step adds at most a few)."""


@dataclass(frozen=True, order=True)
class Shape:
    """What is concrete in a family: the registered brokers, the active controller (−1: none) and whether the
    context has ``t`` queued for deletion. Splitting on these keeps the controller's control flow mostly
    concrete; every combination the invariants allow is a family of its own."""

    registered: tuple[int, ...]
    controller: int
    deleting: bool

    @property
    def label(self) -> str:
        ctl = f"controller {self.controller}" if self.controller >= 0 else "no controller"
        deleting = ", t queued for deletion" if self.deleting else ""
        return f"brokers {list(self.registered)} registered, {ctl}{deleting}"


@dataclass(frozen=True)
class Family:
    """A symbolic pre-state and the constraints that delimit it."""

    shape: Shape
    brokers: int
    state: V.SRec
    constraints: tuple[Any, ...]


def shapes(brokers: int) -> list[Shape]:
    """Every shape over brokers ``0..brokers-1``: any registered set; an active controller is a registered
    broker (W7); without one the context is the reset context (W4), so nothing is queued for deletion in it."""
    out: list[Shape] = []
    for mask in range(1 << brokers):
        reg = tuple(b for b in range(brokers) if mask >> b & 1)
        out.append(Shape(reg, -1, False))
        out += [Shape(reg, c, d) for c in reg for d in (False, True)]
    return out


class Vars:
    """Fresh bounded Z3 variables, recording their range constraints (also used by ``metric_lemmas``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.constraints: list[Any] = []

    def integer(self, name: str, lo: int, hi: int) -> Any:
        v = z3.Int(f"{self.prefix}{name}")
        self.constraints.append(z3.And(v >= lo, v <= hi))
        return v

    def boolean(self, name: str) -> Any:
        return z3.Bool(f"{self.prefix}{name}")

    def enum(self, name: str, cls: type) -> Any:
        sort, _ = V.enum_sort(cls)
        return z3.Const(f"{self.prefix}{name}", sort)

    def isr(self, name: str, brokers: int) -> V.SColl:
        values = [self.integer(f"{name}_{i}", 0, brokers - 1) for i in range(brokers)]
        if brokers > 1:
            self.constraints.append(z3.Distinct(*values))
        return V.SColl("seq", tuple((self.boolean(f"{name}_in_{i}"), v) for i, v in enumerate(values)))

    def leadership(self, name: str, brokers: int) -> V.SRec:
        lai = V.SRec(
            LeaderAndIsr,
            (
                ("leader", self.integer(f"{name}_leader", -1, brokers - 1)),
                ("leader_epoch", self.integer(f"{name}_leader_epoch", 0, EPOCHS)),
                ("isr", self.isr(f"{name}_isr", brokers)),
                ("zk_version", self.integer(f"{name}_version", 0, EPOCHS)),
            ),
        )
        return V.SRec(
            LeaderIsrAndControllerEpoch,
            (("leader_and_isr", lai), ("controller_epoch", self.integer(f"{name}_cepoch", 0, EPOCHS))),
        )


def _rec(cls: type, **fields: Any) -> Any:
    out = V.record_defaults(cls)
    out.update(fields)
    return V.make_record(cls, out)


def _zk(v: Vars, brokers: int, shape: Shape, epochs: dict[int, Any]) -> Any:
    zxid = v.integer("zxid", 1, EPOCHS)
    regs = []
    for b in shape.registered:
        v.constraints.append(epochs[b] < zxid)
        regs.append((True, b, epochs[b]))
    return _rec(
        ZkState,
        controller=v.integer("zk_controller", -1, brokers - 1),
        controller_epoch=v.integer("zk_controller_epoch", 0, EPOCHS),
        controller_epoch_zk_version=v.integer("zk_controller_epoch_version", 0, EPOCHS),
        brokers=V.SMap(tuple(regs)),
        topics=frozenset({TOPIC}),
        assignments=FMap({TP: ReplicaAssignment(tuple(range(brokers)))}),
        partition_states=V.SMap(((v.boolean("zk_state_exists"), TP, v.leadership("zk", brokers)),)),
        delete_topics=V.SColl("set", ((v.boolean("zk_delete_topic"), TOPIC),)),
        zxid=zxid,
    )


def _context(v: Vars, brokers: int, shape: Shape, epochs: dict[int, Any]) -> Any:
    live = [(True, b, epochs[b]) for b in shape.registered]
    return _rec(
        ControllerContext,
        controller_id=shape.controller,
        epoch=v.integer("epoch", 0, EPOCHS),
        epoch_zk_version=v.integer("epoch_version", 0, EPOCHS),
        live_brokers=V.SMap(tuple(live)),
        shutting_down=V.SColl("set", tuple((v.boolean(f"shutting_down_{b}"), b) for b in shape.registered)),
        offline_replicas=V.SColl(
            "set", tuple((v.boolean(f"offline_{b}"), PartitionReplica(TP, b)) for b in range(brokers))
        ),
        all_topics=frozenset({TOPIC}),
        assignments=FMap({TP: ReplicaAssignment(tuple(range(brokers)))}),
        leadership=V.SMap(((v.boolean("cached"), TP, v.leadership("cache", brokers)),)),
        replica_states=V.SMap(
            tuple(
                (v.boolean(f"rs_{b}_exists"), PartitionReplica(TP, b), v.enum(f"rs_{b}", ReplicaState))
                for b in range(brokers)
            )
        ),
        partition_states=V.SMap(((v.boolean("ps_exists"), TP, v.enum("ps", PartitionState)),)),
        topics_to_be_deleted=frozenset({TOPIC}) if shape.deleting else frozenset(),
        topics_with_deletion_started=V.SColl("set", ((v.boolean("deletion_started"), TOPIC),)),
        topics_ineligible_for_deletion=V.SColl("set", ((v.boolean("deletion_ineligible"), TOPIC),)),
    )


def _config(v: Vars) -> Any:
    return _rec(
        ClusterConfig,
        unclean_leader_election_enable=v.boolean("unclean_enabled"),
        unclean_topics=V.SColl("set", ((v.boolean("unclean_topic"), TOPIC),)),
    )


def family(shape: Shape, same_epochs: bool, brokers: int = 2) -> Family:
    """The family of ``shape`` over brokers ``0..brokers-1``. ``same_epochs``: the context's broker epochs are
    the registered ones (W6 in 2.8); otherwise they are free (1.1 does not notice a bounce, §7.2)."""
    v = Vars("")
    zk_epochs = {b: v.integer(f"broker_epoch_{b}", 0, EPOCHS) for b in shape.registered}
    live_epochs = (
        zk_epochs if same_epochs else {b: v.integer(f"live_epoch_{b}", 0, EPOCHS) for b in shape.registered}
    )
    zk = _zk(v, brokers, shape, zk_epochs)
    ctl = _context(v, brokers, shape, live_epochs) if shape.controller >= 0 else ControllerContext()
    state = _rec(ClusterState, zk=zk, controller=ctl, config=_config(v))
    return Family(shape, brokers, state, tuple(v.constraints))
