"""The TLA+ wrapper against a real TLC (the jar of the ``tlc`` extra, TLC 2.15, or ``TLA2TOOLS_JAR``): every
manifest model crosschecked, an invariant violation, a deadlock, a parse error, a timeout, and Ctrl-C, SIGTERM and
SIGKILL of ``kcspec`` leaving no JVM and no temporary folder behind.

A missing TLC fails these tests (``make setup`` installs it): they never skip. Generated modules are shared per
(profile, model) through session-scoped fixtures (one per pytest-xdist worker, under ``tmp_path_factory``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kcspec.conformance.selfcheck.tla_crosscheck import CrosscheckArgs, CrosscheckOutcome, run_crosscheck
from kcspec.model.tla.config import CROSSCHECK_DEFAULT, ModelConfig
from kcspec.model.tla.manifest import load
from kcspec.model.tla.module import generate
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.locate import MINIMUM_VERSION, Toolchain, find_toolchain, tlc_unavailable_reason
from kcspec.model.tlc.output import Outcome
from kcspec.model.tlc.run import run_tlc
from kcspec.spec.profiles import get_profile

from tests.support.paths import SUPPORT
from tests.support.timing import scaled

pytestmark = pytest.mark.integration

TRANSCRIPTS = SUPPORT / "tla_transcripts"
ONE_BROKER = ModelConfig(1, 1, 1, 1, 1, 1, 2, 0)


@pytest.fixture(scope="session")
def tools() -> Toolchain:
    reason = tlc_unavailable_reason()
    if reason is not None:
        pytest.fail(f"no TLC for the TLC tests (make setup installs it with the dev extra): {reason}")
    found = find_toolchain()
    assert found.version is not None and found.version.key >= MINIMUM_VERSION
    return found


@pytest.fixture(scope="session")
def module_dir(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, ModelConfig], Path]:
    """The folder holding the generated ``.tla`` and ``.cfg`` of (profile, model), written once per worker."""
    made: dict[tuple[str, ModelConfig], Path] = {}

    def get(profile: str, config: ModelConfig) -> Path:
        key = (profile, config)
        if key not in made:
            module = generate(get_profile(profile), config)
            folder = tmp_path_factory.mktemp(f"tla-{profile}")
            (folder / f"{module.name}.tla").write_text(module.tla, encoding="utf-8")
            (folder / f"{module.name}.cfg").write_text(module.cfg, encoding="utf-8")
            made[key] = folder / f"{module.name}.tla"
        return made[key]

    return get


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
    """A generated module of each profile runs in TLC (no ``CHECK_DEADLOCK``, no option the version rejects)."""
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


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_timeout_stops_tlc(tools: Toolchain, module_dir: Callable[[str, ModelConfig], Path]) -> None:
    module = module_dir("kafka-2.8", CROSSCHECK_DEFAULT)  # minutes of TLC: stopped long before the end
    result = run_tlc(TlcArgs(module=module, timeout_s=8), tools)
    assert result.outcome is Outcome.TIMEOUT, result.raw_output[-2000:]
    metadir = result.argv[result.argv.index("-metadir") + 1]
    assert _wait_until(lambda: not _processes_mentioning(metadir), 30), "TLC's JVM outlived the timeout"
    assert not Path(metadir).parent.exists(), "the run's temporary folder was left behind"


def _alive(pid: int) -> bool:
    """Running and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _child_jvms(parent: int) -> list[int]:
    """The JVMs running TLC on a model that ``parent`` started (not the version probe)."""
    out = []
    for pid in _processes_mentioning("tlc2.TLC"):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if ppid == parent and b"KcspecVersionProbe" not in cmdline:
            out.append(pid)
    return out


@pytest.mark.parametrize(
    ("signum", "expected"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["ctrl-c", "sigterm", "sigkill"],
)
def test_a_signal_to_kcspec_leaves_no_jvm_and_no_temporary_folder(
    tmp_path: Path, tools: Toolchain, signum: int, expected: int
) -> None:
    """``kcspec tla crosscheck`` on the default 2-broker model (minutes of TLC), stopped while TLC runs: the exit
    status is 128 + signal (SIGKILL: killed), and TLC's JVM and the temporary folders are gone."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "TLA2TOOLS_JAR": str(tools.jar)}
    argv = [sys.executable, "-m", "kcspec", "tla", "crosscheck", "--profile", "kafka-2.8"]
    # as from a terminal: SIGINT at its default (a pytest-xdist worker ignores it, and an ignored SIGINT is inherited:
    # kcspec then keeps ignoring it, as a background job of a shell does)
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    jvms: list[int] = []
    try:
        # TLC checks the model (a JVM of kcspec's still there 2 s after it was first seen: not a short-lived one)
        deadline = time.monotonic() + scaled(300)
        while time.monotonic() < deadline and proc.poll() is None:
            if _child_jvms(proc.pid):
                time.sleep(2)
                jvms = _child_jvms(proc.pid)
                if jvms:
                    break
            time.sleep(0.1)
        if not jvms:
            proc.kill()
            raise AssertionError(
                f"TLC never started: {proc.communicate(timeout=scaled(60))[0].decode()[-2000:]}"
            )
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=scaled(120))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == expected, output.decode()[-2000:]
    if signum != signal.SIGKILL:
        assert b"interrupted" in output
    assert _wait_until(lambda: not any(map(_alive, jvms)), scaled(60)), f"JVM {jvms} outlived kcspec"
    assert _wait_until(lambda: not list(tmp.iterdir()), scaled(60)), f"left behind: {sorted(tmp.iterdir())}"
