"""The house's own rules (issue 41), checked on every run: no module imports itself back
through others (no circle), commands are thin, and no module outgrows what one reader holds."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests import source

SRC = Path(__file__).resolve().parents[2] / "src" / "memfuse"
COMMAND_MAX = 300  # lines of a command module: parse, call an engine, return its data
MODULE_MAX = 450  # lines of any module…
LARGER = {"refserver/store.py"}  # …but the stand-in server's store, agent-memory's own logic


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: set[str]) -> set[str]:
    """The memfuse modules a file imports (a `from package import module` names the module)."""
    found: set[str] = set()
    for node in source.nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memfuse"):
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memfuse")}
    return found & known


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in SRC.rglob("*.py")}
    known = set(paths)
    return {name: imports(path, known) - {name} for name, path in paths.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back_through_others() -> None:
    assert circles(graph()) == []


def test_the_circle_check_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_commands_are_thin_and_no_module_outgrows_a_reader() -> None:
    sizes = {
        p.relative_to(SRC).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in SRC.rglob("*.py")
    }
    fat = {name: n for name, n in sizes.items() if name.startswith("commands/") and n > COMMAND_MAX}
    assert fat == {}
    big = {name: n for name, n in sizes.items() if n > MODULE_MAX and name not in LARGER}
    assert big == {}


# A command calls an engine, never another command (issue 48): what two commands share lives
# below them (the `--all-agents` roster in schedule/agents.py, the mcporter merge in setup/).
def test_no_command_imports_another_command() -> None:
    edges = {
        (name, other)
        for name, imported in graph().items()
        if name.startswith("memfuse.commands.")
        for other in imported
        if other.startswith("memfuse.commands.")
    }
    assert edges == set()  # move the shared flow down


# The decisions log is history and renumbers nothing, but a comment that sends a reader to
# "decision 96" of ~600 asks them to read history to understand the present (issue 48): the
# code says why in its own words, docs/architecture.md says what is true now.
CITATION = re.compile(r"decisions?(?:\.md)?\s*\(?\d+|\bdecision\s+\d+", re.IGNORECASE)


def test_no_source_sends_its_reader_to_a_numbered_decision() -> None:
    cited = {
        f"{p.relative_to(SRC).as_posix()}:{n}"
        for p in SRC.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if CITATION.search(line)
    }
    assert cited == set()


# What the source cites, the repository holds (issue 59): six citations named documents this
# repository never had. A `*.md` path in a comment or docstring is one of its own files.
CITED_DOC = re.compile(r"(?<![\w./-])((?:docs|examples|benchmarks|tests)/[\w./-]*\.md|[A-Z]+\.md)")


OTHER_REPOSITORIES = {"docs/automation/cron-jobs.md"}  # OpenClaw's, named with its commit


def test_every_document_the_source_cites_is_in_the_repository() -> None:
    root = SRC.parents[1]
    cited = {
        (f"{p.relative_to(SRC).as_posix()}:{n}", match)
        for p in SRC.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for match in CITED_DOC.findall(line)
        if "/" in match and match not in OTHER_REPOSITORIES
    }
    assert cited, "the pattern finds the source's citations"
    assert {(where, doc) for where, doc in cited if not (root / doc).is_file()} == set()
    outside = {
        f"{p.relative_to(SRC).as_posix()}:{n}"
        for p in SRC.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(?<![\w/])reference/[\w.-]+\.md|/work/", line)
    }
    assert outside == set()  # facts about other programs: docs/reference.md, in its own words


# The turn's features are paid for (issue 59): src/ holds no more lines than it did before the
# turn (24 625 at 084d206), every file of it counted.
SRC_LINES_MAX = 24_625


def test_src_holds_no_more_lines_than_before_the_turn() -> None:
    lines = sum(
        len(p.read_bytes().splitlines())
        for p in SRC.parent.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts  # what is shipped, not what Python made
    )
    assert lines <= SRC_LINES_MAX


def test_the_scheduler_recipe_names_every_part_a_scheduler_may_set() -> None:
    from memfuse.schedule.base import Scheduler

    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    recipe = doc.split("**A scheduler.**")[1].split("\n\n")[0]
    parts = {name for name in vars(Scheduler) if not name.startswith("_")}
    parts |= set(Scheduler.__annotations__)
    assert len(parts) > 20
    assert {p for p in parts if f"`{p}`" not in recipe} == set()


# One meaning per name (issue 59): four classes were called `Request`, two `Answer`, two
# `Outcome`; `Tool` was a subprocess runner and an MCP tool. A class or a type alias at the top
# of a module is named once across src: what means the same is defined once and imported.
def test_no_two_modules_define_the_same_name_for_two_things() -> None:
    defined: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in source.tree(path).body:
            names = []
            if isinstance(node, ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            for name in names:
                if name[:1].isupper() and not name.isupper():  # a type, not a constant
                    defined.setdefault(name, []).append(path.relative_to(SRC).as_posix())
    assert len(defined) > 100
    assert {name: paths for name, paths in defined.items() if len(paths) > 1} == {}


# A property's time is its own (issue 59): `st.text()` and `st.from_regex()` without an
# alphabet draw from `characters(codec="utf-8")`, whose table Hypothesis builds once per
# `.hypothesis/` folder by encoding every code point (~1.3 s of CPU, 3.3 s of one property's
# time in a fresh worktree). tests/conftest.py's ANY_CHARACTER is the same alphabet without it.
def test_no_test_draws_text_from_hypothesis_default_alphabet() -> None:
    tests = SRC.parents[1] / "tests"
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in source.nodes(path):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("text", "from_regex")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("st", "strategies")
            ):
                given = len(node.args) > (node.func.attr == "from_regex")
                if not given and all(k.arg != "alphabet" for k in node.keywords):
                    found.append(f"{path.relative_to(tests)}:{node.lineno}")
    assert found == []


def test_no_shell_script_pipes_into_a_reader_that_stops_early() -> None:
    """Under `set -o pipefail`, `writer | head` or `writer | grep -q` fails whenever the writer
    is still writing when the reader exits (SIGPIPE): the README's first command failed so.
    Scripts give such readers a here-string or a file instead."""
    root = SRC.parents[1]
    scripts = [*root.glob("scripts/*.sh"), *root.glob("tests/smoke/*.sh"), root / ".ci" / "run"]
    early = re.compile(r"\|\s*(head\b|grep\s+(-\w*\s+)*-\w*[qm])")
    found = [
        f"{path.relative_to(root)}:{n}"
        for path in scripts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if early.search(line.split("#", 1)[0])
    ]
    assert found == []
