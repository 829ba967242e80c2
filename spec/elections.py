"""The four partition-leader election strategies (§6) as pure rules over an ``ElectionInput``.

``election_input(p, s, tp, leader_and_isr, election)`` gathers what a strategy looks at for one partition from
the controller's context and the ZK-fresh ``LeaderAndIsr``; ``elect(p, strategy, inp)`` is the strategy itself,
evaluating to an ``ElectionResult`` (leader −1 = no electable leader). Strategies never touch the state, so the
Z3 backend can prove lemmas over them for all inputs.

| strategy | candidates | leader | ISR | recipients |
|---|---|---|---|---|
| Offline | AR | first AR member online ∧ ∈ ISR; unclean: first online AR member | clean: ISR ∩ online (ISR order); unclean: [leader] | online AR members |
| Reassign | TRS (2.8) / RAR (1.1) | first candidate online ∧ ∈ ISR | unchanged | all candidates |
| Preferred | head(AR) | head(AR) if online ∧ ∈ ISR | unchanged | all of AR |
| ControlledShutdown | AR | first AR member online-or-SD ∧ ∈ ISR ∧ not shutting down | ISR − shutting down | AR online-or-SD (1.1: online only, KAFKA-7482) |

The unclean rule (§6): the Offline strategy may elect an unclean leader only for a partition with no online
ISR member (an online ISR member outside AR still counts), and only if the admin request allowed it
(``allowUnclean``) or the topic's effective ``unclean.leader.election.enable`` is true (topic override or the
controller broker's default, from ``state.config``). The election's new leader epoch (+1, even when the same
leader is re-chosen) and the ZK write are the partition machine's job (§5.2b).
"""

from __future__ import annotations

from kcspec.spec import context
from kcspec.spec.lang import Block, Const, Expr, Var, cond, if_, let, lift, procedure, rec, rule, seq_of
from kcspec.spec.profiles import Profile
from kcspec.spec.vocabulary import (
    NO_LEADER,
    ElectionInput,
    ElectionResult,
    ElectionStrategy,
    LeaderElection,
)


@procedure("election_input", "§6")
def election_input(p: Profile, s: Expr, tp: object, leader_and_isr: object, election: LeaderElection) -> Expr:
    """The ``ElectionInput`` of ``tp`` for ``election`` (§6): AR, the Reassign candidates (2.8: TRS of FA(tp); 1.1:
    ``partitionsBeingReassigned(tp).newReplicas`` = RAR, empty if the partition is not being reassigned), the
    ZK-fresh ``LeaderAndIsr``, the online / online-or-shutting-down broker sets for ``tp``, the shutting-down set,
    the admin override and the topic's effective unclean config."""
    t = lift(tp)
    offline = context.offline_dir_replicas(s)
    cfg = s.f("config")
    if p.kip455_reassignment:
        targets = context.target_replicas_of(context.assignment(s, t))
    else:
        targets = s.f("controller", "legacy_reassignments").get_or(t, ())
    return rec(
        ElectionInput,
        assignment=context.replicas(s, t),
        target_replicas=targets,
        leader_and_isr=leader_and_isr,
        online=context.live_brokers(s).filter(lambda b: ~offline.contains(context.replica(t, b))),
        online_or_shutting_down=context.live_or_shutting_down(s).filter(
            lambda b: ~offline.contains(context.replica(t, b))
        ),
        shutting_down=s.f("controller", "shutting_down"),
        allow_unclean=election.allow_unclean,
        unclean_enabled=cfg.f("unclean_leader_election_enable")
        | cfg.f("unclean_topics").contains(t.f("topic")),
    )


def _result(leader: Expr, isr: object, recipients: object, unclean: object = False) -> Expr:
    return rec(ElectionResult, leader=leader, isr=isr, recipients=recipients, unclean=unclean)


def unclean_allowed(inp: Expr) -> Expr:
    """§6 unclean rule: no online ISR member, and the admin allowed it or the topic config enables it."""
    isr = inp.f("leader_and_isr", "isr")
    online = inp.f("online")
    return rule(
        "uncleanLeaderElectionAllowed",
        "§6",
        ~isr.any(lambda r: online.contains(r)) & (inp.f("allow_unclean") | inp.f("unclean_enabled")),
    )


def offline_election(inp: Expr) -> Expr:
    """``OfflinePartitionLeaderElectionStrategy`` (§6, KAFKA-1503: candidates in assignment order)."""
    ar = inp.f("assignment")
    isr = inp.f("leader_and_isr", "isr")
    online = inp.f("online")
    b = Block()
    b.clean = ar.first(lambda r: online.contains(r) & isr.contains(r), NO_LEADER)
    unclean = if_(unclean_allowed(inp), ar.first(lambda r: online.contains(r), NO_LEADER), NO_LEADER)
    b.leader = if_(b.clean.ne(NO_LEADER), b.clean, unclean)
    new_isr = cond(
        (b.leader.eq(NO_LEADER), isr),
        (isr.contains(b.leader), isr.filter(lambda r: online.contains(r))),
        otherwise=seq_of(b.leader),
    )
    body = b.in_(
        _result(
            b.leader,
            new_isr,
            ar.filter(lambda r: online.contains(r)),
            unclean=b.clean.eq(NO_LEADER) & b.leader.ne(NO_LEADER),
        )
    )
    return rule("OfflinePartitionLeaderElectionStrategy", "§6", body)


def reassign_election(inp: Expr) -> Expr:
    """``ReassignPartitionLeaderElectionStrategy`` (§6): first target replica online and in the ISR."""
    targets = inp.f("target_replicas")
    isr = inp.f("leader_and_isr", "isr")
    online = inp.f("online")
    body = _result(targets.first(lambda r: online.contains(r) & isr.contains(r), NO_LEADER), isr, targets)
    return rule("ReassignPartitionLeaderElectionStrategy", "§6", body)


def preferred_election(inp: Expr) -> Expr:
    """``PreferredReplicaPartitionLeaderElectionStrategy`` (§6): head(AR) if online and in the ISR."""
    ar = inp.f("assignment")
    isr = inp.f("leader_and_isr", "isr")
    online = inp.f("online")
    body = let(
        ar.head(NO_LEADER),
        lambda head: _result(
            if_(head.ne(NO_LEADER) & online.contains(head) & isr.contains(head), head, NO_LEADER), isr, ar
        ),
    )
    return rule("PreferredReplicaPartitionLeaderElectionStrategy", "§6", body)


def controlled_shutdown_election(p: Profile, inp: Expr) -> Expr:
    """``ControlledShutdownPartitionLeaderElectionStrategy`` (§6): first AR member that is online (shutting-down
    brokers included), in the ISR and not shutting down; ISR − shutting down. Recipients include the shutting-down
    broker in 2.8 (KAFKA-7482); in 1.1 they are the online (not shutting down) replicas only."""
    ar = inp.f("assignment")
    isr = inp.f("leader_and_isr", "isr")
    sd = inp.f("shutting_down")
    reachable = inp.f("online_or_shutting_down")
    recipients_set = reachable if p.controlled_shutdown_recipients_include_shutting_down else inp.f("online")
    body = _result(
        ar.first(lambda r: reachable.contains(r) & isr.contains(r) & ~sd.contains(r), NO_LEADER),
        isr.filter(lambda r: ~sd.contains(r)),
        ar.filter(lambda r: recipients_set.contains(r)),
    )
    return rule("ControlledShutdownPartitionLeaderElectionStrategy", "§6", body)


@procedure("elect", "§6")
def elect(p: Profile, strategy: ElectionStrategy, inp: object) -> Expr:
    """The ``ElectionResult`` of ``strategy`` on ``inp`` (§6); leader −1 = no electable leader."""

    def pick(i: Expr) -> Expr:
        if strategy is ElectionStrategy.OfflinePartitionLeaderElectionStrategy:
            return offline_election(i)
        if strategy is ElectionStrategy.ReassignPartitionLeaderElectionStrategy:
            return reassign_election(i)
        if strategy is ElectionStrategy.PreferredReplicaPartitionLeaderElectionStrategy:
            return preferred_election(i)
        return controlled_shutdown_election(p, i)

    e = lift(inp)
    if isinstance(e, Var | Const):
        return pick(e)
    return let(e, pick)
