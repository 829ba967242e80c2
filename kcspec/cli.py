"""The ``kcspec`` command line: a click group whose subcommands live in ``kcspec.commands``.

Exit codes (DESIGN.md): 0 pass, 1 a violation or divergence was found (counterexample written),
2 bad usage, bad input or a missing dependency (the message says how to fix it), 130 interrupted by Ctrl-C,
143 stopped by SIGTERM (``kcspec.model.interrupts``).
"""

from __future__ import annotations

import importlib
import sys

import click

from kcspec.model import interrupts

COMMAND_MODULES: tuple[str, ...] = (
    "spec_show",
    "verify",
    "explore",
    "fuzz",
    "simulate",
    "audit",
    "conformance",
    "serve_reference",
    "tla",
    "diagrams",
    "bugzoo",
    "prove",
)
"""Modules of ``kcspec.commands`` that each expose a click command (or group) named ``command``."""

EPILOG = """\b
Examples:
  kcspec verify                         run every check (the CI gate)
  kcspec spec show --profile kafka-1.1  print the transition tables of a profile
  kcspec --help                         this text; kcspec COMMAND --help for each command
"""


class KcspecGroup(click.Group):
    """The command group; an interrupted command ends with 130 (Ctrl-C) or 143 (SIGTERM), never with click's
    "Aborted!" and exit 1, the code for "a violation was found"."""

    def invoke(self, ctx: click.Context) -> object:
        interrupts.install_sigterm()
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, interrupts.Terminated) as e:
            interrupts.stop_all()
            code = interrupts.exit_code(e)
            click.echo(
                f"\ninterrupted ({'SIGTERM' if code == interrupts.EXIT_SIGTERM else 'Ctrl-C'})", err=True
            )
            raise click.exceptions.Exit(code) from None


@click.group(
    cls=KcspecGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
)
@click.version_option(package_name="kcspec")
def main() -> None:
    """kcspec: an executable, machine-checked specification of Apache Kafka's controller state machines,
    and a conformance kit for Kafka-compatible controllers."""


for _name in COMMAND_MODULES:
    _module = importlib.import_module(f"kcspec.commands.{_name}")
    main.add_command(_module.command)


def run() -> None:  # pragma: no cover - console entry point helper
    sys.exit(main())
