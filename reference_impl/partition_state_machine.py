"""``ZkPartitionStateMachine`` (§5, §2.3): partition transitions, initialisation and leader elections.

``handle_state_changes(partitions, target, election)`` is one ``handleStateChanges`` call. For target
OnlinePartition it returns the election results (partition → new ``LeaderAndIsr`` or the exception) for the
partitions that needed an election; initialised NewPartition partitions are not in the result (2.8.2).

[1.1] differences: the election loop re-elects the *original full list* on every BADVERSION retry (the retry
bug fixed by KIP-460 in 2.4), success lines are TRACE, the "written by another controller" message starts with
a lowercase ``aborted``, the Offline strategy always reads the topic config for unclean elections, and no
``ControllerMovedException`` exists (no fencing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kcspec.reference_impl.context import ControllerContext
from kcspec.reference_impl.elections import (
    ElectionOutcome,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    strategy_name,
)
from kcspec.reference_impl.errors import (
    ControllerMovedException,
    IllegalArgumentException,
    IllegalStateException,
    KafkaThrowable,
    KeeperException,
    StateChangeFailedException,
)
from kcspec.reference_impl.logs import (
    ControllerLog,
    Logger,
    LogLines,
    mk_string,
    render_leader_and_isr,
    scala_int_list,
    scala_list,
    scala_set,
)
from kcspec.reference_impl.mirrors import mirrors
from kcspec.reference_impl.records import leader_and_isr, leader_isr_and_epoch
from kcspec.reference_impl.request_batch import ControllerBrokerRequestBatch
from kcspec.reference_impl.state_change_logger import StateChangeLogger
from kcspec.reference_impl.states import names, partition_state_cases
from kcspec.reference_impl.version import KAFKA_2_1, KAFKA_2_4, KAFKA_2_6, KafkaVersion
from kcspec.reference_impl.zookeeper import SimulatedZooKeeper
from kcspec.spec.requests import MACHINE_PARTITION, FailureReason, StateChangeFailure
from kcspec.spec.vocabulary import (
    ClusterConfig,
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    ReplicaAssignment,
    TopicPartition,
)

P = PartitionState
ElectionResults = dict[TopicPartition, LeaderAndIsr | KafkaThrowable]
OFFLINE_CLEAN = LeaderElection(ElectionStrategy.OfflinePartitionLeaderElectionStrategy, False)


class ZkPartitionStateMachine:
    """§5: one ``handleStateChanges`` per call, with its own request batch."""

    def __init__(
        self,
        ctx: ControllerContext,
        zk: SimulatedZooKeeper,
        version: KafkaVersion,
        log: ControllerLog,
        batch: ControllerBrokerRequestBatch,
        state_change_logger: StateChangeLogger,
        failures: list[StateChangeFailure],
        config: ClusterConfig,
    ) -> None:
        self.ctx = ctx
        self.zk = zk
        self.version = version
        self.batch = batch
        self.scl = state_change_logger
        self.failures = failures
        self.config = config
        self.cases = partition_state_cases()
        self._initialized: (
            tuple[list[TopicPartition], dict[TopicPartition, LeaderIsrAndControllerEpoch]] | None
        ) = None
        """What ``_initialize_leader_and_isr`` just returned, with the records it wrote (same order)."""
        name = (
            "kafka.controller.ZkPartitionStateMachine"
            if version >= KAFKA_2_4
            else "kafka.controller.PartitionStateMachine"
        )
        self.logger = Logger(
            log, log.controller, name, f"[PartitionStateMachine controllerId={ctx.controller_id}] "
        )

    def forget_last_call(self) -> None:
        """Drop what the last initialisation wrote (an incarnation adopting another state)."""
        self._initialized = None

    # ------------------------------------------------------------------------------------ startup (§5.4)

    @mirrors("initializePartitionState")
    def startup(self) -> None:
        ctx = self.ctx
        if not ctx.leadership:
            ctx.put_partition_states(ctx.assignments, P.NewPartition)
        else:
            for tp in ctx.assignments:
                li = ctx.leadership.get(tp)
                if li is None:
                    ctx.put_partition_state(tp, P.NewPartition)
                elif ctx.is_replica_online(li.leader_and_isr.leader, tp):
                    ctx.put_partition_state(tp, P.OnlinePartition)
                else:
                    ctx.put_partition_state(tp, P.OfflinePartition)
        self.trigger_online_partition_state_change()

    @mirrors("triggerOnlinePartitionStateChange")
    def trigger_online_partition_state_change(self, topic: str | None = None) -> ElectionResults:
        """New and Offline partitions of topics not queued for deletion → Online, Offline strategy, clean."""
        return self.handle_state_changes(
            self.ctx.partitions_in_new_or_offline(topic), P.OnlinePartition, OFFLINE_CLEAN
        )

    # ------------------------------------------------------------------------------------ §2.3

    @mirrors(
        "PartitionStateMachine.handleStateChanges(NewPartition)",
        "PartitionStateMachine.handleStateChanges(OnlinePartition)",
        "PartitionStateMachine.handleStateChanges(OfflinePartition)",
        "PartitionStateMachine.handleStateChanges(NonExistentPartition)",
    )
    def handle_state_changes(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        election: LeaderElection | None = None,
    ) -> ElectionResults:
        if not partitions:
            return {}
        try:
            self.batch.new_batch()
            result = self._do_handle_state_changes(partitions, target, election)
            self.batch.send(self.ctx.epoch)
            return result
        except ControllerMovedException as e:
            self.batch.clear()
            if self.version >= KAFKA_2_1:
                self.logger.error(
                    f"Controller moved to another broker when moving some partitions to {target.name} state",
                    e,
                )
                raise
            self.logger.error(f"Error while moving some partitions to {target.name} state", e)
            return {tp: e for tp in partitions}
        except KafkaThrowable as e:
            self.batch.clear()
            self.logger.error(f"Error while moving some partitions to {target.name} state", e)
            return {tp: e for tp in partitions}

    def _log(self) -> Logger:
        return self.scl.with_controller_epoch(self.ctx.epoch)

    def _fail(
        self,
        tp: TopicPartition,
        current: PartitionState,
        target: PartitionState,
        reason: FailureReason,
        exc: KafkaThrowable,
    ) -> None:
        self.scl.partition_failed(self.ctx.epoch, tp, current.name, target.name, exc)
        self.failures.append(StateChangeFailure(MACHINE_PARTITION, tp, -1, current.name, target.name, reason))

    def _success_level(self) -> str:
        return "INFO" if self.version >= KAFKA_2_6 else "TRACE"

    def _do_handle_state_changes(
        self, partitions: Sequence[TopicPartition], target: PartitionState, election: LeaderElection | None
    ) -> ElectionResults:
        ctx = self.ctx
        states = ctx.partition_states
        valid_previous = self.cases[target].valid_previous_states
        currents = list(map(states.get, partitions))
        if None not in currents and sum(map(currents.count, valid_previous)) == len(currents):
            valid = list(partitions)
        else:
            valid = []
            currents = []
            for tp in partitions:
                current = states.get(tp)
                if current is None:
                    current = P.NonExistentPartition
                    ctx.put_partition_state(tp, current)
                if current in valid_previous:
                    valid.append(tp)
                    currents.append(current)
                else:
                    exc = IllegalStateException(
                        f"Partition {tp} should be in one of {names(valid_previous)} states before moving to "
                        f"{target.name} state. Instead it is in {current.name} state"
                    )
                    self._fail(tp, current, target, FailureReason.InvalidTransition, exc)
        log = self._log()
        level = self._success_level()
        if target is P.NewPartition:
            for tp in valid:
                previous = states[tp].name
                log.transition(
                    self._success_level(),
                    f"Changed partition {tp} state from {previous} to NewPartition with assigned replicas "
                    f"{mk_string(ctx.replicas(tp))}",
                    ("partition_transition", (previous, "NewPartition")),
                )
                ctx.put_partition_state(tp, P.NewPartition)
            return {}
        if target is P.OnlinePartition:
            new_count = currents.count(P.NewPartition)
            if new_count == len(valid):
                uninitialized, to_elect = valid, []
            elif new_count == 0:
                uninitialized, to_elect = [], valid
            else:
                uninitialized = [tp for tp, c in zip(valid, currents, strict=True) if c is P.NewPartition]
                to_elect = [tp for tp, c in zip(valid, currents, strict=True) if c is not P.NewPartition]
            if uninitialized:
                self._initialized = None
                done = self._initialize_leader_and_isr(uninitialized)
                stash = self._initialized
                self._initialized = None
                if stash is not None and stash[0] is done:
                    # the records just written, all for partitions that are still NewPartition
                    _write_online_lines(log, level, "NewPartition", list(stash[1].items()), records=True)
                    ctx.put_partition_states(stash[1], P.OnlinePartition)
                else:
                    for tp in done:
                        li = ctx.leadership[tp]
                        previous = states[tp].name
                        log.transition(
                            level,
                            f"Changed partition {tp} from {previous} to OnlinePartition with state "
                            f"{render_leader_and_isr(li.leader_and_isr)}",
                            ("partition_transition", (previous, "OnlinePartition")),
                        )
                        ctx.put_partition_state(tp, P.OnlinePartition)
            if not to_elect:
                return {}
            if election is None:
                raise IllegalArgumentException(
                    "Election strategy is a required field when the target state is OnlinePartition"
                )
            results = self._elect_leader_for_partitions(to_elect, election)
            won = [(tp, result) for tp, result in results.items() if isinstance(result, LeaderAndIsr)]
            _write_online_lines(log, level, None, won, states)
            ctx.put_partition_states([tp for tp, _ in won], P.OnlinePartition)
            return results
        if self.scl.trace_enabled():
            for tp in valid:
                previous = states[tp].name
                log.transition(
                    "TRACE",
                    f"Changed partition {tp} state from {previous} to {target.name}",
                    ("partition_transition", (previous, target.name)),
                )
                ctx.put_partition_state(tp, target)
        else:
            ctx.put_partition_states(valid, target)
        return {}

    # ------------------------------------------------------------------------------------ §5.2a

    @mirrors("initializeLeaderAndIsrForPartitions")
    def _initialize_leader_and_isr(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        ctx = self.ctx
        records: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        assignments = ctx.assignments
        live_brokers = ctx.live_broker_ids()
        offline_dirs = ctx.replicas_on_offline_dirs
        epoch = ctx.epoch
        assigned: list[ReplicaAssignment | None] = []
        """The assignment of each partition in ``records`` (in the same order)."""
        for tp in partitions:
            fa = assignments.get(tp)
            replicas = fa.replicas if fa is not None else ()
            if replicas and not offline_dirs and live_brokers.issuperset(replicas):
                records[tp] = leader_isr_and_epoch(leader_and_isr(replicas[0], 0, replicas, 0), epoch)
                assigned.append(fa)
                continue
            live = tuple(r for r in replicas if ctx.is_replica_online(r, tp))
            if not live:
                exc = StateChangeFailedException(
                    f"Controller {ctx.controller_id} epoch {ctx.epoch} encountered error during state change of "
                    f"partition {tp} from New to Online, assigned replicas are [{mk_string(live)}], live brokers "
                    f"are [{scala_set(ctx.live_broker_ids())}]. No assigned replica is alive."
                )
                self._fail(tp, P.NewPartition, P.OnlinePartition, FailureReason.NoAssignedReplicaAlive, exc)
            else:
                records[tp] = LeaderIsrAndControllerEpoch(LeaderAndIsr(live[0], 0, live, 0), ctx.epoch)
                assigned.append(fa)
        try:
            codes = self.zk.create_topic_partition_states(records, ctx.epoch_zk_version)
        except ControllerMovedException as e:
            self.logger.error(
                "Controller moved to another broker when trying to create the topic partition state znode", e
            )
            raise
        except KeeperException as e:
            for tp in records:
                self._fail(tp, ctx.partition_state(tp), P.NewPartition, FailureReason.ZkError, e)
            return []
        succeeded: list[TopicPartition] = []
        if len(codes) == len(records) and all(map("OK".__eq__, codes.values())):
            ctx.put_leaderships(records)
            if len(assigned) != len(records):
                assigned = [assignments.get(tp) for tp in records]
            self.batch.add_leader_and_isr_for_partitions(
                [
                    (li.leader_and_isr.isr, tp, li, fa or ctx.assignment(tp))
                    for (tp, li), fa in zip(records.items(), assigned, strict=True)
                ],
                True,
                cached=True,
            )
            succeeded = list(records)
            self._initialized = (succeeded, records)
            return succeeded
        for tp, code in codes.items():
            if code == "OK":
                li = records[tp]
                ctx.put_leadership(tp, li)
                self.batch.add_leader_and_isr(li.leader_and_isr.isr, tp, li, ctx.assignment(tp), True)
                succeeded.append(tp)
            else:
                self._fail(
                    tp, P.NewPartition, P.OnlinePartition, FailureReason.NodeExists, KeeperException(code)
                )
        return succeeded

    # ------------------------------------------------------------------------------------ §5.2b

    @mirrors("electLeaderForPartitions")
    def _elect_leader_for_partitions(
        self, partitions: list[TopicPartition], election: LeaderElection
    ) -> ElectionResults:
        finished_elections: ElectionResults = {}
        remaining = partitions
        modern = self.version >= KAFKA_2_4
        while remaining:
            finished, retry = self._do_elect_leader_for_partitions(
                remaining if modern else partitions, election
            )
            remaining = retry
            for tp, result in finished.items():
                if isinstance(result, KafkaThrowable):
                    self._fail(
                        tp, self.ctx.partition_state(tp), P.OnlinePartition, self._reason(result), result
                    )
            finished_elections.update(finished)
            if remaining and modern:
                self.logger.info(
                    f"Retrying leader election with strategy {strategy_name(election, self.version)} for partitions "
                    f"{scala_list(remaining)}"
                )
        return finished_elections

    @staticmethod
    def _reason(exc: KafkaThrowable) -> FailureReason:
        if isinstance(exc, KeeperException):
            return FailureReason.ZkError
        if "doesn't exist" in exc.message:
            return FailureReason.LeaderAndIsrMissing
        if "another controller" in exc.message:
            return FailureReason.WrittenByNewerController
        return FailureReason.NoEligibleLeader

    @mirrors("doElectLeaderForPartitions")
    def _do_elect_leader_for_partitions(
        self, partitions: list[TopicPartition], election: LeaderElection
    ) -> tuple[ElectionResults, list[TopicPartition]]:
        ctx = self.ctx
        try:
            read_states = self.zk.read_topic_partition_states(partitions)
        except KeeperException as e:
            return {tp: e for tp in partitions}, []
        failed: ElectionResults = {}
        valid: list[tuple[TopicPartition, LeaderAndIsr]] = []
        aborted = "Aborted" if self.version >= KAFKA_2_4 else "aborted"
        for tp, st in zip(partitions, read_states, strict=True):
            if st is None:
                failed[tp] = StateChangeFailedException(
                    f"LeaderAndIsr information doesn't exist for partition {tp} in {ctx.partition_state(tp).name} state"
                )
            elif st.controller_epoch > ctx.epoch:
                failed[tp] = StateChangeFailedException(
                    f"{aborted} leader election for partition {tp} since the LeaderAndIsr path was already written "
                    f"by another controller. This probably means that the current controller {ctx.controller_id} "
                    f"went through a soft failure and another controller was elected with epoch {st.controller_epoch}."
                )
            else:
                valid.append((tp, st.leader_and_isr))
        if not valid:
            return failed, []
        outcomes = [self._elect_one(tp, lai, election) for tp, lai in valid]
        updates: dict[TopicPartition, LeaderAndIsr] = {}
        for outcome in outcomes:
            if outcome.leader_and_isr is None:
                failed[outcome.tp] = StateChangeFailedException(
                    f"Failed to elect leader for partition {outcome.tp} under strategy "
                    f"{strategy_name(election, self.version)}"
                )
            else:
                updates[outcome.tp] = outcome.leader_and_isr
        # the records written to ZooKeeper are the very objects cached (``written``: equal to Kafka's
        # ``LeaderIsrAndControllerEpoch(leaderAndIsr, epoch)``, one record fewer per partition)
        written: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        finished, retry = self.zk.update_leader_and_isr(updates, ctx.epoch, ctx.epoch_zk_version, written)
        results: ElectionResults = finished  # type: ignore[assignment]  # the caller's map from now on
        # the cache first, then the LeaderAndIsr entries (each reads only its own partition's cache entry)
        ctx.put_leaderships(written)
        assignments = ctx.assignments
        if len(written) == len(outcomes):
            # every election won and was written, in the order elected: the outcomes give the recipients
            entries = [
                (outcome.recipients, tp, li, assignments.get(tp) or ctx.assignment(tp))
                for outcome, (tp, li) in zip(outcomes, written.items(), strict=True)
            ]
        else:
            recipients = {o.tp: o.recipients for o in outcomes if o.leader_and_isr is not None}
            entries = [
                (recipients[tp], tp, li, assignments.get(tp) or ctx.assignment(tp))
                for tp, li in written.items()
            ]
        self.batch.add_leader_and_isr_for_partitions(entries, False, cached=True)
        results.update(failed)
        return results, retry

    def _elect_one(self, tp: TopicPartition, lai: LeaderAndIsr, election: LeaderElection) -> ElectionOutcome:
        ctx = self.ctx
        strategy = election.strategy
        if strategy is ElectionStrategy.OfflinePartitionLeaderElectionStrategy:
            unclean = False
            if ctx.replicas_on_offline_dirs:
                isr_online = any(ctx.is_replica_online(r, tp) for r in lai.isr)
            else:
                isr_online = not ctx.live_broker_ids().isdisjoint(lai.isr)
            if not isr_online:
                if election.allow_unclean and self.version >= KAFKA_2_4:
                    unclean = True
                else:
                    cfg = self.config
                    unclean = cfg.unclean_leader_election_enable or tp.topic in cfg.unclean_topics
            return leader_for_offline(ctx, tp, lai, unclean)
        if strategy is ElectionStrategy.ReassignPartitionLeaderElectionStrategy:
            return leader_for_reassign(ctx, self.version, tp, lai)
        if strategy is ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy:
            return leader_for_preferred_replica(ctx, tp, lai)
        return leader_for_controlled_shutdown(ctx, self.version, tp, lai)


def _write_online_lines(
    log: Logger,
    level: str,
    previous: str | None,
    changed: list[tuple[TopicPartition, Any]],
    states: Mapping[TopicPartition, PartitionState] | None = None,
    *,
    records: bool = False,
) -> None:
    """``Changed partition <tp> from <previous> to OnlinePartition with state <LeaderAndIsr>`` for each partition
    of ``changed`` in order (its ``LeaderAndIsr``, or with ``records`` the ``LeaderIsrAndControllerEpoch`` holding
    it), the previous state given or read from ``states``.

    Where speed bent the shape (a failover logs this line for every partition): the lines are built in one
    step each after their heads (``Logger.heads``), with ``render_leader_and_isr`` and ``TopicPartition.__str__``
    (``topic-partition``) inlined."""
    heads = log.heads(level, len(changed))
    if not heads:
        return
    suffix = log.suffix
    isr_texts: dict[tuple[int, ...], str] = {}
    sink = log.sink
    append = sink.append
    noted = sink.transitions if type(sink) is LogLines else None  # the lines' transitions (see ``LogLines``)
    for head, (tp, value) in zip(heads, changed, strict=True):
        lai: LeaderAndIsr = value.leader_and_isr if records else value
        isr = lai.isr
        isr_text = isr_texts.get(isr)
        if isr_text is None:
            isr_text = isr_texts[isr] = scala_int_list(isr)
        state = previous if states is None else states[tp].name
        append(
            f"{head}Changed partition {tp[0]}-{tp[1]} from {state} to OnlinePartition with state "
            f"LeaderAndIsr(leader={lai.leader}, leaderEpoch={lai.leader_epoch}, isr={isr_text}, "
            f"zkVersion={lai.zk_version}){suffix}"
        )
        if noted is not None:
            noted.append(("partition_transition", (str(state), "OnlinePartition")))
