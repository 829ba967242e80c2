"""The checkpoint folder of a TLC run in several sittings (``model/tlc/checkpoint.py``), TLC's options for it, a
stopped search never read as a pass, and a depth-first run's verdict — without TLC."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from kcspec.model.tlc import checkpoint as ckpt
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.command import tlc_argv
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import Outcome, parse_output
from kcspec.model.tlc.trace import NEXT_LABEL

from tests.support.paths import SUPPORT

TRANSCRIPTS = SUPPORT / "tla_transcripts"
OPTIONS = {"profile": "kafka-2.8", "brokers": 3, "max_zxid": 4, "liveness": False, "seed": 0, "depth": None}


def _module(folder: Path, text: str = "---- MODULE M ----\n====\n") -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "M.tla").write_text(text)
    (folder / "M.cfg").write_text("INIT Init\nNEXT Next\n")
    return folder / "M.tla", folder / "M.cfg"


def test_a_new_checkpoint_keeps_the_module_and_what_it_was_made_with(tmp_path: Path) -> None:
    module, config = _module(tmp_path / "gen")
    record = ckpt.start(tmp_path / "run", OPTIONS, module, config)
    assert (tmp_path / "run" / "M.tla").read_text() == module.read_text()
    assert (tmp_path / "run" / ckpt.STATES).is_dir()
    assert ckpt.load(tmp_path / "run") == record
    assert record.status == "running" and record.runs == 1
    with pytest.raises(ckpt.CheckpointError, match=r"holds a checkpoint already.*--resume"):
        ckpt.start(tmp_path / "run", OPTIONS, module, config)


def test_resume_refuses_another_model_another_module_and_an_ended_run(tmp_path: Path) -> None:
    module, config = _module(tmp_path / "gen")
    folder = tmp_path / "run"
    record = ckpt.start(folder, OPTIONS, module, config)
    ckpt.check_resumable(folder, record, dict(OPTIONS), module, config)
    with pytest.raises(ckpt.CheckpointError, match="made with --max-zxid 4, this run has --max-zxid 3"):
        ckpt.check_resumable(folder, record, {**OPTIONS, "max_zxid": 3}, module, config)
    with pytest.raises(
        ckpt.CheckpointError, match="--liveness \\(not given\\), this run has --liveness \\(given\\)"
    ):
        ckpt.check_resumable(folder, record, {**OPTIONS, "liveness": True}, module, config)
    changed, _ = _module(tmp_path / "gen2", "---- MODULE M ----\nX == 1\n====\n")
    with pytest.raises(ckpt.CheckpointError, match="differs from the one checkpointed"):
        ckpt.check_resumable(folder, record, dict(OPTIONS), changed, config)
    ended = ckpt.finish_run(folder, record, {"run": 1}, status="ended", outcome="ok", distinct=600)
    with pytest.raises(ckpt.CheckpointError, match="has ended \\(ok, 600 distinct states\\)"):
        ckpt.check_resumable(folder, ckpt.load(folder), dict(OPTIONS), module, config)
    assert ended.history == [{"run": 1}]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no-folder", "no such folder"),
        ("no-record", "checkpoint.json is missing"),
        ("not-json", "cannot be read"),
        ("old-format", "layout 0; this kcspec reads 1"),
        ("unknown-field", "not a checkpoint record"),
        ("no-module", "M.tla, the checkpointed run's file, is missing"),
    ],
)
def test_a_folder_that_is_not_a_whole_checkpoint_is_named_with_the_reason(
    tmp_path: Path, damage: str, message: str
) -> None:
    module, config = _module(tmp_path / "gen")
    folder = tmp_path / "run"
    ckpt.start(folder, OPTIONS, module, config)
    record_path = folder / "checkpoint.json"
    doc = json.loads(record_path.read_text())
    if damage == "no-folder":
        folder = tmp_path / "elsewhere"
    elif damage == "no-record":
        record_path.unlink()
    elif damage == "not-json":
        record_path.write_text('{"format": 1,')
    elif damage == "old-format":
        record_path.write_text(json.dumps({**doc, "format": 0}))
    elif damage == "unknown-field":
        record_path.write_text(json.dumps({**doc, "frontier": []}))
    else:
        (folder / "M.tla").unlink()
    with pytest.raises(ckpt.CheckpointError, match=message) as raised:
        ckpt.load(folder)
    assert str(folder) in str(raised.value)


def test_the_run_folder_is_the_latest_complete_checkpoint(tmp_path: Path) -> None:
    states = tmp_path / ckpt.STATES
    assert ckpt.run_folder(tmp_path) is None
    half = states / "26-11-29-10-00-00"
    half.mkdir(parents=True)
    (half / "queue.chkpt").write_bytes(b"q")  # vars.chkpt not yet written: not a checkpoint
    assert ckpt.run_folder(tmp_path) is None
    older, newer = states / "26-11-29-09-00-00", states / "26-11-29-11-00-00"
    for i, d in enumerate((older, newer)):
        d.mkdir()
        for marker in ckpt.COMPLETE_MARKERS:
            (d / marker).write_bytes(b"x")
            stamp = time.time() - 100 + 50 * i
            os.utime(d / marker, (stamp, stamp))
    assert ckpt.run_folder(tmp_path) == newer


def test_tlc_is_told_where_to_checkpoint_how_often_and_when_to_stop(tmp_path: Path) -> None:
    tools = Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), None)
    args = TlcArgs(
        module=tmp_path / "M.tla", metadir=tmp_path / "states", checkpoint_ms=600_000, stop_after_s=30
    )
    argv = tlc_argv(args, tools, metadir="/tmp/ignored")
    jvm = argv[: argv.index("-cp")]
    assert "-Dtlc2.TLCGlobals.chkpt=600000" in jvm and "-Dtlc2.TLC.stopAfter=30" in jvm
    assert argv[argv.index("-metadir") + 1] == str(tmp_path / "states")
    assert "-recover" not in argv
    again = tlc_argv(TlcArgs(module=tmp_path / "M.tla", recover=tmp_path / "states" / "r1"), tools)
    assert again[again.index("-recover") + 1] == str(tmp_path / "states" / "r1") and "-metadir" not in again
    with pytest.raises(ValueError, match="checkpoint interval"):
        TlcArgs(module=tmp_path / "M.tla", checkpoint_ms=0)


# TLC 2.15 stopped by tlc2.TLC.stopAfter, as it prints it (the default 2-broker model, 2026-11-29)
STOPPED = """\
@!@!@STARTMSG 2200:0 @!@!@
Progress(8) at 2026-11-29 17:28:18: 30,563 states generated (30,563 s/min), 4,360 distinct states found \
(4,360 ds/min), 2,458 states left on queue.
@!@!@ENDMSG 2200 @!@!@
@!@!@STARTMSG 2193:0 @!@!@
Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable states
  because two distinct states had the same fingerprint:
  calculated (optimistic):  val = 9.5E-11
@!@!@ENDMSG 2193 @!@!@
@!@!@STARTMSG 2199:0 @!@!@
140317 states generated, 13873 distinct states found, 6948 states left on queue.
@!@!@ENDMSG 2199 @!@!@
@!@!@STARTMSG 2195:0 @!@!@
Checkpointing of run /tmp/ck/26-11-29-17-28-14
@!@!@ENDMSG 2195 @!@!@
@!@!@STARTMSG 2196:0 @!@!@
Checkpointing completed at (2026-11-29 17:28:27)
@!@!@ENDMSG 2196 @!@!@
"""


def test_no_error_found_with_states_left_on_the_queue_is_a_stopped_search_not_a_pass() -> None:
    report = parse_output(STOPPED, "M")
    assert report.outcome is Outcome.TIMEOUT
    assert report.stats.distinct == 13873 and report.stats.left_on_queue == 6948
    assert report.error is not None and "6,948 states left on its queue" in report.error
    assert report.checkpoints == 1 and not report.recovered
    assert report.stats.depth == 8, "the level its progress reports reached"
    plain = "\n".join(
        line for line in STOPPED.splitlines() if not line.startswith("@!@!@")
    )  # the same run without -tool
    assert parse_output(plain, "M").outcome is Outcome.TIMEOUT
    # a complete run in plain mode: its counts are the last ones, not the first progress report's
    done = plain.replace("6948 states left on queue", "0 states left on queue")
    report = parse_output(done, "M")
    assert report.outcome is Outcome.OK and report.stats.distinct == 13873 and report.stats.left_on_queue == 0


def test_a_depth_first_transcript_keeps_its_counterexample() -> None:
    """TLC 2.15's ``-dfid`` run prints the trace's states as "N:" without their action (message 2216) and its
    counts without a queue (2204): the states are read, each step as a step of ``Next``."""
    text = (TRANSCRIPTS / "out_tool_dfid_violation_tlc2.15.txt").read_text()
    report = parse_output(text, "Toy")
    assert report.outcome is Outcome.INVARIANT_VIOLATED and report.violated == "EpochSmall"
    assert report.depth_bounded and report.stats.distinct == 22 and report.stats.generated == 28
    assert [s.number for s in report.trace] == [1, 2, 3]
    assert report.trace[0].action is None
    assert all(s.action is not None and s.action.name == NEXT_LABEL for s in report.trace[1:])


def test_a_folder_in_use_by_a_running_sitting_is_refused(tmp_path: Path) -> None:
    module, config = _module(tmp_path / "gen")
    ckpt.start(tmp_path / "run", OPTIONS, module, config)
    held = ckpt.hold(tmp_path / "run")
    with pytest.raises(ckpt.CheckpointError, match="another kcspec process is running TLC in this folder"):
        ckpt.hold(tmp_path / "run")
    held.close()  # the sitting ended (or its process died): the folder is free again
    ckpt.hold(tmp_path / "run").close()
