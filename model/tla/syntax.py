"""Syntax check of TLA+ text with a real TLA+ parser: the tree-sitter TLA+ grammar (``tree-sitter-tlaplus``).

``check_syntax(text)`` returns the problems (ERROR and MISSING nodes of the parse tree) with their
1-based positions; ``SyntaxCheckUnavailable`` says the parser is not installed (a check that cannot
run reports itself as skipped with this reason).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any


class SyntaxCheckUnavailable(RuntimeError):
    """The TLA+ parser packages are not installed."""


@dataclass(frozen=True)
class SyntaxProblem:
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


def _parser() -> Any:
    try:
        import tree_sitter
        import tree_sitter_tlaplus
    except ImportError:
        raise SyntaxCheckUnavailable(
            "the TLA+ syntax check needs tree-sitter and tree-sitter-tlaplus: pip install 'kcspec[tla]'"
        ) from None
    with warnings.catch_warnings():  # the grammar package hands over its language as a raw pointer
        warnings.simplefilter("ignore", DeprecationWarning)
        language = tree_sitter.Language(tree_sitter_tlaplus.language())
    return tree_sitter.Parser(language)


def check_syntax(tla_text: str) -> list[SyntaxProblem]:
    """Every syntax error in one module's text (empty: the module parses)."""
    tree = _parser().parse(tla_text.encode("utf-8"))
    lines = tla_text.splitlines()
    problems: list[SyntaxProblem] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        inner = [c for c in node.children if c.has_error or c.is_missing]
        if (node.is_error or node.is_missing) and not inner:
            row, col = node.start_point
            source = lines[row].strip() if row < len(lines) else ""
            what = f"missing {node.type}" if node.is_missing else "syntax error"
            problems.append(SyntaxProblem(row + 1, col + 1, f"{what} in: {source[:80]}"))
        stack.extend(reversed(inner))
    problems.sort(key=lambda p: (p.line, p.column))
    return problems
