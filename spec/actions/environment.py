"""Events that change only the environment (§9, §3.3): a newer controller elected behind the active one's back, a
zombie controller's partition-state write, and injected ZooKeeper faults."""

from __future__ import annotations

from kcspec.spec.actions import common
from kcspec.spec.events import NewerControllerElected, ZkFaultInjection, ZombieControllerWrite
from kcspec.spec.lang import Action, Expr, and_, rec
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import LeaderIsrAndControllerEpoch, ZkFault


def newer_controller_elected_action(p: Profile) -> Action:
    """``NewerControllerElected(b)`` (§9): ``/controller`` := b, ``/controller_epoch`` incremented; the active
    controller is now a zombie until it handles ``ControllerChange``."""
    b = common.param_vars(NewerControllerElected)["broker_id"]
    s = common.S
    return common.controller_action(
        NewerControllerElected,
        "Another broker wins the controller election; the active controller has not noticed yet (§9).",
        guard=and_(common.active(s), s.f("zk", "brokers").has(b), b.ne(s.f("controller", "controller_id"))),
        environment=lambda w: common.set_zk(
            w,
            controller=b,
            controller_epoch=common.zk_of(w).f("controller_epoch") + 1,
            controller_epoch_zk_version=common.zk_of(w).f("controller_epoch_zk_version") + 1,
        ),
        controller=None,
    )


def zombie_controller_write_action(p: Profile) -> Action:
    """``ZombieControllerWrite(tp, leader, isr, ce)`` (§3.3, §9, KAFKA-6082): 2.8 fences it (nothing happens); 1.1
    writes the znode with leader epoch and version + 1 and the zombie's controller epoch."""
    v = common.param_vars(ZombieControllerWrite)
    tp, ce = v["tp"], v["controller_epoch"]
    s = common.S

    def write(w: Expr) -> Expr:
        z = common.zk_of(w)
        old = z.f("partition_states").get(tp)
        return common.set_zk(
            w,
            partition_states=z.f("partition_states").put(
                tp,
                rec(
                    LeaderIsrAndControllerEpoch,
                    leader_and_isr=old.f("leader_and_isr").with_(
                        leader=v["leader"],
                        leader_epoch=old.f("leader_and_isr", "leader_epoch") + 1,
                        isr=v["isr"],
                        zk_version=old.f("leader_and_isr", "zk_version") + 1,
                    ),
                    controller_epoch=ce,
                ),
            ),
        )

    return common.controller_action(
        ZombieControllerWrite,
        "A deposed controller writes a partition-state znode; only 1.1 lets the write through (§9).",
        guard=and_(s.f("zk", "partition_states").has(tp), ce.ge(1), ce.lt(s.f("zk", "controller_epoch"))),
        environment=None if p.zk_write_fencing else write,
        controller=None,
    )


def zk_fault_injection_action(p: Profile) -> Action:
    """``ZkFaultInjection(tp, f)`` (§3.3): arm a one-shot fault on the state znode of tp — or, CONNECTIONLOSS only, on
    the path of the state znode of an assigned partition that has none yet: its creation then throws
    (``createTopicPartitionStatesRaw``, ``spec/zk.py``)."""
    v = common.param_vars(ZkFaultInjection)
    tp = v["tp"]
    s = common.S
    return common.controller_action(
        ZkFaultInjection,
        "A one-shot ZooKeeper fault (BADVERSION on the next conditional write, CONNECTIONLOSS on the next read) is "
        "armed on a partition-state znode (§3.3).",
        guard=and_(
            s.f("zk", "partition_states").has(tp)
            | (s.f("zk", "assignments").has(tp) & v["fault"].eq(ZkFault.CONNECTIONLOSS)),
            ~s.f("zk", "faults").has(tp),
        ),
        environment=lambda w: common.set_zk(w, faults=common.zk_of(w).f("faults").put(tp, v["fault"])),
        controller=None,
    )
