"""``ZkReplicaStateMachine`` (§4, §2.3): replica transitions, processed broker by broker.

A call ``handle_state_changes(replicas, target)`` takes the replicas grouped by broker (broker → partitions).
Brokers are processed in ascending id (docs/contracts.md decision; Kafka uses hash order), partitions of one
broker in the order given. Replicas without a state get the implicit NonExistentReplica entry first (the entry
stays even when the transition is then rejected, as ``putReplicaStateIfNotExists`` does). Invalid transitions
are logged and recorded as failures and have no other effect. Each call ends with ``sendRequestsToBrokers``.
2.8 rethrows ``ControllerMovedException`` (after an ERROR line); every other modelled exception is logged and
swallowed, and the batch is cleared (the "wedged batch" hazard of §2.3 is not modelled, docs/contracts.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress, repeat
from typing import cast

from kcspec.reference_impl.context import ControllerContext, remove_replica
from kcspec.reference_impl.errors import (
    ControllerMovedException,
    IllegalStateException,
    KafkaThrowable,
    KeeperException,
    StateChangeFailedException,
)
from kcspec.reference_impl.logs import (
    ControllerLog,
    Logger,
    mk_string,
    render_assignment,
    render_leader_isr_and_epoch,
)
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.records import leader_and_isr, leader_isr_and_epoch
from kcspec.reference_impl.request_batch import ControllerBrokerRequestBatch
from kcspec.reference_impl.state_change_logger import StateChangeLogger
from kcspec.reference_impl.states import names, replica_state_cases
from kcspec.reference_impl.version import KAFKA_2_0, KAFKA_2_1, KAFKA_2_4, KafkaVersion
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.requests import MACHINE_REPLICA, FailureReason, StateChangeFailure
from kcspec.spec.vocabulary import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionReplica,
    ReplicaAssignment,
    ReplicaState,
    TopicPartition,
)

R = ReplicaState
ReplicaGroups = Mapping[int, Sequence[TopicPartition]]
"""Replicas grouped by broker: broker id → partitions."""


def group_replicas(replicas: Iterable[PartitionReplica]) -> dict[int, list[TopicPartition]]:
    """``groupBy(_.replica)`` of ``PartitionAndReplica``s, keeping the given order within a broker."""
    out: dict[int, list[TopicPartition]] = {}
    for pr in replicas:
        out.setdefault(pr.replica, []).append(pr.tp)
    return out


class ZkReplicaStateMachine:
    """§4: one ``handleStateChanges`` per call, with its own request batch."""

    def __init__(
        self,
        ctx: ControllerContext,
        zk: SimulatedZooKeeper,
        version: KafkaVersion,
        log: ControllerLog,
        batch: ControllerBrokerRequestBatch,
        state_change_logger: StateChangeLogger,
        failures: list[StateChangeFailure],
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.version = version
        self.batch = batch
        self.scl = state_change_logger
        self.failures = failures
        self.cases = replica_state_cases(version)
        self._currents: tuple[list[TopicPartition], list[ReplicaState]] | None = None
        self._target = ReplicaState.NonExistentReplica
        self.modern = version >= KAFKA_2_4
        self.offline_without_leadership = version >= KAFKA_2_0
        name = (
            "kafka.controller.ZkReplicaStateMachine"
            if version >= KAFKA_2_4
            else "kafka.controller.ReplicaStateMachine"
        )
        self.logger = Logger(
            log, log.controller, name, f"[ReplicaStateMachine controllerId={ctx.controller_id}] "
        )

    # ------------------------------------------------------------------------------------ startup (§4.8)

    @mirrors("initializeReplicaState")
    def startup(self) -> None:
        """``initializeReplicaState`` then Online for online replicas (2.4+: Offline for the others)."""
        ctx = self.ctx
        live = ctx.live_broker_ids()
        offline_dirs = ctx.replicas_on_offline_dirs
        hosted: dict[int, list[TopicPartition]] = {}
        """Each broker's replicas in assignment order (the order Kafka's loop puts their states in)."""
        offline: dict[int, list[TopicPartition]] = {}
        for tp, fa in ctx.assignments.items():
            for r in fa.replicas:
                on = hosted.get(r)
                if on is None:
                    on = hosted[r] = []
                on.append(tp)
                if r not in live or (offline_dirs and not ctx.is_replica_online(r, tp)):
                    off = offline.get(r)
                    if off is None:
                        offline[r] = [tp]
                    else:
                        off.append(tp)
        online: dict[int, list[TopicPartition]] = {}
        for r, tps in hosted.items():
            states = ctx.replica_states.get(r)
            if states is None:
                states = ctx.replica_states[r] = {}
            off = offline.get(r)
            if not off:
                if states:
                    states.update(dict.fromkeys(tps, R.OnlineReplica))
                else:
                    states = ctx.replica_states[r] = dict.fromkeys(tps, R.OnlineReplica)
                online[r] = tps
            elif len(off) == len(tps):
                states.update(dict.fromkeys(tps, R.ReplicaDeletionIneligible))
            else:
                off_set = set(off)
                on_list = online[r] = []
                for tp in tps:
                    if tp in off_set:
                        states[tp] = R.ReplicaDeletionIneligible
                    else:
                        states[tp] = R.OnlineReplica
                        on_list.append(tp)
        self.handle_state_changes(online, R.OnlineReplica)
        if self.modern:
            self.handle_state_changes(offline, R.OfflineReplica)

    # ------------------------------------------------------------------------------------ §2.3

    @mirrors(
        "ReplicaStateMachine.handleStateChanges(NewReplica)",
        "ReplicaStateMachine.handleStateChanges(OnlineReplica)",
        "ReplicaStateMachine.handleStateChanges(OfflineReplica)",
        "ReplicaStateMachine.handleStateChanges(ReplicaDeletionStarted)",
        "ReplicaStateMachine.handleStateChanges(ReplicaDeletionSuccessful)",
        "ReplicaStateMachine.handleStateChanges(ReplicaDeletionIneligible)",
        "ReplicaStateMachine.handleStateChanges(NonExistentReplica)",
    )
    def handle_state_changes(self, replicas: ReplicaGroups, target: ReplicaState) -> None:
        if not any(replicas.values()):
            return
        try:
            self.batch.new_batch()
            for broker in sorted(replicas):
                tps = replicas[broker]
                if tps:
                    self._do_handle_state_changes(broker, tps, target)
            self.batch.send(self.ctx.epoch)
        except ControllerMovedException as e:
            self.batch.clear()
            if self.version >= KAFKA_2_1:
                self.logger.error(
                    f"Controller moved to another broker when moving some replicas to {target.name} state", e
                )
                raise
            self.logger.error(f"Error while moving some replicas to {target.name} state", e)
        except KafkaThrowable as e:
            self.batch.clear()
            self.logger.error(f"Error while moving some replicas to {target.name} state", e)

    def _fail(
        self,
        broker: int,
        tp: TopicPartition,
        current: ReplicaState,
        target: str,
        reason: FailureReason,
        exc: KafkaThrowable,
    ) -> None:
        self.scl.replica_failed(self.ctx.epoch, broker, tp, current.name, target, exc)
        self.failures.append(StateChangeFailure(MACHINE_REPLICA, tp, broker, current.name, target, reason))

    def _success(self, broker: int, tp: TopicPartition, current: ReplicaState, target: ReplicaState) -> None:
        if self.scl.trace_enabled():
            # ``_name_`` is the member's name (``.name`` reads it through a Python-level descriptor)
            self.scl.with_controller_epoch(self.ctx.epoch).transition(
                "TRACE",
                f"Changed state of replica {broker} for partition {tp} from {current._name_} to {target._name_}",
                ("replica_transition", (current._name_, target._name_)),
            )

    def _do_handle_state_changes(
        self, broker: int, tps: Sequence[TopicPartition], target: ReplicaState
    ) -> None:
        ctx = self.ctx
        states = ctx.replica_states.get(broker)
        if states is None:
            states = ctx.replica_states[broker] = {}
        case = self.cases[target]
        valid_previous = case.valid_previous_states
        tps = tps if isinstance(tps, list) else list(tps)
        if len(tps) == len(states) and tps == list(states):
            # exactly the broker's replicas, in the order of its state map (e.g. all of them at startup)
            currents: list[ReplicaState | None] = list(states.values())
        else:
            currents = list(map(states.get, tps))
        if None not in currents and sum(map(currents.count, valid_previous)) == len(currents):
            # every replica has a state and may move to the target: nothing to log, ``valid`` is all of them
            self._currents = (valid := list(tps), cast(list[ReplicaState], currents))
            self._target = target
            self._handler(target)(broker, valid, states)
            return
        valid = []
        for tp in tps:
            current = states.get(tp)
            if current is None:
                current = states[tp] = R.NonExistentReplica
            if current in valid_previous:
                valid.append(tp)
            else:
                exc = IllegalStateException(
                    f"Replica {PartitionReplica(tp, broker)} should be in the {names(valid_previous)} states "
                    f"before moving to {target.name} state. Instead it is in {current.name} state"
                )
                self._fail(broker, tp, current, target.name, FailureReason.InvalidTransition, exc)
        if not valid:
            return
        self._currents = None
        self._target = target
        self._handler(target)(broker, valid, states)

    def _handler(
        self, target: ReplicaState
    ) -> Callable[[int, list[TopicPartition], dict[TopicPartition, ReplicaState]], None]:
        """The per-target method (looked up on every call, so a replaced method is the one called)."""
        if target is R.NewReplica:
            return self._to_new
        if target is R.OnlineReplica:
            return self._to_online
        if target is R.OfflineReplica:
            return self._to_offline
        if target is R.ReplicaDeletionStarted:
            return self._to_deletion_started
        if target is R.NonExistentReplica:
            return self._to_non_existent
        return self._to_simple

    def forget_last_call(self) -> None:
        """Drop what the last ``_do_handle_state_changes`` read (an incarnation adopting another state)."""
        self._currents = None

    def _current_states(
        self, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> list[ReplicaState]:
        """The current states of ``valid``, as ``_do_handle_state_changes`` just read them (or read now)."""
        read = self._currents
        self._currents = None
        if read is not None and read[0] is valid:
            return read[1]
        return [states[tp] for tp in valid]

    # ------------------------------------------------------------------------------------ §4.1 – §4.7

    @mirrors("NewReplica")
    def _to_new(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        ctx = self.ctx
        for tp in valid:
            current = states[tp]
            li = ctx.leadership.get(tp)
            if li is not None:
                if li.leader_and_isr.leader == broker:
                    exc = StateChangeFailedException(
                        f"Replica {broker} for partition {tp} cannot be moved to NewReplica state as it is being "
                        "requested to become leader"
                    )
                    self._fail(
                        broker, tp, current, R.OfflineReplica.name, FailureReason.NewReplicaIsLeader, exc
                    )
                    continue
                self.batch.add_leader_and_isr((broker,), tp, li, ctx.assignment(tp), True)
            self._success(broker, tp, current, R.NewReplica)
            states[tp] = R.NewReplica

    @mirrors("OnlineReplica")
    def _to_online(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        ctx = self.ctx
        leadership = ctx.leadership
        add_lair = self.batch.add_leader_and_isr
        trace = self.scl.trace_enabled()
        brokers = (broker,)
        currents = self._current_states(valid, states)
        if not trace and R.NewReplica not in currents:
            # no replica is new and nothing is logged: the LeaderAndIsr entries in order, then the states
            if leadership:
                assignments = ctx.assignments
                for tp, li in zip(valid, map(leadership.get, valid), strict=True):
                    if li is not None:
                        add_lair(brokers, tp, li, assignments.get(tp) or ctx.assignment(tp), False)
            if currents.count(R.OnlineReplica) != len(currents):
                states.update(dict.fromkeys(valid, R.OnlineReplica))
            return
        for tp in valid:
            current = states[tp]
            if current is R.NewReplica:
                fa = ctx.assignment(tp)
                if broker not in fa.replicas:
                    if self.modern:
                        self.logger.error(
                            f"Adding replica ({broker}) that is not part of the assignment {render_assignment(fa)}"
                        )
                    ctx.update_assignment(
                        tp, ReplicaAssignment((*fa.replicas, broker), fa.adding, fa.removing)
                    )
            else:
                li = leadership.get(tp)
                if li is not None:
                    add_lair(brokers, tp, li, ctx.assignments.get(tp) or ctx.assignment(tp), False)
            if trace:
                self._success(broker, tp, current, R.OnlineReplica)
            states[tp] = R.OnlineReplica

    @mirrors("OfflineReplica")
    def _to_offline(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        ctx = self.ctx
        batch = self.batch
        batch.add_stop_replica_for_partitions((broker,), valid, False)
        has_leadership = list(map(ctx.leadership.__contains__, valid))
        with_leadership = list(compress(valid, has_leadership))
        without_leadership = (
            [tp for tp, has in zip(valid, has_leadership, strict=True) if not has]
            if len(with_leadership) != len(valid)
            else []
        )
        updated = self._remove_replicas_from_isr(broker, with_leadership)
        log = self.scl.with_controller_epoch(ctx.epoch)
        trace = self.scl.trace_enabled()
        assignments = ctx.assignments
        if not trace and all(map(ctx.leadership.__contains__, updated)):
            # nothing below logs between the ISR lines (every partition has its cache entry): lines, then entries
            # (both made in one pass). The lines (2.4+): ``render_leader_isr_and_epoch`` and ``TopicPartition.__str__``
            # (``topic-partition``) inlined, each line built in one step after its head (``Logger.heads``). The
            # recipients (the assigned replicas but ``broker``) of each distinct assignment list computed once; every
            # ``li`` was just cached by ``_remove_replicas_from_isr`` (``cached``: not looked up again)
            heads: Iterable[str | None] = log.heads("INFO", len(updated)) if self.modern else repeat(None)
            tail = f" after removing replica {broker} from the ISR as part of transition to OfflineReplica{log.suffix}"
            isr_texts: dict[tuple[int, ...], str] = {}
            append = log.sink.append
            deleting = ctx.topics_to_be_deleted
            others: dict[tuple[int, ...], tuple[int, ...]] = {}
            entries = []
            for head, (tp, li) in zip(heads, updated.items(), strict=False):  # ``repeat(None)``: endless
                if head is not None:
                    # the records are tuple records (``records.TUPLE_LEADERSHIP``): read by unpacking
                    (leader, leader_epoch, isr, zk_version), controller_epoch = li
                    isr_text = isr_texts.get(isr)
                    if isr_text is None:
                        isr_text = isr_texts[isr] = mk_string(isr)
                    append(
                        f"{head}Partition {tp[0]}-{tp[1]} state changed to (Leader:{leader},ISR:{isr_text},"
                        f"LeaderEpoch:{leader_epoch},ZkVersion:{zk_version},"
                        f"ControllerEpoch:{controller_epoch}){tail}"
                    )
                if not (deleting and ctx.is_topic_queued_up_for_deletion(tp.topic)):
                    fa = assignments.get(tp) or ctx.assignment(tp)
                    replicas = fa.replicas
                    recipients = others.get(replicas)
                    if recipients is None:
                        recipients = others[replicas] = tuple(r for r in replicas if r != broker)
                    entries.append((recipients, tp, li, fa))
            batch.add_leader_and_isr_for_partitions(entries, False, cached=True)
        else:
            self._offline_one_by_one(broker, updated, states)
        states.update(dict.fromkeys(updated, R.OfflineReplica))
        if self.offline_without_leadership:
            for tp in without_leadership:
                self._success(broker, tp, states[tp], R.OfflineReplica)
                if self.modern:
                    batch.add_update_metadata(ctx.live_broker_epochs.keys(), (tp,))
                states[tp] = R.OfflineReplica

    def _offline_one_by_one(
        self,
        broker: int,
        updated: dict[TopicPartition, LeaderIsrAndControllerEpoch],
        states: dict[TopicPartition, ReplicaState],
    ) -> None:
        """The ISR line, the LeaderAndIsr entry and the TRACE line of each partition in turn."""
        ctx = self.ctx
        batch = self.batch
        log = self.scl.with_controller_epoch(ctx.epoch)
        trace = self.scl.trace_enabled()
        assignments = ctx.assignments
        for tp, li in updated.items():
            if self.modern:
                log.info(
                    f"Partition {tp} state changed to {render_leader_isr_and_epoch(li, self.version)} after removing "
                    f"replica {broker} from the ISR as part of transition to OfflineReplica"
                )
            if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                fa = assignments.get(tp) or ctx.assignment(tp)
                recipients = [r for r in fa.replicas if r != broker]
                batch.add_leader_and_isr(recipients, tp, li, fa, False)
            if trace:
                self._success(broker, tp, states[tp], R.OfflineReplica)

    @mirrors("ReplicaDeletionStarted")
    def _to_deletion_started(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        for tp in valid:
            self._success(broker, tp, states[tp], R.ReplicaDeletionStarted)
            states[tp] = R.ReplicaDeletionStarted
            self.batch.add_stop_replica((broker,), tp, True)

    @mirrors("ReplicaDeletionSuccessful", "ReplicaDeletionIneligible")
    def _to_simple(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        target = self._target
        for tp in valid:
            self._success(broker, tp, states[tp], target)
            states[tp] = target

    @mirrors("NonExistentReplica")
    def _to_non_existent(
        self, broker: int, valid: list[TopicPartition], states: dict[TopicPartition, ReplicaState]
    ) -> None:
        ctx = self.ctx
        for tp in valid:
            ctx.update_assignment(tp, remove_replica(ctx.assignment(tp), broker))
            self._success(broker, tp, states[tp], R.NonExistentReplica)
            del states[tp]

    # ------------------------------------------------------------------------------------ §4.3 step 3

    def _remove_replicas_from_isr(
        self, broker: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """``removeReplicasFromIsr``: loop until nothing is left to retry; failures logged, RS unchanged."""
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = partitions
        while remaining:
            finished, remaining = self._do_remove_replicas_from_isr(broker, remaining)
            if not results and not any(map(isinstance, finished.values(), repeat(KafkaThrowable))):
                results = finished  # type: ignore[assignment]  # no failure: the same map, without a copy
                continue
            for tp, result in finished.items():
                if isinstance(result, KafkaThrowable):
                    reason = (
                        FailureReason.ZkError
                        if isinstance(result, KeeperException)
                        else FailureReason.WrittenByNewerController
                        if "another controller" in result.message
                        else FailureReason.LeaderAndIsrPathEmpty
                    )
                    self._fail(
                        broker, tp, self.ctx.replica_state(broker, tp), R.OfflineReplica.name, reason, result
                    )
                else:
                    results[tp] = result
        return results

    @mirrors("doRemoveReplicasFromIsr")
    def _do_remove_replicas_from_isr(
        self, broker: int, partitions: list[TopicPartition]
    ) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch | KafkaThrowable], list[TopicPartition]]:
        """``doRemoveReplicasFromIsr``: read the znodes, drop ``broker`` from the ISRs that hold it, write them
        (conditionally), cache what was written (and, with the new controller epoch, what had nothing to drop).

        Where speed bent the shape: while every partition read has a znode of this controller's epoch listing
        ``broker``, the per-partition bookkeeping of the general case (the results in read order, the adjusted ones
        as placeholders filled after the write) is not built; the records written to ZooKeeper are the very objects cached (``update_leader_and_isr``'s
        ``written_records``) and the cache's map is the result. A record read with this controller's epoch that does
        not list ``broker`` (in a broker failure: every partition it led, just re-elected) is cached as read."""
        ctx = self.ctx
        try:
            read_states = self.zk.read_topic_partition_states(partitions)
        except KeeperException as e:
            return {tp: e for tp in partitions}, []
        epoch = ctx.epoch
        missing: list[TopicPartition] = []
        space = " " if self.version >= KAFKA_2_4 else ""
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        shrunk: dict[tuple[int, ...], tuple[int, ...]] = {}
        out: dict[TopicPartition, LeaderIsrAndControllerEpoch | KafkaThrowable | None] | None = None
        """Each stored partition in read order with its result (``None``: adjusted, the write decides); not built
        while every partition read is adjusted (then the result is what was written)."""
        failed = False
        for tp, st in zip(partitions, read_states, strict=True):
            if st is None:
                missing.append(tp)
                continue
            lai, read_epoch = st  # a tuple record (``records.TUPLE_LEADERSHIP``): read by unpacking
            leader, leader_epoch, isr, zk_version = lai
            if read_epoch <= epoch and broker in isr:
                if len(isr) != 1:  # without ``broker`` (memoised per distinct ISR)
                    new_isr = shrunk.get(isr)
                    if new_isr is None:
                        new_isr = shrunk[isr] = tuple(r for r in isr if r != broker)
                    isr = new_isr
                adjusted[tp] = leader_and_isr(
                    NO_LEADER if leader == broker else leader, leader_epoch + 1, isr, zk_version
                )
                if out is not None:
                    out[tp] = None
                continue
            if out is None:
                out = dict.fromkeys(adjusted)
            if read_epoch > epoch:
                out[tp] = StateChangeFailedException(
                    f"Leader and isr path written by another controller. This probably{space}means the "
                    f"current controller with epoch {epoch} went through a soft failure and another "
                    f"controller was elected with epoch {read_epoch}. Aborting state change by "
                    "this controller"
                )
                failed = True
            elif read_epoch == epoch:
                # nothing to drop: ``LeaderIsrAndControllerEpoch(leaderAndIsr, epoch)`` is the record just read
                # (equal to the one Kafka builds; it is cached as it is, one record fewer per partition)
                out[tp] = st
            else:
                out[tp] = leader_isr_and_epoch(lai, epoch)
        written: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        finished, retry = self.zk.update_leader_and_isr(adjusted, epoch, ctx.epoch_zk_version, written)
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch | KafkaThrowable]
        if out is None and len(written) == len(adjusted):
            # every partition read was adjusted and written: the result is what was written
            results = written  # type: ignore[assignment]
        else:
            if out is None:
                out = dict.fromkeys(adjusted)
            if len(written) == len(adjusted):
                # every adjusted partition was written: its record takes its place (``update`` keeps the read order)
                out.update(written)
            else:
                # in read order: the record written, else the failure (its znode is gone), else dropped (to retry)
                for tp in adjusted:
                    li = written.get(tp)
                    if li is not None:
                        out[tp] = li
                        continue
                    result = finished.get(tp)
                    if result is None:  # to retry
                        del out[tp]
                        continue
                    out[tp] = cast(KeeperException, result)
                    failed = True
            results = cast(dict[TopicPartition, LeaderIsrAndControllerEpoch | KafkaThrowable], out)
            if failed:
                written = {tp: v for tp, v in results.items() if isinstance(v, LeaderIsrAndControllerEpoch)}
            else:
                written = results  # type: ignore[assignment]
        ctx.put_leaderships(written)
        for tp in missing:
            if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                results[tp] = StateChangeFailedException(
                    f"Failed to change state of replica {broker} for partition {tp} since the leader and isr path "
                    "in zookeeper is empty"
                )
        return results, retry
