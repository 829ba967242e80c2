"""``ModelConfig``: the finite model that TLC (and the explorer) check — broker ids, topics, partitions,
replication factor, and the bounds that keep the state space finite (epochs, zxids and znode versions
grow forever in Kafka).

Broker ids are ``0..brokers-1``; topics are named ``t0``, ``t1``, …; every event parameter ranges over a
finite set built from these (``module.PARAM_DOMAINS``). States beyond the bounds are cut off with TLC's
``CONSTRAINT``; the explorer must apply the same bounds for the state counts to agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import ClusterConfig


@dataclass(frozen=True)
class ModelConfig:
    brokers: int = 2
    topics: int = 1
    partitions: int = 1
    rf: int = 2
    max_controller_epoch: int = 2
    max_leader_epoch: int = 3
    max_zxid: int = 4
    max_zk_version: int = 4
    max_queued_requests: int = 0
    """The event queue's model bound (``ClusterConfig.max_queued_requests``, held by the initial state's config):
    how many requests with a callback may wait. 0 leaves the queue's events out of every run."""

    def __post_init__(self) -> None:
        for name in ("brokers", "topics", "partitions", "rf", "max_controller_epoch", "max_leader_epoch"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.rf > self.brokers:
            raise ValueError(f"--rf {self.rf} is larger than --brokers {self.brokers}")
        if self.max_zk_version < 0:
            raise ValueError(f"--max-zk-version must be at least 0, got {self.max_zk_version}")
        if self.max_zxid < 2:
            raise ValueError(f"--max-zxid must be at least 2, got {self.max_zxid}")
        if self.max_queued_requests < 0:
            raise ValueError(f"--max-queued-requests must be at least 0, got {self.max_queued_requests}")

    @property
    def initial(self) -> ClusterState:
        """``Init``: the empty cluster, its config holding the queue's bound."""
        if not self.max_queued_requests:
            return ClusterState()
        return ClusterState(config=ClusterConfig(max_queued_requests=self.max_queued_requests))

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(range(self.brokers))

    @property
    def topic_names(self) -> tuple[str, ...]:
        return tuple(f"t{i}" for i in range(self.topics))

    def describe(self) -> str:
        return (
            f"{self.brokers} broker(s), {self.topics} topic(s) x {self.partitions} partition(s), "
            f"replication factor {self.rf}; bounds: controller epoch <= {self.max_controller_epoch}, "
            f"leader epoch <= {self.max_leader_epoch}, zxid <= {self.max_zxid}, "
            f"znode version <= {self.max_zk_version}"
            + (f", queued requests <= {self.max_queued_requests}" if self.max_queued_requests else "")
        )


CROSSCHECK_DEFAULT = ModelConfig(
    brokers=2,
    topics=1,
    partitions=1,
    rf=2,
    max_controller_epoch=1,
    max_leader_epoch=1,
    max_zxid=3,
    max_zk_version=0,
)
"""The model ``kcspec tla crosscheck`` checks when no option is given: two brokers, replication factor 2, and the
smallest bounds that still let both brokers register (zxid 3: broker epochs 1 and 2), one controller (epoch 1) and
one leader epoch, without znode rewrites. Chosen so that the explorer (one core) and TLC reach the fixed point
within 10 minutes; the larger model 2/3/4/4 (``ModelConfig()``) did not finish in TLC after 50 minutes
(``benchmarks/results/tla_cost.md``)."""
