"""Unit tier: a benchmark's header warns when the scheduler lets other sessions' niced work share its cores."""

from __future__ import annotations

from pathlib import Path

from tests.support.bench_modules import harness


def test_autogroup_on_is_named_with_the_way_to_turn_it_off(tmp_path: Path) -> None:
    knob = tmp_path / "sched_autogroup_enabled"
    knob.write_text("1\n")
    note = harness.scheduler_note(knob)
    assert "autogroup on" in note and "nice" in note and f"echo 0 > {knob}" in note


def test_no_note_when_autogroup_is_off_or_absent(tmp_path: Path) -> None:
    knob = tmp_path / "sched_autogroup_enabled"
    knob.write_text("0\n")
    assert harness.scheduler_note(knob) == ""
    assert harness.scheduler_note(tmp_path / "missing") == ""
