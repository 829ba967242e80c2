"""The runner never crashes and never lies: an in-process SUT's ``sys.exit()`` or own ``KeyboardInterrupt``
is an errored verdict (a real interrupt still stops the run); a run in which no vector ran is not a pass
(exit 2 with a message); the JUnit XML is well-formed whatever bytes the SUT wrote (checked with an XML
parser); vectors with ZooKeeper faults in their state require ``fault_injection``."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from kcspec.conformance import runner
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.protocol import messages as m
from kcspec.conformance.reports import html_report, json_report, junit
from kcspec.conformance.vectors import generate, inputs
from kcspec.conformance.vectors.model import Level, Vector
from kcspec.conformance.verdicts import Outcome, RunReport, SutInfo, Verdict

from tests.support.fakes import inprocess_fakes as fakes
from tests.support.paths import SUPPORT
from tests.support.processes import left_running
from tests.support.timing import scaled

FAKE = SUPPORT / "fakes" / "fake_sut.py"
FAKES_MODULE = "tests.support.fakes.inprocess_fakes"


def sample_vectors() -> list[Vector]:
    """Every 20th election vector (about 50), answered by the spec."""
    from kcspec.conformance.reference_sut import SpecSut

    gen = generate.Generation()
    out = []
    for case in list(inputs.election_cases())[::20]:
        expected = generate._settle("kafka-2.8", case, [SpecSut()], gen)
        assert expected is not None, gen.unanswered[:1]
        out.append(generate._vector("kafka-2.8", case, expected))
    return out


@pytest.fixture(scope="module")
def election_vectors() -> list[Vector]:
    return sample_vectors()


@pytest.mark.parametrize(
    ("sut", "fragment"),
    [
        (fakes.ExitingSut, "SystemExit (the SUT called sys.exit(0))"),
        (fakes.SelfInterruptingSut, "KeyboardInterrupt: raised by the SUT"),
    ],
)
def test_base_exceptions_of_an_in_process_sut_are_errored_verdicts(
    sut: type[fakes._Elections], fragment: str, election_vectors: list[Vector]
) -> None:
    sut.calls = 0
    report = runner.run(InProcessAdapter(sut()), election_vectors, profile="kafka-2.8", level=Level.elections)
    errored = [o for o in report.outcomes if o.verdict is Verdict.errored]
    assert len(report.outcomes) == len(election_vectors), "the run goes on after the SUT's exception"
    assert len(errored) == len(election_vectors) // 2
    assert all(fragment in o.reason for o in errored), errored[0].reason
    assert report.exit_code() == 1


def test_a_real_interrupt_while_the_in_process_sut_runs_stops_the_run(election_vectors: list[Vector]) -> None:
    fakes.SignalledSut.calls = 0
    with pytest.raises(KeyboardInterrupt):
        runner.run(
            InProcessAdapter(fakes.SignalledSut()),
            election_vectors,
            profile="kafka-2.8",
            level=Level.elections,
        )


def _cli(args: list[str]) -> tuple[int, str]:
    from kcspec.cli import main

    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def test_sys_exit_in_process_sut_does_not_end_kcspec_with_0(tmp_path: Path) -> None:
    fakes.ExitingSut.calls = 0
    out = tmp_path / "r.json"
    code, text = _cli(
        [
            "conformance",
            "run",
            "--adapter",
            f"{FAKES_MODULE}:ExitingSut",
            "--level",
            "elections",
            "--json",
            str(out),
        ]
    )
    assert code == 1, text
    data = json.loads(out.read_text())
    assert data["counts"]["errored"] > 0 and data["counts"]["passed"] > 0
    assert "SystemExit" in text


def test_no_capabilities_is_not_a_pass(tmp_path: Path) -> None:
    code, text = _cli(
        ["conformance", "run", "--adapter", f"{FAKES_MODULE}:NoCapabilitiesSut", "--level", "elections"]
    )
    assert code == 2, text
    assert "NOTHING RAN" in text and "no vector ran" in text and "capabilities none" in text
    assert "PASS" not in text and "FAIL" not in text


def test_no_capabilities_through_the_subprocess_path(election_vectors: list[Vector], sut_pids: Path) -> None:
    adapter = SubprocessAdapter([sys.executable, str(FAKE), "no_capabilities"], timeout=scaled(2.0))
    report = runner.run(adapter, election_vectors, profile="kafka-2.8", level=Level.elections)
    assert {o.verdict for o in report.outcomes} == {Verdict.not_supported}
    assert not report.ok and report.exit_code() == 2
    assert "no vector ran" in report.nothing_ran()
    assert json.loads(json_report.render(report))["passed"] is False
    page = html_report.render(report)
    assert "NOTHING RAN" in page and "no vector ran" in page and "PASS" not in page


def test_junit_is_well_formed_for_ansi_nul_and_invalid_utf8(
    election_vectors: list[Vector], sut_pids: Path
) -> None:
    adapter = SubprocessAdapter([sys.executable, str(FAKE), "ansi", "1"], timeout=scaled(2.0))
    report = runner.run(adapter, election_vectors[:3], profile="kafka-2.8", level=Level.elections)
    errored = [o for o in report.outcomes if o.verdict is Verdict.errored]
    assert errored and "\x1b[31m" in errored[0].stderr and "\x00" in errored[0].stderr
    root = ET.fromstring(junit.render(report))
    system_err = root.findall(".//system-err")
    assert system_err and "red alert" in (system_err[0].text or "")
    assert "\\x00" in (system_err[0].text or "")


_ANY_TEXT = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=40),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", "replace")),
)


@settings(max_examples=200, deadline=None)
@given(reason=_ANY_TEXT, stderr=_ANY_TEXT, ident=_ANY_TEXT, description=_ANY_TEXT)
def test_junit_is_well_formed_for_any_text(reason: str, stderr: str, ident: str, description: str) -> None:
    outcomes = tuple(
        Outcome(
            ident, "elections", ("§6",), description, verdict, reason=reason, stderr=stderr, request=stderr
        )
        for verdict in Verdict
    )
    report = RunReport(SutInfo(stderr, name=ident), "kafka-2.8", "elections", outcomes, 0.0, 0)
    root = ET.fromstring(junit.render(report))  # raises ParseError if not well-formed
    assert len(root.findall(".//testcase")) == len(Verdict)


def test_zookeeper_faults_in_the_state_require_fault_injection() -> None:
    gen = generate.generate(["kafka-2.8"])
    by_id = {v.id: v for v in gen.vectors}
    vector = by_id["kafka-2.8.event.zk-faults.not-enabled.BrokerStartup"]
    assert m.Capability.fault_injection in vector.capabilities
    offenders = [
        v.id
        for v in gen.vectors
        if v.state is not None and v.state.zk.faults and m.Capability.fault_injection not in v.capabilities
    ]
    assert not offenders, offenders[:5]


def test_a_crash_never_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    from kcspec.conformance import runner as the_runner

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the runner")

    monkeypatch.setattr(the_runner, "run", crash)
    code, text = _cli(
        ["conformance", "run", "--adapter", f"{FAKES_MODULE}:ExitingSut", "--level", "elections"]
    )
    assert code == 3, text
    assert "internal error: RuntimeError: a bug in the runner" in text and "not a verdict" in text


def test_values_of_the_wrong_types_from_an_in_process_sut_are_errored(election_vectors: list[Vector]) -> None:
    fakes.MistypedSut.calls = 0
    report = runner.run(
        InProcessAdapter(fakes.MistypedSut()), election_vectors, profile="kafka-2.8", level=Level.elections
    )
    assert report.sut.capabilities == ("elections",), "the hello is read in its canonical form"
    errored = [o for o in report.outcomes if o.verdict is Verdict.errored]
    assert len(errored) == len(election_vectors) // 2
    assert all("not a valid protocol value" in o.reason for o in errored), errored[0].reason
    assert junit.render(report) and json_report.render(report)


def test_an_in_process_sut_whose_constructor_raises_is_a_usage_error() -> None:
    code, text = _cli(
        ["conformance", "run", "--adapter", f"{FAKES_MODULE}:BrokenConstructorSut", "--level", "elections"]
    )
    assert code == 2, text
    assert "BrokenConstructorSut() raised RuntimeError: cannot connect" in text
    code, text = _cli(
        ["conformance", "run", "--adapter", f"{FAKES_MODULE}:ExitingConstructorSut", "--level", "elections"]
    )
    assert code == 2, text
    assert "ExitingConstructorSut() raised SystemExit" in text


def test_reports_are_written_whatever_the_sut_answers(
    election_vectors: list[Vector], tmp_path: Path, sut_pids: Path
) -> None:
    from kcspec.conformance.vectors import files

    files.export(election_vectors[:4], tmp_path / "vectors")
    sut = f"{sys.executable} {FAKE} surrogate 1"
    paths = {name: tmp_path / f"report.{name}" for name in ("json", "junit", "html")}
    args = [
        "conformance",
        "run",
        "--sut",
        sut,
        "--level",
        "elections",
        "--vectors",
        str(tmp_path / "vectors"),
    ]
    for name, path in paths.items():
        args += [f"--{name}", str(path)]
    code, text = _cli(args)
    assert code == 1, text
    assert "internal error" not in text, text
    data = json.loads(paths["json"].read_text())
    errored = [o for o in data["outcomes"] if o["verdict"] == "errored"]
    assert errored and all("unpaired UTF-16 surrogate" in o["reason"] for o in errored)
    ET.fromstring(paths["junit"].read_text())
    assert "errored" in paths["html"].read_text()


def test_a_sut_refusing_hello_is_a_session_error_and_is_stopped(
    election_vectors: list[Vector], sut_pids: Path
) -> None:
    adapter = SubprocessAdapter([sys.executable, str(FAKE), "refuse_hello"], timeout=scaled(2.0))
    with pytest.raises(runner.SessionError, match="refused hello: unsupported: fake: not today"):
        runner.run(adapter, election_vectors, profile="kafka-2.8", level=Level.elections)
    # the adapter (and the SUT's stdin) still exists: the SUT, waiting for input, must have been stopped
    assert not left_running(sut_pids), "the SUT that refused hello is still running"
    del adapter
