"""The table of controller actions: ``build(profile)`` returns one ``Action`` per event kind of
``kcspec.spec.events`` that the profile has (``ApiPartitionReassignment`` exists only in kafka-2.8, KIP-455, and
``StaleAlterIsrReceived`` only with AlterIsr, KIP-497; the queued admin elections only with KIP-460)."""

from __future__ import annotations

from collections.abc import Callable

from kcspec.spec.actions import (
    broker_notifications,
    brokers,
    deletion,
    elections,
    environment,
    event_queue,
    failover,
    isr,
    shutdown,
    topics,
)
from kcspec.spec.actions import reassignment_kip455 as r455
from kcspec.spec.actions import reassignment_legacy as legacy
from kcspec.spec.events import EVENT_TYPES
from kcspec.spec.field_paths import check_action
from kcspec.spec.lang import Action
from kcspec.spec.profiles import Profile

Builder = Callable[[Profile], Action]


def builders(profile: Profile) -> list[Builder]:
    """The action builders of ``profile``, in the order of ``EVENT_TYPES``."""
    out: list[Builder] = [
        failover.controller_failover_action,
        failover.controller_resignation_action,
        environment.newer_controller_elected_action,
        failover.controller_change_action,
        environment.zombie_controller_write_action,
        brokers.broker_startup_action,
        brokers.broker_failure_action,
        brokers.broker_bounce_action,
        shutdown.controlled_shutdown_action,
        topics.topic_creation_action,
        topics.partition_expansion_action,
        deletion.topic_deletion_action,
        deletion.stop_replica_response_action,
    ]
    if profile.kip455_reassignment:
        out += [r455.api_partition_reassignment_action, r455.zk_partition_reassignment_action]
    else:
        out.append(legacy.zk_partition_reassignment_action)
    out += [
        elections.replica_leader_election_action,
        elections.auto_preferred_replica_leader_election_action,
        isr.isr_change_action,
        brokers.leader_and_isr_response_action,
        elections.unclean_leader_election_enable_action,
        environment.zk_fault_injection_action,
        deletion.stop_replica_partition_errors_action,
        brokers.leader_and_isr_partition_results_action,
    ]
    if profile.alter_isr:
        out.append(isr.stale_alter_isr_action)
    out += [
        broker_notifications.broker_change_action,
        broker_notifications.log_dir_event_notification_action,
        deletion.stop_replica_response_without_deletion_action,
    ]
    if profile.kip460_replica_election:
        out += [
            event_queue.replica_leader_election_queued_action,
            event_queue.controlled_shutdown_queued_action,
            event_queue.api_partition_reassignment_queued_action,
            event_queue.list_partition_reassignments_queued_action,
            event_queue.queued_event_processed_action,
        ]
    return out


def build(profile: Profile) -> dict[str, Action]:
    """Every action of ``profile``, keyed by event kind, in the order of ``EVENT_TYPES``."""
    actions = {a.name: a for a in (b(profile) for b in builders(profile))}
    if profile.name not in _checked:  # every field path of every action names a field of its record
        for action in actions.values():
            check_action(profile.name, action)
        _checked.add(profile.name)
    order = [cls.kind for cls in EVENT_TYPES]
    return {k: actions[k] for k in order if k in actions}


_checked: set[str] = set()
"""Profiles whose actions passed ``check_action`` in this process (the trees are built the same way on every call,
so one check per profile is enough)."""
