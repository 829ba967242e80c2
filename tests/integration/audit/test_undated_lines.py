"""Lines without a timestamp (pasted from a terminal: ``TRACE [Controller id=1 epoch=3] … (state.change.logger)``,
or a controller's message alone): records ordered by their position in the file, with a null ``ts`` in the
outputs and a note that says so; the audit finds in them what it finds in the same lines with their dates."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark not installed: pip install 'kcspec[spark]'")

from click.testing import CliRunner

from kcspec.commands.audit import command as audit_command
from tests.integration.audit.test_trace_level import TRACED

pytestmark = [pytest.mark.spark, pytest.mark.integration]

DATE = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}\] ")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from kcspec.audit.session import make_session

    yield make_session("local[2]", shuffle_partitions=2, app="kcspec-test-undated")


def _audit(folder: Path, out: Path) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    args = [str(folder), "--profile", "kafka-2.8", "--out", str(out)]
    result = CliRunner().invoke(audit_command, args, catch_exceptions=False)
    found = [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()]
    return result.exit_code, found, json.loads((out / "stats.json").read_text())


def test_an_undated_paste_is_audited_in_file_order_and_marked(spark: Any, tmp_path: Path) -> None:
    pasted = [DATE.sub("", line) for line in TRACED]
    assert all(not line.startswith("[2") for line in pasted) and pasted != TRACED
    (tmp_path / "dated").mkdir()
    (tmp_path / "dated" / "state-change.log").write_text("\n".join(TRACED) + "\n")
    (tmp_path / "pasted").mkdir()
    (tmp_path / "pasted" / "state-change.log").write_text("\n".join(pasted) + "\n")

    code_d, dated, stats_d = _audit(tmp_path / "dated", tmp_path / "out-dated")
    code_p, undated, stats_p = _audit(tmp_path / "pasted", tmp_path / "out-pasted")

    def key(v: dict[str, Any]) -> tuple[Any, ...]:
        return (v["line"], v["rule"], v["compared_line"])

    assert code_d == code_p == 1
    assert sorted(map(key, undated)) == sorted(map(key, dated)), undated
    assert {v["ts"] for v in undated} == {None}, undated
    assert stats_p["checked"] == stats_d["checked"] == len(TRACED)
    (layouts,) = stats_p["layouts"].values()
    assert layouts == {"undated": len(TRACED)}, layouts
    [note] = [n for n in stats_p["notes"] if "without a timestamp" in n]
    assert f"{len(TRACED)} record(s) without a timestamp" in note and "position in the file" in note, note
