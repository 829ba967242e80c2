"""The audit as an operator runs it (``kcspec audit``, in this process, one Spark session): the files given
are one cluster (a violation spanning two brokers' folders is found), ``kcspec simulate --emit-logs`` output
audits clean and its injected bug is found across brokers, bad input is reported and never green, ``--out``
keeps what is already there, and the local driver listens on the loopback interface only."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from click.testing import CliRunner, Result

from kcspec.commands.audit import command as audit_command
from kcspec.commands.simulate import command as simulate_command
from tests.support.processes import kcspec_process
from tests.support.timing import scaled

pytestmark = pytest.mark.spark

CTRL = "kafka.controller.KafkaController"
SC = "state.change.logger"


def _elected(ts: str, broker: int, epoch: int) -> str:
    return (
        f"[2021-01-10 {ts}] INFO [Controller id={broker}] {broker} successfully elected as the controller. "
        f"Epoch incremented to {epoch} and epoch zk version is now {epoch - 1} ({CTRL})"
    )


def _created(ts: str, broker: int, epoch: int, partition: str) -> str:
    return (
        f"[2021-01-10 {ts}] INFO [Controller id={broker} epoch={epoch}] Changed partition {partition} state "
        f"from NonExistentPartition to NewPartition with assigned replicas 1,2 ({SC})"
    )


def _online(ts: str, broker: int, epoch: int, partition: str) -> str:
    return (
        f"[2021-01-10 {ts}] INFO [Controller id={broker} epoch={epoch}] Changed partition {partition} from "
        f"NewPartition to OnlinePartition with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), "
        f"zkVersion=0) ({SC})"
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _good_cluster(d: Path) -> Path:
    """Two brokers' folders of one clean history: broker 1 is the controller, epoch 9."""
    _write(d / "broker-1" / "controller.log", [_elected("14:19:29,000", 1, 9)])
    _write(
        d / "broker-1" / "state-change.log",
        [
            _created("14:19:29,100", 1, 9, "t-0"),
            _online("14:19:29,200", 1, 9, "t-0"),
            _created("14:19:29,300", 1, 9, "t-1"),
            _online("14:19:29,400", 1, 9, "t-1"),
        ],
    )
    _write(d / "broker-2" / "state-change.log", [_created("14:19:29,500", 1, 9, "t-2")])
    return d


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-audit-input")


def _audit(*args: str) -> Result:
    result = CliRunner().invoke(audit_command, list(args), catch_exceptions=False)
    return result


def _violations(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()]


def _show(result: Result) -> str:
    return f"exit {result.exit_code}\n{result.output[-3000:]}"


def test_local_driver_listens_on_loopback_and_reads_a_private_configuration(spark: Any) -> None:
    from kcspec.model.spark.session import conf_dir

    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    if os.environ.get("SPARK_CONF_DIR") != str(conf_dir()):
        pytest.fail(f"SPARK_CONF_DIR is {os.environ.get('SPARK_CONF_DIR')!r}, not the private {conf_dir()}")


def test_a_violation_spanning_two_brokers_folders_is_found(spark: Any, tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    # broker 2 takes over with epoch 10; then broker 1 still writes with epoch 9 (in its own folder)
    _write(d / "broker-2" / "controller.log", [_elected("14:19:30,000", 2, 10)])
    stale = _write(d / "broker-1" / "state-change.log.1", [_created("14:19:31,000", 1, 9, "t-3")])

    one = _audit(str(d / "broker-1"), str(d / "broker-2"), "--out", str(tmp_path / "one"))
    assert one.exit_code == 1, _show(one)
    found = {(v["file"], v["line"], v["rule"]) for v in _violations(tmp_path / "one")}
    assert (str(stale.resolve()), 1, "stale-controller-write") in found, found

    apart = _audit(str(d), "--history", "dir", "--out", str(tmp_path / "apart"))
    assert apart.exit_code == 0, _show(apart)


def test_simulated_cluster_audits_clean_and_its_injected_bug_is_found_across_brokers(
    spark: Any, tmp_path: Path
) -> None:
    runner = CliRunner()
    args = ["--brokers", "5", "--topics", "3", "--partitions", "4", "--events", "200", "--seed", "11"]
    clean, buggy = tmp_path / "clean", tmp_path / "buggy"
    for where, extra in ((clean, []), (buggy, ["--inject", "kafka-8237"])):
        made = runner.invoke(simulate_command, ["--emit-logs", str(where), *args, *extra])
        assert made.exit_code == 0, made.output
    assert len(list(clean.glob("broker-*"))) >= 2

    ok = _audit(str(clean), "--out", str(tmp_path / "out-clean"))
    assert ok.exit_code == 0, _show(ok)

    expected = set()
    for log in sorted(buggy.glob("broker-*/state-change.log")):
        for n, text in enumerate(log.read_text().splitlines(), start=1):
            if "should be in the ReplicaDeletionStarted states" in text:
                expected.add((str(log.resolve()), n - 1))  # the exception line follows its ERROR record
    assert expected, "the walk did not exercise the injected bug; choose another seed"
    bad = _audit(str(buggy), "--out", str(tmp_path / "out-buggy"))
    assert bad.exit_code == 1, _show(bad)
    flagged = {
        (v["file"], v["line"])
        for v in _violations(tmp_path / "out-buggy")
        if v["rule"] == "valid-previous-list-differs"
    }
    assert flagged == expected, (
        f"missed {sorted(expected - flagged)[:5]}, unexpected {sorted(flagged - expected)[:5]}"
    )


def _complete_lines(data: bytes) -> int:
    """Complete lines in what can be decompressed of the (broken) gzip bytes ``data``."""
    d = zlib.decompressobj(wbits=31)
    try:
        text = d.decompress(data)
    except zlib.error:
        text = b""
    return text.count(b"\n")


def test_bad_input_beside_good_logs_is_reported_and_never_green(spark: Any, tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    # a rotated file of 3,000 records (more than a read buffer), cut in the middle of its compressed bytes
    lines = [_created(f"14:20:{i // 1000:02d},{i % 1000:03d}", 1, 9, f"u-{i}") for i in range(3000)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    truncated = d / "broker-1" / "state-change.log.2.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    kept = _complete_lines(truncated.read_bytes())
    assert 1000 < kept < 3000
    # named .gz, but plain text: read by its bytes, not its name
    not_gzip = _write(d / "broker-2" / "state-change.log.3.gz", [_created("14:21:00,000", 1, 9, "v-0")])
    binary = d / "broker-2" / "core.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    empty = _write(d / "broker-2" / "empty.log", [])
    empty.write_text("")
    out = tmp_path / "out"

    result = _audit(str(d), "--out", str(out), "--max-quarantine", "100")
    assert result.exit_code == 2, _show(result)
    verdict = json.loads((out / "verdict.json").read_text())
    problems = "\n".join(verdict["problems"])
    assert f"{truncated.resolve()}: unreadable from line {kept + 1} on (corrupt-compressed-file" in problems
    assert str(not_gzip.resolve()) not in problems
    assert f"{binary.resolve()}: yields no record" in problems
    assert f"{empty.resolve()}: yields no record (empty)" in problems
    assert "NOT CLEAN" in result.output and "parsed + quarantined = " in result.output
    stats = json.loads((out / "stats.json").read_text())
    per_file = {f["file"]: f for f in stats["per_file"]}
    # the lines before the break are audited
    assert per_file[str(truncated.resolve())]["record"] == kept, per_file[str(truncated.resolve())]
    assert per_file[str(truncated.resolve())]["quarantined"] == 1
    assert per_file[str(empty.resolve())]["read"] == 0
    assert (
        per_file[str(not_gzip.resolve())]["record"],
        per_file[str(not_gzip.resolve())]["quarantined"],
    ) == (1, 0)
    assert stats["parsed"] + stats["quarantined"] == stats["lines_read"]
    quarantine = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    broken = [q for q in quarantine if q["reason"] == "corrupt-compressed-file"]
    assert {(q["file"], q["line"]) for q in broken} == {(str(truncated.resolve()), kept + 1)}, broken
    assert all("Exception" in q["detail"] for q in broken), broken


def test_a_run_over_the_quarantine_threshold_is_not_clean(spark: Any, tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    _write(d / "broker-2" / "server.log", [_created("14:19:29,600", 1, 9, "t-4"), "garbage"])
    strict = _audit(str(d), "--out", str(tmp_path / "strict"))
    assert strict.exit_code == 2 and "more than the 5 % allowed" in strict.output, _show(strict)
    lenient = _audit(str(d), "--out", str(tmp_path / "lenient"), "--max-quarantine", "20")
    assert lenient.exit_code == 0, _show(lenient)


def test_a_kafka_log_read_as_jsonl_is_not_clean(spark: Any, tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    result = _audit(
        str(d / "broker-1" / "state-change.log"), "--format", "jsonl", "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 2, _show(result)
    assert "yields no record (none of its 4 line(s) is a record)" in result.output.replace("\n", " "), _show(
        result
    )


def test_out_with_user_files_keeps_them(spark: Any, tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    out = tmp_path / "out"
    (out / "work").mkdir(parents=True)
    (out / "work" / "notes.txt").write_text("mine")
    (out / "violations.jsonl").write_text("my own file\n")
    result = _audit(str(d), "--out", str(out))
    assert result.exit_code == 0, _show(result)
    assert (out / "work" / "notes.txt").read_text() == "mine"
    assert (out / "violations.jsonl").read_text() == "my own file\n"
    runs = list(out.glob("run-*"))
    assert len(runs) == 1 and (runs[0] / "verdict.json").is_file(), f"written into {runs}"
    written = runs[0]
    assert not list(written.glob(".kcspec-audit-work-*")), "the run's work folder was left behind"


def test_bad_master_fails_fast_with_one_line(tmp_path: Path) -> None:
    d = _good_cluster(tmp_path / "logs")
    result = _audit(str(d), "--master", "local[zero]", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, _show(result)
    assert result.output.strip().count("\n") == 0 and "--master" in result.output, result.output


def test_a_broken_compressed_trace_is_audited_up_to_the_break(spark: Any, tmp_path: Path) -> None:
    from tests.unit.audit.test_traces import reference_trace_lines

    lines = reference_trace_lines()
    d = tmp_path / "traces"
    d.mkdir()
    (d / "whole.jsonl").write_text("\n".join(lines) + "\n")
    # the same trace repeated, so that the cut lands after many complete lines
    whole = gzip.compress(("\n".join(lines * 20) + "\n").encode())
    cut = d / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    kept = _complete_lines(cut.read_bytes())
    assert kept > len(lines)
    not_gzip = d / "plain.jsonl.gz"  # text under a gzip name: read as text (magic bytes, not the name)
    not_gzip.write_text(lines[0] + "\n")
    gzip_unnamed = d / "packed.jsonl"  # gzip under a plain name: decompressed all the same
    gzip_unnamed.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    out = tmp_path / "out"

    result = _audit(str(d), "--out", str(out), "--max-quarantine", "100")
    assert result.exit_code == 2, _show(result)
    stats = json.loads((out / "stats.json").read_text())
    per_file = {f["file"]: f for f in stats["per_file"]}
    assert per_file[str(cut.resolve())]["record"] == kept, per_file[str(cut.resolve())]
    assert per_file[str(cut.resolve())]["quarantined"] == 1
    assert per_file[str(d.resolve() / "whole.jsonl")]["record"] == len(lines)
    assert per_file[str(gzip_unnamed.resolve())]["record"] == len(lines), per_file[
        str(gzip_unnamed.resolve())
    ]
    assert per_file[str(not_gzip.resolve())]["record"] == 1, per_file[str(not_gzip.resolve())]
    assert stats["parsed"] + stats["quarantined"] == stats["lines_read"]
    quarantine = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert {(q["file"], q["line"], q["reason"]) for q in quarantine} == {
        (str(cut.resolve()), kept + 1, "corrupt-compressed-file"),
    }, quarantine
    problems = "\n".join(json.loads((out / "verdict.json").read_text())["problems"])
    assert f"{cut.resolve()}: unreadable from line {kept + 1} on" in problems, problems


def test_a_jvm_option_that_stops_spark_is_named(tmp_path: Path) -> None:
    """JAVA_TOOL_OPTIONS reaches Spark's launcher, which reads the command it runs from a JVM's standard
    output: with -Xlog:gc*:stdout (the heap at exit, always printed) Spark cannot start. The error says so,
    exit 2, and names the variable."""
    d = _good_cluster(tmp_path / "logs")
    args = ["audit", str(d), "--engine", "spark", "--out", str(tmp_path / "o")]
    with kcspec_process(args, env={"JAVA_TOOL_OPTIONS": "-Xlog:gc*:stdout"}) as proc:
        _, stderr = proc.communicate(timeout=scaled(300))
    text = " ".join(stderr.decode().split())
    assert proc.returncode == 2, text[-2000:]
    assert "Spark did not start" in text and "JAVA_TOOL_OPTIONS='-Xlog:gc*:stdout'" in text, text[-2000:]
