"""A SUT that hangs is errored and ``--budget`` bounds the run: an in-process call that never returns is timed
out (it runs in a worker thread; a thread cannot be killed, so the run stops there, reporting what it has),
and a subprocess SUT that never answers ``hello`` is given up after the budget, not after the 30 s start-up
grace."""

from __future__ import annotations

import sys
import time

import pytest
from kcspec.conformance import runner
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from kcspec.conformance.reference_sut import SpecSut
from kcspec.conformance.vectors.model import Level, Vector
from kcspec.conformance.verdicts import Verdict
from kcspec.spec.vocabulary import ElectionInput, ElectionResult, ElectionStrategy

from kcspec.commands.conformance import _load_adapter
from tests.integration.conformance.test_runner_robustness import sample_vectors


class HangingSut(SpecSut):
    """Answers the first election, then never returns from the second."""

    calls = 0

    def elect(self, strategy: ElectionStrategy, inp: ElectionInput) -> ElectionResult:
        type(self).calls += 1
        if type(self).calls >= 2:
            time.sleep(3600)
        return super().elect(strategy, inp)


@pytest.fixture(scope="module")
def election_vectors() -> list[Vector]:
    return sample_vectors()


def test_a_hung_in_process_call_is_errored_and_stops_the_run(election_vectors: list[Vector]) -> None:
    started = time.monotonic()
    report = runner.run(
        InProcessAdapter(HangingSut(), timeout=0.5),
        election_vectors,
        profile="kafka-2.8",
        level=Level.elections,
    )
    elapsed = time.monotonic() - started
    assert elapsed < 10, f"the run took {elapsed:.1f} s with a 0.5 s timeout"
    verdicts = [o.verdict for o in report.outcomes]
    assert verdicts[0] is Verdict.passed, report.outcomes[0]
    assert verdicts[1] is Verdict.errored, report.outcomes[1]
    assert "did not return within 0.5 s" in report.outcomes[1].reason
    assert "the run stops here" in report.outcomes[1].reason
    assert set(verdicts[2:]) == {Verdict.skipped}, "nothing is sent to a SUT whose call still runs"
    assert "did not return" in report.outcomes[2].reason
    assert report.exit_code() == 1, "a SUT error fails the run (README)"


def test_the_conformance_command_runs_an_in_process_sut_under_its_timeout() -> None:
    adapter = _load_adapter(None, "kcspec.conformance.reference_sut:SpecSut", 1.5, 1 << 20)
    assert isinstance(adapter, InProcessAdapter) and adapter.timeout == 1.5


def test_the_budget_bounds_a_subprocess_sut_that_never_answers_hello() -> None:
    adapter = _load_adapter(
        f"{sys.executable} -c 'import time; time.sleep(60)'", None, 1.0, 1 << 20, budget=2.0
    )
    assert isinstance(adapter, SubprocessAdapter)
    started = time.monotonic()
    with pytest.raises(runner.SessionError, match="no reply within 2 s"):
        runner.open_session(adapter, "kafka-2.8")
    elapsed = time.monotonic() - started
    assert elapsed < 8, f"giving up on hello took {elapsed:.1f} s with --budget 2"
