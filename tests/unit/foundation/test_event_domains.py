"""``model/event_domains.py`` is the one place that says what every event parameter ranges over; the explorer,
the simulator, the TLA+ model and Z3 induction take their domains and shapes from it."""

from __future__ import annotations

import pytest
from kcspec.conformance.selfcheck import simulate
from kcspec.model import event_candidates as explore_events
from kcspec.model import event_domains as ed
from kcspec.model.explore_config import ExploreConfig
from kcspec.model.tla import domains as tla_domains
from kcspec.model.tla.config import ModelConfig
from kcspec.spec.events import EVENT_TYPES
from kcspec.spec.lang import Param
from kcspec.spec.vocabulary import TopicPartition


def test_every_event_of_the_spec_has_a_kind_for_every_parameter() -> None:
    assert list(ed.EVENT_PARAMS) == [cls.kind for cls in EVENT_TYPES]
    for kind, params in ed.EVENT_PARAMS.items():
        for p in params:
            assert isinstance(p.kind, ed.ParamKind), f"{kind}.{p.name}"
            assert (p.enum_cls is not None) == (p.kind is ed.ParamKind.ENUM), f"{kind}.{p.name}"


def test_a_parameter_type_without_a_domain_is_named() -> None:
    with pytest.raises(
        ed.DomainError, match=r"event NewEvent: no finite domain for parameter weights: .*float"
    ):
        ed.param_kind("NewEvent", "weights", tuple[float, ...])


def test_kinds_split_integers_by_name_and_topics_by_event() -> None:
    assert ed.param_kind("ControlledShutdown", "broker_epoch", int) is ed.ParamKind.BROKER_EPOCH
    stale = {p.name: p.kind for p in ed.EVENT_PARAMS["StaleAlterIsrReceived"] if p.hint is int}
    assert stale == {
        "broker_id": ed.ParamKind.BROKER_ID,
        "broker_epoch": ed.ParamKind.BROKER_EPOCH,
        "leader_epoch": ed.ParamKind.LEADER_EPOCH,
        "zk_version": ed.ParamKind.ZK_VERSION,
    }
    assert ed.param_kind("ZombieControllerWrite", "controller_epoch", int) is ed.ParamKind.CONTROLLER_EPOCH
    assert ed.param_kind("BrokerStartup", "broker_id", int) is ed.ParamKind.BROKER_ID
    assert ed.param_kind("UncleanLeaderElectionEnable", "topic", str) is ed.ParamKind.TOPIC_OR_ALL
    assert ed.param_kind("TopicCreation", "topic", str) is ed.ParamKind.TOPIC
    kinds = {p.name: p.kind for p in ed.EVENT_PARAMS["ApiPartitionReassignment"]}
    assert kinds == {"targets": ed.ParamKind.TARGETS_OR_CANCEL}


def test_an_integer_parameter_without_a_kind_is_an_error_not_a_broker_id() -> None:
    with pytest.raises(
        ed.DomainError, match=r"event NewEvent: no finite domain for integer parameter replica_count"
    ):
        ed.param_kind("NewEvent", "replica_count", int)


def test_every_kind_has_a_tla_domain() -> None:
    missing = set(ed.ParamKind) - set(tla_domains.BY_KIND) - {ed.ParamKind.ENUM}
    assert not missing, f"parameter kinds without a TLA+ domain: {sorted(k.name for k in missing)}"


def test_a_stale_alter_isr_ranges_over_its_own_bounds_in_the_module_and_the_explorer() -> None:
    config = ModelConfig(brokers=2, rf=2, max_leader_epoch=3, max_zk_version=1)
    le = tla_domains.param_domain("StaleAlterIsrReceived", Param("leader_epoch", int))
    zv = tla_domains.param_domain("StaleAlterIsrReceived", Param("zk_version", int))
    assert (le.tla, le.values(config)) == ("0..MaxLeaderEpoch", (0, 1, 2, 3))
    assert (zv.tla, zv.values(config)) == ("0..MaxZkVersion", (0, 1))


def test_the_tla_model_has_a_domain_for_every_event_or_says_why_not() -> None:
    config = ModelConfig()
    for kind, params in ed.EVENT_PARAMS.items():
        for p in params:
            domain = tla_domains.param_domain(kind, Param(p.name, p.hint))
            if kind in tla_domains.NOT_IN_MODELS:
                assert domain.values(config) == (), kind
            else:
                assert domain.values(config), f"{kind}.{p.name}: an empty domain without a reason"


def test_z3_induction_has_an_instance_of_every_event_or_says_why_not() -> None:
    from kcspec.model.z3.induction_actions import WITHOUT_INSTANCE, instances

    yielded = {i.kind for i in instances(2, kip455=True)}
    missing = set(ed.EVENT_PARAMS) - yielded - set(WITHOUT_INSTANCE)
    assert not missing, f"event kinds with no induction instance and no reason: {sorted(missing)}"
    assert not yielded & set(WITHOUT_INSTANCE), "an event listed as without instance has one"


def test_the_explorer_and_the_simulator_share_the_bootstrap_and_layout() -> None:
    explore_cfg = ExploreConfig(brokers=4, topics=2, partitions=3, rf=2)
    walk_cfg = simulate.WalkConfig(brokers=4, topics=2, partitions=3, rf=2)
    assert list(explore_events.bootstrap(explore_cfg)) == simulate.bootstrap(walk_cfg)
    assert explore_cfg.assignment(1) == ((1, 2), (2, 3), (3, 0))


def test_the_finite_sets() -> None:
    assert ed.replica_lists((0, 1)) == ((0,), (1,), (0, 1), (1, 0))
    assert ed.rf_lists((0, 1, 2), 2) == ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))
    tps = ed.topic_partitions(("t0",), 2)
    assert tps == (TopicPartition("t0", 0), TopicPartition("t0", 1))
    assert ed.partition_sets(tps) == (frozenset({tps[0]}), frozenset({tps[1]}), frozenset(tps))
    groups = list(ed.broker_groups((0, 1)))
    assert ((0, 1), (), ()) in groups and ((0,), (1,), ()) in groups
    assert all(sum(len(g) for g in split) >= 2 for split in groups)
    assert ed.reassignment_target((2, 0), 3) == (0, 1)
