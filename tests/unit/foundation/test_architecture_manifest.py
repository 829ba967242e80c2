"""The file manifest (``docs/manifest.md``, generated) lists every module of the tree, and nothing that is gone.

Regenerate the manifest (one line per module: its docstring's first sentence) with

    python -m tests.unit.foundation.test_architecture_manifest
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "manifest.md"
FOLDERS = ("spec", "model", "reference_impl", "conformance", "audit", "kcspec")
HEADING = "# File manifest"
WIDTH = 190
_ENTRY = re.compile(r"^- `([^`]+)` — ")


def modules() -> list[Path]:
    """Every module, except package markers (an ``__init__.py`` without a docstring)."""
    found: list[Path] = []
    for folder in FOLDERS:
        found += sorted(
            p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts and _worth(p)
        )
    return found


def _worth(path: Path) -> bool:
    return path.name != "__init__.py" or ast.get_docstring(ast.parse(path.read_text())) is not None


def first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(), filename=str(path))) or "(no docstring)"
    text = " ".join(doc.split())
    m = re.search(r"(?<=[.!?])\s", text)
    sentence = text[: m.start()] if m else text
    return sentence if len(sentence) <= WIDTH - 40 else sentence[: WIDTH - 43] + "..."


def listed() -> set[str]:
    text = DOC.read_text()
    section = text[text.index(HEADING) :]
    return {m.group(1) for line in section.splitlines() if (m := _ENTRY.match(line))}


def render() -> str:
    out = [
        HEADING,
        "",
        "One line per module: its docstring's first sentence, generated: "
        "`python -m tests.unit.foundation.test_architecture_manifest` regenerates it, and a test fails when it is "
        "stale. The map of these folders is `ARCHITECTURE.md`.",
    ]
    for folder in FOLDERS:
        out += ["", f"## `{folder}/`", ""]
        for path in modules():
            rel = path.relative_to(ROOT)
            if rel.parts[0] == folder:
                out.append(f"- `{rel}` — {first_sentence(path)}")
    return "\n".join(out) + "\n"


def test_the_manifest_lists_every_module_and_no_other() -> None:
    actual = {str(p.relative_to(ROOT)) for p in modules()}
    documented = listed()
    missing, gone = sorted(actual - documented), sorted(documented - actual)
    assert not missing and not gone, (
        f"docs/manifest.md is stale: not listed {missing}; listed but gone {gone}. "
        "Regenerate it with: python -m tests.unit.foundation.test_architecture_manifest"
    )


if __name__ == "__main__":
    DOC.write_text(render())
    print(f"{DOC}: {len(modules())} modules", file=sys.stderr)
