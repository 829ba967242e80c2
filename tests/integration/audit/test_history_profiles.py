"""Each history of ``--history file``/``dir`` is audited with the profile its own formats say (unless
``--profile`` was given), which the report says per history; a rule a 0.8.0/0.8.1 log is documented to break
(the from-state logged after the update) is a finding "not checkable for this version" there, never a
violation that fails the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kcspec.audit import layouts

LOG_0_8_1 = [
    "[2014-02-02 02:01:45,400] TRACE Controller 0 epoch 2 changed partition [test,0] state from NotExists to New "
    "with assigned replicas 0 (state.change.logger)",
    "[2014-02-02 02:01:45,417] TRACE Controller 0 epoch 2 changed state of replica 0 for partition [test,0] to "
    "NewReplica (state.change.logger)",
    # 0.8.0/0.8.1 read the from-state after the update: NewPartition → Online is logged "from OnlinePartition"
    "[2014-02-02 02:01:45,545] TRACE Controller 0 epoch 2 changed partition [test,0] from OnlinePartition to "
    "OnlinePartition with leader 0 (state.change.logger)",
]
LOG_1_0 = [
    "[2018-08-29 15:38:17,255] TRACE [Controller id=0 epoch=1] Changed partition p-0 state from "
    "NonExistentPartition to NewPartition with assigned replicas 0 (state.change.logger)",
    "[2018-08-29 15:38:17,284] TRACE [Controller id=0 epoch=1] Changed partition p-0 from NewPartition to "
    "OnlinePartition with leader 0 (state.change.logger)",
]


def _logs(root: Path) -> tuple[Path, Path]:
    old, new = root / "old-0.8.1-state-change.log", root / "new-1.0-state-change.log"
    root.mkdir(parents=True, exist_ok=True)
    old.write_text("\n".join(LOG_0_8_1) + "\n")
    new.write_text("\n".join(LOG_1_0) + "\n")
    return old, new


def test_each_history_gets_the_profile_its_formats_say(tmp_path: Path) -> None:
    old, new = _logs(tmp_path)
    groups = {"old": [str(old)], "new": [str(new)]}
    per = layouts.version_report(groups, "kafka-2.8", per_history=True)["histories"]
    assert per["new"]["profile_used"] == "kafka-1.1", per["new"]
    # no profile models 0.8: the run's profile, and the from-state check is not made there
    assert per["old"]["profile_used"] == "kafka-2.8", per["old"]
    assert per["old"]["unchecked_rules"] == ["previous-state-mismatch"], per["old"]
    assert per["new"]["unchecked_rules"] == [], per["new"]
    given = layouts.version_report(groups, "kafka-2.8")["histories"]
    assert {h["profile_used"] for h in given.values()} == {"kafka-2.8"}, "an explicit --profile is kept"


@pytest.mark.spark
def test_the_0_8_from_state_quirk_is_a_finding_not_a_violation(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")
    from click.testing import CliRunner

    from kcspec.commands.audit import command

    _logs(tmp_path / "logs")
    out = tmp_path / "out"
    result = CliRunner().invoke(command, [str(tmp_path / "logs"), "--history", "file", "--out", str(out)])
    assert result.exit_code == 0, result.output
    violations = [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines()]
    assert not [v for v in violations if v["rule"] == "previous-state-mismatch"], violations
    found: list[dict[str, Any]] = [json.loads(x) for x in (out / "findings.jsonl").read_text().splitlines()]
    moot = [f for f in found if f["finding"] == layouts.NOT_CHECKABLE]
    assert [(Path(f["file"]).name, f["line"]) for f in moot] == [("old-0.8.1-state-change.log", 3)], found
    stats = json.loads((out / "stats.json").read_text())
    used = {Path(k).name: h["profile_used"] for k, h in stats["version"]["histories"].items()}
    assert used == {"old-0.8.1-state-change.log": "kafka-2.8", "new-1.0-state-change.log": "kafka-1.1"}, used
