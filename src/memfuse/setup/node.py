"""Which Node runs agent-memory: one that loads its native modules (better-sqlite3's addon is
built for one Node ABI; the first `node` on PATH may be another, and the server then dies).

None inside the workspace is ever tried: what the agent writes must not pick a program memfuse
runs, and the module tried is one of the server package's own.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PROBE_SECONDS = 20.0  # a Node that has not loaded one module by then is not the one
NATIVE_LOOKED_AT = 400  # packages of the server's node_modules looked into, at most
CANDIDATES_MAX = 12  # Nodes tried, at most
# Where version managers and package managers keep Nodes, beside PATH (~ is the home).
MANAGED = (
    "~/.nvm/versions/node/*/bin/node",
    "~/.local/share/fnm/node-versions/*/installation/bin/node",
    "~/.volta/bin/node",
    "/usr/local/bin/node",
    "/usr/bin/node",
    "/opt/homebrew/bin/node",
)


StatusRunner = Callable[..., int]  # runs argv as run_quietly does (its keywords): the exit status


def run_quietly(argv: Sequence[str], *, timeout: float, env: Mapping[str, str], cwd: str) -> int:
    """The program's exit status (its output dropped); -1 when it cannot run or time is up."""
    try:
        done = subprocess.run(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=timeout, env=dict(env), cwd=cwd, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return -1
    return done.returncode


@dataclass(frozen=True)
class Choice:
    """The Node an entry names, and what the reader should know of the choice."""

    node: str
    note: str | None = None


def native_module(server_js: Path) -> Path | None:
    """A native addon (`build/Release/*.node`) of the packages the server's package uses:
    better-sqlite3's first, where agent-memory keeps its database."""
    for folder in list(server_js.parents)[:6]:
        modules = folder / "node_modules"
        if not modules.is_dir():
            continue
        known = modules / "better-sqlite3" / "build" / "Release" / "better_sqlite3.node"
        if known.is_file():
            return known
        for package in itertools.islice(modules.iterdir(), NATIVE_LOOKED_AT):
            found = next(iter(sorted((package / "build" / "Release").glob("*.node"))), None)
            if found is not None:
                return found
    return None


def candidates(path: str, home: Path, workspace: Path) -> list[str]:
    """Every `node` on PATH (in order; its absolute entries), then the version managers', each
    once, none inside the workspace."""
    found: list[str] = []
    for folder in path.split(os.pathsep):
        if os.path.isabs(folder):  # a relative entry names whatever folder memfuse runs in
            found.append(str(Path(folder) / "node"))
    for managed in MANAGED:
        pattern = managed.replace("~", str(home), 1)
        root, _, rest = pattern.partition("*")
        if not rest:
            found.append(pattern)
            continue
        parent = Path(root)
        if parent.is_dir():
            found += [str(p) for p in sorted(parent.glob("*" + rest), reverse=True)]
    top = workspace.resolve()
    seen: set[str] = set()
    kept: list[str] = []
    for node in found:
        real = os.path.realpath(node)
        if real in seen or not os.path.isfile(real) or not os.access(real, os.X_OK):
            continue
        if Path(real).is_relative_to(top) or Path(node).absolute().is_relative_to(top):
            continue
        seen.add(real)
        kept.append(node)
    return kept[:CANDIDATES_MAX]


def pick_node(
    server_js: Path,
    *,
    home: Path,
    workspace: Path,
    env: Mapping[str, str],
    run: StatusRunner = run_quietly,
) -> Choice:
    """The first Node that loads the server's native module; the first on PATH when it has
    none (or none loads it, said in the note)."""
    nodes = candidates(env.get("PATH", ""), home, workspace)
    module = native_module(server_js)
    if not nodes:
        return Choice("node", "no node found on PATH: the entry names `node`")
    if module is None:
        return Choice(nodes[0])
    # NODE_OPTIONS could make each probe load something else first: the probe is the module.
    quiet = {k: v for k, v in env.items() if k != "NODE_OPTIONS"}
    for node in nodes:
        argv = [node, "-e", "require(process.argv[1])", str(module)]
        if run(argv, timeout=PROBE_SECONDS, env=quiet, cwd=str(module.parent)) == 0:
            if node == nodes[0]:
                return Choice(node)
            return Choice(
                node,
                f"node: {node}, which loads {module.name}; the first on PATH, {nodes[0]},"
                " cannot (the module was built for another Node)",
            )
    tried = ", ".join(nodes)
    return Choice(
        nodes[0],
        f"node: none of {tried} loads {module} (built for another Node): rebuild it for the"
        f" one you want, `npm rebuild {module.parents[2].name}` in {module.parents[4]}",
    )
