"""The partition state machine (§5, generic mechanics §2.3) as procedures on ``Work``.

``partition_state_change(p, w, partitions, target, election)`` is one whole ``handleStateChanges`` call:
implicit initial state NonExistentPartition, invalid elements → ``StateChangeFailure(InvalidTransition)`` only,
the target rule, then ``send``.

* → NewPartition / OfflinePartition / NonExistentPartition (§5.1, §5.3): the state only.
* → OnlinePartition (§5.2): NewPartition sources are initialised first (§5.2a ``initializeLeaderAndIsrForPartitions``:
  leader = first online AR member, ISR = online AR members, epoch 0, znode created fenced, LAIR(isNew = true) to
  the ISR); OfflinePartition/OnlinePartition sources get ``electLeaderForPartitions`` (§5.2b) with the strategy of
  ``election``: read the znodes, run the strategy (§6), write conditionally with leader epoch + 1; BADVERSION
  partitions are retried from a fresh read. A one-shot fault makes at most one retry round, so the loop is
  unrolled twice. 2.8 retries the remaining partitions; 1.1 re-runs the election on the *original full list*
  (the 1.1 bug of §5.2b: already elected partitions are elected again, bumping their epoch twice).

Failures are logged from the partition's current state to ``OnlinePartition``. A ControllerMovedException (2.8
fencing) sets ``Work.moved``: nothing more is done and the batch is not sent. ``election=None`` with partitions
to elect is Kafka's IllegalArgumentException: the whole call fails after the initialisations, its batch is
discarded unsent (the "wedged batch" hazard is not modelled) and no state-change line is logged.

``initialize_partition_state`` is §5.4 step 1, ``trigger_online_partition_state_change`` §5.4 step 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcspec.spec import batch, context, element_states, zk
from kcspec.spec.elections import elect, election_input
from kcspec.spec.lang import Block, Expr, build_map, cond, if_, lit, procedure, rec, rule
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import MACHINE_PARTITION, FailureReason, RequestBatch, StateChangeFailure
from kcspec.spec.vocabulary import (
    INITIAL_LEADER_EPOCH,
    INITIAL_ZK_VERSION,
    ElectionStrategy,
    LeaderAndIsr,
    LeaderElection,
    LeaderIsrAndControllerEpoch,
    PartitionState,
    TopicPartition,
)
from kcspec.spec.work import Work

ONLINE_NAME = PartitionState.OnlinePartition.name


@dataclass(frozen=True)
class ElectionRound:
    """One ``doElectLeaderForPartitions`` round (§5.2b): the work after it, the partitions elected and written,
    and those whose conditional write failed with BADVERSION."""

    work: Work
    elected: frozenset[TopicPartition]
    retry: frozenset[TopicPartition]
    threw: bool = False
    """[1.1] the round threw out of the strategy (NoSuchElementException): the call ends without effect."""


def state_name(state: Expr) -> Expr:
    """The Kafka name of a partition state, as logged."""
    return element_states.state_name(state, PartitionState)


def _set_partition_states(w: Expr, states: Expr) -> Expr:
    return element_states.set_states(w, "partition_states", states)


def _put_states(w: Expr, elements: Expr, target: PartitionState) -> Expr:
    return element_states.put_states(w, "partition_states", elements, target)


def _set_leadership(s: Expr, records: Expr) -> Expr:
    def body(sv: Expr) -> Expr:
        return sv.with_at("controller", leadership=sv.f("controller", "leadership").merge(records))

    return batch.bind(s, body)


def _failures(
    w: Expr, tps: Expr, target_name: str, reason: FailureReason, from_name: str | None = None
) -> Expr:
    """``w`` with one failure per partition, logged from its current state (or ``from_name``) to ``target_name``."""
    return batch.bind(w, lambda wv: _add_failures(wv, tps, target_name, reason, from_name))


def _add_failures(w: Expr, tps: Expr, target_name: str, reason: FailureReason, from_name: str | None) -> Expr:
    states = w.f("state", "controller", "partition_states")
    return w.with_(
        failures=w.f("failures").union(
            tps.map(
                lambda tp: rec(
                    StateChangeFailure,
                    machine=MACHINE_PARTITION,
                    tp=tp,
                    replica=-1,
                    from_state=(
                        lit(from_name)
                        if from_name is not None
                        else state_name(states.get_or(tp, PartitionState.NonExistentPartition))
                    ),
                    target=target_name,
                    reason=reason,
                )
            )
        )
    )


# ------------------------------------------------------------------------------------------- §5.2a


@procedure("initialize_leader_and_isr", "§5.2")
def initialize_leader_and_isr(p: Profile, w: Expr, tps: Expr) -> Expr:
    """§5.2a ``initializeLeaderAndIsrForPartitions(tps)`` followed by PS := OnlinePartition for the successes."""
    s = w.f("state")
    my_epoch = s.f("controller", "epoch")

    def live_of(tp: Expr) -> Expr:
        return context.online_replicas(s, tp)

    def first_leader(tp: Expr) -> Expr:
        b = Block()
        b.lr = live_of(tp)
        return b.in_(
            rec(
                LeaderIsrAndControllerEpoch,
                leader_and_isr=rec(
                    LeaderAndIsr,
                    leader=b.lr.head(-1),
                    leader_epoch=INITIAL_LEADER_EPOCH,
                    isr=b.lr,
                    zk_version=INITIAL_ZK_VERSION,
                ),
                controller_epoch=my_epoch,
            )
        )

    def after_create(recs: Expr, no_live: Expr, cr: Expr) -> Expr:
        new = PartitionState.NewPartition.name
        # the partitions without a live replica were logged as failed before the fenced create threw
        fenced = _failures(
            w.with_(moved=True), no_live, ONLINE_NAME, FailureReason.NoAssignedReplicaAlive, new
        )
        b = Block()
        b.created = cr.f("created")
        w1 = w.with_(state=_set_leadership(cr.f("state"), build_map(b.created, recs.get)))
        w1 = _failures(w1, no_live, ONLINE_NAME, FailureReason.NoAssignedReplicaAlive, new)
        w1 = _failures(w1, cr.f("exists"), ONLINE_NAME, FailureReason.NodeExists, new)
        w1 = batch.add_leader_and_isr_bulk(
            p, w1, b.created, lambda tp: recs.get(tp).f("leader_and_isr", "isr"), True
        )
        # the whole call threw (§5.2a step 4): every partition with a live replica is logged as failed from its
        # current state with the target printed as NewPartition (Kafka's quirk); nothing is initialised
        threw = _failures(
            _failures(
                w.with_(state=cr.f("state")), no_live, ONLINE_NAME, FailureReason.NoAssignedReplicaAlive, new
            ),
            recs.keys(),
            new,
            FailureReason.ZkError,
        )
        return if_(
            cr.f("moved"),
            fenced,
            if_(cr.f("threw"), threw, b.in_(_put_states(w1, b.created, PartitionState.OnlinePartition))),
        )

    b = Block()
    b.no_live = tps.filter(lambda tp: live_of(tp).is_empty())
    b.recs = build_map(tps.minus(b.no_live), first_leader)
    b.cr = zk.create_partition_states(p, s, b.recs)
    return rule("initializeLeaderAndIsrForPartitions", "§5.2a", b.in_(after_create(b.recs, b.no_live, b.cr)))


# ------------------------------------------------------------------------------------------- §5.2b


def _election_round(p: Profile, w: Expr, remaining: Expr, election: LeaderElection) -> Expr:
    """One ``doElectLeaderForPartitions(remaining, strategy)`` round (§5.2b steps 1–4) → ``ElectionRound``: the
    znode round of ``zk.leader_and_isr_round`` that writes the leader and ISR the strategy elects (§6) for every
    candidate that has one."""

    def updates(s1: Expr, b: Block) -> Expr:
        zkps = s1.f("zk", "partition_states")
        b.results = build_map(
            b.cands,
            lambda tp: elect(
                p,
                election.strategy,
                election_input(p, s1, tp, zkps.get(tp).f("leader_and_isr"), election),
            ),
        )
        b.no_leader = b.cands.filter(lambda tp: b.results.get(tp).f("leader").eq(-1))

        def elected_record(tp: Expr) -> Expr:
            r = Block()
            r.lai = zkps.get(tp).f("leader_and_isr")
            return r.in_(
                r.lai.with_(
                    leader=b.results.get(tp).f("leader"),
                    leader_epoch=r.lai.f("leader_epoch") + 1,
                    isr=b.results.get(tp).f("isr"),
                )
            )

        return build_map(b.cands.minus(b.no_leader), elected_record)

    def written(s1: Expr, b: Block) -> Expr:
        wr = b.wr
        w1 = w.with_(state=_set_leadership(wr.f("state"), wr.f("records")))
        w1 = _failures(w1, b.missing, ONLINE_NAME, FailureReason.LeaderAndIsrMissing)
        w1 = _failures(w1, b.newer, ONLINE_NAME, FailureReason.WrittenByNewerController)
        w1 = _failures(w1, b.no_leader, ONLINE_NAME, FailureReason.NoEligibleLeader)
        w1 = _failures(w1, wr.f("failed"), ONLINE_NAME, FailureReason.ZkError)
        w1 = batch.add_leader_and_isr_bulk(
            p, w1, wr.f("records").keys(), lambda tp: b.results.get(tp).f("recipients"), False
        )
        return rec(ElectionRound, work=w1, elected=wr.f("records").keys(), retry=wr.f("retry"), threw=False)

    def legacy_reassign_read(s1: Expr, body: Expr) -> Expr:
        # [1.1] ``leaderForReassign`` reads ``partitionsBeingReassigned(tp).newReplicas`` for every partition whose
        # znode was read (not missing, not written by a newer controller): for one that is not being reassigned that
        # throws NoSuchElementException, before this round's failures are logged. ``handleStateChanges``' catch-all
        # logs it in controller.log ("Error while moving some partitions to OnlinePartition state", §2.3 step 7):
        # no per-partition failure, no state change, nothing sent (the unsent batch is dropped).
        zkps = s1.f("zk", "partition_states")
        legacy = s1.f("controller", "legacy_reassignments")
        read_ok = remaining.filter(lambda tp: zkps.has(tp) & ~zk.written_by_newer_controller(s1, tp))
        return if_(
            read_ok.any(lambda tp: ~legacy.has(tp)),
            rec(
                ElectionRound,
                work=w.with_(state=s1, batch=lit(RequestBatch())),
                elected=frozenset(),
                retry=frozenset(),
                threw=True,
            ),
            body,
        )

    legacy_reassign = (
        not p.kip455_reassignment
        and election.strategy is ElectionStrategy.ReassignPartitionLeaderElectionStrategy
    )
    return zk.leader_and_isr_round(
        p,
        "doElectLeaderForPartitions",
        "§5.2b",
        w,
        remaining,
        nothing_done=lambda work: rec(
            ElectionRound, work=work, elected=frozenset(), retry=frozenset(), threw=False
        ),
        failed=lambda work, tps, reason: _failures(work, tps, ONLINE_NAME, reason),
        updates=updates,
        written=written,
        after_read=legacy_reassign_read if legacy_reassign else None,
    )


@procedure("elect_leader_for_partitions", "§5.2")
def elect_leader_for_partitions(p: Profile, w: Expr, tps: Expr, election: LeaderElection) -> Expr:
    """§5.2b ``electLeaderForPartitions(tps, strategy)`` followed by PS := OnlinePartition for the elected."""

    def finish(wd: Expr, elected: Expr, threw: Expr) -> Expr:
        return if_(wd.f("moved") | threw, wd, _put_states(wd, elected, PartitionState.OnlinePartition))

    body = zk.at_most_two_rounds(
        Block(),
        lambda work, remaining: _election_round(p, work, remaining, election),
        w,
        tps,
        done="elected",
        # [1.1] on BADVERSION the second round re-elects the original full list (§5.2b, bumping epochs again)
        again=lambda r1: r1.f("retry") if p.election_retry_remaining_only else tps,
        finish=lambda last, elected: finish(last.f("work"), elected, last.f("threw")),
        stop=lambda r1: r1.f("threw"),
    )
    return rule("electLeaderForPartitions", "§5.2b", body)


# ------------------------------------------------------------------------------------------- the call


def _to_online(p: Profile, w: Expr, valid: Expr, election: LeaderElection | None) -> Expr:
    states = w.f("state", "controller", "partition_states")
    b = Block()
    b.uninit = valid.filter(lambda tp: states.get(tp).eq(PartitionState.NewPartition))
    b.w1 = if_(b.uninit.is_empty(), w, initialize_leader_and_isr(p, w, b.uninit))
    b.to_elect = valid.minus(b.uninit)
    # election=None with partitions to elect: Kafka's IllegalArgumentException, the batch is discarded unsent
    elected = (
        b.w1.with_(batch=batch.EMPTY_BATCH)
        if election is None
        else elect_leader_for_partitions(p, b.w1, b.to_elect, election)
    )
    return b.in_(if_(b.to_elect.is_empty() | b.w1.f("moved"), b.w1, elected))


def _apply_target(
    p: Profile, w: Expr, valid: Expr, target: PartitionState, election: LeaderElection | None
) -> Expr:
    if target is PartitionState.OnlinePartition:
        return rule("OnlinePartition", "§5.2", _to_online(p, w, valid, election))
    section = "§5.1" if target is PartitionState.NewPartition else "§5.3"
    return rule(target.name, section, _put_states(w, valid, target))


@procedure("partition_state_change", "§5")
def partition_state_change(
    p: Profile, w: object, partitions: object, target: PartitionState, election: LeaderElection | None
) -> Expr:
    """One whole ``PartitionStateMachine.handleStateChanges(partitions, target, strategy)`` call (§2.3, §5)."""
    valid_prev = lit(frozenset(p.partition_valid_previous[target]))

    def call(wv: Expr, ps: Expr) -> Expr:
        current = wv.f("state", "controller", "partition_states")
        b = Block()
        b.states = current.merge(
            build_map(ps.filter(lambda tp: ~current.has(tp)), lambda _tp: PartitionState.NonExistentPartition)
        )
        b.valid = ps.filter(lambda tp: valid_prev.contains(b.states.get(tp)))
        b.w1 = _failures(
            _set_partition_states(wv, b.states),
            ps.minus(b.valid),
            target.name,
            FailureReason.InvalidTransition,
        )
        return b.in_(
            batch.send(p, if_(b.valid.is_empty(), b.w1, _apply_target(p, b.w1, b.valid, target, election)))
        )

    return rule(
        f"PartitionStateMachine.handleStateChanges({target.name})",
        "§2.3",
        batch.unless_moved(
            w, lambda wv: batch.bind(partitions, lambda ps: if_(ps.is_empty(), wv, call(wv, ps)))
        ),
    )


OFFLINE_ELECTION = LeaderElection(
    ElectionStrategy.OfflinePartitionLeaderElectionStrategy, allow_unclean=False
)


@procedure("trigger_online_partition_state_change", "§5.4")
def trigger_online_partition_state_change(p: Profile, w: object, topic: Expr | None = None) -> Expr:
    """§5.4 step 2 ``triggerOnlinePartitionStateChange()`` / ``(topic)``: every New/Offline partition (of ``topic``)
    whose topic is not queued for deletion → OnlinePartition with the Offline strategy, ``allowUnclean = false``
    (1.1: the parameterless strategy, which also consults the topic config)."""
    wanted = frozenset({PartitionState.OfflinePartition, PartitionState.NewPartition})

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        return partition_state_change(
            p,
            wv,
            context.partitions_in_states(s, wanted, topic).filter(
                lambda tp: ~context.queued_for_deletion(s, tp.f("topic"))
            ),
            PartitionState.OnlinePartition,
            OFFLINE_ELECTION,
        )

    return rule("triggerOnlinePartitionStateChange", "§5.4", batch.unless_moved(w, body))


@procedure("initialize_partition_state", "§5.4")
def initialize_partition_state(p: Profile, w: object) -> Expr:
    """§5.4 step 1 ``initializePartitionState``: every assigned partition → NewPartition without leadership info,
    OnlinePartition when its cached leader is online, else OfflinePartition."""

    def body(wv: Expr) -> Expr:
        s = wv.f("state")
        b = Block()
        b.live = context.live_brokers(s)
        states = build_map(
            context.all_partitions(s),
            lambda tp: cond(
                (~context.has_leadership(s, tp), PartitionState.NewPartition),
                (
                    context.is_online_with(
                        b.live, context.offline_dir_replicas(s), context.leader_of(s, tp), tp
                    ),
                    PartitionState.OnlinePartition,
                ),
                otherwise=PartitionState.OfflinePartition,
            ),
        )
        return b.in_(_set_partition_states(wv, s.f("controller", "partition_states").merge(states)))

    return rule("initializePartitionState", "§5.4", batch.unless_moved(w, body))
