"""The differential search against a SUT that crashes and then cannot be restarted: the run reports it as
errored (with its measured seconds) and keeps the vectors' results; nothing of the SUT is left running."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.integration.conformance.test_runner_robustness import FAKE, _cli, sample_vectors


def test_sut_that_cannot_be_restarted_during_differential_is_errored_and_results_are_kept(
    tmp_path: Path, sut_pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kcspec.conformance.vectors import files

    vectors = tmp_path / "vectors"
    files.export(sample_vectors()[:3], vectors)
    monkeypatch.setenv("FAKE_SUT_MARKER", str(tmp_path / "crashed"))
    out = tmp_path / "report.json"
    sut = f"{sys.executable} {FAKE} crash_for_good"
    code, text = _cli(
        [
            "conformance",
            "run",
            "--sut",
            sut,
            "--vectors",
            str(vectors),
            "--differential",
            "5",
            "--trace-dir",
            str(tmp_path / "traces"),
            "--json",
            str(out),
        ]
    )
    assert code == 1, text
    assert "Traceback" not in text, text
    data = json.loads(out.read_text())
    by_level: dict[str, list[dict[str, object]]] = {}
    for o in data["outcomes"]:
        by_level.setdefault(str(o["level"]), []).append(o)
    assert len(by_level["elections"]) == 3, "the vectors' results are kept"
    differential = by_level["controller"]
    gone = [
        o
        for o in differential
        if o["verdict"] == "errored" and "could not be restarted" in str(o.get("reason", ""))
    ]
    assert gone, differential
    assert all(float(str(o["seconds"])) > 0 for o in differential), "the differential's seconds are measured"
