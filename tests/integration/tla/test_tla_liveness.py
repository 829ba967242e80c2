"""Liveness: the properties and ``FairSpec`` in the generated module, their TLC configuration, the known §12
gaps, and TLC's lasso-shaped counterexample (``transcripts/liveness_*.txt``, written in TLC's ``-tool`` format)
translated into a kcspec trace that replays on the spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcspec.model.evaluate import evaluate
from kcspec.model.step import SpecMachine
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.counterexample import lasso_trace
from kcspec.model.tla.liveness import FAIR_ACTIONS, PROPERTIES, known_gap
from kcspec.model.tla.module import generate
from kcspec.model.tla.syntax import SyntaxCheckUnavailable, check_syntax
from kcspec.model.tlc.lasso import parse_lasso
from kcspec.model.tlc.trace import TraceFormatError
from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.profiles import get_profile
from kcspec.spec.state import ClusterState

from tests.support.paths import SUPPORT

TRANSCRIPTS = SUPPORT / "tla_transcripts"
DELETION = next(p for p in PROPERTIES if p.name == "DeletionEventuallyCompletes")


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_the_module_states_the_properties_under_fairness_of_the_controllers_actions(profile: str) -> None:
    module = generate(get_profile(profile), ModelConfig())
    for prop in PROPERTIES:
        assert f"{prop.name}_P({prop.var}) ==" in module.tla and f"{prop.name}_Q({prop.var}) ==" in module.tla
        assert f"<>[]({prop.name}_P({prop.var}) /\\ ~BoundsStopTheController)" in module.tla
        assert f"=> []<>{prop.name}_Q({prop.var})" in module.tla
        assert f"PROPERTY {prop.name}" in module.liveness_cfg
    fair = module.tla[module.tla.index("FairSpec ==") :].split("\n\n")[0]
    assert "ENABLED" not in module.tla and "WF_vars(" not in fair, "fairness TLC evaluates slowly"
    for f in FAIR_ACTIONS:
        assert f"[]<>~{f.action}_Due" in fair and f"{f.action}_Successor" in module.tla
    assert "SPECIFICATION FairSpec" in module.liveness_cfg and "INVARIANT" not in module.liveness_cfg
    assert "CONSTRAINT StateConstraint" in module.liveness_cfg
    assert "PROPERTY" not in module.cfg  # the crosscheck's run (and its counts) is unchanged
    try:
        assert [str(p) for p in check_syntax(module.tla)] == []
    except SyntaxCheckUnavailable as exc:
        pytest.skip(str(exc))


def test_known_gaps_name_their_ticket() -> None:
    gap = known_gap("ReassignmentEventuallyCompletes", "kafka-2.8")
    assert gap is not None and gap.ticket == "KAFKA-9478" and "§12" in gap.section
    assert known_gap("LeaderEventuallyElected", "kafka-2.8") is None


def _params(profile: str) -> dict[str, tuple[str, ...]]:
    return {a.name: tuple(p.name for p in a.params) for a in build_actions(get_profile(profile)).values()}


def _replay(profile: str, initial: ClusterState, events: object) -> list[ClusterState]:
    machine = SpecMachine(profile)
    states = [initial]
    for ev in events:  # type: ignore[attr-defined]
        states.append(machine.step(states[-1], ev).state)
    return states


def test_a_lasso_that_loops_back_becomes_a_replayable_trace_and_cycle() -> None:
    lasso = parse_lasso((TRANSCRIPTS / "liveness_loop.txt").read_text())
    assert (len(lasso.states), lasso.loop_to, lasso.stuttering) == (5, 5, False)
    assert lasso.back_action is not None and lasso.back_action.name == "AutoPreferredReplicaLeaderElection"
    assert lasso.message == "Temporal properties were violated."
    lt = lasso_trace(lasso, "kafka-2.8", _params("kafka-2.8"), DELETION.name)
    assert [s.event.kind for s in lt.trace.steps] == [
        "BrokerStartup",
        "ControllerFailover",
        "TopicCreation",
        "TopicDeletion",
    ]
    assert "loops back to state 5" in lt.trace.note
    # the prefix replays on the spec to TLC's states, and the cycle returns to where it starts
    states = _replay("kafka-2.8", lt.trace.initial, [s.event for s in lt.trace.steps])
    from kcspec.model.tla.counterexample import state_of

    assert states == [state_of(s) for s in lasso.states]
    assert lt.loop_to_step == 4 and [e.kind for e in lt.cycle] == ["AutoPreferredReplicaLeaderElection"]
    around = _replay("kafka-2.8", states[lt.loop_to_step], lt.cycle)
    assert around[-1] == states[lt.loop_to_step]
    # on the cycle the premise holds and the goal never does: the property is violated forever
    topic = L.var("topic")
    for st in around:
        assert evaluate(DELETION.premise(topic), s=st, topic="t0") is True
        assert evaluate(DELETION.goal(topic), s=st, topic="t0") is False


def test_a_stuttering_lasso_stays_in_its_last_state() -> None:
    lasso = parse_lasso((TRANSCRIPTS / "liveness_stuttering.txt").read_text())
    assert lasso.stuttering and lasso.loop_to is None and len(lasso.cycle) == 1
    lt = lasso_trace(lasso, "kafka-2.8", _params("kafka-2.8"), DELETION.name)
    assert lt.cycle == () and "stutters forever" in lt.trace.note
    assert len(lt.trace.steps) == 4


def test_malformed_lassos_are_named() -> None:
    text = (TRANSCRIPTS / "liveness_loop.txt").read_text()
    with pytest.raises(TraceFormatError, match="2116"):
        parse_lasso((TRANSCRIPTS / "out_tool_violation.txt").read_text())
    with pytest.raises(TraceFormatError, match="has 5 states"):
        parse_lasso(text.replace("5: Back to state:", "9: Back to state:"))
    cut = text[: text.index("@!@!@STARTMSG 2122")]
    with pytest.raises(TraceFormatError, match="neither loops back nor stutters"):
        parse_lasso(cut)


def test_export_writes_the_liveness_configuration_beside_the_module(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kcspec.commands.tla import command

    args = ["export", "--brokers", "1", "--rf", "1", "--out", str(tmp_path)]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    cfg = (tmp_path / "KafkaController_2_8_2_liveness.cfg").read_text()
    assert "SPECIFICATION FairSpec" in cfg and "PROPERTY LeaderEventuallyElected" in cfg


def test_tlcs_real_lasso_is_named_and_no_longer_violates_the_fixed_premise() -> None:
    """TLC 2.18's lasso on the smallest kafka-2.8 model (a delete request for a topic that does not exist, no broker
    ever starting, then stuttering): it replays as a kcspec trace, and ``violated`` names what it breaks. Under the
    old, vacuous premise of DeletionEventuallyCompletes it broke that property for t0; with the premise that the
    topic has partitions it breaks nothing."""
    from kcspec.model.tla.counterexample import state_of
    from kcspec.model.tla.liveness import violated

    one_broker = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)
    lasso = parse_lasso((TRANSCRIPTS / "liveness_real_tlc2.18_vacuous_deletion.txt").read_text())
    assert lasso.stuttering and len(lasso.states) == 3
    lt = lasso_trace(lasso, "kafka-2.8", prop="", config=one_broker)
    assert [s.event.kind for s in lt.trace.steps] == ["TopicDeletion", "UncleanLeaderElectionEnable"]
    states = _replay("kafka-2.8", lt.trace.initial, [s.event for s in lt.trace.steps])
    assert states == [state_of(s) for s in lasso.states]
    assert violated(states, len(states) - 1, one_broker) == ()
    # the same lasso against the old premise (queued, and every replica of its (no) partitions live): violated
    old = L.and_(
        L.var("s").f("zk").f("delete_topics").contains(L.var("topic")),
    )
    assert all(evaluate(old, s=st, topic="t0") for st in states[1:])
    assert not any(evaluate(DELETION.goal(L.var("topic")), s=st, topic="t0") for st in states[1:])


def test_violated_names_the_property_and_its_partition_or_topic() -> None:
    from kcspec.model.tla.counterexample import state_of
    from kcspec.model.tla.liveness import violated

    lasso = parse_lasso((TRANSCRIPTS / "liveness_loop.txt").read_text())
    states = [state_of(s) for s in lasso.states]
    assert lasso.loop_to is not None
    found = violated(states, lasso.loop_to - 1, ModelConfig(1, 1, 1, 1, 1, 1, 2, 0))
    assert ("DeletionEventuallyCompletes", "t0") in found


def test_no_leader_is_asked_for_a_partition_of_a_topic_queued_for_deletion() -> None:
    """TLC 2.15's lasso on the 2-broker kafka-2.8 model: broker 1 leads t0-0, shuts down and fails after
    ``TopicDeletion``; deletion waits for broker 1 (§8) and Kafka elects no leader for a topic queued for deletion
    (I13). It replays as a kcspec trace; with the premise that excludes such topics it violates nothing, and
    without that clause it was a violation of ``LeaderEventuallyElected`` (what TLC reported)."""
    from kcspec.model.tla.counterexample import state_of
    from kcspec.model.tla.liveness import violated

    leader = next(p for p in PROPERTIES if p.name == "LeaderEventuallyElected")
    two_brokers = ModelConfig(2, 1, 1, 2, 1, 1, 3, 0)
    lasso = parse_lasso((TRANSCRIPTS / "liveness_real_tlc2.15_leader_of_deleting_topic.txt").read_text())
    assert lasso.stuttering
    lt = lasso_trace(lasso, "kafka-2.8", prop="", config=two_brokers)
    kinds = [s.event.kind for s in lt.trace.steps]
    assert kinds.index("TopicDeletion") < kinds.index("BrokerFailure"), kinds
    states = _replay("kafka-2.8", lt.trace.initial, [s.event for s in lt.trace.steps])
    assert states == [state_of(s) for s in lasso.states]
    assert violated(states, len(states) - 1, two_brokers) == ()
    last = states[-1]
    tp = next(iter(last.zk.partition_states))
    assert "t0" in last.zk.delete_topics and not evaluate(leader.goal(L.var("tp")), s=last, tp=tp)
    assert not evaluate(leader.premise(L.var("tp")), s=last, tp=tp)


def test_a_deletion_stalled_by_a_zookeeper_error_is_a_known_gap_of_kafka() -> None:
    """TLC 2.15's lasso on ``one-broker-minimal-2.8`` when its liveness check ran on a partial graph (a busy
    machine): t0 is created, broker 0 starts and becomes controller, a CONNECTIONLOSS is armed on t0-0's state znode,
    and ``TopicDeletion(t0)``'s OfflineReplica step fails on it (§3.3). The replica stays OnlineReplica, so no
    StopReplica is sent and no fair action is due: the deletion waits forever, as Kafka's would (§8). The lasso
    replays on the spec and is reported as that known gap, in both profiles; before the deletion, no gap applies."""
    from kcspec.model.tla.counterexample import state_of
    from kcspec.model.tla.liveness_report import read_lasso

    config = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)
    raw = (TRANSCRIPTS / "liveness_real_tlc2.15_deletion_stalled_by_zk_error.txt").read_text()
    finding = read_lasso(raw, "kafka-2.8", config)
    assert [s.event.kind for s in finding.lasso.trace.steps] == [
        "TopicCreation",
        "BrokerStartup",
        "ControllerFailover",
        "ZkFaultInjection",
        "TopicDeletion",
    ]
    assert [(v.prop, v.subject) for v in finding.violations] == [("DeletionEventuallyCompletes", "t0")]
    assert finding.expected, finding.summary_lines()
    gap = finding.violations[0].gap
    assert gap is not None and gap.section == "§8 onPartitionDeletion, §3.3", gap
    lasso = parse_lasso(raw)
    for profile in ("kafka-2.8", "kafka-1.1"):
        states = _replay(profile, ClusterState(), [s.event for s in finding.lasso.trace.steps])
        if profile == "kafka-2.8":
            assert states == [state_of(s) for s in lasso.states]
        last = states[-1]
        assert (
            last.controller.replica_states.get(next(iter(last.controller.replica_states))).name
            == "OnlineReplica"
        )
        assert known_gap("DeletionEventuallyCompletes", profile, last, "t0") is not None
        assert known_gap("DeletionEventuallyCompletes", profile, states[-2], "t0") is None
