"""The layers stay apart: the gateway knows nothing of memfuse's settings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests import source

SRC = Path(__file__).resolve().parents[2] / "src" / "memfuse"


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in source.nodes(path):
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
        # memfuse.recall.answer holds recall's answer shape alone (typing, no code).
        shapes = {"memfuse.run.results", "memfuse.run.history", "memfuse.recall.answer"}
        assert ours <= shapes, f"{name} imports {ours}"
    answer = {m for m in imported(SRC / "recall" / "answer.py") if m.startswith("memfuse")}
    assert answer == set()


def modules(*, outside: tuple[str, ...]) -> list[Path]:
    """memfuse's modules but those under the given parts (and the reference server, which is
    agent-memory's stand-in, not a client of it)."""
    skip = (*outside, "refserver")
    return [
        p for p in sorted(SRC.rglob("*.py"))
        if not any(p.relative_to(SRC).as_posix().startswith(part) for part in skip)
    ]  # fmt: skip


# agent-memory's tools (2.x–5.x) and the fields only its answers carry.
TOOLS = {
    "remember", "recall", "recall_path", "reflect", "status", "forget", "boot", "link",
    "snapshot", "ingest", "surface", "reindex", "archive",
}  # fmt: skip
ANSWER_FIELDS = {"memories", "memoryId", "by_type", "belowThreshold", "found"}
GUARD_CALLS = {"call", "answer", "attempt", "as_completed", "list_tools"}


def tool_calls(tree: ast.AST) -> list[str]:
    """Where a module speaks agent-memory itself: a tool name and its arguments handed to a
    call, or a (tool, arguments) pair; a method of the guard or the gateway; an answer's own field."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            first, second = [*node.args, None, None][:2]
            if (
                isinstance(first, ast.Constant)
                and first.value in TOOLS
                and isinstance(second, ast.Dict)
            ):
                found.append(f"line {node.lineno}: a call of the tool {first.value!r}")
            if isinstance(node.func, ast.Attribute) and node.func.attr in GUARD_CALLS:
                found.append(f"line {node.lineno}: .{node.func.attr}() of the guard or gateway")
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
            tool, arguments = node.elts
            if (
                isinstance(tool, ast.Constant)
                and tool.value in TOOLS
                and isinstance(arguments, ast.Dict)
            ):
                found.append(f"line {node.lineno}: the call ({tool.value!r}, {{…}})")
        elif isinstance(node, ast.Constant) and node.value in ANSWER_FIELDS:
            found.append(f"line {node.lineno}: the answer field {node.value!r}")
    return found


def test_only_the_store_client_speaks_agent_memory() -> None:
    """Tool names, argument shapes and answer formats are the store package's alone (issue 28):
    adding a generation of agent-memory touches nothing else."""
    for path in modules(outside=("store/",)):
        found = tool_calls(source.tree(path))
        assert not found, f"{path.relative_to(SRC)}: {found}"
        bad = {m for m in imported(path) if m.startswith("memfuse.store.gateway")}
        if path.relative_to(SRC).as_posix() != "run/context.py":  # it opens the transport
            assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_the_check_sees_a_command_that_speaks_agent_memory_itself() -> None:
    """The rule above finds what it is meant to find (it cannot pass for want of looking)."""
    sample = ast.parse(
        'answer = ctx.guard.call("recall_path", {"uri": prefix})\n'
        'items = answer.get("memories")\n'
        'calls = [("remember", {"content": text})]\n'
    )
    assert len(tool_calls(sample)) == 4


# The names of the workspace's layout: only the workspace object joins them into paths.
LAYOUT = {"memory", "weekly", "archive", "MEMORY.md", "RECENT.md", ".memfuse"}


def layout_joins(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = node.right
            if isinstance(right, ast.Constant) and right.value in LAYOUT:
                found.append(f"line {node.lineno}: / {right.value!r}")
            if isinstance(right, ast.JoinedStr) and any(
                isinstance(v, ast.Constant) and str(v.value).endswith(".md") for v in right.values
            ):
                found.append(f"line {node.lineno}: / f'….md'")
    return found


def test_only_the_workspace_object_joins_a_layout_path() -> None:
    for path in modules(outside=("workspace/layout.py", "state/folder.py")):
        found = layout_joins(source.tree(path))
        assert not found, f"{path.relative_to(SRC)}: {found}"
    assert layout_joins(ast.parse('p = ws / "memory" / f"{day}.md"')) != []


def test_the_journal_grammar_is_read_by_the_workspace_alone() -> None:
    """One loop reads the journals of a window (Workspace.journals); nothing else parses one."""
    for path in modules(outside=("workspace/",)):
        names = {
            n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            for n in source.nodes(path)
            if isinstance(n, ast.Call)
        }
        assert "parse_bytes" not in names, f"{path.relative_to(SRC)} parses a journal itself"


# The house, top floor first (docs/architecture.md): a module may import its own part and any
# part below it, never one above. Parts on one floor do not import each other.
FLOORS = (
    ("__main__",),
    ("cli",),
    ("commands",),
    ("serve",),  # serve's engine (it hands calls to the commands' engines)
    ("sync", "setup", "views"),  # sync's, doctor's, status's and where's engines
    ("run",),
    ("schedule",),
    ("ledger",),
    ("recall",),
    ("config",),
    ("workspace",),
    ("state", "store", "refserver"),
    ("confine",),
    ("settings",),
    ("text",),  # pure: the classifier's lexicon gives settings its default keywords
    ("report", "errors", "untrusted", "host", "__init__"),  # settings masks with report's mask
)


def part_of(module: str) -> str:
    return module.removeprefix("memfuse.").split(".")[0]


def floor_of(part: str) -> int:
    return next(n for n, parts in enumerate(FLOORS) if part in parts)


def test_imports_only_go_down() -> None:
    for path in sorted(SRC.rglob("*.py")):
        mine = path.relative_to(SRC).parts[0].removesuffix(".py")
        for module in imported(path):
            if not module.startswith("memfuse.") and module != "memfuse":
                continue
            theirs = part_of(module) if module != "memfuse" else "__init__"
            if theirs == mine or (mine == "refserver" and theirs in ("store", "state", "text")):
                continue
            assert floor_of(theirs) > floor_of(mine), f"{path.relative_to(SRC)} imports {module}"


def test_the_architecture_doc_states_the_floors_this_test_holds() -> None:
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    stated = doc.split("<!-- floors -->")[1].split("<!-- /floors -->")[0]
    floors = [re.findall(r"`(\w+)`", floor) for floor in stated.split("→")]
    # __main__ above cli and the package's face, __init__, at the bottom go unsaid
    assert floors == [[p for p in f if p != "__init__"] for f in FLOORS[1:]]
