"""When an audit may call itself clean, and how a bad --master and an --out with a user's files are handled
(no Spark needed)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from kcspec.audit.verdict import judge, mark_html
from kcspec.model.spark.master import check_master

from kcspec.commands.audit import fresh_out


def _file(name: str, record: int, quarantined: int = 0, **more: Any) -> dict[str, Any]:
    row = {"file": name, "record": record, "continuation": 0, "blank": 0, "quarantined": quarantined}
    row["read"] = record + quarantined
    row.update(more)
    return row


def test_good_input_without_violations_is_clean() -> None:
    v = judge(100, 99, 1, 0, [_file("a.log", 99, 1)])
    assert (v.exit_code, v.problems, v.internal) == (0, (), ()), v


def test_violations_are_exit_1_and_keep_the_input_problems_in_the_headline() -> None:
    v = judge(10, 10, 0, 3, [_file("a.log", 10), _file("empty.log", 0)])
    assert v.exit_code == 1
    assert "NOT CLEAN" in v.headline and any("empty.log" in p for p in v.problems), v


@pytest.mark.parametrize(
    ("files", "needle"),
    [
        ([_file("a.log", 10), _file("empty.log", 0)], "empty.log: yields no record (empty)"),
        ([_file("a.log", 10), _file("b.bin", 0, 4)], "b.bin: yields no record (none of its 4 line(s)"),
        ([_file("a.log", 10, unreadable="unreadable from line 11 on (x)")], "a.log: unreadable from line 11"),
        ([], "no input file was read"),
    ],
    ids=["empty", "binary", "broken", "nothing"],
)
def test_bad_input_is_never_green(files: list[dict[str, Any]], needle: str) -> None:
    read = sum(f["read"] for f in files)
    q = sum(f["quarantined"] for f in files)
    v = judge(read, read - q, q, 0, files, max_quarantine=1.0)
    assert v.exit_code == 2, v
    assert any(needle in p for p in v.problems), f"{needle!r} not in {v.problems}"


def test_quarantine_above_the_threshold_is_not_clean() -> None:
    files = [_file("a.log", 90, 10)]
    assert judge(100, 90, 10, 0, files, max_quarantine=0.05).exit_code == 2
    assert judge(100, 90, 10, 0, files, max_quarantine=0.10).exit_code == 0
    v = judge(100, 90, 10, 0, files)
    assert any("10.0 %" in p and "5 %" in p for p in v.problems), v.problems


def test_counts_that_do_not_add_up_are_an_internal_error_never_exit_1() -> None:
    files = [_file("a.log", 10)]
    v = judge(11, 10, 0, 2, files)
    assert v.exit_code == 3 and any("!= lines read 11" in p for p in v.internal), v
    lost = dict(files[0], read=12)
    v = judge(12, 10, 0, 0, [lost])
    assert v.exit_code == 3 and any("a.log: 12 lines read" in p for p in v.internal), v


def test_html_summary_leads_with_the_verdict(tmp_path: Path) -> None:
    page = tmp_path / "summary.html"
    page.write_text("<html><body><h1>kcspec audit: no violations</h1></body></html>")
    mark_html(page, judge(4, 0, 4, 0, [_file("b.bin", 0, 4)]))
    text = page.read_text()
    assert text.index("NOT CLEAN") < text.index("kcspec audit: no violations")
    assert "b.bin: yields no record" in text


@pytest.mark.parametrize(
    "master", ["local", "local[*]", "local[2]", "local[4,3]", "local[*,2]", "local-cluster[2,1,1024]"]
)
def test_local_masters_are_accepted(master: str) -> None:
    assert check_master(master) is None


@pytest.mark.parametrize(
    ("master", "needle"),
    [
        ("local[0]", "expected local"),
        ("local[two]", "expected local"),
        ("spark://", "names no host"),
        ("spark://host:port", "no valid port"),
        ("mesos-ish://x", "not a Spark master URL"),
        ("nonsense", "not a Spark master URL"),
    ],
)
def test_malformed_masters_fail_with_one_line(master: str, needle: str) -> None:
    why = check_master(master)
    assert why is not None and needle in why and "\n" not in why, why


def test_unreachable_master_fails_fast() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    why = check_master(f"spark://127.0.0.1:{port}", timeout=2.0)
    took = time.monotonic() - start
    assert why is not None and "cannot connect" in why and "\n" not in why, why
    assert took < 5.0, f"took {took:.1f}s"


def test_reachable_master_passes() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        assert check_master(f"spark://127.0.0.1:{s.getsockname()[1]}", timeout=2.0) is None


def test_out_with_user_files_is_kept_and_the_run_writes_into_a_fresh_sub_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "work").mkdir(parents=True)
    (out / "work" / "mine.txt").write_text("keep me")
    (out / "notes.txt").write_text("keep me too")
    first = fresh_out(out)
    second = fresh_out(out)
    assert first.parent == out and second.parent == out and first != second
    assert first.is_dir() and not any(first.iterdir()) and not any(second.iterdir())
    assert (out / "work" / "mine.txt").read_text() == "keep me"
    assert (out / "notes.txt").read_text() == "keep me too"


def test_missing_or_empty_out_is_used_as_it_is(tmp_path: Path) -> None:
    assert fresh_out(tmp_path / "new" / "out") == tmp_path / "new" / "out"
    (tmp_path / "empty").mkdir()
    assert fresh_out(tmp_path / "empty") == tmp_path / "empty"
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        fresh_out(tmp_path / "file")


def test_a_file_without_records_says_what_its_lines_are_as_the_totals_count_them() -> None:
    # a binary file: a few of its lines happen to be blank (parsed, as blank lines are), the rest quarantined
    binary = _file("b.bin", 0, 1595, blank=15)
    binary["read"] = 1610
    v = judge(1610, 15, 1595, 0, [binary], max_quarantine=1.0)
    assert v.internal == (), v.internal
    needle = "b.bin: yields no record (none of its 1610 line(s) is a record): 15 blank, 1595 quarantined"
    assert needle in v.problems, f"{needle!r} not in {v.problems}"
    assert judge(0, 0, 0, 0, [_file("e.log", 0)]).problems == ("e.log: yields no record (empty)",)


def test_two_runs_into_one_new_out_never_share_a_folder(tmp_path: Path) -> None:
    """Two audits started at once into the same new --out: one takes the folder, the other writes into a
    sub-folder of it (they used to both take the empty folder and mix their outputs)."""
    import threading

    out = tmp_path / "new-out"
    barrier = threading.Barrier(8)
    got: list[Path] = []

    def start() -> None:
        barrier.wait()
        got.append(fresh_out(out))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 8, f"runs shared an output folder: {sorted(map(str, got))}"
    assert got.count(out) == 1
