"""Every rendering of one rule of the spec, one step from its source: ``kcspec spec show --rule`` and ``docs/rules.md``.

A rule of the spec is anything it names: a ``rule(...)`` step, a ``procedure``, an action or an invariant (each
records where ``spec/`` writes it: ``kcspec.spec.spans``). For one name, a ``RuleCard`` gathers

* where the spec writes it (file and line per profile) and its §;
* its TLA+ operator(s) in the module of the profile's smallest manifest model — the committed file and line
  (``docs/tla/``, in a checkout) or the generated module's line (an installed package);
* the diagrams that draw it (a state, an election strategy or an event of ``diagrams/*.dot``);
* its Z3 lemmas with their status, where the prover has lemmas about it (the election strategies, proved here
  over 1..``brokers`` brokers); an invariant's inductiveness is a whole-profile check of ``kcspec prove``;
* the reference controller's functions that implement it (``@mirrors`` in ``reference_impl``, by name only);
* the tests (in a checkout) and the vectors (when the vector cache holds them) that cite its §.

Every path and line listed exists (a test walks every rule of both profiles and checks them).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kcspec.model.tla import committed
from kcspec.model.tla.manifest import load as load_manifest
from kcspec.model.tla.module import GeneratedModule, generate
from kcspec.spec import lang as L
from kcspec.spec.actions import build_actions
from kcspec.spec.invariants import invariants as build_invariants
from kcspec.spec.profiles import PROFILES, get_profile

ROOT = Path(__file__).resolve().parents[2]
"""The folder holding ``spec/``, ``diagrams/`` and, in a checkout, ``tests/``."""

_HEAD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\(.*\))? ==$")


@dataclass(frozen=True, order=True)
class Written:
    """One place where the spec writes the rule: its kind, §, span, and the profiles built from it."""

    span: str
    kind: str
    section: str
    profiles: tuple[str, ...]


@dataclass(frozen=True, order=True)
class TlaOperator:
    profile: str
    model: str
    operator: str
    where: str
    """``docs/tla/<model>/<Module>.tla:<line>``, or ``<Module>.tla (generated):<line>``."""


@dataclass(frozen=True, order=True)
class Mention:
    """A file and line that names the rule (a diagram) or cites its § (a test, a vector)."""

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class Lemma:
    name: str
    status: str
    detail: str


@dataclass(frozen=True)
class RuleCard:
    name: str
    written: tuple[Written, ...]
    tla: tuple[TlaOperator, ...] = ()
    diagrams: tuple[Mention, ...] = ()
    lemmas: tuple[Lemma, ...] = ()
    lemma_note: str = ""
    reference: tuple[str, ...] = ()
    tests: tuple[Mention, ...] = ()
    vectors: dict[str, int] = field(default_factory=dict)
    """Profile → how many cached vectors cite one of the rule's sections (absent: no cache for that profile)."""

    @property
    def sections(self) -> tuple[str, ...]:
        return tuple(sorted({s for w in self.written for s in _sections(w.section)}))


class UnknownRule(KeyError):
    """No rule of the spec has this name (the message lists the closest names)."""


def _sections(text: str) -> list[str]:
    return re.findall(r"§\d+(?:\.\d+)*", text)


# ----------------------------------------------------------------------------------------------- the spec's names


@dataclass(frozen=True)
class _Unit:
    name: str
    kind: str
    section: str
    span: str | None


def _units(profile: str) -> Iterator[_Unit]:
    p = get_profile(profile)
    roots: list[L.Expr] = []
    for action in build_actions(p).values():
        yield _Unit(action.name, "action", action.section, _str(action.span))
        roots += [action.guard, action.effect]
    for inv in build_invariants(p):
        yield _Unit(inv.name, "invariant", inv.section, _str(inv.span))
        roots.append(inv.expr)
    seen: set[int] = set()
    defs: set[int] = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, L.Rule):
            yield _Unit(e.name, "rule", e.section, _str(e.span))
        elif isinstance(e, L.Call) and id(e.fn) not in defs:
            defs.add(id(e.fn))
            yield _Unit(e.fn.name, "procedure", e.fn.section, _str(e.fn.span))
        stack.extend(L.children(e))


def _str(span: object) -> str | None:
    return None if span is None else str(span)


@functools.cache
def _index() -> dict[str, tuple[Written, ...]]:
    """Rule name → where it is written, over both profiles (an action and the rule of its effect are one name)."""
    places: dict[tuple[str, str, str, str], set[str]] = {}
    for profile in PROFILES:
        for u in _units(profile):
            key = (u.name, u.span or "?", u.kind, u.section)
            places.setdefault(key, set()).add(profile)
    out: dict[str, list[Written]] = {}
    for (name, span, kind, section), profs in places.items():
        out.setdefault(name, []).append(Written(span, kind, section, tuple(sorted(profs))))
    return {name: tuple(sorted(ws)) for name, ws in out.items()}


def rule_names() -> tuple[str, ...]:
    """Every name of the spec's rules, procedures, actions and invariants (both profiles), sorted."""
    return tuple(sorted(_index()))


def _resolve(name: str) -> str:
    index = _index()
    if name in index:
        return name
    folded = [n for n in index if n.casefold() == name.casefold()]
    if len(folded) == 1:
        return folded[0]
    close = [n for n in index if name.casefold() in n.casefold()][:12]
    hint = (
        f"; names containing it: {', '.join(close)}"
        if close
        else "; 'kcspec spec show --rules' lists them all"
    )
    raise UnknownRule(f"no rule of the spec is named {name!r}{hint}")


# ----------------------------------------------------------------------------------------------- renderings


def _smallest_model(profile: str) -> tuple[str, GeneratedModule] | None:
    entries = [e for e in load_manifest() if e.profile == profile]
    if not entries:
        return None
    entry = min(entries, key=lambda e: e.distinct_states)
    return entry.name, generate(get_profile(profile), entry.config)


@functools.cache
def _operators(profile: str) -> dict[str, tuple[TlaOperator, ...]]:
    """Origin (``"name (§)"``) → the operators whose definition is that rule, in the smallest model's module."""
    found = _smallest_model(profile)
    if found is None:
        return {}
    model, module = found
    path = committed.module_path(model, module.name)
    shown = (
        path.relative_to(ROOT).as_posix()
        if path.is_file() and path.read_text(encoding="utf-8") == module.tla
        else f"{module.name}.tla (generated for {model})"
    )
    out: dict[str, list[TlaOperator]] = {}
    for n, line in enumerate(module.tla.splitlines(), 1):
        m = _HEAD.match(line)
        origin = module.origin(n)
        if m is None or origin is None or origin.rule is None:
            continue
        out.setdefault(origin.rule, []).append(TlaOperator(profile, model, m.group(1), f"{shown}:{n}"))
    return {k: tuple(v) for k, v in out.items()}


def _diagram_words(name: str) -> list[str]:
    inner = re.fullmatch(r"\w+\.handleStateChanges\((\w+)\)", name)
    return [inner.group(1)] if inner else [name]


@functools.cache
def _diagram_lines() -> tuple[tuple[str, int, str], ...]:
    folder = ROOT / "diagrams"
    out: list[tuple[str, int, str]] = []
    for path in sorted(folder.glob("*.dot")):
        rel = path.relative_to(ROOT).as_posix()
        out += [(rel, n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    return tuple(out)


def _diagrams(name: str) -> tuple[Mention, ...]:
    """The first line of each diagram that names the rule (a node or edge of the same name)."""
    words = [re.compile(rf"(?<![\w.]){re.escape(w)}(?![\w(])") for w in _diagram_words(name)]
    first: dict[str, Mention] = {}
    for path, n, line in _diagram_lines():
        if path not in first and any(w.search(line) for w in words):
            first[path] = Mention(path, n, line.strip()[:100])
    return tuple(first.values())


def _lemmas(name: str, brokers: int) -> tuple[tuple[Lemma, ...], str]:
    from kcspec.model.z3.election_lemmas import prove_strategy
    from kcspec.spec.vocabulary import ElectionStrategy

    strategy = next((s for s in ElectionStrategy if s.name == name), None)
    if strategy is None:
        if any(w.kind == "invariant" for w in _index()[name]):
            return (), "its inductiveness is checked for the whole profile by 'kcspec prove' (not run here)"
        return (), "the prover has no lemma about this rule by name (it is checked by exploration and TLC)"
    out: list[Lemma] = []
    for profile in PROFILES:
        for r in prove_strategy(get_profile(profile), strategy, brokers):
            out.append(Lemma(f"{profile}: {r.name}", r.status, r.detail))
    return tuple(out), f"proved now over 1..{brokers} broker(s)"


def _reference(name: str) -> tuple[str, ...]:
    for module in (
        "controller",
        "elections",
        "partition_state_machine",
        "replica_state_machine",
        "request_batch",
        "topic_deletion",
    ):
        importlib.import_module(f"kcspec.reference_impl.{module}")
    from kcspec.reference_impl.mirrors import COUNTERPARTS

    return tuple(str(c) for c in sorted(COUNTERPARTS.get(name, ())))


@functools.cache
def _test_lines() -> tuple[tuple[str, int, str], ...]:
    folder = ROOT / "tests"
    out: list[tuple[str, int, str]] = []
    if not folder.is_dir():
        return ()
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "§" in line:
                out.append((rel, n, line.strip()))
    return tuple(out)


def _cites(sections: Iterable[str]) -> re.Pattern[str]:
    alts = "|".join(re.escape(s) for s in sections)
    return re.compile(rf"(?:{alts})(?![\d])(?!\.\d)")


def _tests(sections: tuple[str, ...]) -> tuple[Mention, ...]:
    if not sections:
        return ()
    pattern = _cites(sections)
    return tuple(Mention(p, n, t[:100]) for p, n, t in _test_lines() if pattern.search(t))


@functools.cache
def _cached_vector_sections(profile: str) -> tuple[tuple[str, ...], ...] | None:
    from kcspec.conformance.vectors import cache

    vectors = cache.load(profile)
    return None if vectors is None else tuple(v.sections for v in vectors)


def _vectors(sections: tuple[str, ...]) -> dict[str, int]:
    from kcspec.conformance.vectors.traceability import covers

    out: dict[str, int] = {}
    for profile in PROFILES:
        cited = _cached_vector_sections(profile)
        if cited is not None:
            out[profile] = sum(1 for vs in cited if any(covers(v, s) for v in vs for s in sections))
    return out


def card(name: str, *, brokers: int = 3, lemmas: bool = True, citations: bool = True) -> RuleCard:
    """Every rendering of the rule ``name`` (``UnknownRule`` when there is none)."""
    name = _resolve(name)
    written = _index()[name]
    origins = {f"{name} ({w.section})" for w in written}
    ops = tuple(sorted(op for p in PROFILES for o in origins for op in _operators(p).get(o, ())))
    found, note = _lemmas(name, brokers) if lemmas else ((), "not run (--no-lemmas)")
    sections = tuple(sorted({s for w in written for s in _sections(w.section)}))
    return RuleCard(
        name=name,
        written=written,
        tla=ops,
        diagrams=_diagrams(name),
        lemmas=found,
        lemma_note=note,
        reference=_reference(name),
        tests=_tests(sections) if citations else (),
        vectors=_vectors(sections) if citations else {},
    )


DOC_TITLE = "# The spec's rules and where each is rendered"


def rules_markdown() -> str:
    """``docs/rules.md``: one row per rule of the spec (both profiles) — its §, where ``spec/`` writes it, its
    TLA+ operator in the smallest manifest model's module and the reference controller's counterparts.
    Deterministic (no lemma run, no test or vector citation): it changes exactly when the spec, the committed
    modules or the ``@mirrors`` marks change."""
    lines = [
        DOC_TITLE,
        "",
        "Generated by `kcspec spec rules` from `spec/` (do not edit; `kcspec spec rules --check` fails when it is",
        "stale). `kcspec spec show --rule NAME` shows one rule with its Z3 lemmas, diagrams, tests and vectors too.",
        "",
        "| rule | kind | § | written at | TLA+ operator | reference controller |",
        "|---|---|---|---|---|---|",
    ]
    for name in rule_names():
        c = card(name, lemmas=False, citations=False)
        kinds = ", ".join(sorted({w.kind for w in c.written}))
        sections = ", ".join(sorted({w.section for w in c.written}))
        spans = "<br>".join(sorted({f"`{w.span}`" + _only(w.profiles) for w in c.written}))
        ops = "<br>".join(f"`{o.operator}` `{o.where}`" for o in c.tla) or "—"
        ref = "<br>".join(f"`{r}`" for r in c.reference) or "—"
        cells = [f"`{name}`", kinds, sections, spans, ops, ref]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines) + "\n"


def _only(profiles: tuple[str, ...]) -> str:
    return "" if set(profiles) == set(PROFILES) else f" ({', '.join(profiles)} only)"


__all__ = [
    "DOC_TITLE",
    "Lemma",
    "Mention",
    "RuleCard",
    "TlaOperator",
    "UnknownRule",
    "Written",
    "card",
    "rule_names",
    "rules_markdown",
]
