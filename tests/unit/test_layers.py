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
    """The gateway is given a small ServerSpec; it knows neither settings nor how they resolve."""
    for path in sorted((SRC / "store" / "gateway").glob("*.py")):
        bad = {
            m for m in imported(path)
            if m in ("memfuse.config", "memfuse.settings", "memfuse.store.server_entry",
                     "memfuse.store.connect", "memfuse.cli", "memfuse.run.runner")
            or m.startswith("memfuse.commands")
        }  # fmt: skip
        assert not bad, f"{path.name} imports {bad}"


def test_the_text_is_rendered_from_the_data_alone() -> None:
    """render.py reads no settings, clock, file or store: only the command's data (and the run
    record's shape), so the text cannot show what `--json` does not hold (decision 74)."""
    for name in ("render.py", "results.py"):
        ours = {m for m in imported(SRC / "run" / name) if m.startswith("memfuse")}
        assert ours <= {"memfuse.run.results", "memfuse.run.history"}, f"{name} imports {ours}"
