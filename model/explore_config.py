"""A bounded configuration to explore: brokers × topics × partitions × replication factor, depth and faults.

The explorer's options (``kcspec explore``) and the bounds of the candidate events (``event_candidates.py``),
which the kit's differential testing draws from too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcspec.model.event_domains import round_robin_assignment, topic_names

FAULT_KINDS: tuple[str, ...] = ("zk", "controller", "logdir", "unclean", "brokers")
"""Optional event families: ZooKeeper faults, controller moves/resignations/zombie writes, log-dir
failures (storage errors and log-dir event notifications), unclean elections, several brokers changing in one
``BrokerChange``. Broker start/failure/bounce, controlled shutdown, controller failover,
ISR shrink/expand by leaders, topic creation/deletion, reassignment and elections are always explored."""


@dataclass(frozen=True)
class ExploreConfig:
    profile: str = "kafka-2.8"
    brokers: int = 3
    topics: int = 1
    partitions: int = 1
    rf: int = 2
    depth: int = 4
    faults: frozenset[str] = field(default_factory=frozenset)
    symmetry: bool = True
    max_states: int = 200_000

    def validate(self) -> None:
        """Raise ``ValueError`` naming the offending option."""
        if not 1 <= self.brokers <= 6:
            raise ValueError(f"--brokers must be between 1 and 6, got {self.brokers}")
        if not 1 <= self.topics <= 3:
            raise ValueError(f"--topics must be between 1 and 3, got {self.topics}")
        if not 1 <= self.partitions <= 4:
            raise ValueError(f"--partitions must be between 1 and 4, got {self.partitions}")
        if not 1 <= self.rf <= self.brokers:
            raise ValueError(f"--rf must be between 1 and --brokers ({self.brokers}), got {self.rf}")
        if self.depth < 0:
            raise ValueError(f"--depth must be ≥ 0, got {self.depth}")
        if self.max_states < 1:  # a bound that explores nothing would report "no violation found"
            raise ValueError(f"--max-states must be ≥ 1, got {self.max_states}")
        unknown = sorted(self.faults - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown --faults {', '.join(unknown)}; known: {', '.join(FAULT_KINDS)}")

    @property
    def topic_names(self) -> tuple[str, ...]:
        return topic_names(self.topics)

    def assignment(self, topic_index: int) -> tuple[tuple[int, ...], ...]:
        """Round-robin assignment, as Kafka's admin tools lay replicas out (partition p starts at broker p+t)."""
        return round_robin_assignment(self.brokers, self.rf, self.partitions, topic_index)

    def describe(self) -> str:
        faults = ",".join(sorted(self.faults)) or "none"
        return (
            f"{self.profile}: {self.brokers} brokers, {self.topics} topic(s) × {self.partitions} partition(s), "
            f"RF {self.rf}, depth {self.depth}, faults {faults}, symmetry {'on' if self.symmetry else 'off'}"
        )
