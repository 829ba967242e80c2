"""Generic mutants of ``reference_impl/`` made by a mutation-testing tool (cosmic-ray), injected in memory.

cosmic-ray's operators (comparison, arithmetic, boolean, unary, number, break/continue, zero-iteration loop)
enumerate the mutation sites of a reference-controller module and produce the mutated source text
(``cosmic_ray.mutating.mutate_code``). cosmic-ray itself would rewrite the file on disk and run a test command;
here the file is never touched: the mutated module text is executed in a private namespace, the one function or
method that contains the mutation is taken from it, re-bound to the *real* module's globals, and patched over
the original for the duration of the run (``patching.injected``), exactly like the historical mutants.

Sites that cannot be injected that way are reported as such, never silently dropped: mutations outside a
function body (module constants, class attributes), and operators that need names the real module lacks
(``ExceptionReplacer``) or change decoration (``RemoveDecorator``), or take arguments (``VariableReplacer``,
``VariableInserter``).

The killing suite is ``kcspec.conformance.selfcheck.bugzoo.killing``: scenarios, conformance vectors, exploration with the
fault families and a short seeded Hypothesis run, for both profiles. A mutant is *killed* when a check diverges
(a crash or a time-out counts: the tool's convention), *survived* otherwise; a survivor also reports how often the
mutated function was entered and the mutated line run by the scenarios and vectors (0 means the suite never
reached it, or the patch did not take).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import random
import time
import types
from dataclasses import dataclass
from typing import Any

from kcspec.conformance.selfcheck.bugzoo.killing import (
    STAGES,
    Exercise,
    MutantTimeout,
    exercise,
    killing_suite,
    time_limit,
)
from kcspec.conformance.selfcheck.bugzoo.patching import Patch, rewrap, unwrap

MODULES = (
    "context",
    "controller",
    "elections",
    "guards",
    "partition_state_machine",
    "reassignment",
    "reference",
    "replica_state_machine",
    "request_batch",
    "snapshot",
    "states",
    "topic_deletion",
    "zookeeper",
)
"""The ``kcspec.reference_impl`` modules mutated (``logs``, ``state_change_logger``, ``errors`` and ``version``
only format log lines, declare exceptions or name releases: nothing the step contract observes)."""

EXCLUDED_OPERATORS = frozenset(
    {"core/ExceptionReplacer", "core/RemoveDecorator", "core/VariableReplacer", "core/VariableInserter"}
)
TIME_LIMIT = 90.0
"""Seconds after which a mutant's killing run is stopped and the mutant counted killed (an endless loop)."""


@dataclass(frozen=True)
class Site:
    """One cosmic-ray mutation: module, operator, occurrence, where, and the enclosing definition."""

    module: str
    operator: str
    occurrence: int
    line: int
    column: int
    definition: str
    """``Class.method`` or ``function``; empty when the site is outside every function body."""
    before: str
    after: str

    @property
    def name(self) -> str:
        op = self.operator.removeprefix("core/")
        return f"{self.module}:{self.line}:{op}#{self.occurrence}"


@dataclass(frozen=True)
class GenericResult:
    site: Site
    status: str
    """killed | survived | not-injectable"""
    check: str
    detail: str
    seconds: float
    exercised: Exercise | None = None
    """For a survivor: entries into the mutated function and runs of the mutated line (scenarios + vectors)."""


@functools.cache
def _source(module: str) -> tuple[types.ModuleType, str]:
    """The imported module and its source text, read once per process (so that every mutant of a run is made
    from the text that was imported, even if the file changes on disk during the run)."""
    mod = importlib.import_module(f"kcspec.reference_impl.{module}")
    path = mod.__file__
    if path is None:
        raise RuntimeError(f"kcspec.reference_impl.{module} has no source file")
    with open(path, encoding="utf-8") as handle:
        return mod, handle.read()


def _definitions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of module functions and methods of module classes."""
    out: list[tuple[str, int, int]] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node.name, node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.append((f"{node.name}.{item.name}", item.lineno, item.end_lineno or item.lineno))
    return out


def _cosmic_ray(module: str) -> Any:
    """A cosmic-ray module (the tool ships no type information, so it is used untyped)."""
    try:
        return importlib.import_module(f"cosmic_ray.{module}")
    except ImportError as exc:
        raise RuntimeError(
            f"generic mutants need cosmic-ray ({exc}); install the dev extras: pip install -e '.[dev]'"
        ) from None


def _operators() -> list[tuple[str, Any]]:
    plugins = _cosmic_ray("plugins")
    ops: list[tuple[str, Any]] = []
    for name in plugins.operator_names():
        if name in EXCLUDED_OPERATORS or not name.startswith("core/"):
            continue
        cls = plugins.get_operator(name)
        if cls.arguments():
            continue
        ops.append((name, cls()))
    return ops


def enumerate_sites(modules: tuple[str, ...] = MODULES) -> list[Site]:
    """Every mutation site of the given modules, for every included cosmic-ray operator."""
    cr_ast = _cosmic_ray("ast")
    sites: list[Site] = []
    for module in modules:
        _mod, source = _source(module)
        lines = source.splitlines()
        defs = _definitions(source)
        tree = cr_ast.get_ast(source)
        for op_name, op in _operators():
            occurrence = 0
            for node in cr_ast.ast_nodes(tree):
                for start, _end in op.mutation_positions(node):
                    line, column = start
                    enclosing = [d for d in defs if d[1] < line <= d[2]]
                    definition = enclosing[-1][0] if enclosing else ""
                    if any(d[1] == line for d in defs):
                        definition = ""  # a signature: defaults and annotations are not the function's code
                    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                    sites.append(Site(module, op_name, occurrence, line, column, definition, text, ""))
                    occurrence += 1
    return sites


def sample_sites(sites: list[Site], n: int, seed: int) -> list[Site]:
    """``n`` sites drawn without replacement with ``random.Random(seed)``, in the order drawn (so that any prefix
    of the run, and any shard ``[k::n]`` of it, is itself a random sample)."""
    return [sites[i] for i in random.Random(seed).sample(range(len(sites)), min(n, len(sites)))]


def _mutated_source(site: Site) -> str | None:
    _mod, source = _source(site.module)
    operator = _cosmic_ray("plugins").get_operator(site.operator)()
    mutated: str | None = _cosmic_ray("mutating").mutate_code(source, operator, site.occurrence)
    return mutated


def build_patch(site: Site) -> tuple[Patch | None, str]:
    """The patch that injects ``site`` (or ``None`` and why it cannot be injected), and the mutated line."""
    if not site.definition:
        return None, "outside every function body (module or class level, or a def line)"
    mutated = _mutated_source(site)
    if mutated is None:
        return None, "cosmic-ray made no mutation at this occurrence"
    real, _source_text = _source(site.module)
    namespace: dict[str, Any] = {
        "__name__": real.__name__,
        "__file__": real.__file__,
        "__builtins__": builtins,
    }
    try:
        code = compile(mutated, f"<mutant {site.name}>", "exec")
    except SyntaxError as exc:  # e.g. the `*` of a keyword-only marker turned into `//`
        return None, f"the mutated module is not valid Python ({exc.msg}, line {exc.lineno})"
    exec(code, namespace)
    owner_name, _, attr = site.definition.rpartition(".")
    if owner_name:
        owner: Any = getattr(real, owner_name)
        original = vars(owner)[attr]
        new_value = vars(namespace[owner_name])[attr]
    else:
        owner = real
        original = getattr(real, attr)
        new_value = namespace[attr]
    old_fn, new_fn = unwrap(original), unwrap(new_value)
    if (
        old_fn.__code__.co_code == new_fn.__code__.co_code
        and old_fn.__code__.co_consts == new_fn.__code__.co_consts
        and old_fn.__defaults__ == new_fn.__defaults__
    ):
        return None, "the mutation does not change the function's code"
    if new_fn.__code__.co_freevars and old_fn.__code__.co_freevars != new_fn.__code__.co_freevars:
        return None, "the mutated function closes over different names"
    rebuilt = types.FunctionType(
        new_fn.__code__, real.__dict__, new_fn.__name__, new_fn.__defaults__, old_fn.__closure__
    )
    rebuilt.__kwdefaults__ = new_fn.__kwdefaults__
    rebuilt.__qualname__ = old_fn.__qualname__
    replacement = rewrap(original, rebuilt)
    mutated_line = (
        mutated.splitlines()[site.line - 1].strip() if site.line <= len(mutated.splitlines()) else ""
    )
    return Patch(owner, attr, lambda _orig: replacement), mutated_line


def mutated_code(patch: Patch) -> types.CodeType:
    """The code object the patch installs (the mutated function's)."""
    code: types.CodeType = unwrap(patch.make(None)).__code__
    return code


def run_generic(
    site: Site,
    time_limit_s: float = TIME_LIMIT,
    stages: tuple[str, ...] = STAGES,
    trace_survivor: bool = True,
) -> GenericResult:
    """Inject ``site`` and run the killing suite; killed, survived, or not injectable (with the reason)."""
    start = time.perf_counter()
    patch, info = build_patch(site)
    if patch is None:
        return GenericResult(site, "not-injectable", "", info, 0.0)
    mutated = Site(
        site.module,
        site.operator,
        site.occurrence,
        site.line,
        site.column,
        site.definition,
        site.before,
        info,
    )
    try:
        with time_limit(time_limit_s):
            found = killing_suite(site.name, patch, stages)
    except MutantTimeout as exc:
        return GenericResult(mutated, "killed", "timeout", str(exc), time.perf_counter() - start)
    except Exception as exc:
        return GenericResult(
            mutated, "killed", "crash", f"{type(exc).__name__}: {exc}", time.perf_counter() - start
        )
    seconds = time.perf_counter() - start
    if found is None:
        reached = exercise(patch, mutated_code(patch), site.line) if trace_survivor else None
        return GenericResult(mutated, "survived", "", "every check agrees with the spec", seconds, reached)
    return GenericResult(mutated, "killed", found[0], found[1], seconds)
