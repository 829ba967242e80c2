"""Divergences grouped by cause: on the project's own buggy example and its session mutants, each bug gives at
most 3 divergence groups (before grouping by cause, one root cause gave up to 18 signatures), each group with
the number of sequences that met it and one shrunk trace."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from kcspec.conformance import differential
from kcspec.conformance.adapters.inprocess import ControllerSut, InProcessAdapter
from kcspec.conformance.session_mutants import ORDER_MUTANTS
from kcspec.conformance.signature import Cause, Signature, part_of
from kcspec.conformance.verdicts import Verdict
from rich.console import Console

from tests.support.paths import ROOT

EXAMPLES = ROOT / "conformance" / "examples"


def _buggy() -> type[ControllerSut]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from buggy_controller import BuggyController  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(EXAMPLES))
    return BuggyController  # type: ignore[no-any-return]


def test_a_cause_is_the_first_part_of_the_reply_that_differs() -> None:
    sig = Signature(
        "ControllerFailover",
        (
            "$.requests[LeaderAndIsr].leader",
            "$.state.controller.leadership[*]",
            "$.state.zk.partition_states[*]",
        ),
    )
    assert Cause.of(sig) == Cause("ZooKeeper state")
    assert Cause.of(sig).path == "$.state.zk.partition_states"
    requests = Signature("BrokerFailure", ("$.requests[UpdateMetadata].controller_epoch",))
    assert Cause.of(requests).path == "$.requests[*].controller_epoch"
    assert part_of("$.state.controller.controller_id") == "resignation"
    assert part_of("<timeout>") == "timeout"


@pytest.mark.integration
@pytest.mark.parametrize(
    "make",
    # the session mutants' groups are checked by test_session_mutants.py, in the same differential run that
    # shows the vectors miss them (one run per mutant instead of two)
    [_buggy, *(lambda c=c: c for c in ORDER_MUTANTS)],
    ids=["buggy-controller", *(c.name for c in ORDER_MUTANTS)],
)
def test_each_bug_gives_at_most_three_groups(make: object, tmp_path: Path) -> None:
    cls = make()  # type: ignore[operator]
    outcomes, _notes = differential.run_differential(
        InProcessAdapter(cls()),
        profile="kafka-2.8",
        examples=differential.DEFAULT_EXAMPLES,
        seed=0,
        trace_dir=tmp_path,
        console=Console(file=io.StringIO()),
    )
    failed = [o for o in outcomes if o.verdict is Verdict.failed]
    assert 1 <= len(failed) <= 3, [o.id for o in outcomes]
    assert len(list(tmp_path.glob("divergence-*.json"))) == len(failed)
    for o in failed:
        assert " sequence(s))" in o.description and "trace " in o.reason, o
