"""``kcspec audit`` on a Kafka 2.1-style broker whose ZooKeeper state was reset (its controller log says
``Epoch incremented to 1 and epoch zk version is now 1`` after epoch 57): the new controller's writes are no
stale-controller writes; a stale write inside one era is still found, and names the line it compares with
(the newer epoch's election); the headline notes where the epochs start over."""

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

CTRL = "kafka.controller.KafkaController"
SC = "state.change.logger"


def _elected(day: str, ts: str, broker: int, epoch: int, zk_version: int) -> str:
    return (
        f"[{day} {ts}] INFO [Controller id={broker}] {broker} successfully elected as the controller. "
        f"Epoch incremented to {epoch} and epoch zk version is now {zk_version} ({CTRL})"
    )


def _created(day: str, ts: str, broker: int, epoch: int, partition: str) -> str:
    return (
        f"[{day} {ts}] TRACE [Controller id={broker} epoch={epoch}] Changed partition {partition} state "
        f"from NonExistentPartition to NewPartition with assigned replicas 1 ({SC})"
    )


def _online(day: str, ts: str, broker: int, epoch: int, partition: str, leader_epoch: int) -> str:
    return (
        f"[{day} {ts}] TRACE [Controller id={broker} epoch={epoch}] Changed partition {partition} from "
        f"NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch={leader_epoch}, "
        f"isr=List(1), zkVersion=0) ({SC})"
    )


def _replica(day: str, ts: str, broker: int, epoch: int, partition: str, frm: str, to: str) -> str:
    return (
        f"[{day} {ts}] TRACE [Controller id={broker} epoch={epoch}] Changed state of replica 1 for partition "
        f"{partition} from {frm} to {to} ({SC})"
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _history(day: str, ts: str, broker: int, epoch: int, partition: str) -> list[str]:
    """A topic's creation by the controller of ``epoch``: its replica and partition transitions."""
    h, m, s = ts.split(":")
    at = [f"{h}:{m}:{int(s) + i:02d},000" for i in range(4)]
    return [
        _replica(day, at[0], broker, epoch, partition, "NonExistentReplica", "NewReplica"),
        _created(day, at[1], broker, epoch, partition),
        _online(day, at[2], broker, epoch, partition, 0),
        _replica(day, at[3], broker, epoch, partition, "NewReplica", "OnlineReplica"),
    ]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-eras")


def _audit(tmp_path: Path, *paths: Path) -> tuple[int, str, list[dict[str, Any]], dict[str, Any]]:
    out = tmp_path / "out"
    result = CliRunner().invoke(audit_command, [*map(str, paths), "--out", str(out)], catch_exceptions=False)
    found = [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()]
    return result.exit_code, result.output, found, json.loads((out / "verdict.json").read_text())


def test_a_zookeeper_reset_starts_a_new_era_without_violations(spark: Any, tmp_path: Path) -> None:
    d, e = "2019-03-04", "2019-03-05"
    logs = tmp_path / "logs"
    ctl = _write(
        logs / "controller.log",
        [_elected(d, "10:00:00,000", 1, 57, 56), _elected(e, "09:00:00,000", 1, 1, 1)],
    )
    _write(
        logs / "state-change.log",
        [*_history(d, "10:00:10", 1, 57, "orders-0"), *_history(e, "09:00:10", 1, 1, "orders-0")],
    )
    code, output, found, verdict = _audit(tmp_path, logs)
    assert code == 0 and found == [], f"exit {code}: {found}\n{output[-2000:]}"
    assert "controller epochs start over at 2019-03-05 09:00:00,000" in verdict["headline"], verdict
    assert f"{ctl.resolve()}:2" in verdict["headline"], verdict
    assert verdict["checked"] == 8, verdict


def test_a_stale_write_inside_one_era_is_found_and_names_the_newer_epochs_line(
    spark: Any, tmp_path: Path
) -> None:
    d, e = "2019-03-04", "2019-03-05"
    logs = tmp_path / "logs"
    _write(logs / "broker-1" / "controller.log", [_elected(d, "10:00:00,000", 1, 5, 4)])
    newer = _write(logs / "broker-2" / "controller.log", [_elected(d, "10:05:00,000", 2, 6, 5)])
    stale = _write(
        logs / "broker-1" / "state-change.log",
        [*_history(d, "10:00:10", 1, 5, "orders-0"), _created(d, "10:10:00,000", 1, 5, "orders-1")],
    )
    # then the ZooKeeper state is reset: epoch 1 writes are not compared with epochs 5 and 6
    _write(logs / "broker-2" / "controller.log.1", [_elected(e, "09:00:00,000", 2, 1, 1)])
    _write(logs / "broker-2" / "state-change.log", _history(e, "09:00:10", 2, 1, "orders-2"))
    code, output, found, _ = _audit(tmp_path, logs / "broker-1", logs / "broker-2")
    assert code == 1, f"exit {code}\n{output[-2000:]}"
    assert [(v["rule"], v["file"], v["line"]) for v in found] == [
        ("stale-controller-write", str(stale.resolve()), 5)
    ], found
    assert (found[0]["compared_file"], found[0]["compared_line"]) == (str(newer.resolve()), 1), found
    assert f"({newer.resolve()}:1)" in found[0]["message"], found[0]["message"]


def test_a_flood_of_stale_writes_is_one_group_with_a_count(spark: Any, tmp_path: Path) -> None:
    d = "2019-03-04"
    logs = tmp_path / "logs"
    _write(
        logs / "controller.log", [_elected(d, "10:00:00,000", 1, 5, 4), _elected(d, "10:05:00,000", 2, 6, 5)]
    )
    _write(
        logs / "state-change.log", [_created(d, f"10:10:{i:02d},000", 1, 5, f"orders-{i}") for i in range(30)]
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(audit_command, [str(logs), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 1, result.output[-2000:]
    stats = json.loads((out / "stats.json").read_text())
    [group] = stats["violation_groups"]
    assert (group["rule"], group["count"], len(group["first"])) == ("stale-controller-write", 30, 3), group
    assert [x["line"] for x in group["first"]] == [1, 2, 3], group
    assert all(x["compared_line"] == 2 and x["compared_text"] for x in group["first"]), group
    assert "[stale-controller-write] x30: " in result.output, result.output[-3000:]
    # the rule leads back to the invariant of spec/ it checks (§9, I8)
    assert group["spec"] and all(p.startswith("spec/invariants.py:") for p in group["spec"]), group
    assert f"checks {', '.join(group['spec'])}" in result.output, result.output[-3000:]
    assert result.output.count("30 violation(s)") == 2, result.output[
        -3000:
    ]  # the verdict, and the group header
