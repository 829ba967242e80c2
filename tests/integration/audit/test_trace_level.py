"""The level of a log is read from the log: a controller epoch whose state-change log holds TRACE-only lines
(replica transitions) hides no transition, so ``previous-state-mismatch`` fires for replicas and partitions
under both profiles; under kafka-2.8 an INFO log of the same partition history stays explained by the
transitions INFO hides.
Samples in Kafka 2.x's format (``[Controller id=<c> epoch=<e>] Changed state of replica …``, FORMATS.md §2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from click.testing import CliRunner

from kcspec.commands.audit import command as audit_command

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SC = "state.change.logger"
DAY = "2021-06-01"


def _replica(s: int, level: str, replica: int, tp: str, frm: str, to: str) -> str:
    return (
        f"[{DAY} 10:00:{s:02d},000] {level} [Controller id=1 epoch=3] Changed state of replica {replica} for "
        f"partition {tp} from {frm} to {to} ({SC})"
    )


def _partition(s: int, level: str, tp: str, frm: str, leader_epoch: int) -> str:
    return (
        f"[{DAY} 10:00:{s:02d},000] {level} [Controller id=1 epoch=3] Changed partition {tp} from {frm} to "
        f"OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch={leader_epoch}, isr=List(1), "
        f"zkVersion={leader_epoch}) ({SC})"
    )


def _created(s: int, level: str, tp: str) -> str:
    return (
        f"[{DAY} 10:00:{s:02d},000] {level} [Controller id=1 epoch=3] Changed partition {tp} state from "
        f"NonExistentPartition to NewPartition with assigned replicas 1 ({SC})"
    )


TRACED = [
    _replica(1, "TRACE", 1, "orders-0", "NonExistentReplica", "NewReplica"),
    _replica(2, "TRACE", 1, "orders-0", "NewReplica", "OnlineReplica"),
    _replica(3, "TRACE", 1, "orders-0", "NewReplica", "OnlineReplica"),  # line 3: logged twice in a row
    _replica(4, "TRACE", 2, "orders-0", "NonExistentReplica", "NewReplica"),
    _replica(5, "TRACE", 2, "orders-0", "NewReplica", "OnlineReplica"),
    # line 6: replica 2 is online, not ReplicaDeletionStarted
    _replica(6, "TRACE", 2, "orders-0", "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
    _created(7, "TRACE", "orders-1"),
    _partition(8, "TRACE", "orders-1", "NewPartition", 0),
    _partition(9, "TRACE", "orders-1", "OfflinePartition", 1),  # line 9: it was online, not offline
]
INFO = [
    _created(7, "INFO", "orders-1"),
    _partition(8, "INFO", "orders-1", "NewPartition", 0),
    # at INFO, the Online -> Offline line is not logged (TRACE only): nothing to report
    _partition(9, "INFO", "orders-1", "OfflinePartition", 1),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-trace-level")


@pytest.mark.parametrize("profile", ["kafka-2.8", "kafka-1.1"])
def test_a_trace_log_checks_every_transition(spark: Any, tmp_path: Path, profile: str) -> None:
    traced = tmp_path / "traced" / "state-change.log"
    info = tmp_path / "info" / "state-change.log"
    for path, lines in ((traced, TRACED), (info, INFO)):
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    args = [str(tmp_path / "traced"), str(tmp_path / "info"), "--history", "dir", "--profile", profile]
    result = CliRunner().invoke(audit_command, [*args, "--out", str(out)], catch_exceptions=False)
    found = [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()]
    mismatches = {
        (Path(v["file"]).parent.name, v["line"], v["machine"])
        for v in found
        if v["rule"] == "previous-state-mismatch" and Path(v["file"]).parent.name == "traced"
    }
    assert mismatches == {
        ("traced", 3, "replica"),
        ("traced", 6, "replica"),
        ("traced", 9, "partition"),
    }, f"exit {result.exit_code}: {found}"
    by_line = {(v["line"], v["rule"]) for v in found if Path(v["file"]).parent.name == "traced"}
    assert (6, "invalid-from-tracked") in by_line, found
    compared = {
        v["line"]: v["compared_line"]
        for v in found
        if v["rule"] == "previous-state-mismatch" and Path(v["file"]).parent.name == "traced"
    }
    assert compared == {3: 2, 6: 5, 9: 8}, found
    info_found = {(v["line"], v["rule"]) for v in found if Path(v["file"]).parent.name == "info"}
    if profile == "kafka-2.8":
        assert info_found == set(), found
    else:
        # Kafka 1.1 logs every partition transition at TRACE only: a partition transition line shows a TRACE log
        assert info_found == {(3, "previous-state-mismatch")}, found
    assert result.exit_code == 1
