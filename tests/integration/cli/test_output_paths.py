"""Every output a command writes (a folder or a file named on its command line) that cannot be written is one
clear line and exit 2, before any work, never a traceback or an internal error (exit 3); an ``OSError`` on a
file met while writing (the folder vanished, the disk filled) is reported the same way by the command group."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kcspec import options
from kcspec.cli import KcspecGroup, main
from tests.integration.cli.test_exit_codes import _leaf_commands

# (command, its arguments before the output path, the option naming the output ("" for an argument), a folder?)
CASES: list[tuple[str, list[str], str, bool]] = [
    ("audit", ["somewhere.log"], "--out", True),
    ("bugzoo", [], "--json", False),
    ("conformance run", ["--sut", "true"], "--json", False),
    ("conformance run", ["--sut", "true"], "--junit", False),
    ("conformance run", ["--sut", "true"], "--html", False),
    ("conformance run", ["--sut", "true"], "--trace-dir", True),
    ("conformance export", [], "", True),
    ("diagrams", [], "--out", True),
    ("diagrams", [], "--record-run", False),
    ("explore", [], "--out", True),
    ("explore", [], "--coverage-json", False),
    ("explore", [], "--checkpoint", True),
    ("fuzz", [], "--out", True),
    ("fuzz", [], "--database", True),
    ("prove", [], "--json", False),
    ("simulate", [], "--emit-logs", True),
    ("simulate", ["--spark"], "--json", False),
    ("spec dump", [], "--out", False),
    ("spec rules", [], "--out", False),
    ("tla export", [], "--out", True),
    ("tla check", [], "--out", True),
    ("tla check", [], "--checkpoint", True),
    ("tla crosscheck", [], "--json", False),
    ("tla modules", [], "--out", True),
    ("verify", [], "--out", True),
    ("verify", [], "--json", False),
    ("verify", [], "--junit", False),
]


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"kcspec {' '.join(args)} raised instead of exiting: {result.exception!r}")
    return result.exit_code, result.output


def _args(command: str, before: list[str], option: str, path: Path) -> list[str]:
    if command == "audit":  # the log argument comes after the options
        return ["audit", option, str(path), *before]
    return [*command.split(), *before, *([option] if option else []), str(path)]


@pytest.mark.parametrize(("command", "before", "option", "folder"), CASES, ids=lambda v: str(v))
def test_an_output_under_a_file_is_exit_2_with_one_message(
    tmp_path: Path, command: str, before: list[str], option: str, folder: bool
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    target = afile / ("sub" if folder else "x.out")
    code, out = _run(_args(command, before, option, target))
    assert code == 2, f"kcspec {command} {option} {target} exited {code}:\n{out}"
    assert f"cannot write {target}" in out and "is a file, not a folder" in out, out
    assert "Traceback" not in out and "internal error" not in out, out


@pytest.mark.parametrize(("command", "before", "option", "folder"), CASES, ids=lambda v: str(v))
def test_an_output_in_a_folder_that_refuses_files_is_exit_2(
    command: str, before: list[str], option: str, folder: bool
) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("needs /proc, a folder in which no file can be created even by root")
    target = Path("/proc/kcspec-no-such/x" if folder else "/proc/kcspec-no-such/x.out")
    code, out = _run(_args(command, before, option, target))
    assert code == 2, f"kcspec {command} {option} {target} exited {code}:\n{out}"
    assert f"cannot write {target}" in out, out
    assert "Traceback" not in out, out


def test_the_table_covers_every_output_option() -> None:
    """Every parameter with an output check is in the table, and every path option whose name says it is
    written has the check."""
    ctx = click.Context(main)
    written_names = {"out", "json", "junit", "html", "emit-logs", "trace-dir", "database", "record-run"}
    in_table = {(c, o) for c, _, o, _ in CASES}
    for command in _leaf_commands():
        cmd: click.Command | None = main
        for word in command.split():
            assert isinstance(cmd, click.Group)
            cmd = cmd.get_command(ctx, word)
        assert cmd is not None
        for param in cmd.params:
            flag = param.opts[0] if isinstance(param, click.Option) else ""
            checked = param.callback in (options.output_dir, options.output_file)
            if checked:
                assert (command, flag) in in_table, f"kcspec {command} {flag or param.name}: not in CASES"
            elif isinstance(param.type, click.Path) and flag.lstrip("-") in written_names:
                pytest.fail(f"kcspec {command} {flag} writes a path without options.output_dir/output_file")


def test_an_oserror_on_an_output_while_writing_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A write that fails after the option check (the folder removed meanwhile): "cannot write PATH", exit 2."""
    target = tmp_path / "gone" / "r.json"

    @click.command(name="writer")
    @click.option("--json", "json_out", type=click.Path(path_type=Path), callback=options.output_file)
    def writer(json_out: Path) -> None:
        click.echo("verdict: pass")
        json_out.write_text("{}")  # its folder does not exist: FileNotFoundError

    class Group(KcspecGroup):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return ["writer"]

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            return writer if cmd_name == "writer" else None

    result = CliRunner().invoke(Group(), ["writer", "--json", str(target)])
    assert result.exit_code == 2, result.output
    assert "verdict: pass" in result.output, "what the command printed before the failed write is kept"
    assert f"error: cannot write {target}: No such file or directory" in result.output, result.output
    assert "Traceback" not in result.output
