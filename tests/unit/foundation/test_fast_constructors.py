"""The fast constructors of the hot vocabulary records build exactly what their constructors build (fields, hash,
order, pickling), and generated spec code uses them through ``model/fastrec.py``. The records are tuples: hash,
equality and order are the tuple's, and the hash is the one the former dataclasses computed."""

from __future__ import annotations

import dataclasses
import pickle

from kcspec.model import fastrec
from kcspec.spec.vocabulary import (
    PartitionReplica,
    TopicPartition,
    make_partition_replica,
    make_topic_partition,
)


def test_fast_constructors_build_the_constructors_objects() -> None:
    for topic, partition, replica in (("t", 0, 1), ("orders", 17, 0), ("", 3, -1)):
        tp = make_topic_partition(topic, partition)
        slow_tp = TopicPartition(topic, partition)
        assert tp == slow_tp and hash(tp) == hash(slow_tp) == hash((topic, partition))
        assert type(tp) is TopicPartition and (tp.topic, tp.partition) == (topic, partition)
        assert repr(tp) == repr(slow_tp) and str(tp) == str(slow_tp)
        pr = make_partition_replica(tp, replica)
        slow_pr = PartitionReplica(slow_tp, replica)
        assert pr == slow_pr and hash(pr) == hash(slow_pr) == hash((slow_tp, replica))
        assert type(pr) is PartitionReplica and pr.tp is tp and pr.replica == replica
        assert pickle.loads(pickle.dumps(pr)) == slow_pr
        assert {pr: 1}[slow_pr] == 1
        assert dataclasses.asdict(pr) == {"tp": {"topic": topic, "partition": partition}, "replica": replica}
        assert dataclasses.replace(pr, replica=replica + 1) == make_partition_replica(tp, replica + 1)
    assert sorted([make_topic_partition("b", 0), make_topic_partition("a", 1)]) == [
        TopicPartition("a", 1),
        TopicPartition("b", 0),
    ]


def test_fastrec_uses_a_classes_own_fast_constructor_in_any_field_order() -> None:
    tp = TopicPartition("t", 2)
    in_order = fastrec.maker(PartitionReplica, ("tp", "replica"))
    reordered = fastrec.maker(PartitionReplica, ("replica", "tp"))
    assert in_order is not None and reordered is not None
    assert in_order(tp, 3) == PartitionReplica(tp, 3)
    assert reordered(3, tp) == PartitionReplica(tp, 3) and hash(reordered(3, tp)) == hash(
        PartitionReplica(tp, 3)
    )
    assert fastrec.maker(PartitionReplica, ("tp",)) is None  # not every field: the constructor's call


def test_tuple_records_keep_the_record_interface() -> None:
    tp = TopicPartition("t", 2)
    pr = PartitionReplica(tp, 3)
    assert (str(tp), str(pr)) == ("t-2", "[Topic=t,Partition=2,Replica=3]")
    assert repr(pr) == "PartitionReplica(tp=TopicPartition(topic='t', partition=2), replica=3)"
    assert [f.name for f in dataclasses.fields(pr)] == ["tp", "replica"] and dataclasses.is_dataclass(tp)
    assert tp == ("t", 2) and tp < TopicPartition("t", 10) < TopicPartition(
        "u", 0
    )  # the tuple's equality/order
    for attr, value in (("topic", "u"), ("replica", 4)):
        target = tp if attr == "topic" else pr
        try:
            setattr(target, attr, value)
        except (AttributeError, dataclasses.FrozenInstanceError):
            pass
        else:
            raise AssertionError(f"{attr} is writable")
