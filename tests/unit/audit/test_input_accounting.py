"""Every input accounted for, in process: a folder that cannot be listed is named as not audited (the rest is
still found), and the verdict of a run with such a folder, or with no state transition checked, is not clean."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from kcspec.audit import verdict
from kcspec.audit.spark_job import expand_inputs

LINE = (
    "[2021-06-01 10:00:01,000] TRACE [Controller id=1 epoch=3] Changed state of replica 1 for partition "
    "orders-0 from NonExistentReplica to NewReplica (state.change.logger)\n"
)


def test_an_unreadable_folder_is_named_and_the_rest_is_found(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "logs" / "locked").mkdir(parents=True)
    (tmp_path / "logs" / "state-change.log").write_text(LINE)
    (tmp_path / "logs" / "locked" / "state-change.log").write_text(LINE)
    # this process may be root, which mode 000 does not stop: the folder fails as an unreadable one would
    real = os.scandir
    locked = str(tmp_path / "logs" / "locked")

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = expand_inputs([str(tmp_path / "logs")])
    assert found.kafka_logs == (str((tmp_path / "logs" / "state-change.log").resolve()),)
    assert found.unreadable == ((str(Path(locked).resolve()), "folder not readable (Permission denied)"),)


def _file(name: str, records: int) -> dict[str, Any]:
    return {"file": name, "read": records, "record": records, "continuation": 0, "blank": 0, "quarantined": 0}


def test_a_folder_not_audited_or_nothing_checked_is_not_clean() -> None:
    ok = verdict.judge(3, 3, 0, 0, [_file("a.log", 3)], checked=3)
    assert ok.exit_code == verdict.CLEAN and ok.headline == "no violations; 3 state transition(s) checked"
    locked = verdict.judge(
        3, 3, 0, 0, [_file("a.log", 3)], checked=3, unaudited=["/x/locked: folder not readable"]
    )
    assert locked.exit_code == verdict.BAD_INPUT and "/x/locked" in locked.problems[0], locked
    assert "no violations" not in locked.headline and "NOT CLEAN" in locked.headline, locked.headline
    nothing = verdict.judge(3, 3, 0, 0, [_file("kraft.log", 3)], checked=0)
    assert nothing.exit_code == verdict.BAD_INPUT, nothing
    assert "nothing checked" in nothing.problems[0] and "0 state transition(s) checked" in nothing.headline


def test_kraft_and_migration_logs_are_named_out_of_the_model(tmp_path: Path) -> None:
    from kcspec.audit.layouts import version_report

    kraft = tmp_path / "controller.log"
    kraft.write_text(
        "[2023-05-10 12:00:00,123] INFO [QuorumController id=1] Becoming the active controller at epoch 4, "
        "committed offset 120, committed epoch 3 (org.apache.kafka.controller.QuorumController)\n"
    )
    migration = tmp_path / "server.log"
    migration.write_text(
        "[2023-05-10 12:01:00,000] INFO [KRaftMigrationDriver id=3000] Completed migration of metadata from "
        "ZooKeeper to KRaft. 120 records were generated in 54 ms across 1 batches. "
        "(org.apache.kafka.metadata.migration.KRaftMigrationDriver)\n"
    )
    zk = tmp_path / "state-change.log"
    zk.write_text(LINE)
    report = version_report({"all files": [str(kraft), str(migration), str(zk)]}, "kafka-2.8")
    assert report["out_of_model"] == [
        f"{kraft}: a KRaft controller log (line 1), out of the model (ZooKeeper-mode controllers only)",
        f"{migration}: a ZooKeeper-to-KRaft migration log (line 1), out of the model (ZooKeeper-mode "
        "controllers only)",
    ]
    assert f"{kraft}: a KRaft controller log" in report["warning"], report
