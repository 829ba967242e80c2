"""The TLA+ backend: generated modules parse with a real TLA+ parser, are deterministic, and translate each
construct of the expression language as the Python evaluator means it."""

from __future__ import annotations

import pytest
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.emit import Emitter, TlaBackendError
from kcspec.model.tla.layout import render
from kcspec.model.tla.module import ModuleError, generate, generate_from, param_domain, spec_available
from kcspec.model.tla.order import Orders
from kcspec.model.tla.syntax import SyntaxCheckUnavailable, check_syntax
from kcspec.model.tla.types import T
from kcspec.spec import lang as L
from kcspec.spec.lang import Param
from kcspec.spec.profiles import KAFKA_1_1, KAFKA_2_8
from kcspec.spec.state import ClusterState
from kcspec.spec.vocabulary import TopicPartition
from kcspec.spec.work import Work

from tests.support import sample_spec
from tests.support.paths import ROOT


def _syntax(text: str) -> list[str]:
    try:
        return [str(p) for p in check_syntax(text)]
    except SyntaxCheckUnavailable as exc:
        pytest.skip(str(exc))


def _sample(config: ModelConfig | None = None) -> str:
    return generate_from(
        KAFKA_2_8, config or ModelConfig(), sample_spec.actions(), sample_spec.invariants()
    ).tla


def test_sample_module_parses() -> None:
    assert _syntax(_sample()) == []


def test_syntax_check_can_fail() -> None:
    tla = _sample()
    broken = tla.replace("Spec == Init /\\ [][Next]_vars", "Spec == Init /\\ [][Next_vars")
    assert broken != tla
    problems = _syntax(broken)
    assert problems and any("Spec ==" in p for p in problems)
    misaligned = "---- MODULE M ----\nA == /\\ 1 = 1\n   /\\ 2 = 2 }\n====\n"
    assert _syntax(misaligned)


def test_generation_is_deterministic_and_independent_of_build_counters() -> None:
    first = _sample()
    for _ in range(3):  # building the spec again uses new bound-variable numbers
        sample_spec.actions()
    assert _sample() == first


def test_module_structure() -> None:
    m = generate_from(
        KAFKA_2_8, ModelConfig(brokers=3, rf=2), sample_spec.actions(), sample_spec.invariants()
    )
    assert m.tla.startswith("-" * 28 + " MODULE KafkaController_2_8_2 ")
    for needle in (
        "VARIABLES zk, controller, config",
        "Init ==",
        "BrokerStartup(broker_id) ==",
        "ControllerResignation ==",
        "\\/ \\E broker_id \\in Brokers : BrokerStartup(broker_id)",
        # a conjunct of the guard that reads only ``topic`` is checked before ``replicas`` is bound
        "\\/ \\E topic \\in Topics :\n           /\\ ~(\\E tp \\in DOMAIN zk.assignments : tp.topic = topic)\n"
        "           /\\ \\E replicas \\in Assignments : TopicCreation(topic, replicas)",
        "Spec == Init /\\ [][Next]_vars",
        "Inv_LeaderInIsr ==",
        "StepInv_ControllerEpochMonotonic(s2, requests) ==",
        "(* §7.2 registerBroker, tests/support/sample_spec.py:",
        "(* §7.3 BrokerStartup (spec: tests/support/sample_spec.py:",
    ):
        assert needle in m.tla, needle
    assert "Brokers = {0, 1, 2}" in m.cfg
    assert "INVARIANT Inv_LeaderInIsr" in m.cfg
    assert "CONSTRAINT StateConstraint" in m.cfg
    assert m.tla.rstrip().endswith("=" * 10)


def test_lines_map_back_to_rules() -> None:
    m = generate_from(KAFKA_2_8, ModelConfig(), sample_spec.actions(), sample_spec.invariants())
    lines = m.tla.splitlines()
    n = next(i for i, line in enumerate(lines, 1) if "MapPut(zk.brokers, broker_id" in line)
    origin = m.origin(n)
    # a rule of the spec is an operator of its own, called by the action
    assert (
        origin is not None
        and origin.definition == "RegisterBroker"
        and origin.rule == "registerBroker (§7.2)"
    )
    # ... and says where the rule is written: the line of the sample spec that calls rule("registerBroker", …)
    assert origin.span is not None and origin.span.startswith("tests/support/sample_spec.py:"), origin
    path, line = origin.span.rsplit(":", 1)
    assert '"registerBroker"' in (ROOT / path).read_text().splitlines()[int(line) - 1], origin.span
    action = lines[lines.index("BrokerStartup(broker_id) ==") :]
    assert any("RegisterBroker(broker_id)" in line for line in action[: action.index("")])
    guard = next(i for i, line in enumerate(lines, 1) if "broker_id >= 0" in line)
    assert m.origin(guard) is not None and m.origin(guard).rule == "BrokerStartup (§7.3)"  # type: ignore[union-attr]
    assert len(m.origins) == len(lines)


def emit(e: L.Expr, **free: T) -> str:
    em = Emitter({k: (k, t) for k, t in free.items()}, set(), Orders(("a", "b")))
    return render(em.emit(e).block)


SET_INT = T("set", args=(T("int"),))
SEQ_INT = T("seq", args=(T("int"),))
MAP_INT = T("map", args=(T("int"), T("int")))


def test_collections_are_spelled_by_type() -> None:
    x, q, m = L.var("x"), L.var("q"), L.var("m")
    assert emit(x.contains(1), x=SET_INT) == "1 \\in x"
    assert emit(q.contains(1), q=SEQ_INT) == "1 \\in Range(q)"
    assert emit(m.contains(1), m=MAP_INT) == "1 \\in DOMAIN m"
    assert emit(x.size(), x=SET_INT) == "Cardinality(x)"
    assert emit(q.size(), q=SEQ_INT) == "Len(q)"
    assert emit(q.filter(lambda v: v.gt(0)), q=SEQ_INT) == "SelectSeq(q, LAMBDA v : v > 0)"
    assert emit(x.filter(lambda v: v.gt(0)), x=SET_INT) == "{v \\in x : v > 0}"
    assert emit(q.minus(x), q=SEQ_INT, x=SET_INT) == "SelectSeq(q, LAMBDA e : e \\notin x)"
    assert emit(x.minus(q), q=SEQ_INT, x=SET_INT) == "x \\ Range(q)"
    assert emit(q.first(lambda v: v.gt(1), -1), q=SEQ_INT) == "FirstOr(SelectSeq(q, LAMBDA v : v > 1), -1)"
    assert emit(x.sorted(), x=SET_INT) == "SortInt(x)"
    assert emit(q.map(lambda v: v + 1), q=SEQ_INT) == "[i \\in DOMAIN q |-> LET v == q[i] IN v + 1]"
    assert emit(m.put(1, 2).delete(3), m=MAP_INT) == "MapDel(MapPut(m, 1, 2), 3)"


def test_precedence_and_bound_names() -> None:
    a, b = L.var("a"), L.var("b")
    assert emit(L.or_(a.eq(1), b.eq(2)) & a.ne(b), a=T("int"), b=T("int")) == "(a = 1 \\/ b = 2) /\\ a # b"
    assert emit(~(a.eq(1)), a=T("int")) == "~(a = 1)"
    x = L.var("x")
    nested = x.all(lambda v: x.any(lambda v2: v2.gt(v)))
    assert emit(nested, x=SET_INT) == "\\A v \\in x : \\E v2 \\in x : v2 > v"
    # the same lambda name twice, nested: the inner one is renamed
    inner = L.Quant("any", "y_1", x, L.Cmp(">", L.var("y_1"), L.Const(0)))
    outer = L.Quant("all", "y_1", x, inner)
    assert emit(outer, x=SET_INT) == "\\A y \\in x : \\E y2 \\in x : y2 > 0"


def test_fold_and_orders() -> None:
    x = L.var("x")
    text = emit(x.sorted().fold(0, lambda acc, v: acc + v), x=SET_INT)
    assert "RECURSIVE fold(_, _)" in text and "fold(0, SortInt(x))" in text
    tps = L.var("tps")
    assert emit(tps.sorted(), tps=T("set", args=(T("rec", TopicPartition),))) == "SortTopicPartition(tps)"


def test_untranslatable_expressions_are_named() -> None:
    x = L.var("x")
    with pytest.raises(TlaBackendError, match="'first such' needs a sequence"):
        emit(x.first(lambda v: v.gt(0), -1), x=SET_INT)
    with pytest.raises(TlaBackendError, match=r"unbound variable 'y'.*rule r"):
        emit(L.rule("r", "§1", L.var("y")))


def test_param_domains() -> None:
    assert param_domain("BrokerStartup", Param("broker_id", int)) == "Brokers"
    assert param_domain("StaleAlterIsrReceived", Param("leader_epoch", int)) == "0..MaxLeaderEpoch"
    assert param_domain("StaleAlterIsrReceived", Param("zk_version", int)) == "0..MaxZkVersion"
    with pytest.raises(ModuleError, match="event X: no finite domain for integer parameter weight"):
        param_domain("X", Param("weight", int))
    assert param_domain("UncleanLeaderElectionEnable", Param("topic", str)) == 'Topics \\cup {""}'
    assert (
        param_domain("X", Param("partitions", frozenset[TopicPartition])) == "SUBSET TopicPartitions \\ {{}}"
    )


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="--rf 3 is larger than --brokers 2"):
        ModelConfig(brokers=2, rf=3)


@pytest.mark.parametrize("profile", [KAFKA_2_8, KAFKA_1_1], ids=lambda p: p.name)
def test_whole_spec_module_parses(profile: object) -> None:
    has_actions, _ = spec_available()
    assert has_actions, "the spec's actions (kcspec.spec.actions.registry) must exist"
    m = generate(KAFKA_2_8 if profile is KAFKA_2_8 else KAFKA_1_1, ModelConfig())
    assert _syntax(m.tla) == []


def test_initial_state_is_the_empty_cluster() -> None:
    m = generate_from(KAFKA_2_8, ModelConfig(), [], [], initial=ClusterState())
    assert "/\\ zk = [controller |-> -1," in m.tla
    assert "Next ==\n    FALSE" in m.tla
    assert _syntax(m.tla) == []


def test_procedures_become_operators() -> None:
    @L.procedure("bump_zxid", "§3.3")
    def bump(state: L.Expr, by: int) -> L.Expr:
        return state.with_(zk=state.f("zk").with_(zxid=state.f("zk", "zxid") + by))

    s = L.var("s")
    action = L.Action(
        "ControllerChange",
        "§7.12",
        "doc",
        (),
        L.lit(True),
        L.rec(Work, state=bump(bump(s, 1), 2)),
    )
    again = L.Action("ControllerResignation", "§7.12", "doc", (), L.lit(True), L.rec(Work, state=bump(s, 1)))
    m = generate_from(KAFKA_2_8, ModelConfig(), [action, again], [])
    # the two specialisations (by=1, by=2) differ only in that constant: one operator, the constant its parameter
    assert m.tla.count("BumpZxid(state, by) ==") == 1
    assert "state.zk.zxid + by" in m.tla
    assert "BumpZxid(BumpZxid(s, 1), 2)" in m.tla and "BumpZxid(s, 1)" in m.tla
    assert (
        "(* §3.3 bump_zxid, tests/integration/tla/test_tla_module.py:" in m.tla
    )  # where the procedure is written
    assert _syntax(m.tla) == []
