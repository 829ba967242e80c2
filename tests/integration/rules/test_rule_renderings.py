"""One rule, one command: every rendering ``kcspec spec show --rule`` lists for a rule exists where it says, for
every rule of both profiles; the committed TLA+ modules and ``docs/rules.md`` are what the spec generates now."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from kcspec.conformance.selfcheck import rule_index
from kcspec.conformance.selfcheck.rule_index import RuleCard
from kcspec.model.tla import committed
from kcspec.model.tla.manifest import load
from kcspec.reference_impl.mirrors import COUNTERPARTS

from kcspec.cli import main
from tests.support.paths import ROOT


def _line(where: str) -> tuple[str, str]:
    """The text of ``path:line`` (a path relative to the checkout), and the path."""
    path, _, line = where.rpartition(":")
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    n = int(line)
    assert 1 <= n <= len(lines), f"{where}: the file has {len(lines)} lines"
    return lines[n - 1], path


def _problems(c: RuleCard) -> list[str]:
    bad: list[str] = []
    for w in c.written:
        text, _ = _line(w.span)
        if not text.strip():
            bad.append(f"written at {w.span}: a blank line")
    for op in c.tla:
        text, _ = _line(op.where)
        if not text.startswith(f"{op.operator}(") and not text.startswith(f"{op.operator} =="):
            bad.append(f"TLA+ {op.where}: {text!r} does not define {op.operator}")
    for m in c.diagrams:
        text, _ = _line(f"{m.path}:{m.line}")
        if text.strip()[:100] != m.text:
            bad.append(f"diagram {m.path}:{m.line}: {text!r}")
    for ref in c.reference:
        where, _, qualname = ref.partition(" ")
        text, _ = _line(where)
        # the function's first line: its @mirrors mark (decorators first), or its def
        if "@mirrors(" not in text and f"def {qualname.rsplit('.', 1)[-1]}(" not in text:
            bad.append(f"reference {ref}: {text!r} is neither its @mirrors mark nor its def line")
    for m in c.tests:
        text, _ = _line(f"{m.path}:{m.line}")
        if not any(s in text for s in c.sections):
            bad.append(f"test {m.path}:{m.line} does not cite {c.sections}")
    return bad


def test_every_rendering_of_every_rule_exists_where_the_card_says() -> None:
    names = rule_index.rule_names()
    assert len(names) > 100, names
    bad = {name: p for name in names if (p := _problems(rule_index.card(name, lemmas=False)))}
    assert not bad, json.dumps(bad, indent=1)


def test_every_action_invariant_and_procedure_has_a_tla_operator_and_a_span() -> None:
    missing = []
    for name in rule_index.rule_names():
        c = rule_index.card(name, lemmas=False, citations=False)
        if any(w.span == "?" for w in c.written):
            missing.append(f"{name}: no span")
        kinds = {w.kind for w in c.written}
        if kinds & {"action", "invariant"} and not c.tla:
            missing.append(f"{name} ({', '.join(sorted(kinds))}): no TLA+ operator")
    assert not missing, "\n".join(missing)


def test_an_election_strategy_card_has_its_lemmas_proved_and_its_reference_function() -> None:
    c = rule_index.card("OfflinePartitionLeaderElectionStrategy", brokers=2)
    assert c.written and all(w.span.startswith("spec/") for w in c.written)
    assert {o.profile for o in c.tla} == {"kafka-1.1", "kafka-2.8"}
    assert c.lemmas and {lm.status for lm in c.lemmas} <= {"proved", "expected-counterexample"}, c.lemmas
    assert any("offline_partition_leader_election" in r for r in c.reference), c.reference
    assert any(m.path.startswith("diagrams/elections-") for m in c.diagrams), c.diagrams
    assert not _problems(c)


def test_every_mirrors_mark_names_a_rule_of_the_spec() -> None:
    rule_index.card("OfflinePartitionLeaderElectionStrategy", lemmas=False)  # imports the marked modules
    unknown = sorted(set(COUNTERPARTS) - set(rule_index.rule_names()))
    assert len(COUNTERPARTS) > 40
    assert not unknown, f"@mirrors names that are not rules of the spec: {unknown}"


def test_show_rule_prints_the_card_and_an_unknown_name_is_exit_2_with_close_names() -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main, ["spec", "show", "--rule", "offlinepartitionleaderelectionstrategy", "--brokers", "1"]
    )
    assert ok.exit_code == 0, ok.output
    assert re.search(r"written at\s+spec/elections\.py:\d+", ok.output), ok.output
    assert "reference_impl/elections.py" in ok.output and "KafkaController_2_8_2.tla:" in ok.output
    as_json = runner.invoke(main, ["spec", "show", "--rule", "BrokerStartup", "--json", "--brokers", "1"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["name"] == "BrokerStartup"
    bad = runner.invoke(main, ["spec", "show", "--rule", "PartitionLeaderElection"])
    assert bad.exit_code == 2, bad.output
    assert "no rule of the spec is named 'PartitionLeaderElection'" in bad.output
    assert "OfflinePartitionLeaderElectionStrategy" in bad.output
    empty = runner.invoke(main, ["spec", "show", "--rule", " "])
    assert empty.exit_code == 2 and "--rule needs a rule's name" in empty.output, empty.output


def test_committed_tla_modules_and_rules_doc_are_up_to_date() -> None:
    modules = CliRunner().invoke(main, ["tla", "modules", "--check"])
    files = 3 * len(load())  # each manifest model's module, its .cfg and its liveness .cfg
    expected = f"TLA+ modules up to date: {files} file(s)"
    assert modules.exit_code == 0 and expected in modules.output, modules.output
    result = CliRunner().invoke(main, ["spec", "rules", "--check", "--out", str(ROOT / "docs" / "rules.md")])
    assert result.exit_code == 0, result.output


def test_a_stale_module_and_a_stale_doc_are_found(tmp_path: Path) -> None:
    folder = tmp_path / "modules"
    want = {"m/M.tla": "---- MODULE M ----\n====\n", "m/M.cfg": "INIT Init\n"}
    committed.write(folder, want)
    assert committed.check(folder, want).up_to_date
    (folder / "m" / "M.cfg").write_text("INIT Other\n")
    (folder / "old").mkdir()
    (folder / "old" / "X.tla").write_text("")
    result = committed.check(folder, want)
    assert result.stale == ("m/M.cfg",) and result.extra == ("old/X.tla",), result
    doc = tmp_path / "rules.md"
    doc.write_text(rule_index.DOC_TITLE + "\n")
    stale = CliRunner().invoke(main, ["spec", "rules", "--check", "--out", str(doc)])
    assert stale.exit_code == 1 and "stale" in stale.output, stale.output


def test_a_mutant_compiled_from_text_adds_no_counterpart() -> None:
    """The bug zoo re-executes reference modules' source under names like ``<mutant …>``: their functions are not
    places in the source tree, and the cards must not list them (in a test process that ran the zoo first they
    did, and a card named the checkout's folder as a file)."""
    before = {k: list(v) for k, v in COUNTERPARTS.items()}
    source = "from kcspec.reference_impl.mirrors import mirrors\n\n@mirrors('OnlineReplica')\ndef _to_online(): ...\n"
    exec(compile(source, "<mutant kafka-0000 at reference_impl/replica_state_machine.py>", "exec"), {})
    assert {k: list(v) for k, v in COUNTERPARTS.items()} == before
