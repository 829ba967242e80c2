"""States pickle for other processes (``--workers``, cluster executors): a process with another string-hash seed
unpickles a state whose maps and partition keys it can look up, because no cached hash travels with them."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from kcspec.spec.fmap import FMap
from kcspec.spec.vocabulary import PartitionReplica, ReplicaState, TopicPartition

CHILD = """
import pickle, sys
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition
m = pickle.loads(sys.stdin.buffer.read())
tp = TopicPartition("orders", 3)
pr = PartitionReplica(tp, 2)
assert hash(tp) == hash(("orders", 3)), "a TopicPartition's hash is not this process's"
assert m[pr].name == "OnlineReplica", m
assert pr in m and hash(m) == hash(frozenset(m.items())), "the map's hash is not this process's"
print("ok")
"""


def test_a_pickled_map_of_partition_replicas_works_under_another_hash_seed() -> None:
    tp = TopicPartition("orders", 3)
    m = FMap(
        {
            PartitionReplica(tp, 2): ReplicaState.OnlineReplica,
            PartitionReplica(tp, 0): ReplicaState.NewReplica,
        }
    )
    hash(m)  # cache this process's hash first: it must not travel
    data = pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL)
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": seed},
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == b"ok", proc.stderr.decode()


def test_cached_hashes_equal_the_dataclass_hashes() -> None:
    tp = TopicPartition("t", 0)
    assert hash(tp) == hash(("t", 0))
    assert hash(PartitionReplica(tp, 1)) == hash((tp, 1))
    assert pickle.loads(pickle.dumps(PartitionReplica(tp, 1))) == PartitionReplica(tp, 1)
