"""The README documents the JSONL trace format ``kcspec audit --format jsonl`` reads (the keys the reader
requires), and its command converting a counterexample trace (``*.trace.json``) to JSON Lines works: every
line it writes is a valid trace line for the audit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kcspec.audit.traces import TRACE_KEYS, decode_line
from kcspec.model.event_candidates import bootstrap
from kcspec.model.explore_config import ExploreConfig
from kcspec.spec.state import ClusterState
from kcspec.spec.trace import Trace, TraceStep

from tests.support.paths import ROOT

README = ROOT / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("### The JSONL trace format")
    return text[start : text.index("\n## ", start)]


def test_the_readme_documents_every_key_of_a_trace_line() -> None:
    section = _section()
    for key in TRACE_KEYS:
        assert f'"{key}"' in section, f"README's JSONL trace format does not name {key!r}"


def test_the_readme_conversion_of_a_counterexample_trace_is_audited_line_by_line(tmp_path: Path) -> None:
    events = bootstrap(ExploreConfig(profile="kafka-2.8", brokers=2, rf=2))
    trace = Trace("kafka-2.8", ClusterState(), tuple(TraceStep(e) for e in events))
    (tmp_path / "run.trace.json").write_text(trace.to_json() + "\n", encoding="utf-8")
    match = re.search(r"```sh\n(python -c '.*?' run\.trace\.json) > run\.jsonl\n```", _section(), re.S)
    assert match, "README's JSONL section has no conversion command"
    command = match.group(1).replace("python ", f"{sys.executable} ", 1)
    out = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(events) + 1, out.stdout
    for n, line in enumerate(lines, start=1):
        _facts, reason = decode_line(line)
        assert reason is None, f"line {n} of the converted trace is quarantined: {reason}"
