"""Generate ``PROTOCOL.md`` from the code it describes, and check that the committed file is up to date.

The prose lives in ``protocol_prose.py``; every table that restates something the code carries is generated:
requests and replies (``messages.py``), capabilities and error codes (their docstrings, with what the runner does
from ``protocol_facts.py``), the state fields and their roles (``spec/state.py`` and ``protocol_facts.py``), the
failure reasons, the election strategies (the module docstring of ``spec/elections.py``), every event with its
fields, profiles, words (``spec/event_words.py``), the guard as each profile's action writes it and an example
from the built-in scenarios, and the checklist of Kafka's inputs (``kafka_inputs.py``).

``python -m kcspec.conformance.protocol.protocol_doc`` rewrites the file; ``--check`` exits 1 when it is stale.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import itertools
import json
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

from kcspec.conformance.protocol import messages as m
from kcspec.conformance.protocol.kafka_inputs import KAFKA_INPUTS, Status
from kcspec.conformance.protocol.protocol_facts import ERROR_HANDLING, FAILURE_REASONS, Role, field_role
from kcspec.conformance.protocol.protocol_prose import TEMPLATE
from kcspec.spec import state as state_module
from kcspec.spec.event_words import EVENT_WORDS
from kcspec.spec.events import EVENT_TYPES, ControllerEvent
from kcspec.spec.fmap import FMap
from kcspec.spec.requests import FailureReason
from kcspec.spec.vocabulary import PartitionReplica, TopicPartition

PROTOCOL_MD = Path(__file__).with_name("PROTOCOL.md")
PROFILE_NAMES = ("kafka-2.8", "kafka-1.1")


# ------------------------------------------------------------------------------------------------ small helpers


def _md(text: str) -> str:
    """Docstring text as Markdown: reStructuredText's double backticks become single ones."""
    return text.replace("``", "`")


def _cell(text: str) -> str:
    """Text for one Markdown table cell: one line, pipes escaped."""
    return " ".join(_md(text).split()).replace("|", "\\|")


def _first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line (a dataclass's generated signature counts as none)."""
    text = inspect.cleandoc(doc or "")
    if ": '" in text.split("\n")[0] and text.endswith(")"):
        return ""
    return _md(" ".join(text.split("\n\n")[0].split()))


def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings written under the attributes of a class (``x: int`` followed by a string)."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    out: dict[str, str] = {}
    for stmt, nxt in itertools.pairwise(body):
        name = None
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
        if (
            name
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            out[name] = " ".join(nxt.value.value.split())
    return out


def json_type(hint: Any) -> str:
    """A field's type as JSON, in words (canonical form of ``spec/codec.py``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(json_type(a) for a in args)
    if hint is type(None):
        return "null"
    if hint is bool:
        return "boolean"
    if hint is int:
        return "integer"
    if hint is str:
        return "string"
    if hint is TopicPartition:
        return 'partition (`"topic-0"`)'
    if hint is PartitionReplica:
        return 'replica (`"topic-0/2"`)'
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(f"`{e.name}`" for e in hint)
    if origin is tuple:
        return f"array of {json_type(args[0])}"
    if origin is frozenset:
        return f"set (array without duplicates) of {json_type(args[0])}"
    if origin is FMap or hint is FMap:
        return f"object: {json_type(args[0])} → {json_type(args[1])}"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"[`{hint.__name__}`](#{hint.__name__.lower()}) object"
    return f"`{getattr(hint, '__name__', hint)}`"


POSITION_DEFAULT = "absent (protocol 1.0); required in a `step` reply of protocol 1.1"
"""The ``position`` row of a broker request's table: its place among the requests to its broker (see *What is
compared*); the schema has the same member (``schema_gen``)."""


def _fields(cls: type) -> list[tuple[str, Any, str]]:
    """(name, JSON type text, default text) of a dataclass's fields."""
    from kcspec.conformance.protocol.messages import WIRE_ONLY

    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if WIRE_ONLY in f.metadata:
            continue  # written into other members (a request's ``position``), described there
        if f.default is not dataclasses.MISSING:
            default = json.dumps(_encode_default(f.default))
        elif f.default_factory is not dataclasses.MISSING:
            default = json.dumps(_encode_default(f.default_factory()))
        else:
            default = ""
        out.append((f.name, json_type(hints[f.name]), default))
    return out


def _encode_default(value: object) -> object:
    from kcspec.spec import codec

    return codec.encode(value)


# ------------------------------------------------------------------------------------------------ sections


def requests_table() -> str:
    rows = ["| request `type` | fields | what it asks | successful reply |", "|---|---|---|---|"]
    for name, cls in m.REQUEST_TYPES.items():
        fields = ", ".join(f"`{n}`" for n, _t, _d in _fields(cls)) or "—"
        replies = ", ".join(f"`{m.RESPONSE_NAMES[r]}`" for r in m.EXPECTED_REPLY[cls])
        rows.append(f"| `{name}` | {fields} | {_cell(_first_paragraph(cls.__doc__))} | {replies} |")
    rows += ["", "| reply `type` | fields | meaning |", "|---|---|---|"]
    for name, cls in m.RESPONSE_TYPES.items():
        fields = ", ".join(f"`{n}`" for n, _t, _d in _fields(cls)) or "—"
        rows.append(f"| `{name}` | {fields} | {_cell(_first_paragraph(cls.__doc__))} |")
    return "\n".join(rows)


def capabilities_table() -> str:
    docs = _attribute_docs(m.Capability)
    rows = ["| capability | what the SUT implements |", "|---|---|"]
    rows += [f"| `{c.value}` | {_cell(docs.get(c.name, ''))} |" for c in m.Capability]
    return "\n".join(rows)


def error_codes_table() -> str:
    docs = _attribute_docs(m.ErrorCode)
    rows = ["| code | meaning | what the suite does |", "|---|---|---|"]
    rows += [
        f"| `{c.value}` | {_cell(docs.get(c.name, ''))} | {_cell(ERROR_HANDLING[c])} |" for c in m.ErrorCode
    ]
    return "\n".join(rows)


def state_fields_table() -> str:
    rows = [
        "| field | JSON type | meaning | role | written by (environment parts) |",
        "|---|---|---|---|---|",
    ]
    parts = (("zk", state_module.ZkState), ("controller", state_module.ControllerContext))
    from kcspec.spec.vocabulary import ClusterConfig

    for prefix, cls in (*parts, ("config", ClusterConfig)):
        docs = _attribute_docs(cls)
        for name, typ, _default in _fields(cls):
            path = f"{prefix}.{name}"
            role = field_role(path)
            meaning = " ".join(x for x in (docs.get(name, ""), role.note) if x)
            meaning = meaning[:1].upper() + meaning[1:]
            writers = ", ".join(f"`{w}`" for w in role.writers) or (
                "—" if role.role is not Role.controller else ""
            )
            rows.append(f"| `{path}` | {_cell(typ)} | {_cell(meaning)} | {role.role.value} | {writers} |")
    return "\n".join(rows)


def failure_reasons_table() -> str:
    rows = ["| `reason` | reported when |", "|---|---|"]
    rows += [
        f"| `{r.name}` | {_cell(FAILURE_REASONS[r])} |" for r in FailureReason
    ]  # the wire form: the name
    return "\n".join(rows)


def strategies_table() -> str:
    """The strategy table of ``spec/elections.py``'s docstring and the unclean rule below it."""
    from kcspec.spec import elections

    doc = inspect.cleandoc(elections.__doc__ or "")
    start = doc.index("| strategy |")
    return _md(doc[start:].strip())


_STATE_RECORDS = ("ClusterState", "ZkState", "ControllerContext", "ClusterConfig")


def _records() -> list[type]:
    """Every record type a message can carry, except the state's parts and the events (described elsewhere)."""
    seen: dict[str, type] = {}

    def walk(hint: Any) -> None:
        for arg in typing.get_args(hint):
            walk(arg)
        if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
            return
        if issubclass(hint, ControllerEvent) or hint in (TopicPartition, PartitionReplica):
            return
        if hint.__name__ in seen:
            return
        seen[hint.__name__] = hint
        for f_hint in typing.get_type_hints(hint).values():
            walk(f_hint)

    for cls in (*m.REQUEST_TYPES.values(), *m.RESPONSE_TYPES.values()):
        for hint in typing.get_type_hints(cls).values():
            walk(hint)
    return [c for name, c in seen.items() if name not in _STATE_RECORDS]


def records_section() -> str:
    """One small table per record type: its fields, their JSON types and defaults."""
    from kcspec.spec.codec import REQUEST_TYPES

    tags = {cls: name for name, cls in REQUEST_TYPES.items()}
    out = []
    for cls in _records():
        summary = _first_paragraph(cls.__doc__)
        lines = [f"#### `{cls.__name__}`", ""] + ([summary, ""] if summary else [])
        tag = tags.get(cls)
        if tag:
            lines += [f'Carries `"type": "{tag}"` first.', ""]
        lines += ["| field | JSON type | default |", "|---|---|---|"]
        lines += [f"| `{n}` | {_cell(t)} | {f'`{d}`' if d else 'required'} |" for n, t, d in _fields(cls)]
        if tag:
            lines.append(f"| `position` | integer ≥ 0 | {POSITION_DEFAULT} |")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _example(kind: str) -> str | None:
    from kcspec.conformance.scenarios import SCENARIOS

    for profile in PROFILE_NAMES:
        for scenario in SCENARIOS:
            for event in scenario.events(profile):
                if event.kind == kind:
                    wire = m.to_wire(0, m.Event(event))["event"]
                    return json.dumps(wire, ensure_ascii=False, separators=(", ", ": "))
    return None


def _actions() -> dict[str, dict[str, Any]]:
    from kcspec.spec.actions import registry
    from kcspec.spec.profiles import PROFILES

    return {name: registry.build(PROFILES[name]) for name in PROFILE_NAMES}


def event_section(cls: type[ControllerEvent], actions: dict[str, dict[str, Any]]) -> str:
    from kcspec.model.diagrams.pretty import pretty

    kind = cls.kind
    words = EVENT_WORDS[kind]
    profiles = [p for p in PROFILE_NAMES if kind in actions[p]]
    lines = [f"### `{kind}`", "", _first_paragraph(cls.__doc__), ""]
    lines.append(f"*Profiles:* {', '.join(profiles)}. *Section:* {cls.section}.")
    lines.append("")
    fields = _fields(cls)
    if fields:
        lines += ["| field | JSON type | default |", "|---|---|---|"]
        lines += [f"| `{n}` | {_cell(t)} | {f'`{d}`' if d else 'required'} |" for n, t, d in fields]
    else:
        lines.append("No fields besides `kind`.")
    lines += [
        "",
        f"- **Guard** (when it can happen; otherwise reply `not_enabled`): {words.guard}",
        f"- **Environment part:** {words.environment}",
        f"- **Controller part:** {words.controller}",
    ]
    docs = {p: actions[p][kind].doc for p in profiles}
    if len(set(docs.values())) == 1:
        lines.append(f"- **The action's summary:** {docs[profiles[0]]}")
    else:
        lines += [f"- **The action's summary ({p}):** {d}" for p, d in docs.items()]
    example = _example(kind)
    if example:
        lines.append(f"- **Example:** `{example}`")
    guards = {p: pretty(actions[p][kind].guard) for p in profiles}
    lines += ["", "<details><summary>The guard as the spec writes it</summary>", ""]
    if len(set(guards.values())) == 1:
        lines += ["```text", guards[profiles[0]], "```"]
    else:
        for p, g in guards.items():
            lines += [f"{p}:", "", "```text", g, "```", ""]
    lines += ["", "</details>"]
    return "\n".join(lines).replace("\n\n\n", "\n\n")


def events_index(actions: dict[str, dict[str, Any]]) -> str:
    rows = ["| event | profiles | section | what happens |", "|---|---|---|---|"]
    for cls in EVENT_TYPES:
        profiles = ", ".join(p for p in PROFILE_NAMES if cls.kind in actions[p])
        rows.append(
            f"| [`{cls.kind}`](#{cls.kind.lower()}) | {profiles} | {cls.section} | "
            f"{_cell(_first_paragraph(cls.__doc__))} |"
        )
    return "\n".join(rows)


def events_sections() -> str:
    actions = _actions()
    return events_index(actions) + "\n\n" + "\n\n".join(event_section(cls, actions) for cls in EVENT_TYPES)


def checklist_table() -> str:
    rows = ["| Kafka input | versions | status | kcspec event | how / why |", "|---|---|---|---|---|"]
    for row in KAFKA_INPUTS:
        events = ", ".join(f"[`{e}`](#{e.lower()})" for e in row.events) or "—"
        rows.append(
            f"| {_cell(row.kafka)} | {row.versions} | {row.status.value} | {events} | {_cell(row.note)} |"
        )
    counts = {s: sum(1 for r in KAFKA_INPUTS if r.status is s) for s in Status}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items())
    return "\n".join(rows) + f"\n\n{len(KAFKA_INPUTS)} inputs: {summary}."


def json_limits() -> str:
    """The bounds every reply is read with (``kcspec.spec.bounded_json``), so an implementer knows them."""
    from kcspec.spec import bounded_json

    text = (
        f"* A reply nested deeper than {bounded_json.MAX_DEPTH} levels, a number written with more than "
        f"{bounded_json.MAX_NUMBER_CHARS} characters, or a string holding a lone surrogate escape (`\\ud800`: "
        "valid JSON syntax, but not Unicode text) is a protocol error: the reply is refused before it is parsed "
        "and the verdict is *errored*."
    )
    return textwrap.fill(text, width=116, subsequent_indent="  ", break_on_hyphens=False)


SECTIONS = {
    "JSON_LIMITS": json_limits,
    "REQUESTS": requests_table,
    "RECORDS": records_section,
    "CAPABILITIES": capabilities_table,
    "ERROR_CODES": error_codes_table,
    "STATE_FIELDS": state_fields_table,
    "FAILURE_REASONS": failure_reasons_table,
    "STRATEGIES": strategies_table,
    "EVENTS": events_sections,
    "CHECKLIST": checklist_table,
}
"""Placeholder in ``protocol_prose.TEMPLATE`` (``{{NAME}}``) → the function that generates it."""


def render() -> str:
    """The whole PROTOCOL.md."""
    text = TEMPLATE
    for name, make in SECTIONS.items():
        marker = "{{" + name + "}}"
        if marker not in text:
            raise ValueError(f"protocol_prose.TEMPLATE has no {marker} placeholder")
        text = text.replace(marker, make())
    return text.strip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write PROTOCOL.md, or with ``--check`` exit 1 (naming the fix) when the committed file differs."""
    args = sys.argv[1:] if argv is None else argv
    unknown = [a for a in args if a != "--check"]
    if unknown:
        print(f"unknown argument {unknown[0]!r} (usage: protocol_doc [--check])", file=sys.stderr)
        return 2
    text = render()
    current = PROTOCOL_MD.read_text(encoding="utf-8") if PROTOCOL_MD.exists() else None
    if "--check" in args:
        if current != text:
            print(f"{PROTOCOL_MD} is stale (run python -m kcspec.conformance.protocol.protocol_doc)")
            return 1
        return 0
    if current != text:
        PROTOCOL_MD.write_text(text, encoding="utf-8")
        print(f"wrote {PROTOCOL_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
