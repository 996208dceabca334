"""memfuse's own source as syntax trees, for the tests that read it (the house's bars, the
layers): each file parsed and walked once a run, not once a test (~1 s of the unit tier)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def tree(path: Path) -> ast.Module:
    """The file's syntax tree: the tests read it, none changes it."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in `ast.walk`'s order."""
    return tuple(ast.walk(tree(path)))
