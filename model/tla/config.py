"""``ModelConfig``: the finite model that TLC (and the explorer) check — broker ids, topics, partitions,
replication factor, and the bounds that keep the state space finite (epochs, zxids and znode versions
grow forever in Kafka).

Broker ids are ``0..brokers-1``; topics are named ``t0``, ``t1``, …; every event parameter ranges over a
finite set built from these (``module.PARAM_DOMAINS``). States beyond the bounds are cut off with TLC's
``CONSTRAINT``; the explorer must apply the same bounds for the state counts to agree.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        )
