"""The controller's vocabulary: state enums and the value records they talk about.

Names and numeric codes are Kafka's (semantics §2, §3.1, §3.2). The reference controller may import
this module (it is vocabulary, not rules; DESIGN.md rule 2). Every record is a frozen dataclass so it
can be a map key, a set member and a value of the spec's expression language.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kcspec.spec.fmap import FMap

NO_LEADER = -1
"""``LeaderAndIsr.NoLeader`` (§3.2)."""
LEADER_DURING_DELETE = -2
"""``LeaderAndIsr.LeaderDuringDelete``: leader sent in UpdateMetadata for topics queued for deletion (§3.4)."""
EPOCH_DURING_DELETE = -2
"""``LeaderAndIsr.EpochDuringDelete``: StopReplica leader epoch for topics queued for deletion (§3.4)."""
NO_EPOCH = -1
"""``LeaderAndIsr.NoEpoch``: StopReplica leader epoch when the partition has no leadership info (§3.4)."""
INITIAL_LEADER_EPOCH = 0
INITIAL_ZK_VERSION = 0
UNKNOWN_BROKER_EPOCH = -1
"""Broker epoch sent by brokers that do not know theirs (§7.10 step 2)."""


class ReplicaState(enum.Enum):
    """``ReplicaState`` with Kafka's byte codes 1–7 (§2.1)."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    @property
    def code(self) -> int:
        return self.value


class PartitionState(enum.Enum):
    """``PartitionState`` with Kafka's byte codes 0–3 (§2.2)."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    @property
    def code(self) -> int:
        return self.value


class ElectionStrategy(enum.Enum):
    """The four partition-leader election strategies (§6). ``Offline`` carries ``allowUnclean`` separately."""

    OfflinePartitionLeaderElectionStrategy = "offline"
    ReassignPartitionLeaderElectionStrategy = "reassign"
    PreferredReplicaPartitionLeaderElectionStrategy = "preferred"
    ControlledShutdownPartitionLeaderElectionStrategy = "controlled_shutdown"


class ElectionType(enum.Enum):
    """``ElectionType`` of a replica leader election (§7.9)."""

    PREFERRED = "PREFERRED"
    UNCLEAN = "UNCLEAN"


class ElectionTrigger(enum.Enum):
    """Who asked for a replica leader election (§7.9)."""

    ZkTriggered = "ZkTriggered"
    AdminClientTriggered = "AdminClientTriggered"
    AutoTriggered = "AutoTriggered"


class ZkFault(enum.Enum):
    """One-shot faults the simulated ZooKeeper can inject into the next write of a partition-state znode (§3.3)."""

    BADVERSION = "BADVERSION"
    """The next conditional set fails with BADVERSION, as if a broker wrote in between: the controller re-reads and retries."""
    CONNECTIONLOSS = "CONNECTIONLOSS"
    """The next read of the znode throws: every partition of that call fails with ``Left(e)``."""


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A partition, rendered ``<topic>-<partition>`` in logs (§10.2).

    The hash is computed once, at construction: partitions are the keys of most maps and sets of the data model,
    hashed on every lookup. It is the value the dataclass would compute (``hash((topic, partition))``), so sets
    and maps keep their order; it is not pickled (a string's hash differs between processes), the constructor
    recomputes it.
    """

    topic: str
    partition: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.topic, self.partition)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __reduce__(self) -> tuple[type[TopicPartition], tuple[str, int]]:
        return TopicPartition, (self.topic, self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, order=True)
class PartitionReplica:
    """``PartitionAndReplica``: replica ``replica`` (a broker id) of partition ``tp`` (§4).

    The hash is computed once, as for ``TopicPartition`` (same value as the dataclass's, not pickled).
    """

    tp: TopicPartition
    replica: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.tp, self.replica)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __reduce__(self) -> tuple[type[PartitionReplica], tuple[TopicPartition, int]]:
        return PartitionReplica, (self.tp, self.replica)

    def __str__(self) -> str:
        return f"[Topic={self.tp.topic},Partition={self.tp.partition},Replica={self.replica}]"


def make_topic_partition(topic: str, partition: int) -> TopicPartition:
    """``TopicPartition(topic, partition)`` without the frozen dataclass's ``__init__`` and ``__post_init__`` (the
    same object — fields and cached hash — about 3× cheaper to build); for generated code and hot loops."""
    made: TopicPartition = object.__new__(TopicPartition)
    d = made.__dict__
    d["topic"] = topic
    d["partition"] = partition
    d["_hash"] = hash((topic, partition))
    return made


def make_partition_replica(tp: TopicPartition, replica: int) -> PartitionReplica:
    """``PartitionReplica(tp, replica)``, built as ``make_topic_partition`` builds a partition."""
    made: PartitionReplica = object.__new__(PartitionReplica)
    d = made.__dict__
    d["tp"] = tp
    d["replica"] = replica
    d["_hash"] = hash((tp, replica))
    return made


# The fast constructor of each class, for ``model/fastrec.py``: a function of every field in declaration order.
TopicPartition._fields_maker = staticmethod(make_topic_partition)  # type: ignore[attr-defined]
PartitionReplica._fields_maker = staticmethod(make_partition_replica)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class LeaderAndIsr:
    """``LeaderAndIsr`` (§3.2): leader, leader epoch, ordered ISR and the state znode's version."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int


@dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    """``LeaderIsrAndControllerEpoch`` (§3.2): a ``LeaderAndIsr`` and the epoch of the controller that decided it.

    It is both the content of a partition-state znode (the zk version being the znode's stat version) and the
    value cached in ``partitionLeadershipInfo``.
    """

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


@dataclass(frozen=True)
class ReplicaAssignment:
    """``ReplicaAssignment(replicas, addingReplicas, removingReplicas)`` (§3.1, 2.4+). In 1.1 adding/removing are empty."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClusterConfig:
    """Broker/topic configuration the controller consults (§6 unclean rule, §7.9 auto rebalance, §8)."""

    delete_topic_enable: bool = True
    unclean_leader_election_enable: bool = False
    """The controller broker's default ``unclean.leader.election.enable``."""
    unclean_topics: frozenset[str] = frozenset()
    """Topics whose ``unclean.leader.election.enable`` override is true."""
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10


__all__ = [
    "EMPTY_MAP",
    "EPOCH_DURING_DELETE",
    "INITIAL_LEADER_EPOCH",
    "INITIAL_ZK_VERSION",
    "LEADER_DURING_DELETE",
    "NO_EPOCH",
    "NO_LEADER",
    "UNKNOWN_BROKER_EPOCH",
    "ClusterConfig",
    "ElectionStrategy",
    "ElectionTrigger",
    "ElectionType",
    "FMap",
    "LeaderAndIsr",
    "LeaderIsrAndControllerEpoch",
    "PartitionReplica",
    "PartitionState",
    "ReplicaAssignment",
    "ReplicaState",
    "TopicPartition",
    "ZkFault",
]

EMPTY_MAP: FMap[object, object] = FMap()


@dataclass(frozen=True)
class LeaderElection:
    """Which strategy an OnlinePartition transition uses (§5.2b, §6); ``allow_unclean`` only for the Offline strategy."""

    strategy: ElectionStrategy
    allow_unclean: bool = False


@dataclass(frozen=True)
class ElectionInput:
    """Everything one election strategy looks at for one partition (§6).

    ``online`` is {r : isReplicaOnline(r, p)} (live, not shutting down, not in an offline dir);
    ``online_or_shutting_down`` is {r : isReplicaOnline(r, p, includeShuttingDownBrokers = true)}.
    ``target_replicas`` is TRS (2.8) or RAR (1.1) for the Reassign strategy. ``unclean_enabled`` is
    the effective ``unclean.leader.election.enable`` of the topic; ``allow_unclean`` the admin override.
    """

    assignment: tuple[int, ...]
    target_replicas: tuple[int, ...]
    leader_and_isr: LeaderAndIsr
    online: frozenset[int]
    online_or_shutting_down: frozenset[int]
    shutting_down: frozenset[int]
    allow_unclean: bool = False
    unclean_enabled: bool = False


@dataclass(frozen=True)
class ElectionResult:
    """The outcome of one strategy: ``leader`` -1 means "no electable leader" (§6)."""

    leader: int
    isr: tuple[int, ...]
    recipients: tuple[int, ...]
    unclean: bool = False
