"""A click group whose commands never end a crash with exit 1, the code for "a divergence was found".

Python ends an uncaught exception with status 1, so a bug in kcspec (or in an in-process SUT's class that
breaks the runner's assumptions) would read as a verdict on the SUT in CI. Commands of a ``GuardedGroup``
end an unexpected exception with the traceback, a sentence saying it is kcspec's failure and not a
verdict, and ``EXIT_INTERNAL`` (3, as ``kcspec audit`` uses for an internal error). Click's own exits
(usage errors, ``sys.exit`` codes) and interrupts (``KeyboardInterrupt`` and SIGTERM, which the top-level
group turns into 130 / 143) pass through unchanged.
"""

from __future__ import annotations

import traceback
from typing import Any

import click

EXIT_INTERNAL = 3


class GuardedGroup(click.Group):
    """A ``click.Group`` whose subcommands end an unexpected exception with ``EXIT_INTERNAL``."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # BaseException (interrupts, sys.exit) is not caught
            click.echo(traceback.format_exc(), err=True, nl=False)
            click.echo(
                f"kcspec {ctx.info_name}: internal error: {type(exc).__name__}: {exc}\n"
                f"This is a failure of kcspec, not a verdict on the SUT (exit {EXIT_INTERNAL}); "
                "the traceback above says where.",
                err=True,
            )
            raise click.exceptions.Exit(EXIT_INTERNAL) from None
