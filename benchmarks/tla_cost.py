"""A static estimate of TLC's work per action instance of a generated TLA+ module (no TLC needed).

TLC evaluates an action instance by evaluating the action's expression, expanding every operator it calls (an
operator's body is evaluated again at each call; a ``LET`` definition once per evaluation of its ``LET``). Two
proxies, both counted on the text with every called operator expanded at each call site:

* ``bind`` — bounded binders (``\\A x \\in S``, ``\\E``, ``{x \\in S : …}``, ``{e : x \\in S}``, ``[x \\in S |-> …]``,
  ``LAMBDA``): each makes TLC enumerate a set once per evaluation;
* ``tok`` — tokens: the size of the expression TLC walks.

Usage: python benchmarks/tla_cost.py [--before-commit COMMIT ...] [--before OLD.tla ...] [--profile kafka-2.8] — both proxies per action of
``Next`` for the module generated now (the default model), for the module each ``--before-commit``'s generator
writes, and for each ``--before`` (a module exported by an older commit with ``kcspec tla export``), printed and written to the generated section of
``benchmarks/results/tla_cost.md``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIND = re.compile(r"(?:\\A|\\E|\{|\[|:|LAMBDA)\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s+\\in\s")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\\[A-Za-z]+|[^\sA-Za-z0-9_]")
HEAD = re.compile(r"^(?:RECURSIVE )?([A-Za-z_][A-Za-z0-9_]*)(\(.*\))? ==")
SKIP = {"s", "vars", "Init", "Next", "Spec", "FairSpec"}


def definitions(tla: str) -> dict[str, str]:
    """Top-level definitions (name → body without comments and string contents)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in tla.splitlines():
        m = HEAD.match(line)
        if m and not line.startswith(" "):
            current = m.group(1)
            out[current] = [line.split("==", 1)[1]]
        elif current is not None:
            out[current].append(line)
    bodies = {k: "\n".join(v) for k, v in out.items()}
    return {k: re.sub(r'"[^"]*"', '""', re.sub(r"\(\*.*?\*\)", "", v, flags=re.S)) for k, v in bodies.items()}


def costs(tla: str, proxy: str) -> dict[str, int]:
    """The proxy per action, with every called operator expanded at each call."""
    defs = definitions(tla)
    calls = {n: re.compile(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])") for n in defs}
    memo: dict[str, int] = {}
    active: set[str] = set()

    def cost(name: str) -> int:
        if name in memo:
            return memo[name]
        if name in active:  # a RECURSIVE operator: counted once
            return 0
        active.add(name)
        body = defs[name]
        total = len(BIND.findall(body)) if proxy == "bind" else len(TOKEN.findall(body))
        for other in defs:
            if other != name and other not in SKIP:
                n = len(calls[other].findall(body))
                if n:
                    total += n * cost(other)
        active.discard(name)
        memo[name] = total
        return total

    return {a: cost(a) for a in actions(tla) if a in defs}


def actions(tla: str) -> list[str]:
    """The actions ``Next`` lists (``\\/ \\E … : Name(…)`` or ``\\/ Name``), in its order."""
    block = tla[tla.index("\nNext ==") :].split("\n\n", 1)[0]
    return re.findall(r"(?:\\/ |: |^\s+)([A-Z][A-Za-z0-9_]*)(?:\(|$)", block, re.M)


def module_at(commit: str, profile: str) -> str:
    """The module of ``profile`` (default model) as the generator at ``commit`` writes it: the commit's tree
    exported with ``git archive`` to a temporary folder, laid out as the ``kcspec`` package (``kcspec/``'s files
    and the ``spec``, ``model``, ``reference_impl`` and ``conformance`` folders, as setup.py maps them), and its
    generator run there by this interpreter (whose virtualenv holds the dependencies)."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="kcspec-tla-cost-") as tmp:
        tree, site = Path(tmp) / "tree", Path(tmp) / "site"
        tree.mkdir()
        archive = subprocess.run(["git", "archive", commit], cwd=root, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        package = site / "kcspec"
        package.mkdir(parents=True)
        for entry in (tree / "kcspec").iterdir():
            (package / entry.name).symlink_to(entry)
        for folder in ("spec", "model", "reference_impl", "conformance", "audit"):
            if (tree / folder).is_dir():
                (package / folder).symlink_to(tree / folder)
        code = (
            "import sys; from kcspec.model.tla.config import ModelConfig; "
            "from kcspec.model.tla.module import generate; from kcspec.spec.profiles import get_profile; "
            f"sys.stdout.write(generate(get_profile({profile!r}), ModelConfig()).tla)"
        )
        env = {**os.environ, "PYTHONPATH": str(site)}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout


BEGIN = "<!-- benchmarks/tla_cost.py: begin -->"
END = "<!-- benchmarks/tla_cost.py: end -->"


def report(modules: dict[str, str]) -> str:
    """The Markdown section: size and both proxies, in total and per action, for each module."""
    out = [
        BEGIN,
        "",
        "| module | lines | bytes | longest line | bind (total) | tok (total) |",
        "|---|---|---|---|---|---|",
    ]
    per_module: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    for label, tla in modules.items():
        lines = tla.splitlines()
        bind, tok = costs(tla, "bind"), costs(tla, "tok")
        per_module[label] = (bind, tok)
        out.append(
            f"| {label} | {len(lines):,} | {len(tla.encode('utf-8')):,} | {max(map(len, lines))} "
            f"| {sum(bind.values()):,} | {sum(tok.values()):,} |"
        )
    labels = list(modules)
    out += [
        "",
        "Per action (bind / tok):",
        "",
        "| action | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    names = list(dict.fromkeys(a for label in labels for a in per_module[label][0]))
    for a in names:
        cells = []
        for label in labels:
            bind, tok = per_module[label]
            cells.append(f"{bind[a]:,} / {tok[a]:,}" if a in bind else "-")
        out.append(f"| {a} | " + " | ".join(cells) + " |")
    out += ["", END]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="a module generated by an older commit (repeatable)",
    )
    parser.add_argument(
        "--before-commit",
        action="append",
        default=[],
        help="a commit whose generator writes the module to compare with (repeatable)",
    )
    parser.add_argument("--profile", default="kafka-2.8")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "results" / "tla_cost.md",
        help="the results file whose generated section is rewritten",
    )
    args = parser.parse_args()
    import harness  # beside this script
    from kcspec.model.tla.config import ModelConfig
    from kcspec.model.tla.module import generate
    from kcspec.spec.profiles import get_profile
    from results_section import write_section

    harness.print_header("The generated TLA+ module's size and static cost")

    modules: dict[str, str] = {}
    for commit in args.before_commit:
        modules[f"at {commit}"] = module_at(commit, args.profile)
    for path in args.before:
        modules[f"before: {path.name}"] = path.read_text(encoding="utf-8")
    modules[f"now ({args.profile}, default model)"] = generate(get_profile(args.profile), ModelConfig()).tla
    section = report(modules)
    print(section)
    write_section(args.out, section, begin=BEGIN, end=END, title="# The generated TLA+ module: size and cost")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
