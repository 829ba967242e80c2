"""``kcspec spec show``: print a profile's transition tables and its differences from the other profile."""

from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.spec import profiles


@click.group(name="spec")
def command() -> None:
    """Inspect the declarative spec."""


@command.command(name="show")
@options.profile()
def show(profile: str) -> None:
    """Print the valid-previous-state tables (§2.1, §2.2) and the profile's behaviour flags.

    \b
    Example:
      kcspec spec show --profile kafka-1.1
    """
    prof = profiles.get_profile(profile)
    console = Console()
    for title, table_data in (
        (f"Replica state machine — {prof.name} (§2.1)", prof.replica_valid_previous),
        (f"Partition state machine — {prof.name} (§2.2)", prof.partition_valid_previous),
    ):
        t = Table(title=title)
        t.add_column("code", justify="right")
        t.add_column("target state")
        t.add_column("valid previous states")
        for target, prev in table_data.items():
            t.add_row(*map(escape, (str(target.value), target.name, ", ".join(p.name for p in prev))))
        console.print(t)
    flags = Table(title=f"Behaviour flags — {prof.name} (differences from the other profile in bold)")
    flags.add_column("flag")
    flags.add_column("value")
    flags.add_column("meaning")
    differing = {name for name, *_ in profiles.differences()}
    for name, value in prof.flags().items():
        style = "bold" if name in differing else ""
        flags.add_row(*map(escape, (name, str(value), profiles._flag_doc(name))), style=style)
    console.print(flags)
