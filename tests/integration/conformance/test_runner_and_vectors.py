"""The runner's verdicts through the real subprocess path, vector files against their schema, the
generated schemas being current, and traceability of the election vectors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from kcspec.conformance import runner
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.protocol import schema_gen
from kcspec.conformance.reports import html_report, json_report, junit
from kcspec.conformance.vectors import files, generate, inputs, traceability
from kcspec.conformance.vectors.model import Level, Vector, VectorError
from kcspec.conformance.verdicts import Verdict
from kcspec.spec.vocabulary import ReplicaState

from tests.support.paths import ROOT, SUPPORT
from tests.support.timing import scaled

FAKE = SUPPORT / "fakes" / "fake_sut.py"
BUGGY = ROOT / "conformance" / "examples" / "buggy_controller.py"


@pytest.fixture(scope="module")
def election_vectors() -> list[Vector]:
    from kcspec.conformance.reference_sut import SpecSut

    cases = list(inputs.election_cases())[::9]
    gen = generate.Generation()
    out = []
    for case in cases:
        expected = generate._settle("kafka-2.8", case, [SpecSut()], gen)
        assert expected is not None, gen.unanswered[:1]
        out.append(generate._vector("kafka-2.8", case, expected))
    return out


def test_schemas_are_current() -> None:
    assert schema_gen.main(["--check"]) == 0


def test_buggy_controller_fails_with_a_counterexample(election_vectors: list[Vector]) -> None:
    adapter = SubprocessAdapter([sys.executable, str(BUGGY)], timeout=scaled(5.0))
    report = runner.run(adapter, election_vectors, profile="kafka-2.8", level=Level.elections)
    failed = [o for o in report.outcomes if o.verdict is Verdict.failed]
    assert failed and report.exit_code() == 1
    assert all(o.id.startswith("kafka-2.8.elect.offline.") and ".allow-0.unclean-0" in o.id for o in failed)
    assert any(d.path == "$.result.leader" and d.expected == "-1" for o in failed for d in o.differences)
    data = json.loads(json_report.render(report))
    assert data["counts"]["failed"] == len(failed)
    xml = junit.render(report)
    assert xml.count("<testcase") == len(election_vectors) and xml.count("<failure") == len(failed)
    page = html_report.render(report)
    assert "$.result.leader" in page and "FAIL" in page


def test_crashing_sut_gives_errored_verdicts_and_the_run_goes_on(election_vectors: list[Vector]) -> None:
    adapter = SubprocessAdapter([sys.executable, str(FAKE), "crash", "2"], timeout=scaled(2.0))
    report = runner.run(adapter, election_vectors[:6], profile="kafka-2.8", level=Level.elections)
    verdicts = [o.verdict for o in report.outcomes]
    assert len(verdicts) == 6
    assert Verdict.errored in verdicts
    errored = next(o for o in report.outcomes if o.verdict is Verdict.errored)
    assert "simulated crash" in errored.stderr and "crashed" in errored.reason


def test_sut_without_capability_is_not_supported(election_vectors: list[Vector]) -> None:
    from kcspec.conformance.reference_sut import SpecSut

    case = next(inputs.replica_cases({ReplicaState.OnlineReplica: (ReplicaState.NewReplica,)}))
    vector = generate._vector("kafka-2.8", case, m.ErrorReply(m.ErrorCode.unsupported, "x"))
    assert SpecSut.capabilities
    adapter = SubprocessAdapter([sys.executable, str(FAKE), "none"], timeout=scaled(2.0))
    report = runner.run(adapter, [vector], profile="kafka-2.8", level=Level.machines)
    assert report.outcomes[0].verdict is Verdict.not_supported
    assert report.exit_code() == 2, "a run in which no vector ran is not a pass"


def test_missing_sut_program_is_a_session_error(election_vectors: list[Vector]) -> None:
    with pytest.raises(runner.SessionError, match="nonexistent"):
        runner.run(
            SubprocessAdapter(["/nonexistent/sut"]),
            election_vectors[:1],
            profile="kafka-2.8",
            level=Level.elections,
        )


def test_export_round_trip_and_schema(election_vectors: list[Vector], tmp_path: Path) -> None:
    files.export(election_vectors, tmp_path, traceability.report(election_vectors, ["kafka-2.8"]))
    schema = json.loads((tmp_path / "schema" / "vector.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted((tmp_path / "kafka-2.8").rglob("*.json"))[:40]:
        errors = list(validator.iter_errors(json.loads(path.read_text())))
        assert not errors, f"{path}: {errors[0].message}"
    assert files.load_dir(tmp_path) == sorted(
        election_vectors, key=lambda v: str(files.vector_path(tmp_path, v))
    )
    report = (tmp_path / "TRACEABILITY.md").read_text()
    assert "| §6 |" in report


def test_bad_vector_file_names_file_and_path(tmp_path: Path) -> None:
    bad = tmp_path / "v.json"
    bad.write_text(
        json.dumps({"id": "x", "level": "elections", "request": {"type": "elect"}, "expected": {}})
    )
    with pytest.raises(VectorError, match=r"v\.json"):
        files.load_dir(tmp_path)


def test_every_behaviour_section_has_machine_or_election_inputs() -> None:
    sections = {s for case in generate.machine_cases("kafka-2.8") for s in case.sections}
    for needed in ("§2.1", "§2.2", "§2.3", "§3.3", "§4.1", "§4.3", "§4.7", "§5.1", "§5.2", "§5.3", "§6"):
        assert needed in sections
