"""The layers stay apart: the gateway knows nothing of memfuse's settings."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "memfuse"


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_nothing_in_the_gateway_imports_config_or_the_commands() -> None:
    for path in sorted((SRC / "gateway").glob("*.py")):
        bad = {
            m for m in imported(path)
            if m in ("memfuse.config", "memfuse.server_entry", "memfuse.connect", "memfuse.cli")
            or m.startswith("memfuse.commands")
        }  # fmt: skip
        assert not bad, f"{path.name} imports {bad}"
