"""The TLA+ wrapper against a real TLC (the jar of the ``tlc`` extra, TLC 2.15, or ``TLA2TOOLS_JAR``): every
manifest model crosschecked, an invariant violation, a deadlock and a parse error (``test_tlc_stops.py``: a timeout
and signals).

A missing TLC fails these tests (``make setup`` installs it): they never skip. Generated modules are shared per
(profile, model) through the session-scoped fixtures of ``conftest.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.tla_crosscheck import CrosscheckArgs, CrosscheckOutcome, run_crosscheck
from kcspec.model.tla.config import ModelConfig
from kcspec.model.tla.manifest import load
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import Toolchain
from kcspec.model.tlc.output import Outcome
from kcspec.model.tlc.run import run_tlc

from tests.support.paths import SUPPORT

pytestmark = pytest.mark.integration

TRANSCRIPTS = SUPPORT / "tla_transcripts"
ONE_BROKER = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)


def _toy(tmp_path: Path, cfg: str, module: str = "Toy.tla") -> TlcArgs:
    """The toy spec with one of its configurations, minus ``CHECK_DEADLOCK`` (TLC 2.15 does not know it; the
    recorded transcripts were made with a TLC that does, and ``-deadlock`` says the same)."""
    (tmp_path / module).write_text((TRANSCRIPTS / module).read_text())
    text = "".join(
        line
        for line in (TRANSCRIPTS / cfg).read_text().splitlines(keepends=True)
        if "CHECK_DEADLOCK" not in line
    )
    (tmp_path / cfg).write_text(text)
    return TlcArgs(module=tmp_path / module, config=tmp_path / cfg, timeout_s=600)


def _manifest_params() -> list[object]:
    return [
        pytest.param(e.name, marks=[pytest.mark.slow] if e.config.brokers > 1 else [], id=e.name)
        for e in load()
    ]


@pytest.mark.parametrize("name", _manifest_params())
def test_tlc_agrees_with_the_manifest(name: str, tools: Toolchain) -> None:
    """Every manifest model: TLC's distinct states are the explorer's, state for state (the 2-broker ones take
    many minutes: slow tier)."""
    entry = next(e for e in load() if e.name == name)
    result = run_crosscheck(CrosscheckArgs(entry.profile, entry.config, timeout_s=3600), tools)
    assert result.verdict is CrosscheckOutcome.AGREE, result.message
    assert result.tlc_distinct == entry.distinct_states
    if entry.tlc is not None:
        assert result.tlc_distinct == entry.tlc.distinct_states


def test_the_generated_cfg_and_command_line_run_in_this_tlc(
    tools: Toolchain, module_dir: Callable[[str, ModelConfig], Path]
) -> None:
    """A generated module of each profile runs in TLC (no ``CHECK_DEADLOCK``, no option the version rejects), with
    the JVM's defaults as a user's run has them (the suite's ``KCSPEC_TLC_JAVA_OPTIONS`` left out)."""
    tools = dataclasses.replace(tools, java_options=())
    for profile in ("kafka-2.8", "kafka-1.1"):
        module = module_dir(profile, ONE_BROKER)
        assert "CHECK_DEADLOCK" not in module.with_suffix(".cfg").read_text()
        result = run_tlc(
            TlcArgs(module=module, timeout_s=600, dump_trace_json=module.parent / "t.json"), tools
        )
        assert result.outcome is Outcome.OK, f"{profile}: {result.report.error}\n{result.raw_output[-2000:]}"
        assert result.report.version is not None and tools.version is not None
        assert tools.version.text in result.report.version


def test_invariant_violation(tmp_path: Path, tools: Toolchain) -> None:
    result = run_tlc(_toy(tmp_path, "Toy_violation.cfg"), tools)
    assert result.outcome is Outcome.INVARIANT_VIOLATED and result.report.violated == "EpochSmall"
    assert result.report.stats.distinct == 8
    assert [s.number for s in result.trace] == [1, 2, 3]
    assert result.trace[0].action is None and result.trace[1].action is not None
    # hermetic: TLC ran in a folder of its own, the caller's folder holds only what the test wrote
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Toy.tla", "Toy_violation.cfg"]


def test_a_depth_bounded_run_is_a_verdict_within_its_bound(tmp_path: Path, tools: Toolchain) -> None:
    """``--depth`` (TLC's ``-dfid``): TLC 2.15 ends a depth-first run with its counts and no "No error has been
    found"; that is a pass within the bound (said so), and a violation within the bound is still found."""
    ok = _toy(tmp_path, "Toy_ok.cfg")
    result = run_tlc(dataclasses.replace(ok, depth=3), tools)
    assert result.outcome is Outcome.OK, result.raw_output[-2000:]
    assert result.report.depth_bounded and result.report.stats.distinct
    bad = _toy(tmp_path, "Toy_violation.cfg")
    result = run_tlc(dataclasses.replace(bad, depth=5), tools)
    assert result.outcome is Outcome.INVARIANT_VIOLATED and result.report.violated == "EpochSmall"
    assert result.report.depth_bounded and result.trace


def test_deadlock(tmp_path: Path, tools: Toolchain) -> None:
    args = _toy(tmp_path, "Toy_deadlock.cfg")
    result = run_tlc(
        TlcArgs(module=args.module, config=args.config, check_deadlock=True, timeout_s=600), tools
    )
    assert result.outcome is Outcome.DEADLOCK, result.raw_output[-2000:]
    assert result.trace, "a deadlock comes with the path to the deadlocked state"


def test_parse_error(tmp_path: Path, tools: Toolchain) -> None:
    args = _toy(tmp_path, "Toy_ok.cfg")
    (tmp_path / "Bad.tla").write_text((TRANSCRIPTS / "Bad.tla").read_text())
    (tmp_path / "Bad.cfg").write_text(args.config_path.read_text())
    result = run_tlc(TlcArgs(module=tmp_path / "Bad.tla", timeout_s=600), tools)
    assert result.outcome is Outcome.PARSE_ERROR, result.raw_output[-2000:]
