"""``--known FILE``: acknowledged deviations are reported as known, stale entries are reported, bad files are exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kcspec.conformance import differential, known
from kcspec.conformance.adapters.inprocess import InProcessAdapter
from kcspec.conformance.session_mutants import StaleControllerEpoch
from kcspec.conformance.verdicts import Outcome, Verdict
from rich.console import Console

from tests.support.timing import scaled

KCSPEC = [sys.executable, "-m", "kcspec"]
MUTANT = "kcspec.conformance.session_mutants:StaleControllerEpoch"
EXAMPLES = 80
"""Random sequences of the differential runs here (seed 0): the mutant's two divergence signatures are met by the
first 80, so the in-process runs and the CLI's ``--differential`` see the same groups."""


def _file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "known.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _doc(*deviations: dict[str, Any]) -> dict[str, Any]:
    return {"format": known.FORMAT, "deviations": list(deviations)}


SIG = {"event": "BrokerFailure", "paths": ["$.state.zk.partition_states[*].leader_and_isr.leader"]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{", "not JSON"),
        ([], "expected a JSON object"),
        ({"format": "v0", "deviations": []}, "$.format: expected 'kcspec-known-deviations/1'"),
        ({"format": known.FORMAT}, "$.deviations: expected a list"),
        (_doc({"reason": "x"}), "$.deviations[0]: give exactly one of 'vector'"),
        (_doc({"vector": "a", "signature": SIG, "reason": "x"}), "$.deviations[0]: give exactly one"),
        (_doc({"vector": "a"}), "$.deviations[0]: every deviation needs a 'reason'"),
        (_doc({"vector": "a", "reason": " "}), "$.deviations[0].reason: expected a non-empty string"),
        (_doc({"vector": "a", "reason": "x", "why": 1}), "$.deviations[0]: unknown member(s) why"),
        (
            _doc({"signature": {"event": "BrokerFailure"}, "reason": "x"}),
            "$.deviations[0].signature: expected",
        ),
        (_doc({"signature": {**SIG, "event": "Nope"}, "reason": "x"}), "signature.event: unknown event kind"),
        (
            _doc({"signature": {**SIG, "paths": []}, "reason": "x"}),
            "signature.paths: expected a non-empty list",
        ),
        (
            _doc({"signature": {**SIG, "paths": ["state"]}, "reason": "x"}),
            "signature.paths[0]: expected a JSON",
        ),
        (
            _doc({"vector": "a", "reason": "x"}, {"vector": "a", "reason": "y"}),
            "$.deviations[1]: vector a is already listed at",
        ),
    ],
)
def test_a_bad_file_is_refused_with_its_place(tmp_path: Path, data: Any, message: str) -> None:
    path = _file(tmp_path, data)
    with pytest.raises(known.KnownFileError) as err:
        known.load(path)
    assert str(path) in str(err.value) and message in str(err.value)


def _outcome(ident: str, verdict: Verdict) -> Outcome:
    return Outcome(ident, "elections", ("§6",), "a vector", verdict, "1 difference(s)")


def test_vectors_known_stale_and_not_run() -> None:
    deviations = known.parse(
        _doc(
            {"vector": "v.failing", "reason": "we do it our way"},
            {"vector": "v.fixed", "reason": "was wrong once"},
            {"vector": "v.absent", "reason": "renamed since"},
        ),
        "known.json",
    )
    outcomes, notes = known.apply_to_vectors(
        [
            _outcome("v.failing", Verdict.failed),
            _outcome("v.fixed", Verdict.passed),
            _outcome("v.other", Verdict.failed),
        ],
        deviations,
    )
    by_id = {o.id: o for o in outcomes}
    assert by_id["v.failing"].verdict is Verdict.known
    assert "we do it our way" in by_id["v.failing"].reason
    assert by_id["v.fixed"].verdict is Verdict.failed
    assert "stale known deviation" in by_id["v.fixed"].reason
    assert by_id["v.other"].verdict is Verdict.failed
    assert notes == [
        "known deviation not checked (the vector did not run): vector v.absent (known.json $.deviations[2])"
    ]


def _signatures(tmp_path: Path) -> list[dict[str, Any]]:
    outcomes, _ = differential.run_differential(
        InProcessAdapter(StaleControllerEpoch()),
        profile="kafka-2.8",
        examples=EXAMPLES,
        seed=0,
        trace_dir=tmp_path / "traces",
        console=Console(file=io.StringIO()),
    )
    failed = [o for o in outcomes if o.verdict is Verdict.failed]
    assert failed, outcomes
    # every signature of every group: a group is known when an entry covers each signature met in it
    return [sig for o in failed for sig in json.loads(o.reason.split("; signatures met: ", 1)[1])]


def test_a_known_signature_is_reported_as_known(tmp_path: Path) -> None:
    signatures = _signatures(tmp_path)
    deviations = known.parse(
        _doc(*({"signature": s, "reason": "epoch read once"} for s in signatures)), "k.json"
    )
    outcomes, notes = differential.run_differential(
        InProcessAdapter(StaleControllerEpoch()),
        profile="kafka-2.8",
        examples=EXAMPLES,
        seed=0,
        trace_dir=tmp_path / "again",
        console=Console(file=io.StringIO()),
        known=deviations,
    )
    assert {o.verdict for o in outcomes} == {Verdict.known}, outcomes
    assert all("epoch read once" in o.reason for o in outcomes)
    assert not any("not seen" in n for n in notes), notes


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KCSPEC, *args], capture_output=True, text=True, timeout=scaled(600), cwd=cwd)


def test_cli_a_sut_with_its_deviation_acknowledged_passes_and_fails_without(tmp_path: Path) -> None:
    signatures = _signatures(tmp_path)
    path = _file(tmp_path, _doc(*({"signature": s, "reason": "epoch read once"} for s in signatures)))
    report = tmp_path / "report.json"
    args: tuple[str, ...] = (
        "conformance",
        "run",
        "--adapter",
        MUTANT,
        "--level",
        "controller",
        "--differential",
        str(EXAMPLES),
    )
    args += ("--json", str(report))
    without = _cli(*args, cwd=tmp_path)
    assert without.returncode == 1, without.stdout[-3000:] + without.stderr[-3000:]
    assert "FAIL" in without.stdout
    acknowledged = _cli(*args, "--known", str(path), cwd=tmp_path)
    assert acknowledged.returncode == 0, acknowledged.stdout[-3000:] + acknowledged.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["counts"]["known"] >= 1 and data["counts"]["failed"] == 0
    assert data["counts"]["passed"] > 1000


def test_cli_a_bad_known_file_is_a_usage_error(tmp_path: Path) -> None:
    path = _file(tmp_path, _doc({"vector": "a"}))
    result = _cli("conformance", "run", "--adapter", MUTANT, "--known", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "--known" in result.stderr and "$.deviations[0]: every deviation needs a 'reason'" in result.stderr


def test_cli_differential_below_the_controller_level_is_a_usage_error(tmp_path: Path) -> None:
    result = _cli(
        "conformance", "run", "--adapter", MUTANT, "--level", "elections", "--differential", "5", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "--differential" in result.stderr and "--level controller" in result.stderr


def test_cli_a_clean_sut_with_a_known_file_passes_and_a_stale_vector_entry_fails(tmp_path: Path) -> None:
    reference = "kcspec.conformance.reference_sut:ReferenceSut"
    vector = "kafka-2.8.elect.offline.isr-1.live-2_3.down-none.allow-0.unclean-0"
    signature_only = _file(tmp_path, _doc({"signature": SIG, "reason": "we announce dead brokers late"}))
    args = ("conformance", "run", "--adapter", reference, "--differential", "30")
    clean = _cli(*args, "--known", str(signature_only), cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-3000:]
    assert "known deviation not seen in this run" in " ".join(clean.stdout.split())
    stale_file = tmp_path / "stale.json"
    stale_file.write_text(json.dumps(_doc({"vector": vector, "reason": "fixed since"})))
    stale = _cli(*args, "--known", str(stale_file), cwd=tmp_path)
    assert stale.returncode == 1, stale.stdout[-3000:] + stale.stderr[-3000:]
    assert "stale known deviation" in " ".join(stale.stdout.split())
