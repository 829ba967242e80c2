"""The safety invariants of §11 that are properties of one state or of one step, as ``Invariant`` objects.

State invariants are expressions over ``Var("s")`` (a ``ClusterState``); step invariants over ``Var("s")`` (before),
``Var("s2")`` (after) and ``Var("requests")`` (the set of requests sent during the step). Each is written for what
Kafka actually guarantees, with the exceptions column of §11 built in:

* Properties of leaders and ISRs (I1, I3, I4, I5, I13) are stated over **controller-made writes** of a step: a
  partition-state znode that is new or changed in the step and carries the controller epoch of the active,
  non-zombie controller after the step (``controller.epoch == zk.controller_epoch``). ISR changes made by leaders
  keep the leader epoch (§3.2) and are excluded where §11 excludes them (AlterIsr, 1.1 ISR notifications);
  ``ZombieControllerWrite`` (1.1) writes a controller epoch below ``zk.controller_epoch`` and is therefore not a
  controller-made write. I1 and I3 are also state invariants in 2.8, where no zombie can write ZooKeeper (§9).
* ZooKeeper monotonicity (I6, I7, I9) holds for every write, whoever made it.
* I8 (single writer) holds in 2.8 only (leaders' own ISR writes, IBP < 2.7-IV2, aside); 1.1 has no fencing (§3.3).
* I11 is a step property: a replica that *becomes* NewReplica is never the cached leader. (As a state property it
  is false in Kafka: an Offline election during a reassignment may pick an adding replica that is still in
  NewReplica, because candidates are AR members online and in the ISR, §6.)
* I20 is checked as "before and after states are connected in the valid-transition graph, not through
  NonExistent" whenever the same controller context persists, since one step may make several transitions (e.g.
  the four-step deletion chain).

Strengthenings (W6–W14) are auxiliary state invariants added because the §11 invariants are not inductive
without them on the bounded state space of ``model/z3/induction.py``: each rules out counterexamples to induction
that no run reaches (a context whose live brokers are not the registered ones, a cached leadership ahead of its
znode, a replica mid-deletion of a topic not queued for deletion, …). Their docs start with "Strengthening."; they
are checked like every other invariant, by every backend.

Not an invariant, so not listed (formerly W1): "every replica with a state other than NonExistentReplica is in AR,
in a deletion state or of a topic queued for deletion". A ZooKeeper error while a reassignment removes replicas
aborts their transitions (§2.3, §4.3) after the new assignment is written, so a removed replica keeps its state
outside AR — reachable in 2.8 by cancelling an API reassignment whose partition znode fails with CONNECTIONLOSS
(``tests/quality/explore/test_regressions.py``), and in 1.1 by a zombie controller's legacy reassignment (KAFKA-6082,
a counterexample to induction of ``model/z3/induction.py``).
Kafka rebuilds the replica states from AR at the next failover.

``invariants(profile)`` lists the invariants of a profile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kcspec.spec import context, spans
from kcspec.spec.actions.isr import alter_isr_enabled
from kcspec.spec.field_paths import check_fields
from kcspec.spec.lang import Expr, Invariant, Var, and_, if_, lit, or_, rec, seq_of, set_of
from kcspec.spec.profiles import Profile
from kcspec.spec.requests import LeaderAndIsrRequest, StopReplicaRequest
from kcspec.spec.state import ClusterState, ControllerContext
from kcspec.spec.vocabulary import NO_LEADER, PartitionState, ReplicaState

s = Var("s")
s2 = Var("s2")
requests = Var("requests")

DELETION_STATES = frozenset(
    {
        ReplicaState.ReplicaDeletionStarted,
        ReplicaState.ReplicaDeletionSuccessful,
        ReplicaState.ReplicaDeletionIneligible,
    }
)


# ------------------------------------------------------------------------------------------- helpers


def _zk(st: Expr) -> Expr:
    return st.f("zk", "partition_states")


def _cache(st: Expr) -> Expr:
    return st.f("controller", "leadership")


def _lai(m: Expr, tp: Expr) -> Expr:
    return m.get(tp).f("leader_and_isr")


def _active(st: Expr) -> Expr:
    return st.f("controller", "controller_id").ne(-1)


def _same_context(a: Expr, b: Expr) -> Expr:
    """The same controller context persists across the step (no resignation, failover or context reset)."""
    return and_(
        _active(a),
        _active(b),
        a.f("controller", "controller_id").eq(b.f("controller", "controller_id")),
        a.f("controller", "epoch").eq(b.f("controller", "epoch")),
    )


def _changed(tp: Expr) -> Expr:
    """The znode of ``tp`` was created or rewritten in the step."""
    return ~_zk(s).has(tp) | _zk(s).get(tp).ne(_zk(s2).get(tp))


def _controller_made(tp: Expr) -> Expr:
    """The znode of ``tp`` was written in the step by the active, non-zombie controller (see module docstring)."""
    return and_(
        _active(s2),
        s2.f("controller", "epoch").eq(s2.f("zk", "controller_epoch")),
        _changed(tp),
        _zk(s2).get(tp).f("controller_epoch").eq(s2.f("controller", "epoch")),
    )


def _leader_changed(tp: Expr) -> Expr:
    return ~_zk(s).has(tp) | _lai(_zk(s), tp).f("leader").ne(_lai(_zk(s2), tp).f("leader"))


def _epoch_bumped(tp: Expr) -> Expr:
    """A controller decision (creation or a leader-epoch bump), as opposed to an ISR-only change by a leader."""
    return ~_zk(s).has(tp) | _lai(_zk(s), tp).f("leader_epoch").ne(_lai(_zk(s2), tp).f("leader_epoch"))


def _written(pred: Callable[[Expr], Expr]) -> Expr:
    """``pred`` holds for every znode written by the controller in the step."""
    return _zk(s2).keys().all(lambda tp: _controller_made(tp).implies(pred(tp)))


def _both(pred: Callable[[Expr], Expr]) -> Expr:
    """``pred`` holds for every partition whose znode exists before and after the step."""
    return _zk(s2).keys().all(lambda tp: _zk(s).has(tp).implies(pred(tp)))


def _leader_in_isr(lai: Expr) -> Expr:
    return lai.f("leader").eq(NO_LEADER) | lai.f("isr").contains(lai.f("leader"))


def _reachable(
    table: Mapping[Any, tuple[Any, ...]], states: list[Any], initial: object
) -> frozenset[tuple[object, object]]:
    """Pairs (a, b) joined by a path of valid transitions on which ``initial`` (NonExistent…) is at most the first
    or the last state: within one step nothing is deleted and then re-created."""
    edges = [(prev, t) for t, prevs in table.items() for prev in prevs]
    out: set[tuple[object, object]] = set()
    for a in states:
        seen, frontier = {a}, [a]
        while frontier:
            x = frontier.pop()
            if x == initial and x != a:
                continue
            for u, v in edges:
                if u == x and v not in seen:
                    seen.add(v)
                    frontier.append(v)
        out |= {(a, b) for b in seen}
    return frozenset(out)


@spans.builder
def _inv(name: str, section: str, kind: str, doc: str, expr: Expr) -> Invariant:
    return Invariant(name=name, section=section, doc=doc, kind=kind, expr=expr)


# ------------------------------------------------------------------------------------------- state invariants


def i1_state() -> Invariant:
    return _inv(
        "I1 leader in ISR",
        "§11 I1",
        "state",
        "2.8: every partition-state znode and every cached LI with a leader has the leader in its ISR. Holds because"
        " every controller decision keeps it (§11 I1 'enforced by') and AlterIsr proposals come from the leader"
        " with itself in the ISR; zombies cannot write (§9). Not a 1.1 state invariant: a zombie write may store"
        " any record (see the step form).",
        and_(
            _zk(s).keys().all(lambda tp: _leader_in_isr(_lai(_zk(s), tp))),
            _cache(s).keys().all(lambda tp: _leader_in_isr(_lai(_cache(s), tp))),
        ),
    )


def i3_state() -> Invariant:
    return _inv(
        "I3 ISR never empty",
        "§11 I3",
        "state",
        "2.8: every partition-state znode and every cached LI has a non-empty ISR (the retained singleton may be a"
        " dead broker). 2.8 does not validate AlterIsr content, but an ISR proposed by a leader contains it.",
        and_(
            _zk(s).keys().all(lambda tp: _lai(_zk(s), tp).f("isr").non_empty()),
            _cache(s).keys().all(lambda tp: _lai(_cache(s), tp).f("isr").non_empty()),
        ),
    )


def i12_state() -> Invariant:
    return _inv(
        "I12 online partitions have leadership info",
        "§11 I12",
        "state",
        "A partition in OnlinePartition has leadership info in the cache and a state znode in ZooKeeper (its leader"
        " may be dead or −1 transiently).",
        s.f("controller", "partition_states")
        .keys()
        .all(
            lambda tp: (
                s.f("controller", "partition_states")
                .get(tp)
                .eq(PartitionState.OnlinePartition)
                .implies(_cache(s).has(tp) & _zk(s).has(tp))
            )
        ),
    )


def w_leadership_assigned() -> Invariant:
    return _inv(
        "W2 cached partitions are assigned",
        "§3.1",
        "state",
        "Every partition in the leadership cache has an assignment in the context (removeTopic drops both).",
        _cache(s).keys().subset_of(context.all_partitions(s)),
    )


def w_shutting_down_registered() -> Invariant:
    return _inv(
        "W3 shutting-down brokers are registered",
        "§3.1, §7.10",
        "state",
        "shuttingDownBrokerIds ⊆ liveOrShuttingDownBrokerIds: a broker is added only if registered and removed"
        " when it fails.",
        s.f("controller", "shutting_down").subset_of(context.live_or_shutting_down(s)),
    )


def w_inactive_context_empty() -> Invariant:
    return _inv(
        "W4 no context without a controller",
        "§7.12",
        "state",
        "When no controller is active the context is the reset context (resignation resets everything).",
        _active(s) | s.f("controller").eq(lit(ControllerContext())),
    )


def w_epoch_not_ahead() -> Invariant:
    return _inv(
        "W5 controller epoch not ahead of ZooKeeper",
        "§9",
        "state",
        "An active controller's epoch never exceeds /controller_epoch (it equals it unless the controller is a"
        " zombie).",
        _active(s).implies(s.f("controller", "epoch").le(s.f("zk", "controller_epoch"))),
    )


# ------------------------------------------------------------------------------------------- strengthenings
#
# Auxiliary state invariants that make the §11 invariants inductive (``model/z3/induction.py``): each rules out
# a counterexample to induction that no run can reach. They are ordinary invariants, checked by every backend.


def s_live_brokers_registered(p: Profile) -> Invariant:
    live = s.f("controller", "live_brokers")
    registered = s.f("zk", "brokers")
    same = live.keys().subset_of(registered.keys()) & registered.keys().subset_of(live.keys())
    doc = (
        "Strengthening. An active controller's live-or-shutting-down brokers are exactly the registered brokers:"
        " every broker change is handled in the step that makes it (BrokerChange, §7.2) and failover reads them"
        " (§7.1)."
    )
    if p.bounce_detection:
        doc += " 2.8 also has the registered broker epochs (bounces are detected, KAFKA-7235)."
        same = same & live.keys().all(lambda b: live.get(b).eq(registered.get(b)))
    else:
        doc += " [1.1] the epochs may differ: a bounce is invisible to the controller (§7.2)."
    return _inv(
        "W6 live brokers are the registered brokers", "§3.1, §7.2", "state", doc, _active(s).implies(same)
    )


def s_controller_registered() -> Invariant:
    return _inv(
        "W7 controllers are registered brokers",
        "§7.1, §7.4",
        "state",
        "Strengthening. The active controller and the broker named by /controller are registered brokers: a"
        " failing broker that is controller dies with its context, and /controller is deleted with it.",
        and_(
            _active(s).implies(s.f("zk", "brokers").has(s.f("controller", "controller_id"))),
            (s.f("zk", "controller").eq(-1) | s.f("zk", "brokers").has(s.f("zk", "controller"))),
        ),
    )


def s_epoch_version_lockstep() -> Invariant:
    return _inv(
        "W8 controller epoch and its znode version move together",
        "§9",
        "state",
        "Strengthening. /controller_epoch and its version are incremented together (every election), and a"
        " controller holds the pair it read: the context's epoch is ZooKeeper's exactly when its epoch version is"
        " (so 2.8's CheckOp on the version fences precisely the zombies).",
        _active(s).implies(
            (s.f("zk", "controller_epoch_zk_version") - s.f("zk", "controller_epoch")).eq(
                s.f("controller", "epoch_zk_version") - s.f("controller", "epoch")
            )
        ),
    )


def s_cache_follows_znode() -> Invariant:
    def agrees(tp: Expr) -> Expr:
        cached, stored = _lai(_cache(s), tp), _lai(_zk(s), tp)
        return and_(
            cached.f("zk_version").le(stored.f("zk_version")),
            cached.f("zk_version").eq(stored.f("zk_version")).implies(cached.eq(stored)),
        )

    return _inv(
        "W9 the leadership cache is a version of the znode",
        "§3.2, §3.3",
        "state",
        "Strengthening. A cached LeaderAndIsr is never ahead of its partition-state znode, and one with the"
        " znode's version is the znode's content: every write bumps the version (§3.3), the controller caches what"
        " it wrote or read, and writes it did not see (a leader's ISR change, a 1.1 zombie) only move the znode"
        " ahead. (The cached controller epoch may differ: an ISR removal that needs no write caches the znode's"
        " LeaderAndIsr with the controller's own epoch, §4.3.)",
        _cache(s).keys().all(lambda tp: _zk(s).has(tp).implies(agrees(tp))),
    )


def s_deletion_started_topics_queued(p: Profile) -> Invariant:
    states = s.f("controller", "replica_states")
    started = lit(frozenset({ReplicaState.ReplicaDeletionStarted, ReplicaState.ReplicaDeletionSuccessful}))

    started_topics = s.f("controller", "topics_with_deletion_started")

    def holds(pr: Expr) -> Expr:
        topic = pr.f("tp").f("topic")
        queued = context.queued_for_deletion(s, topic)
        return queued & started_topics.contains(topic) if p.deletion_started_bookkeeping else queued

    def partitions_gone(topic: Expr) -> Expr:
        return context.queued_for_deletion(s, topic) & context.partitions_of_topic(s, topic).all(
            lambda tp: (
                s.f("controller", "partition_states")
                .get_or(tp, PartitionState.NonExistentPartition)
                .eq(PartitionState.NonExistentPartition)
            )
        )

    doc = (
        "Strengthening. A replica in ReplicaDeletionStarted or ReplicaDeletionSuccessful belongs to a topic queued"
        " for deletion: only topic deletion leaves replicas in these states between events (a reassignment's"
        " removed replicas pass through them to NonExistentReplica within one step, §7.7.2), and completing a"
        " deletion removes the topic's replica states with it (§8)."
    )
    expr = states.keys().all(lambda pr: started.contains(states.get(pr)).implies(holds(pr)))
    if p.deletion_started_bookkeeping:
        doc += (
            " 2.8: its topic is in topicsWithDeletionStarted, and every partition of such a topic is already"
            " NonExistentPartition (onTopicDeletion moves the partitions Offline → NonExistent when it begins the"
            " deletion, before any replica's; [1.1] only at completeDeleteTopic)."
        )
        expr = expr & started_topics.all(partitions_gone)
    return _inv(
        "W10 replicas being deleted belong to topics queued for deletion", "§8, §4.4", "state", doc, expr
    )


def s_controller_knows_its_epoch() -> Invariant:
    return _inv(
        "W11 a controller named by /controller holds its epoch",
        "§7.1, §9",
        "state",
        "Strengthening. When /controller names the active controller, its epoch is /controller_epoch: only another"
        " broker's election moves the epoch behind its back (§9), and a broker elected again fails over afresh.",
        (_active(s) & s.f("zk", "controller").eq(s.f("controller", "controller_id"))).implies(
            s.f("controller", "epoch").eq(s.f("zk", "controller_epoch"))
        ),
    )


def s_znode_epochs_not_ahead() -> Invariant:
    return _inv(
        "W12 znodes carry no future controller epoch",
        "§9, §3.2",
        "state",
        "Strengthening. Every partition-state znode carries a controller epoch ≤ /controller_epoch: it was written"
        " by a controller elected no later than the current one (a 1.1 zombie writes an older epoch, §9).",
        _zk(s).keys().all(lambda tp: _zk(s).get(tp).f("controller_epoch").le(s.f("zk", "controller_epoch"))),
    )


def s_assigned_partitions_have_states() -> Invariant:
    return _inv(
        "W13 assigned partitions have a partition state",
        "§5.4, §7.6",
        "state",
        "Strengthening. Every partition with an assignment in an active controller's context has a partition"
        " state: failover initializes one for every partition (§5.4) and creation moves new partitions to"
        " NewPartition in the step that adds their assignment (§7.6).",
        context.all_partitions(s).all(lambda tp: s.f("controller", "partition_states").has(tp)),
    )


def s_znodes_of_assigned_partitions_cached() -> Invariant:
    return _inv(
        "W14 assigned partitions with a znode have cached leadership",
        "§7.1, §3.2, §5.2, §8",
        "state",
        "Strengthening. An active controller caches the LeaderAndIsr of every assigned partition whose"
        " partition-state znode exists: failover reads every znode into the cache (a read error aborts the"
        " failover and the controller resigns, §7.1), the controller caches every znode it creates or writes"
        " (§3.2, §5.2), only a topic's deletion removes cache entries, together with the topic's znodes and"
        " assignment (§8), and a znode cannot be created behind the controller's back (ZooKeeper faults and"
        " zombie writes need an existing znode). Without it, a pre-state with a znode but no cache lets a"
        " legacy reassignment send a LeaderAndIsr without UpdateMetadata (a counterexample to induction of I18"
        " in 1.1 that no run reaches).",
        context.all_partitions(s).all(lambda tp: _zk(s).has(tp).implies(_cache(s).has(tp))),
    )


# ------------------------------------------------------------------------------------------- step invariants


def i1_step() -> Invariant:
    return _inv(
        "I1 elected leaders are in the ISR",
        "§11 I1",
        "step",
        "Every controller-made write that sets a new leader puts it in the written ISR (or writes leader −1). A"
        " write that keeps the leader (e.g. OfflineReplica of a follower, a reassignment epoch bump) keeps whatever"
        " was stored.",
        _written(lambda tp: _leader_changed(tp).implies(_leader_in_isr(_lai(_zk(s2), tp)))),
    )


def i3_step() -> Invariant:
    return _inv(
        "I3 the controller never writes an empty ISR",
        "§11 I3",
        "step",
        "Every controller-made write that creates a znode or changes its ISR writes a non-empty ISR (OfflineReplica"
        " keeps a singleton; elections keep the leader).",
        _written(
            lambda tp: (~_zk(s).has(tp) | _lai(_zk(s), tp).f("isr").ne(_lai(_zk(s2), tp).f("isr"))).implies(
                _lai(_zk(s2), tp).f("isr").non_empty()
            )
        ),
    )


def _zk_replicas(st: Expr, tp: Expr) -> Expr:
    """AR(tp) as stored in ZooKeeper (empty when the partition has no assignment there)."""
    assignments = st.f("zk", "assignments")
    return if_(assignments.has(tp), assignments.get(tp).f("replicas").to_set(), set_of())


def i4_step() -> Invariant:
    def gained_assigned(tp: Expr) -> Expr:
        new_isr = _lai(_zk(s2), tp).f("isr")
        old_isr = _lai(_zk(s), tp).f("isr")
        allowed = context.replicas(s, tp).to_set().union(context.replicas(s2, tp).to_set())
        # AR in ZooKeeper too: a controller that has just failed over has no cached AR before the step, and a
        # reassignment it completes in that step may leave an adding replica in the ISR of a partition it creates
        allowed = allowed.union(_zk_replicas(s, tp)).union(_zk_replicas(s2, tp))
        gained = new_isr.to_set()
        return (_zk(s).has(tp) & gained.minus(old_isr.to_set()).subset_of(allowed)) | (
            ~_zk(s).has(tp) & gained.subset_of(allowed)
        )

    return _inv(
        "I4 the controller adds only assigned replicas to an ISR",
        "§11 I4",
        "step",
        "ISR ⊆ AR is not an invariant in Kafka (Offline elections keep live non-assigned ISR members, AlterIsr is"
        " not validated, removing replicas stay in the ISR until OfflineReplica). What holds: a controller decision"
        " (creation or leader-epoch bump) only ever *adds* ISR members that are in AR before or after the step"
        " (an unclean leader or the live replicas of a new partition).",
        _written(lambda tp: _epoch_bumped(tp).implies(gained_assigned(tp))),
    )


def i5_step() -> Invariant:
    return _inv(
        "I5 shutting-down brokers are never elected",
        "§11 I5",
        "step",
        "A controller-made write that changes the leader never makes a shutting-down broker leader (every strategy"
        " excludes them). A shutting-down broker may *remain* leader when no other ISR member exists.",
        _written(
            lambda tp: _leader_changed(tp).implies(
                ~s2.f("controller", "shutting_down").contains(_lai(_zk(s2), tp).f("leader"))
            )
        ),
    )


def i6_step() -> Invariant:
    def monotone(tp: Expr) -> Expr:
        before, after = _lai(_zk(s), tp), _lai(_zk(s2), tp)
        return and_(
            after.f("leader_epoch").ge(before.f("leader_epoch")),
            after.f("leader")
            .ne(before.f("leader"))
            .implies(after.f("leader_epoch").gt(before.f("leader_epoch"))),
        )

    return _inv(
        "I6 leader epochs increase",
        "§11 I6",
        "step",
        "A partition's leader epoch in ZooKeeper never decreases and strictly increases whenever the leader"
        " changes. ISR-only changes by the leader keep it; a deleted and re-created topic restarts at 0 (a"
        " znode that did not exist before the step is not compared).",
        _both(monotone),
    )


def i7_step() -> Invariant:
    def monotone(tp: Expr) -> Expr:
        v1 = _lai(_zk(s), tp).f("zk_version")
        v2 = _lai(_zk(s2), tp).f("zk_version")
        return v2.ge(v1) & _zk(s).get(tp).ne(_zk(s2).get(tp)).implies(v2.gt(v1))

    return _inv(
        "I7 znode versions increase on every write",
        "§11 I7",
        "step",
        "Every rewrite of a partition-state znode increases its version; versions never decrease.",
        _both(monotone),
    )


def i8_step(profile: Profile) -> Invariant:
    def leader_write(tp: Expr) -> Expr:
        # a leader's ISR write (IBP < 2.7-IV2, §7.11): leader epoch and the znode's controller epoch kept
        before, after = _zk(s).get(tp), _zk(s2).get(tp)
        return and_(
            ~alter_isr_enabled(profile, s2),
            _zk(s).has(tp),
            _lai(_zk(s), tp).f("leader_epoch").eq(_lai(_zk(s2), tp).f("leader_epoch")),
            before.f("controller_epoch").eq(after.f("controller_epoch")),
        )

    return _inv(
        "I8 single writer",
        "§11 I8",
        "step",
        "2.8: every partition-state znode created or rewritten in a step carries the controller epoch stored in"
        " /controller_epoch after the step — only the current controller writes (CheckOp fencing, KAFKA-6082)."
        " Leaders of a cluster without AlterIsr (IBP < 2.7-IV2) write their ISR changes themselves, keeping the"
        " leader epoch and the znode's controller epoch (§7.11): those writes are not the controller's."
        " [1.1] does not hold: a zombie can write.",
        _zk(s2)
        .keys()
        .all(
            lambda tp: (_changed(tp) & ~leader_write(tp)).implies(
                _zk(s2).get(tp).f("controller_epoch").eq(s2.f("zk", "controller_epoch"))
            )
        ),
    )


def i9_step() -> Invariant:
    def request_ok(r: Expr) -> Expr:
        # The sender is the controller active before the step, the one active after it, or one elected *and*
        # resigned within the step (§7.1 step 3: a failover that throws triggers a controller move, so the
        # post-state has no active controller although the new one sent requests with the new epoch).
        return and_(
            or_(
                r.f("controller_id").eq(s.f("controller", "controller_id"))
                & r.f("controller_epoch").eq(s.f("controller", "epoch")),
                r.f("controller_id").eq(s2.f("controller", "controller_id"))
                & r.f("controller_epoch").eq(s2.f("controller", "epoch")),
                (s2.f("controller", "controller_id").lt(0))
                & s2.f("zk", "brokers").has(r.f("controller_id"))
                & r.f("controller_epoch").eq(s2.f("zk", "controller_epoch")),
            ),
            r.f("controller_epoch").le(s2.f("zk", "controller_epoch")),
        )

    return _inv(
        "I9 controller epochs increase",
        "§11 I9",
        "step",
        "/controller_epoch and its version never decrease; a new active controller has a larger epoch than the"
        " one it replaces; every request of the step carries the id and epoch of the controller that sent it.",
        and_(
            s2.f("zk", "controller_epoch").ge(s.f("zk", "controller_epoch")),
            s2.f("zk", "controller_epoch_zk_version").ge(s.f("zk", "controller_epoch_zk_version")),
            and_(
                _active(s),
                _active(s2),
                s.f("controller", "epoch").ne(s2.f("controller", "epoch")),
            ).implies(s2.f("controller", "epoch").gt(s.f("controller", "epoch"))),
            requests.all(request_ok),
        ),
    )


def i10_step() -> Invariant:
    before = s.f("controller", "replica_states")
    after = s2.f("controller", "replica_states")
    return _inv(
        "I10 deleted replicas leave the assignment",
        "§11 I10",
        "step",
        "A replica that goes from ReplicaDeletionSuccessful to NonExistentReplica (its state entry removed) within"
        " one controller context is no longer in AR of its partition (ZK's assignment is updated separately).",
        _same_context(s, s2).implies(
            before.keys().all(
                lambda pr: (
                    before.get(pr).eq(ReplicaState.ReplicaDeletionSuccessful) & ~after.has(pr)
                ).implies(~context.replicas(s2, pr.f("tp")).contains(pr.f("replica")))
            )
        ),
    )


def i11_step() -> Invariant:
    before = s.f("controller", "replica_states")
    after = s2.f("controller", "replica_states")
    return _inv(
        "I11 the leader is never moved to NewReplica",
        "§11 I11",
        "step",
        "A replica that becomes NewReplica in a step is not the cached leader of its partition (the transition"
        " refuses the current leader). Not a state invariant: a later Offline election may pick a NewReplica"
        " adding replica during a reassignment.",
        after.keys().all(
            lambda pr: (
                after.get(pr).eq(ReplicaState.NewReplica)
                & ~(before.has(pr) & before.get(pr).eq(ReplicaState.NewReplica))
            ).implies(
                ~(_cache(s2).has(pr.f("tp")) & _lai(_cache(s2), pr.f("tp")).f("leader").eq(pr.f("replica")))
            )
        ),
    )


def i13_step(p: Profile) -> Invariant:
    def exempt(tp: Expr) -> Expr:
        if p.kip455_reassignment:
            reassigning = s.f("controller", "partitions_being_reassigned").contains(tp)
        else:
            reassigning = s.f("controller", "legacy_reassignments").has(tp)
        if p.controlled_shutdown_epoch_and_deletion_checks:
            return reassigning
        return reassigning | s2.f("controller", "shutting_down").contains(_lai(_zk(s), tp).f("leader"))

    def no_election(tp: Expr) -> Expr:
        topic = tp.f("topic")
        return and_(
            _zk(s).has(tp),
            context.queued_for_deletion(s, topic),
            context.queued_for_deletion(s2, topic),
            ~exempt(tp),
        ).implies(
            _lai(_zk(s2), tp).f("leader").eq(_lai(_zk(s), tp).f("leader"))
            | _lai(_zk(s2), tp).f("leader").eq(NO_LEADER)
        )

    doc = (
        "No controller-made write elects a new leader for a partition of a topic queued for deletion (before and"
        " after the step); taking leadership away (leader −1, OfflineReplica) is allowed. Exempt: partitions"
        " being reassigned before the step (in-flight reassignments continue)"
    )
    if not p.controlled_shutdown_epoch_and_deletion_checks:
        doc += (
            ", and [1.1] partitions whose leader is shutting down (no deletion filter in controlled shutdown)"
        )
    return _inv(
        "I13 no elections for topics queued for deletion", "§11 I13", "step", doc + ".", _written(no_election)
    )


def _is(r: Expr, cls: type) -> Expr:
    """``r`` is a LeaderAndIsr or StopReplica request: equal to the record of class ``cls`` built from its fields
    common to every request (dataclass equality compares classes)."""
    return r.eq(
        rec(
            cls,
            broker=r.f("broker"),
            controller_id=r.f("controller_id"),
            controller_epoch=r.f("controller_epoch"),
            partition_states=r.f("partition_states"),
        )
    )


def _is_umr(r: Expr) -> Expr:
    return ~_is(r, LeaderAndIsrRequest) & ~_is(r, StopReplicaRequest)


def i18_step() -> Invariant:
    def accompanied(r: Expr) -> Expr:
        return r.f("partition_states").all(
            lambda ps: requests.any(
                lambda u: and_(
                    u.f("broker").eq(r.f("broker")),
                    _is_umr(u),
                    u.f("partition_states").any(lambda us: us.f("tp").eq(ps.f("tp"))),
                )
            )
        )

    return _inv(
        "I18 every LeaderAndIsr is accompanied by UpdateMetadata",
        "§11 I18",
        "step",
        "For every partition in a LeaderAndIsr request sent in the step, its recipient also got an UpdateMetadata"
        " request carrying that partition (content may be stale in 1.1, KAFKA-9212).",
        requests.all(lambda r: _is(r, LeaderAndIsrRequest).implies(accompanied(r))),
    )


def i20_step(p: Profile) -> Invariant:
    replica_pairs = _reachable(
        dict(p.replica_valid_previous),
        list(ReplicaState),
        ReplicaState.NonExistentReplica,
    )
    partition_pairs = _reachable(
        dict(p.partition_valid_previous),
        list(PartitionState),
        PartitionState.NonExistentPartition,
    )
    rs1, rs2 = s.f("controller", "replica_states"), s2.f("controller", "replica_states")
    ps1, ps2 = s.f("controller", "partition_states"), s2.f("controller", "partition_states")
    return _inv(
        "I20 transitions follow the valid-previous-state tables",
        "§11 I20",
        "step",
        "Within one controller context, every replica's and partition's state after the step is reachable from its"
        " state before along valid transitions of the profile's tables (missing = NonExistent…), on a path that"
        " passes through NonExistent only at its start or end (one step never deletes and re-creates an element)."
        " Weaker than §11 I20 itself, which is a per-call property checked by the state-machine tests.",
        _same_context(s, s2).implies(
            and_(
                rs1.keys()
                .union(rs2.keys())
                .all(
                    lambda pr: lit(replica_pairs).contains(
                        seq_of(
                            rs1.get_or(pr, ReplicaState.NonExistentReplica),
                            rs2.get_or(pr, ReplicaState.NonExistentReplica),
                        )
                    )
                ),
                ps1.keys()
                .union(ps2.keys())
                .all(
                    lambda tp: lit(partition_pairs).contains(
                        seq_of(
                            ps1.get_or(tp, PartitionState.NonExistentPartition),
                            ps2.get_or(tp, PartitionState.NonExistentPartition),
                        )
                    )
                ),
            )
        ),
    )


def invariants(profile: Profile) -> tuple[Invariant, ...]:
    """The §11 state and step invariants of ``profile``."""
    state: list[Invariant] = []
    if profile.zk_write_fencing:
        state += [i1_state(), i3_state()]
    state += [
        i12_state(),
        w_leadership_assigned(),
        w_shutting_down_registered(),
        w_inactive_context_empty(),
        w_epoch_not_ahead(),
        s_live_brokers_registered(profile),
        s_controller_registered(),
        s_epoch_version_lockstep(),
        s_cache_follows_znode(),
        s_deletion_started_topics_queued(profile),
        s_controller_knows_its_epoch(),
        s_znode_epochs_not_ahead(),
        s_assigned_partitions_have_states(),
        s_znodes_of_assigned_partitions_cached(),
    ]
    step = [i1_step(), i3_step(), i4_step(), i5_step(), i6_step(), i7_step()]
    if profile.zk_write_fencing:
        step.append(i8_step(profile))
    step += [i9_step(), i10_step(), i11_step(), i13_step(profile), i18_step(), i20_step(profile)]
    if profile.name not in _checked:
        for inv in (*state, *step):
            check_fields(
                inv.expr, {"s": ClusterState, "s2": ClusterState}, f"{profile.name} invariant {inv.name}"
            )
        _checked.add(profile.name)
    return (*state, *step)


_checked: set[str] = set()
"""Profiles whose invariants passed the field-path check in this process (built the same way on every call)."""
