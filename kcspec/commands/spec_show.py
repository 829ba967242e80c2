"""``kcspec spec show``: a profile's transition tables and behaviour flags, or every rendering of one rule
(``--rule NAME``); ``kcspec spec rules``: write or check ``docs/rules.md``; ``kcspec spec dump``: the spec's
canonical text (``kcspec.model.spec_dump``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kcspec import options
from kcspec.spec import profiles

if TYPE_CHECKING:
    from kcspec.conformance.selfcheck.rule_index import RuleCard


@click.group(name="spec")
def command() -> None:
    """Inspect the declarative spec."""


@command.command(name="show")
@options.profile()
@click.option(
    "--rule",
    "rule",
    default=None,
    help="Show every rendering of the rule (or procedure, action, invariant) NAME.",
)
@click.option("--rules", "list_rules", is_flag=True, help="List the names --rule takes.")
@click.option(
    "--brokers", type=click.IntRange(1, 5), default=3, show_default=True, help="Z3 lemmas over 1..N brokers."
)
@click.option("--json", "as_json", is_flag=True, help="With --rule: print the rule's card as JSON.")
def show(profile: str, rule: str | None, list_rules: bool, brokers: int, as_json: bool) -> None:
    """Print the valid-previous-state tables (§2.1, §2.2) and the profile's behaviour flags; or, with --rule,
    where the spec writes a rule and every rendering of it: its TLA+ operator, diagrams, Z3 lemmas (with their
    status), the reference controller's functions and the tests and vectors citing its §.

    \b
    Examples:
      kcspec spec show --profile kafka-1.1
      kcspec spec show --rule OfflinePartitionLeaderElectionStrategy
      kcspec spec show --rules
    """
    if list_rules or rule is not None:
        from kcspec.conformance.selfcheck import rule_index

        if list_rules:
            for name in rule_index.rule_names():
                click.echo(name)
            return
        assert rule is not None
        if not rule.strip():
            options.usage_error("--rule needs a rule's name ('kcspec spec show --rules' lists them)")
        try:
            c = rule_index.card(rule, brokers=brokers)
        except rule_index.UnknownRule as exc:
            options.fail(str(exc.args[0]))
        if as_json:
            click.echo(json.dumps(dataclasses.asdict(c), indent=2, ensure_ascii=False))
        else:
            _print_card(c, Console())
        return
    if as_json:
        options.usage_error("--json goes with --rule")
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


def _print_card(c: RuleCard, console: Console) -> None:
    def put(label: str, lines: list[str]) -> None:
        first, *rest = lines or ["—"]
        console.print(f"  [bold]{label:<13}[/bold]{escape(first)}", highlight=False, soft_wrap=True)
        for line in rest:
            console.print(f"  {'':<13}{escape(line)}", highlight=False, soft_wrap=True)

    console.print(f"[bold]{escape(c.name)}[/bold]  ({escape(', '.join(c.sections))})", highlight=False)
    put("written at", [f"{w.span}  {w.kind} {w.section}  [{', '.join(w.profiles)}]" for w in c.written])
    put("TLA+", [f"{o.operator}  {o.where}  [{o.profile}]" for o in c.tla])
    put("diagrams", [f"{m.path}:{m.line}  {m.text}" for m in c.diagrams])
    lemma_lines = [f"{lm.status:<24} {lm.name}" for lm in c.lemmas]
    put("Z3", [*lemma_lines, c.lemma_note] if c.lemma_note else lemma_lines)
    put("reference", list(c.reference))
    shown = [f"{m.path}:{m.line}" for m in c.tests[:8]]
    if len(c.tests) > 8:
        shown.append(f"… and {len(c.tests) - 8} more")
    from kcspec.conformance.selfcheck.rule_index import ROOT

    none = [] if (ROOT / "tests").is_dir() else ["not counted: no tests folder here (an installed package)"]
    put("tests", [f"{len(c.tests)} line(s) cite {', '.join(c.sections)}", *shown] if c.tests else none)
    vectors = [f"{n} vector(s) of {p}" for p, n in sorted(c.vectors.items())]
    put(
        "vectors",
        vectors or ["not counted: no generated vectors in the cache ('kcspec conformance run' makes them)"],
    )


@command.command(name="rules")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/rules.md"),
    show_default=True,
    callback=options.output_file,
    help="The file to write (and to compare with --check).",
)
@click.option("--check", "check_only", is_flag=True, help="Exit 1 when the file differs from the spec.")
def rules(out: Path, check_only: bool) -> None:
    """Write docs/rules.md: every rule of the spec with its §, where spec/ writes it, its TLA+ operator and the
    reference controller's counterparts.

    \b
    Examples:
      kcspec spec rules              rewrite docs/rules.md
      kcspec spec rules --check      exit 1 if docs/rules.md is stale
    """
    from kcspec.conformance.selfcheck import rule_index

    # a missing file is named before the index is built (generating the TLA+ modules takes seconds)
    if check_only and not out.is_file():
        options.fail(f"{out} does not exist (run 'kcspec spec rules --out {out}')")
    text = rule_index.rules_markdown()
    if check_only:
        if out.read_text(encoding="utf-8") != text:
            click.echo(f"{out} is stale: regenerate it with 'kcspec spec rules --out {out}'")
            raise click.exceptions.Exit(1)
        click.echo(f"{out} is up to date ({len(rule_index.rule_names())} rules)")
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    click.echo(f"wrote {out} ({len(rule_index.rule_names())} rules)")


@command.command(name="dump")
@options.profile(optional=True, help="The profile to dump (default: every profile, one after the other).")
@options.report_file("--out", "out", help="Write the dump to this file instead of standard output.")
@click.option(
    "--expand",
    is_flag=True,
    help="Print operators that stand for a tree of other nodes (the name of an enum member) as that tree.",
)
def dump(profile: str | None, out: Path | None, expand: bool) -> None:
    """Print the spec's canonical dump: every action, invariant and procedure of the profile(s), deterministic,
    with fresh variables renumbered and spans left out, so that a refactoring of spec/ can be checked to leave
    the spec unchanged (compare two dumps with cmp or diff).

    \b
    Examples:
      kcspec spec dump --out /tmp/before.txt
      kcspec spec dump --profile kafka-1.1 | less
    """
    from kcspec.model import spec_dump

    if profile:
        text = spec_dump.dump(profiles.get_profile(profile), expand=expand)
    else:
        text = spec_dump.dump_all(expand=expand)
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    click.echo(f"wrote {out} ({text.count(chr(10))} lines)")
