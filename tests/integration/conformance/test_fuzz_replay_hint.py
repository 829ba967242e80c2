"""The replay command ``kcspec fuzz`` prints with a failure's trace runs as printed (it names a SUT: a replay
needs one) and replays the history on the spec against the reference controller."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from kcspec.conformance.selfcheck.fuzz.machine import replay_command
from kcspec.model.event_candidates import bootstrap
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep

from kcspec.cli import main


def test_the_printed_replay_command_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``kcspec`` as a user's shell finds it: the console script next to this Python
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    events = bootstrap(ExploreConfig(profile="kafka-2.8", brokers=2, rf=2))
    trace = Trace("kafka-2.8", ClusterState(), tuple(TraceStep(e) for e in events), note="stateful test")
    path = tmp_path / "with space" / "stateful-kafka-2.8.trace.json"
    path.parent.mkdir()
    path.write_text(trace.to_json() + "\n", encoding="utf-8")
    argv = shlex.split(replay_command(path))
    assert argv[:3] == ["kcspec", "conformance", "replay"], argv
    result = CliRunner().invoke(main, argv[1:])
    assert result.exit_code == 0, f"{replay_command(path)} exited {result.exit_code}:\n{result.output}"
