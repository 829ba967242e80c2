"""The reference controller's bulk paths (benchmarks/failover_1m.py) behave exactly like the per-item ones.

The request batch, the context, the state machines and the log have fast paths for large calls (records built
directly, LeaderAndIsr entries grouped by recipients, indexes built lazily, lines written in one loop). These
tests pin them to the straightforward per-item behaviour, and run a benchmark-shaped cluster against the spec.
"""

from __future__ import annotations

import dataclasses
import pickle
import random
from datetime import datetime, timedelta

import pytest
from kcspec.model.step import SpecMachine
from kcspec.reference_impl import ReferenceController, records
from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.logs import ControllerLog
from kcspec.reference_impl.request_batch import ControllerBrokerRequestBatch
from kcspec.spec.events import (
    BrokerFailure,
    BrokerStartup,
    ControlledShutdown,
    ControllerEvent,
    ControllerFailover,
    ReplicaLeaderElection,
)
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from kcspec.spec.state import ClusterState, ZkState
from kcspec.spec.state import ControllerContext as CanonicalContext
from kcspec.spec.vocabulary import (
    ElectionTrigger,
    ElectionType,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaAssignment,
    TopicPartition,
)

from tests.support.reference_scenarios import PROFILES, cluster


def benchmark_cluster(partitions: int, brokers: int, rf: int, per_topic: int = 10) -> ClusterState:
    """The shape ``benchmarks/failover_1m.py`` builds: round-robin replicas, no partition-state znodes."""
    assignments = {
        TopicPartition(f"topic-{i // per_topic}", i % per_topic): ReplicaAssignment(
            tuple((i + k) % brokers for k in range(rf))
        )
        for i in range(partitions)
    }
    zk = ZkState(
        brokers=FMap({b: 10 + b for b in range(brokers)}),
        topics=frozenset(tp.topic for tp in assignments),
        assignments=FMap(assignments),
        zxid=100,
    )
    return ClusterState(zk=zk)


# ------------------------------------------------------------------------------------------ against the spec


@pytest.mark.parametrize("profile", PROFILES)
def test_benchmark_shaped_cluster_agrees_with_the_spec(profile: str) -> None:
    state = benchmark_cluster(96, 12, 3)
    events: list[ControllerEvent] = [
        ControllerFailover(0),
        BrokerFailure(5),
        BrokerStartup(5),
        ControlledShutdown(7, 17),
        BrokerFailure(7),
        ReplicaLeaderElection(
            frozenset({TopicPartition("topic-0", 6), TopicPartition("topic-3", 1)}),
            ElectionType.PREFERRED,
            ElectionTrigger.ZkTriggered,
        ),
    ]
    spec = SpecMachine(profile)
    rc = ReferenceController(profile, state)
    for event in events:
        assert spec.enabled(state, event), event
        expected = spec.step(state, event)
        got = rc.handle(event)
        assert got.requests == expected.requests, f"{event}: requests differ"
        assert got.failures == expected.failures, f"{event}: failures differ"
        assert got.state == expected.state, f"{event}: post-states differ"
        state = expected.state


# ------------------------------------------------------------------------------------------ records


def test_directly_built_records_equal_constructed_ones() -> None:
    assert records.TUPLE_LEADERSHIP and records.TUPLE_STATES
    tp = TopicPartition("t", 3)
    lai = LeaderAndIsr(1, 2, (1, 2), 3)
    pairs: list[tuple[object, object]] = [
        (records.leader_and_isr(1, 2, (1, 2), 3), lai),
        (records.leader_isr_and_epoch(lai, 4), LeaderIsrAndControllerEpoch(lai, 4)),
        (
            records.lair_partition_state(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,), (), True),
            LeaderAndIsrPartitionState(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,), (), True),
        ),
        (
            records.umr_partition_state(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,)),
            UpdateMetadataPartitionState(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,)),
        ),
        (records.stop_replica_partition_state(tp, True, -2), StopReplicaPartitionState(tp, True, -2)),
    ]
    for fast, slow in pairs:
        assert type(fast) is type(slow)
        assert fast == slow and slow == fast
        assert hash(fast) == hash(slow)
        assert repr(fast) == repr(slow)
        assert dataclasses.asdict(fast) == dataclasses.asdict(slow)  # type: ignore[call-overload]
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.leader = 9  # type: ignore[attr-defined]


def test_directly_built_requests_equal_constructed_ones() -> None:
    assert records.REQUEST_FAST
    tp = TopicPartition("t", 3)
    lair = frozenset({LeaderAndIsrPartitionState(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,), (), True)})
    umr = frozenset({UpdateMetadataPartitionState(tp, 4, 1, 2, (1, 2), 3, (1, 2, 3), (3,))})
    sr = frozenset({StopReplicaPartitionState(tp, True, -2)})
    pairs: list[tuple[object, object]] = [
        (records.leader_and_isr_request(1, 0, 4, lair), LeaderAndIsrRequest(1, 0, 4, lair)),
        (
            records.update_metadata_request(1, 0, 4, frozenset({1, 2}), umr),
            UpdateMetadataRequest(1, 0, 4, frozenset({1, 2}), umr),
        ),
        (records.stop_replica_request(1, 0, 4, sr), StopReplicaRequest(1, 0, 4, sr)),
    ]
    for fast, slow in pairs:
        assert type(fast) is type(slow)
        assert fast == slow and slow == fast
        assert hash(fast) == hash(slow)
        assert repr(fast) == repr(slow)
        assert list(vars(fast)) == list(vars(slow))


def test_directly_built_snapshots_equal_constructed_ones() -> None:
    """The snapshot's three records, built directly, equal the ones their constructors build (every field)."""
    assert records.STATE_FAST
    rc = cluster("kafka-2.8", topics={"t": ((1, 2, 3), (2, 3, 1))})
    got = rc.snapshot()
    zk = ZkState(**{f.name: getattr(got.zk, f.name) for f in dataclasses.fields(ZkState)})
    ctx = CanonicalContext(
        **{f.name: getattr(got.controller, f.name) for f in dataclasses.fields(CanonicalContext)}
    )
    expected = ClusterState(zk=zk, controller=ctx, config=got.config)
    for fast, slow in ((got, expected), (got.zk, zk), (got.controller, ctx)):
        assert type(fast) is type(slow)
        assert fast == slow and slow == fast
        assert hash(fast) == hash(slow)
        assert repr(fast) == repr(slow)
        assert list(vars(fast)) == list(vars(slow))  # the same fields, in declaration order
    assert pickle.loads(pickle.dumps(got)) == expected


# ------------------------------------------------------------------------------------------ the request batch


def _batch(profile: str) -> tuple[ReferenceController, ControllerBrokerRequestBatch]:
    rc = cluster(profile, topics={f"t{i}": ((1, 2, 3), (2, 3, 1), (3, 1, 2)) for i in range(4)})
    rc._sent.clear()
    return rc, rc.kc.batch


def _model_lair(
    calls: list[tuple[list[int], TopicPartition, LeaderIsrAndControllerEpoch, ReplicaAssignment, bool]],
    kip455: bool,
) -> dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]]:
    """§3.4 ``addLeaderAndIsrRequestForBrokers`` written per broker, as a plain per-broker map."""
    out: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
    for brokers, tp, li, fa, is_new in calls:
        for broker in brokers:
            if broker < 0:
                continue
            per_broker = out.setdefault(broker, {})
            previous = per_broker.get(tp)
            new = is_new or (previous is not None and previous.is_new)
            lai = li.leader_and_isr
            per_broker[tp] = LeaderAndIsrPartitionState(
                tp,
                li.controller_epoch,
                lai.leader,
                lai.leader_epoch,
                lai.isr,
                lai.zk_version,
                fa.replicas,
                fa.adding if kip455 else (),
                fa.removing if kip455 else (),
                new,
            )
    return out


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("seed", range(6))
def test_leader_and_isr_entries_match_a_per_broker_map(profile: str, seed: int) -> None:
    rng = random.Random(seed)
    rc, batch = _batch(profile)
    ctx = rc.kc.ctx
    tps = sorted(ctx.assignments)
    calls = []
    for _ in range(40):
        tp = rng.choice(tps)
        brokers = [rng.choice([-1, 1, 2, 3, 4]) for _ in range(rng.randint(0, 4))]
        li = (
            ctx.leadership[tp]
            if rng.random() < 0.7
            else LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2,), 1), 1)
        )
        fa = ctx.assignments[tp] if rng.random() < 0.7 else ReplicaAssignment((1, 2, 4), (4,), (1,))
        calls.append((brokers, tp, li, fa, rng.random() < 0.3))
    batch.new_batch()
    half = len(calls) // 2
    for brokers, tp, li, fa, is_new in calls[:half]:
        batch.add_leader_and_isr(brokers, tp, li, fa, is_new)
    for is_new in (False, True):  # the bulk form, one flag per call
        batch.add_leader_and_isr_for_partitions(
            [(b, tp, li, fa) for b, tp, li, fa, new in calls[half:] if new is is_new], is_new
        )
    ordered = [c for c in calls[:half]] + [c for flag in (False, True) for c in calls[half:] if c[4] is flag]
    expected = _model_lair(ordered, profile == "kafka-2.8")
    view = batch.leader_and_isr
    assert list(view) == list(expected), "brokers in first-entry order"
    for broker, entries in expected.items():
        assert list(view[broker].items()) == list(entries.items()), (
            f"broker {broker}: entries and their order"
        )
    batch.send(ctx.epoch)
    sent = {r.broker: r.partition_states for r in rc._sent if type(r).__name__ == "LeaderAndIsrRequest"}
    live = set(ctx.live_broker_epochs)
    assert sent == {b: frozenset(e.values()) for b, e in expected.items() if b in live}


@pytest.mark.parametrize("profile", PROFILES)
def test_bulk_entries_go_through_a_replaced_method(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, batch = _batch(profile)
    ctx = rc.kc.ctx
    seen: list[TopicPartition] = []
    original = ControllerBrokerRequestBatch.add_leader_and_isr

    def replaced(self, brokers, tp, li, fa, is_new):  # type: ignore[no-untyped-def]
        seen.append(tp)
        original(self, brokers, tp, li, fa, is_new)

    monkeypatch.setattr(ControllerBrokerRequestBatch, "add_leader_and_isr", replaced)
    tps = sorted(ctx.assignments)[:3]
    batch.add_leader_and_isr_for_partitions(
        [((1,), tp, ctx.leadership[tp], ctx.assignments[tp]) for tp in tps], False
    )
    assert seen == tps
    batch.clear()


@pytest.mark.parametrize("profile", PROFILES)
def test_bulk_stop_replica_equals_per_partition_calls(profile: str) -> None:
    results = []
    for bulk in (False, True):
        rc, batch = _batch(profile)
        ctx = rc.kc.ctx
        tps = sorted(ctx.assignments)
        batch.add_stop_replica((2,), tps[0], True)
        if bulk:
            batch.add_stop_replica_for_partitions((2, -1, 3), tps, False)
            batch.add_stop_replica_for_partitions((4,), [], True)
            batch.add_stop_replica_for_partitions((1,), [*tps[3:], tps[5]], False)  # one broker, none yet
        else:
            for tp in tps:
                batch.add_stop_replica((2, -1, 3), tp, False)
            for tp in [*tps[3:], tps[5]]:
                batch.add_stop_replica((1,), tp, False)
        assert list(batch.stop_replica) == [2, 3, 1]
        orders = {b: list(entries) for b, entries in batch.stop_replica.items()}
        batch.send(ctx.epoch)
        results.append((frozenset(rc._sent), orders, list(rc.state_change_log)))
    assert results[0] == results[1]


# ------------------------------------------------------------------------------------------ the context


def test_lazily_built_indexes_equal_the_incremental_ones() -> None:
    rng = random.Random(7)
    assignments = {
        TopicPartition(f"t{rng.randint(0, 5)}", i): ReplicaAssignment(tuple(rng.sample(range(6), 3)))
        for i in range(60)
    }
    eager = ControllerContext()
    for tp, fa in assignments.items():
        eager.update_assignment(tp, fa)
    lazy = ControllerContext()
    lazy.load_assignments(assignments)
    assert lazy.partitions_on_broker(4) == eager.partitions_on_broker(4)
    assert lazy.replicas_on_brokers([3, 1, 3]) == eager.replicas_on_brokers([3, 1, 3])
    changed = next(iter(assignments))
    for ctx in (eager, lazy):
        ctx.update_assignment(changed, ReplicaAssignment((5, 0)))
        ctx.update_assignment(TopicPartition("new", 0), ReplicaAssignment((2,)))
        ctx.remove_topic("t3")
    for attr in ("replicas_by_broker", "partitions_by_topic"):
        a, b = getattr(eager, attr), getattr(lazy, attr)
        assert list(a) == list(b) and all(list(a[k]) == list(b[k]) for k in a), attr
    assert lazy.replicas_on_brokers(range(6)) == eager.replicas_on_brokers(range(6))


def test_bulk_puts_equal_single_puts() -> None:
    tps = [TopicPartition("t", i) for i in range(20)]
    one, bulk = ControllerContext(), ControllerContext()
    for ctx in (one, bulk):
        for tp in tps:
            ctx.put_partition_state(tp, PartitionState.OfflinePartition)
            ctx.put_leadership(
                tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(tp.partition % 3, 0, (0, 1, 2), 0), 1)
            )
    records_ = {
        tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(tp.partition % 2, 1, (0, 1), 1), 2) for tp in tps[::2]
    }
    records_[TopicPartition("u", 0)] = LeaderIsrAndControllerEpoch(LeaderAndIsr(4, 0, (4,), 0), 2)
    for tp, li in records_.items():
        one.put_leadership(tp, li)
    bulk.put_leaderships(records_)
    for state, chosen in (
        (PartitionState.OnlinePartition, tps[:15]),
        (PartitionState.NewPartition, tps[12:14]),
    ):
        for tp in chosen:
            one.put_partition_state(tp, state)
        bulk.put_partition_states(chosen, state)
    assert one.leadership == bulk.leadership and list(one.leadership) == list(bulk.leadership)
    assert one.leaders == bulk.leaders
    assert one.partition_states == bulk.partition_states
    assert one.partitions_in_new_or_offline() == bulk.partitions_in_new_or_offline()


# ------------------------------------------------------------------------------------------ the log clock


def test_log_stamps_follow_the_clock_across_seconds() -> None:
    start = datetime(2024, 12, 31, 23, 59, 58, 999_600)
    log = ControllerLog(start=start, tick_ms=1)
    for i in range(1500):
        log.emit(log.controller, "INFO", f"m{i}", "x")
    log.emit_all(log.controller, "INFO", (f"n{i}" for i in range(1500)), "x")
    log.emit_all(log.controller, "DEBUG", (f"d{i}" for i in range(5)), "x")
    assert len(log.controller) == 3000
    for i, line in enumerate(log.controller):
        now = start + timedelta(milliseconds=i)
        stamp = now.strftime("%Y-%m-%d %H:%M:%S,") + f"{now.microsecond // 1000:03d}"
        assert line.startswith(f"[{stamp}] INFO "), (i, line)
    assert log.now == start + timedelta(milliseconds=3000)


@pytest.mark.parametrize(
    ("start", "tick_ms"),
    [
        (datetime(2024, 12, 31, 23, 59, 58, 0), 1),
        (datetime(2024, 12, 31, 23, 59, 58, 999_600), 1),
        (datetime(2021, 9, 1, 0, 0, 0, 500_000), 7),
    ],
)
def test_line_heads_equal_emit_all(start: datetime, tick_ms: int) -> None:
    """A line built from ``heads`` is the line ``emit_all`` writes, and the clock ends where ``emit_all`` leaves it."""
    by_emit, by_heads = (ControllerLog(start=start, tick_ms=tick_ms) for _ in range(2))
    for count in (3, 0, 2500, 998, 1):
        by_emit.emit_all(by_emit.controller, "INFO", (f"n{i}" for i in range(count)), "x", "[p] ")
        assert by_heads.heads("DEBUG", count) == []
        by_heads.controller.extend(
            f"{h}n{i} (x)" for i, h in enumerate(by_heads.heads("INFO", count, "[p] "))
        )
        assert by_heads.now == by_emit.now
    by_emit.emit(by_emit.controller, "INFO", "last", "x")
    by_heads.emit(by_heads.controller, "INFO", "last", "x")
    assert by_heads.controller == by_emit.controller


# ------------------------------------------------------------------------------------------ reloading a state


def test_a_context_copy_shares_no_container() -> None:
    """``ControllerContext.copy``: every attribute, equal values, no map or set (or one inside them) shared."""
    rc = cluster("kafka-2.8", topics={"t": ((1, 2, 3), (2, 3, 1))})
    ctx = rc.kc.ctx
    ctx.replicas_on_offline_dirs[2] = {TopicPartition("t", 0)}
    ctx.partitions_by_topic  # noqa: B018 - builds the lazy indexes, so that they are copied too
    copy = ctx.copy()
    assert list(vars(copy)) == list(vars(ctx))
    for name, value in vars(ctx).items():
        other = getattr(copy, name)
        assert other == value, name
        if isinstance(value, dict | set):
            assert other is not value, name
            if isinstance(value, dict):
                for key, inner in value.items():
                    if isinstance(inner, dict | set):
                        assert other[key] is not inner, (name, key)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_reloading_a_state_gives_the_same_steps(profile: str) -> None:
    """A state loaded again (the kept context copied) steps exactly as when it was first loaded."""
    rc = cluster(profile, topics={"t": ((1, 2, 3), (2, 3, 1))})
    state = rc.snapshot()
    events = [BrokerFailure(1), BrokerFailure(2), ControlledShutdown(3, rc.zk.brokers[3])]
    first = []
    for event in events:
        rc.load(state)
        first.append(rc.handle(event))
    for event, expected in zip(events, first, strict=True):
        rc.load(state)
        assert rc.handle(event) == expected, event
        fresh = ReferenceController(profile, state)
        assert fresh.handle(event) == expected, event


def test_a_zookeeper_copy_shares_no_container() -> None:
    """``SimulatedZooKeeper.copy``: every attribute, equal values, no map, set or list (or one inside them) shared."""
    rc = cluster("kafka-2.8", topics={"t": ((1, 2, 3), (2, 3, 1))})
    zk = rc.zk
    zk.deleted_topic_configs.add("t")
    copy = zk.copy()
    assert list(vars(copy)) == list(vars(zk))
    for name, value in vars(zk).items():
        other = getattr(copy, name)
        assert other == value, name
        if isinstance(value, dict | set | list):
            assert other is not value, name
            if isinstance(value, dict):
                for key, inner in value.items():
                    if isinstance(inner, dict | set | list):
                        assert other[key] is not inner, (name, key)


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_failover_and_resignation_with_a_kept_incarnation_step_as_a_fresh_controller(profile: str) -> None:
    """An election or resignation that reuses an incarnation kept by ``load`` (this controller id loaded before,
    the state reloaded) gives what a fresh controller gives, also when the failover elects the resigning broker."""
    rc = cluster(profile, topics={"t": ((1, 2, 3), (2, 3, 1))})
    state = rc.snapshot()
    controller = rc.kc.ctx.controller_id
    others = [b for b in sorted(rc.zk.brokers) if b != controller]
    events = [
        ControllerFailover(controller),
        ControllerFailover(others[0]),
        BrokerFailure(controller),
        ControllerFailover(controller),
        BrokerFailure(controller),
    ]
    reused = 0
    for event in events:
        fresh = ReferenceController(profile, state).handle(event)
        for _ in range(2):
            rc.load(state)
            assert rc.handle(event) == fresh, event
        after = fresh.state
        rc.load(after)
        for again in (ControllerFailover(others[-1]), ControllerFailover(controller)):
            reference = ReferenceController(profile, after)
            if not reference.enabled(again):
                continue
            expected = reference.handle(again)
            rc.load(after)
            assert rc.handle(again) == expected, (event, again)
            reused += rc.kc is rc._idle.get(again.broker_id)
    assert reused
