"""The suite's file order (``tests/support/file_order.py``): files longest first by their recorded time, the tests
of a file in their own order, nothing added or lost; the times read from a JUnit report, a bad report refused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import file_order


@dataclass(frozen=True)
class Item:
    nodeid: str


def test_files_go_longest_first_and_keep_their_tests_in_order() -> None:
    items = [Item(n) for n in ["a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "b.py::t2", "d.py::t1"]]
    seconds = {"a.py": 1.0, "b.py": 30.0, "c.py": 10.0}  # d.py is new: UNKNOWN_SECONDS, between b and a
    ordered = file_order.longest_first(items, seconds)
    assert [i.nodeid for i in ordered] == [
        "b.py::t1",
        "b.py::t2",
        "c.py::t1",
        "d.py::t1",
        "a.py::t1",
        "a.py::t2",
    ]
    # no record: the files in the order of their first item
    unrecorded = [i.nodeid for i in file_order.longest_first(items, {})]
    assert unrecorded == ["a.py::t1", "a.py::t2", "b.py::t1", "b.py::t2", "c.py::t1", "d.py::t1"]


def test_the_times_are_read_from_a_junit_report_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "run.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.unit.foundation.test_file_order" name="a" time="1.25"/>'
        '<testcase classname="tests.unit.foundation.test_file_order" name="b" time="2"/>'
        '<testcase classname="tests.no_such_file" name="c" time="9"/>'
        "</testsuite></testsuites>"
    )
    assert file_order.seconds_from_junit(report) == {"tests/unit/foundation/test_file_order.py": 3.2}
    out = tmp_path / "seconds.json"
    assert file_order.main([str(report), "--out", str(out)]) == 0
    assert file_order.load_seconds(out) == {"tests/unit/foundation/test_file_order.py": 3.2}
    report.write_text("<not xml")
    with pytest.raises(ValueError, match="not a readable JUnit XML report"):
        file_order.seconds_from_junit(report)
    assert file_order.main([str(report), "--out", str(out)]) == 2
    assert file_order.load_seconds(tmp_path / "missing.json") == {}
