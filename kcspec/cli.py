"""The ``kcspec`` command line: a click group whose subcommands live in ``kcspec.commands``.

Exit codes (DESIGN.md): 0 pass, 1 a violation or divergence was found (counterexample written),
2 bad usage, bad input or a missing dependency (the message says how to fix it), 3 an internal error of kcspec
(with its traceback; never 1, which would read as a verdict), 130 interrupted by Ctrl-C, 143 stopped by SIGTERM
(``kcspec.model.interrupts``).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib
import os
import sys
import threading
import traceback
from typing import NoReturn

import click

from kcspec import options
from kcspec.model import interrupts

WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
"""Errors of the environment met while writing an output (a full disk, a quota, a read-only file system)."""

EXIT_INTERNAL = 3
"""Exit status of an internal error (a bug in kcspec), distinct from every verdict."""

COMMANDS: dict[str, str] = {
    "spec": "spec_show",
    "verify": "verify",
    "explore": "explore",
    "fuzz": "fuzz",
    "simulate": "simulate",
    "audit": "audit",
    "conformance": "conformance",
    "serve-reference": "serve_reference",
    "tla": "tla",
    "diagrams": "diagrams",
    "bugzoo": "bugzoo",
    "prove": "prove",
}
"""Each subcommand's name and the module of ``kcspec.commands`` that exposes it as ``command``. A module is
imported only when its command runs (or ``--help`` lists it): ``kcspec serve-reference``, started once per SUT
session by the conformance suite, does not pay for Z3, Spark or the TLA+ generator."""

EPILOG = """\b
Examples:
  kcspec verify                         run every check (the CI gate)
  kcspec spec show --profile kafka-1.1  print the transition tables of a profile
  kcspec --help                         this text; kcspec COMMAND --help for each command
"""


EXIT_CODES = """\b
Exit codes:
  0    pass (nothing found)
  1    a violation or divergence was found (a counterexample is written)
  2    bad usage, bad input or a missing dependency (the message says what and where)
  3    an internal error of kcspec (with its traceback; never a verdict)
  130  interrupted by Ctrl-C
  143  stopped by SIGTERM
"""
"""The exit-code contract (DESIGN.md), shown at the end of every command's ``--help``: one text for all."""


def with_exit_codes(command: click.Command) -> click.Command:
    """``command`` (and, for a group, each of its subcommands) with ``EXIT_CODES`` ending its help epilog."""
    if EXIT_CODES not in (command.epilog or ""):
        command.epilog = f"{command.epilog.rstrip()}\n\n{EXIT_CODES}" if command.epilog else EXIT_CODES
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            with_exit_codes(sub)
    return command


class KcspecGroup(click.Group):
    """The command group; an interrupted command ends with 130 (Ctrl-C) or 143 (SIGTERM), never with click's
    "Aborted!" and exit 1, the code for "a violation was found"; an unexpected exception ends with its
    traceback and ``EXIT_INTERNAL``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        command: click.Command = importlib.import_module(f"kcspec.commands.{module}").command
        if command.name != cmd_name:
            raise RuntimeError(f"kcspec.commands.{module} defines {command.name!r}, expected {cmd_name!r}")
        return with_exit_codes(command)

    def invoke(self, ctx: click.Context) -> object:
        handling = ctx.obj if isinstance(ctx.obj, interrupts.Handling) else interrupts.LIBRARY
        ctx.meta[options.HANDLING] = handling
        # The only place where kcspec sets signal handlers: for the length of the command, restored on return
        # (a command run in-process leaves its caller's handlers as they were).
        with interrupts.handlers_installed():
            try:
                return super().invoke(ctx)
            except (KeyboardInterrupt, interrupts.Terminated) as e:
                interrupts.interrupted(e, handling)
                click.echo(f"\ninterrupted ({interrupts.describe(e)})", err=True)
                raise click.exceptions.Exit(interrupts.exit_code(e)) from None
            except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
                raise
            except OSError as e:
                if e.filename is None and e.errno in WRITE_ERRORS and options.OUTPUTS:
                    # a write refused without a file name (the data, not the open, met the full disk): the
                    # outputs of the command line are named instead
                    interrupts.stop_all()
                    where = ", ".join(sorted(str(p) for p in options.OUTPUTS))
                    click.echo(f"error: cannot write {where}: {e.strerror or e}", err=True)
                    raise click.exceptions.Exit(2) from None
                if e.filename is None:
                    raise _internal_error(ctx) from None
                # A file the system refused (an output under a read-only or vanished folder, a full disk): bad
                # input of the environment, one line and exit 2, not a failure of kcspec.
                interrupts.stop_all()
                what = "cannot write" if options.is_output(e.filename) else "cannot use"
                click.echo(f"error: {what} {e.filename}: {e.strerror or e}", err=True)
                raise click.exceptions.Exit(2) from None
            except Exception:
                raise _internal_error(ctx) from None


def _internal_error(ctx: click.Context) -> click.exceptions.Exit:
    """Report the exception being handled as a failure of kcspec itself (its traceback) and return the exit to
    raise: Python would end with 1, the code for "a violation"."""
    interrupts.stop_all()
    e = sys.exc_info()[1]
    click.echo(traceback.format_exc(), err=True, nl=False)
    where = f"kcspec {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "kcspec"
    click.echo(
        f"{where}: internal error: {type(e).__name__}: {e}\nThis is a failure of kcspec itself, not a "
        f"verdict (exit {EXIT_INTERNAL}); the traceback above says where.",
        err=True,
    )
    return click.exceptions.Exit(EXIT_INTERNAL)


@click.group(
    cls=KcspecGroup,
    epilog=f"{EPILOG}\n{EXIT_CODES}",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)
@click.version_option(package_name="kcspec")
def main() -> None:
    """kcspec: an executable, machine-checked specification of Apache Kafka's controller state machines,
    and a conformance kit for Kafka-compatible controllers."""


def run() -> None:
    """The ``kcspec`` console script (and ``python -m kcspec``): ``main`` with the command line's handling of
    interrupts (``interrupts.COMMAND_LINE``: every child process of the run is ended), and an interrupted run
    ends the process promptly once it has reported (``_end_interrupted``: a worker thread may still be inside C
    code)."""
    try:
        main.main(obj=interrupts.COMMAND_LINE)
    except SystemExit as e:
        if e.code in (interrupts.EXIT_SIGINT, interrupts.EXIT_SIGTERM):
            _end_interrupted(e.code)
        raise


def _end_interrupted(code: int) -> NoReturn:
    """End an interrupted run's process: its ``atexit`` clean-ups run (temporary folders are removed), bounded by
    ``interrupts.GRACE_SECONDS`` (one may wait for a worker pool or a thread still in C code), then the process
    ends at once, without waiting for the interpreter's shutdown."""
    watchdog = threading.Timer(interrupts.GRACE_SECONDS, os._exit, args=(code,))
    watchdog.daemon = True
    watchdog.start()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
