"""Findings, violations with their lines, the Kafka version a log's formats say, and what the summaries show
first. The functions without Spark are tested directly; one audit run checks them end to end."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kcspec.audit import layouts
from kcspec.audit.findings import attention, line_texts
from kcspec.audit.verdict import judge
from kcspec.model.kafka_log.reference_parser import parse_lines

SCL = "(state.change.logger)"

OLD_0_8_1 = [
    # FORMATS.md §1/§2, 0.8.1-dev: the from-state is read after the update
    f"[2014-03-01 10:00:00,000] TRACE Controller 1 epoch 3 changed partition [t,0] state from NotExists to New "
    f"with assigned replicas 1,2 {SCL}",
    f"[2014-03-01 10:00:00,100] TRACE Controller 1 epoch 3 changed partition [t,0] from OnlinePartition to "
    f"OnlinePartition with leader 1 {SCL}",
    f"[2014-03-01 10:00:00,200] TRACE Controller 1 epoch 3 changed state of replica 1 for partition [t,0] to "
    f"OnlineReplica {SCL}",
]

BROKER_1 = [
    "kafka_1  | [2021-01-10 14:19:29,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch "
    "incremented to 9 and epoch zk version is now 8 (kafka.controller.KafkaController)",
    f"kafka_1  | [2021-01-10 14:19:29,100] INFO [Controller id=1 epoch=9] Changed partition t-0 state from "
    f"NonExistentPartition to NewPartition with assigned replicas 1,2 {SCL}",
    f"kafka_1  | [2021-01-10 14:19:29,200] INFO [Controller id=1 epoch=9] Changed partition t-0 from NewPartition "
    f"to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0) {SCL}",
    f"kafka_1  | [2021-01-10 14:19:30,000] INFO [Controller id=1 epoch=9] Changed partition t-0 from "
    f"OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=5, isr=List(2), "
    f"zkVersion=1) {SCL}",
    # a transition no code path of Kafka requests from that state (deletion starts from OfflineReplica): a fault
    f"kafka_1  | [2021-01-10 14:19:31,000] ERROR [Controller id=1 epoch=9] Controller 1 epoch 9 initiated state "
    f"change of replica 2 for partition t-0 from OnlineReplica to ReplicaDeletionStarted failed {SCL}",
    "kafka_1  | java.lang.IllegalStateException: Replica [Topic=t,Partition=0,Replica=2] should be in the "
    "OfflineReplica states before moving to ReplicaDeletionStarted state. Instead it is in OnlineReplica state",
    "kafka_1  | \tat kafka.controller.ZkReplicaStateMachine.logInvalidTransition(ReplicaStateMachine.scala:442)",
    # Kafka's normal behaviour during a topic's deletion (§8: a dead broker's replicas go to Ineligible whatever
    # their state): a finding of the lowest severity
    f"kafka_1  | [2021-01-10 14:19:31,500] ERROR [Controller id=1 epoch=9] Controller 1 epoch 9 initiated state "
    f"change of replica 2 for partition t-0 from ReplicaDeletionSuccessful to ReplicaDeletionIneligible failed "
    f"{SCL}",
    "kafka_1  | java.lang.IllegalStateException: Replica [Topic=t,Partition=0,Replica=2] should be in the "
    "OfflineReplica,ReplicaDeletionStarted states before moving to ReplicaDeletionIneligible state. Instead it is "
    "in ReplicaDeletionSuccessful state",
]
BROKER_2 = [
    # the same controller's later write, in another broker's folder: leader epoch 3 after 5 (a violation)
    "2021-01-10 14:19:32 INFO state.change.logger:76 - [Controller id=1 epoch=9] Changed partition t-0 from "
    "OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=3, isr=List(2), "
    "zkVersion=2)",
    f"[2021-01-10 14:19:33,000] WARN [Broker id=2] Ignoring LeaderAndIsr request from controller 1 with "
    f"correlation id 7 epoch 9 for partition t-0 since its associated leader epoch 3 is not higher than the "
    f"current leader epoch 5 {SCL}",
    f"[2021-01-10 14:19:34,000] ERROR Controller 1 epoch 9 encountered error while electing leader for partition "
    f"[u,1] due to: No other replicas in ISR 2 for [u,1] besides shutting down brokers 2. {SCL}",
]


def test_line_texts_reads_lines_back_as_the_reader_numbers_them(tmp_path: Path) -> None:
    plain = tmp_path / "a.log"
    plain.write_bytes(b"one\r\ntwo\rthree\n\nfive")
    packed = tmp_path / "b.log.gz"
    packed.write_bytes(gzip.compress(b"x\ny\n"))
    got = line_texts([(str(plain), 2), (str(plain), 3), (str(plain), 5), (str(packed), 2), (str(plain), 9)])
    assert got == {
        (str(plain), 2): "two",
        (str(plain), 3): "three",
        (str(plain), 5): "five",
        (str(packed), 2): "y",
    }


def test_version_inferred_and_a_mismatched_profile_warned() -> None:
    old = layouts.infer_version(parse_lines("old.log", OLD_0_8_1))
    assert (old.low, old.high) == ((0, 8), (0, 8)), old
    warning = layouts.profile_warning("kafka-2.8", old)
    assert warning is not None and "Kafka 0.8" in warning and "old.log:1" in warning
    assert "from-state after the update" in warning
    new = layouts.infer_version(parse_lines("new.log", [re.sub(r"^kafka_1  \| ", "", x) for x in BROKER_1]))
    assert layouts.profile_for(new) is None or new.low >= (1, 1)
    assert layouts.profile_warning("kafka-2.8", new) is None
    v = judge(3, 3, 0, 0, [], warnings=[warning])
    assert v.exit_code == 2 and "WARNING: profile kafka-2.8 does not match the log" in v.headline


def test_files_of_several_versions_audited_as_one_cluster_are_a_warning(tmp_path: Path) -> None:
    """A 0.8.1 log beside a 2.x log in one history: probably two clusters, and the report says how to split them."""
    old = tmp_path / "old-state-change.log"
    old.write_text("\n".join(OLD_0_8_1) + "\n")
    new = tmp_path / "new-state-change.log"
    new.write_text("\n".join(x.removeprefix("kafka_1  | ") for x in BROKER_1[:4]) + "\n")
    one = layouts.version_report({"all files": [str(old), str(new)]}, "kafka-2.8")
    assert one["histories"]["all files"]["mixed_versions"] is True
    assert one["mixed"] is not None and "--history file or --history dir" in one["mixed"]
    apart = layouts.version_report({str(old): [str(old)], str(new): [str(new)]}, "kafka-2.8")
    assert apart["mixed"] is None


def test_version_evidence_is_read_once_per_file_and_again_when_the_file_changes(tmp_path: Path) -> None:
    log = tmp_path / "state-change.log"
    log.write_text("\n".join(OLD_0_8_1) + "\n")
    first = layouts.infer_files([str(log)])
    assert first.high <= (0, 11) and layouts.infer_files([str(log)]) == first
    log.write_text("\n".join(x.removeprefix("kafka_1  | ") for x in BROKER_1[:4]) + "\n")
    again = layouts.infer_files([str(log)])
    assert again.low >= (1, 0), again
    # per file and combined, as over all the lines at once
    other = tmp_path / "old.log"
    other.write_text("\n".join(OLD_0_8_1) + "\n")
    both = [str(log), str(other)]
    parsed = [p for f in both for p in layouts.sample_file(Path(f))]
    assert layouts.infer_files(both) == layouts.infer_version(parsed)


def test_attention_puts_warnings_then_violations_then_errors_first() -> None:
    lines = attention(
        ["profile x does not match"],
        {"fenced-write": 1, "failed-election": 1},
        [
            {"severity": "warning", "file": "b", "line": 2, "meaning": "fenced", "ts": "1", "text": "W line"},
            {"severity": "error", "file": "b", "line": 3, "meaning": "failed", "ts": "2", "text": "E line"},
        ],
        [
            {
                "file": "b",
                "line": 1,
                "rule": "leader-epoch-not-increasing",
                "message": "m",
                "text": "V line",
                "compared_file": "a",
                "compared_line": 4,
                "compared_text": "earlier line",
            }
        ],
        1,
    )
    assert lines[0] == "WARNING: profile x does not match"
    assert lines[1].startswith("1 violation(s)")
    assert "V line" in lines[3] and lines[4] == "      compared with a:4: earlier line"
    errors_first = [x for x in lines if x.startswith("  ERROR") or x.startswith("  WARNING")]
    assert errors_first[0].startswith("  ERROR b:3")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-findings")


@pytest.mark.spark
def test_audit_reports_findings_and_violations_with_their_lines(spark: Any, tmp_path: Path) -> None:
    from kcspec.audit.pipeline import conclude, run_audit
    from kcspec.audit.spark_job import expand_inputs
    from kcspec.spec.profiles import KAFKA_2_8

    logs = tmp_path / "logs"
    for name, body in (("broker-1", BROKER_1), ("broker-2", BROKER_2)):
        (logs / name).mkdir(parents=True)
        (logs / name / "state-change.log").write_text("\n".join(body) + "\n")
    out = tmp_path / "out"
    summary = run_audit(spark, expand_inputs([str(logs)]), out, KAFKA_2_8, lambda s: None)
    b1, b2 = (
        str((logs / "broker-1" / "state-change.log").resolve()),
        str((logs / "broker-2" / "state-change.log").resolve()),
    )
    found = [json.loads(x) for x in (out / "findings.jsonl").read_text().splitlines()]
    got = {(f["file"], f["line"], f["severity"], f["finding"]) for f in found}
    assert got == {
        (b1, 5, "error", "rejected-transition"),
        (b1, 8, "expected", "rejected-transition"),
        (b2, 2, "warning", "fenced-write"),
        (b2, 3, "error", "failed-election"),
    }, found
    rejected = next(f for f in found if f["finding"] == "rejected-transition")
    assert rejected["exception"].startswith("kafka_1  | java.lang.IllegalStateException")
    sample = {(f["file"], f["line"]): f for f in summary.finding_sample}
    assert sample[(b2, 3)]["text"] == BROKER_2[2]
    assert [f["severity"] for f in summary.finding_sample] == ["error", "error", "warning", "expected"]
    assert summary.by_severity == {"error": 2, "warning": 1, "expected": 1}, summary.by_severity
    # the violation spans the two brokers' folders: the offending line and the earlier one it is compared with
    [v] = [v for v in summary.violation_sample if v["rule"] == "leader-epoch-not-increasing"]
    assert (v["file"], v["line"], v["compared_file"], v["compared_line"]) == (b2, 1, b1, 4)
    assert (v["text"], v["compared_text"]) == (BROKER_2[0], BROKER_1[3])
    assert summary.layouts[b1] == {"kafka-default+prefix": 6, "-": 3}
    assert summary.layouts[b2] == {"logger-dash": 1, "kafka-default": 2}
    verdict = conclude(out, summary)
    assert verdict.exit_code == 1
    assert json.loads((out / "verdict.json").read_text())["findings"] == summary.by_severity
    assert json.loads((out / "stats.json").read_text())["by_severity"] == summary.by_severity
    page = (out / "summary.html").read_text()
    assert page.index("Look at first") < page.index("Violations by rule")
    assert page.index("compared with") < page.index("finding(s) in the logs")
    # the 0.10.2 election line beside 1.x lines: the formats of two versions, which the headline says first
    first, second, third = summary.attention()[:3]
    assert first.startswith("WARNING: profile kafka-2.8 does not match the log: Kafka inconsistent"), first
    assert second.startswith("WARNING: the files have the formats of more than one Kafka version"), second
    assert third.startswith("1 violation(s)")


FENCED_CONTROLLER = [
    "[2021-03-02 09:00:00,000] INFO [Controller id=1] 1 successfully elected as the controller. Epoch incremented "
    "to 9 and epoch zk version is now 8 (kafka.controller.KafkaController)",
    "[2021-03-02 09:05:00,000] INFO [Controller id=1] Controller moved to another broker when processing "
    "AutoPreferredReplicaLeaderElection. (kafka.controller.KafkaController)",
    "org.apache.kafka.common.errors.ControllerMovedException: Controller epoch zkVersion check fails. Expected "
    "zkVersion = 8",
    "\tat kafka.zk.KafkaZkClient.unwrapResponseWithControllerEpochCheck(KafkaZkClient.scala:1886)",
]
FENCED_BROKER = [
    "[2021-03-02 09:05:01,000] INFO [Partition t-0 broker=2] Cached zkVersion 4 not equal to that in zookeeper, "
    "skip updating ISR (kafka.cluster.Partition)",
    "[2021-03-02 09:05:02,000] WARN [Broker id=2] Received update metadata request with correlation id 5 from an "
    "old controller 1 with epoch 9. Latest known controller epoch is 10 (state.change.logger)",
]


@pytest.mark.spark
def test_fenced_zookeeper_and_controller_writes_are_findings(spark: Any, tmp_path: Path) -> None:
    """A controller whose ZooKeeper write failed its epoch-znode version check (2.x ``ControllerMovedException``),
    a leader whose conditional ISR write was rejected (stale zkVersion) and a broker fencing an old controller's
    request are warnings with their line and, for the controller, the exception that explains it."""
    from kcspec.audit.pipeline import run_audit
    from kcspec.audit.spark_job import expand_inputs
    from kcspec.spec.profiles import KAFKA_2_8

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "controller.log").write_text("\n".join(FENCED_CONTROLLER) + "\n")
    (logs / "server.log").write_text("\n".join(FENCED_BROKER) + "\n")
    out = tmp_path / "out"
    run_audit(spark, expand_inputs([str(logs)]), out, KAFKA_2_8, lambda s: None)
    ctl, srv = str((logs / "controller.log").resolve()), str((logs / "server.log").resolve())
    found = [json.loads(x) for x in (out / "findings.jsonl").read_text().splitlines()]
    got = {(f["file"], f["line"], f["severity"], f["finding"]) for f in found}
    assert got == {
        (ctl, 2, "warning", "fenced-zookeeper-write"),
        (srv, 1, "warning", "fenced-isr-write"),
        (srv, 2, "warning", "fenced-write"),
    }, found
    moved = next(f for f in found if f["finding"] == "fenced-zookeeper-write")
    assert moved["exception"] == FENCED_CONTROLLER[2]
    assert "BADVERSION" in moved["meaning"]


@pytest.mark.spark
def test_a_0_8_1_log_with_the_default_profile_is_a_headline_warning(spark: Any, tmp_path: Path) -> None:
    from kcspec.audit.pipeline import conclude, run_audit
    from kcspec.audit.spark_job import expand_inputs
    from kcspec.spec.profiles import KAFKA_2_8

    log = tmp_path / "state-change.log"
    log.write_text("\n".join(OLD_0_8_1) + "\n")
    out = tmp_path / "out"
    summary = run_audit(spark, expand_inputs([str(log)]), out, KAFKA_2_8, lambda s: None)
    verdict = conclude(out, summary)
    assert "WARNING: profile kafka-2.8 does not match the log: Kafka 0.8" in verdict.headline
    assert "from-state after the update" in verdict.headline
    assert json.loads((out / "verdict.json").read_text())["warnings"] == summary.warnings
    assert summary.attention()[0].startswith("WARNING: profile kafka-2.8")


def test_version_report_is_per_history(tmp_path: Path) -> None:
    old, new = tmp_path / "old.log", tmp_path / "new.log"
    old.write_text("\n".join(OLD_0_8_1) + "\n")
    new.write_text("\n".join(x.removeprefix("kafka_1  | ") for x in BROKER_1) + "\n")
    both = layouts.version_report({str(old): [str(old)], str(new): [str(new)]}, "kafka-2.8")
    warning = both["warning"]
    assert warning.startswith(f"profile kafka-2.8 does not match 1 of 2 histories ({old}: Kafka 0.8)"), (
        warning
    )
    assert "from-state after the update" in warning
    assert both["histories"][str(new)]["inferred"].startswith("Kafka 1.1–latest")
    one = layouts.version_report({"all files": [str(old)]}, "kafka-2.8")
    assert one["warning"] == layouts.profile_warning("kafka-2.8", layouts.infer_files([str(old)]))
    assert layouts.version_report({"all files": [str(new)]}, "kafka-2.8")["warning"] is None


def test_the_profile_is_chosen_from_the_logs_formats(tmp_path: Path) -> None:
    cases = {
        "kafka-1.1": f"[2018-01-01 00:00:00,000] TRACE [Controller id=1 epoch=2] Changed partition t-0 from "
        f"NewPartition to OnlinePartition with leader 1 {SCL}",  # the 1.0 rendering
        "kafka-2.8": "[2021-01-01 00:00:00,000] INFO [Controller id=1 epoch=2] Sending LeaderAndIsr request to "
        f"broker 2 with 1 become-leader and 0 become-follower partitions {SCL}",  # 2.6+
    }
    for expected, line in cases.items():
        log = tmp_path / f"{expected}.log"
        log.write_text(line + "\n")
        name, why = layouts.chosen_profile([str(log)], "kafka-2.8")
        assert (name, why.startswith("inferred from the logs' formats")) == (expected, True), why
    old = tmp_path / "old.log"
    old.write_text("\n".join(OLD_0_8_1) + "\n")
    name, why = layouts.chosen_profile([str(old)], "kafka-2.8")
    assert name == "kafka-2.8" and "Kafka 0.8" in why and why.startswith("the default")


@pytest.mark.spark
def test_jsonl_outputs_are_streamed_in_order_a_bounded_piece_at_a_time(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver never holds a whole output: with pieces of 7 rows, 100 shuffled rows still come out in
    order (a 10 M-line corpus's findings in a few partitions ran the driver out of heap)."""
    from kcspec.audit import report

    monkeypatch.setattr(report, "ROWS_PER_FETCH", 7)
    rows = [(f"f{i % 3}", (i * 37) % 101, f"r{i % 2}") for i in range(100)]
    df = spark.createDataFrame(rows, "file string, line int, rule string").repartition(5)
    assert report.write_jsonl(df, tmp_path / "out.jsonl", ("file", "line", "rule")) == 100
    written = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(w["file"], w["line"], w["rule"]) for w in written] == sorted(rows)


@pytest.mark.spark
def test_large_jsonl_outputs_are_written_by_spark_with_the_same_lines_counts_and_samples(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``SPARK_WRITES_FROM`` rows on, Spark's JSON writer writes the output: the same lines, byte for byte,
    as the driver's stream (order, compact JSON, nulls, quotes, backslashes, tabs, non-ASCII text), and the
    same tallies and samples."""
    from kcspec.audit import report
    from kcspec.audit.pipeline import _First, _Least

    texts = ["plain", 'quote " and \\ backslash', "tab\there", "é ü 漢字 🙂", None]
    rows = [
        (f"f{i % 3}", (i * 37) % 101, f"r{i % 2}", texts[i % len(texts)], None if i % 4 else i)
        for i in range(100)
    ]
    df = spark.createDataFrame(rows, "file string, line int, rule string, text string, n long").repartition(5)
    order, tally = ("file", "line", "rule"), ("rule",)
    outputs = {}
    for mode, threshold in (("stream", 10**9), ("spark", 10)):
        monkeypatch.setattr(report, "SPARK_WRITES_FROM", threshold)
        first, least = _First(7), _Least(7, ("n", "rule"))
        path = tmp_path / f"{mode}.jsonl"
        n, counts = report.write_jsonl_tallied(df, path, order, tally, first)
        report.write_jsonl_tallied(df, tmp_path / f"{mode}-2.jsonl", order, (), least)
        outputs[mode] = (n, counts, path.read_bytes(), first.rows, least.rows())
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".jsonl-")] == [], mode
    assert outputs["spark"] == outputs["stream"]
    lines = outputs["spark"][2].decode().splitlines()
    assert len(lines) == 100 and [tuple(json.loads(x)[c] for c in order) for x in lines] == sorted(
        r[:3] for r in rows
    )


@pytest.mark.spark
def test_findings_sorted_narrow_and_dressed_after_come_out_as_if_dressed_first(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Findings are sorted as narrow rows (file ids, ts keys, kinds) and dressed after the sort (file names,
    texts): the lines, counts and sample are those of the dressed rows sorted as such, streamed or written by
    Spark, with counts given by the caller or counted."""
    from kcspec.audit import findings, report
    from kcspec.audit.pipeline import _Least
    from pyspark.sql import functions as F

    names = F.array(*[F.lit(f"/logs/broker-{i}/state-change.log") for i in range(3)])
    kinds = list(findings.FINDING_KINDS)
    rows = [
        (
            i % 3,
            (i * 37) % 101,
            20210901000000000 + (i * 7919) % 5000,
            kinds[i % len(kinds)],
            f"t{i % 2}",
            i % 4,
            1,
            5,
            None if i % 5 else i,
            None if i % 3 else 'kafka.Boom: "x"\tat é',
            ["OnlineReplica", "OfflinePartition", None][i % 3],
            ["NewReplica", "OnlinePartition", "ReplicaDeletionStarted", None][i % 4],
        )
        for i in range(100)
    ]
    narrow = spark.createDataFrame(
        rows,
        "fid int, line long, ts long, kind string, topic string, partition int, controller_id int, "
        "controller_epoch int, broker int, exception string, from_state string, to_state string",
    ).repartition(5)
    dressing = report.Dressing(lambda r: findings.dressed(r, names), findings.ORDER)
    monkeypatch.setattr(report, "SPARK_WRITES_FROM", 10**9)
    wide_least = _Least(7, findings.SAMPLE_KEY)
    wide = report.write_jsonl_tallied(
        findings.dressed(narrow, names), tmp_path / "wide.jsonl", findings.ORDER, ("finding",), wide_least
    )
    expected = (*wide, (tmp_path / "wide.jsonl").read_bytes(), wide_least.rows())
    for mode, threshold, known in (("stream", 10**9, None), ("spark", 10, None), ("known", 10, wide)):
        monkeypatch.setattr(report, "SPARK_WRITES_FROM", threshold)
        least = _Least(7, findings.SAMPLE_KEY, (findings.narrow_sample_key(), dressing))
        path = tmp_path / f"{mode}.jsonl"
        n, counts = report.write_jsonl_tallied(
            narrow, path, findings.NARROW_ORDER, ("finding",), least, known, dressing
        )
        assert (n, counts, path.read_bytes(), least.rows()) == expected, mode
    assert wide[0] == 100 and wide_least.rows()[0]["severity"] == "error"
