"""agent-memory's entry for an mcporter config: where its server.js is, which generation it
is, and the env its capacities need (`doctor --print-config` / `--install-config`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfuse.errors import ConfigError
from memfuse.host import store_db_in
from memfuse.settings import Settings
from memfuse.setup.node import StatusRunner, pick_node, run_quietly
from memfuse.store.diagnose import installed_how
from memfuse.store.server_entry import CONFIG_MAX, read_config
from memfuse.untrusted import load_json

# Where the npm commands of the README (and npm's usual global prefixes) put agent-memory.
PACKAGE = "@smyslenny/agent-memory"
SERVER_JS = f"{PACKAGE}/dist/mcp/server.js"
NPM_ROOTS = (
    "~/.local/share/agent-memory/node_modules",
    "~/.npm-global/lib/node_modules",
    "/usr/local/lib/node_modules",
    "/usr/lib/node_modules",
)
# Where the README builds it from its source release when the package registry has no copy.
SOURCE_ROOT = "~/.local/share/agent-memory/src"
SOURCE_JS = "dist/mcp/server.js"


def not_installed(config: Path | None = None) -> str:
    """Why no entry can be made, and the ways out (the registry has no copy on most machines:
    the routes that work first), the last naming `config`, the file being written."""
    return (
        f"agent-memory is not installed here (no {SERVER_JS} under {', '.join(NPM_ROOTS)}, no"
        f" {SOURCE_ROOT}/{SOURCE_JS}). Its npm package {PACKAGE} is missing from most"
        " registries (npm answers E404): build it from its source release (the README's step"
        " 2), or, with a server.js you have, give it: `memfuse doctor --install-config"
        f" {config or '~/.mcporter/mcporter.json'} --server-js PATH`"
    )


@dataclass(frozen=True)
class ServerSetup:
    """How to start agent-memory: where its server.js is and which generation it is."""

    server_js: Path | None = None  # None: looked for under NPM_ROOTS
    version: str | None = None  # None: read from its package.json


def find_server_js(home: Path) -> Path | None:
    """agent-memory's server.js where the README's commands (or npm's usual prefixes) put it."""
    candidates = [Path(root.replace("~", str(home), 1)) / SERVER_JS for root in NPM_ROOTS]
    candidates.append(Path(SOURCE_ROOT.replace("~", str(home), 1)) / SOURCE_JS)
    return next((c for c in candidates if c.is_file()), None)


def server_entry(
    settings: Settings,
    home: Path,
    setup: ServerSetup,
    *,
    run: StatusRunner = run_quietly,
    target: Path | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """A ready mcporter entry for agent-memory, and what the reader should know about it: 3.x+'s
    own ingestion off (memfuse syncs), 4.x's and 5.x's capacities raised for the surface window
    (~15 events a day: docs/operations.md), a Node that loads the server's native module."""
    if setup.server_js is not None:
        found = setup.server_js.expanduser().absolute()
        if not found.is_file():
            raise ConfigError(f"--server-js {setup.server_js}: no such file")
    else:
        looked = find_server_js(home)
        if looked is None:
            raise ConfigError(not_installed(target))
        found = looked
    notes: list[str] = []
    version = setup.version or package_version(found)
    leading = re.match(r"\s*v?(\d+)", version or "")
    major = int(leading[1]) if leading else None
    env = {
        "AGENT_MEMORY_DB": str(store_db_in(home)),
        "AGENT_MEMORY_AUTO_INGEST": "0",
    }
    events = 15 * settings.surface.window_days * 2  # twice what the window's journals write
    if major is not None and major >= 5:
        env["AGENT_MEMORY_MAX_EVENT"] = str(max(50, events))
        env["AGENT_MEMORY_MAX_MEMORIES"] = str(max(350, events + 300))
    elif major == 4:
        env["AGENT_MEMORY_MAX_MEMORIES"] = str(max(200, events + 150))
    if major is None:
        notes.append(
            "agent-memory's version is unknown (no package.json beside server.js, no"
            " --server-version): the entry sets no capacity; doctor checks it once it runs"
        )
    node = pick_node(found, home=home, workspace=settings.workspace, env=os.environ, run=run)
    if node.note:
        notes.append(node.note)
    entry = {"command": node.node, "args": [str(found)], "env": env}
    if version:
        notes.append(f"agent-memory {version} at {found} ({installed_how(str(found))})")
    return entry, notes


def own_database(entry: dict[str, Any], server: str, ws: Path, kept: object) -> dict[str, Any]:
    """The entry on a database of its own: the database and workspace of the entry in place
    (`kept`), else for another server than agent-memory `<server>.db` and this workspace."""
    env, old = entry["env"], kept.get("env") if isinstance(kept, dict) else None
    own = {"AGENT_MEMORY_DB": str(Path(env["AGENT_MEMORY_DB"]).with_name(f"{server}.db")),
           "AGENT_MEMORY_WORKSPACE": os.path.realpath(ws)}  # fmt: skip
    for key, value in own.items():
        was = old.get(key) if isinstance(old, dict) else None
        if isinstance(was, str) and was.strip():
            env[key] = was
        elif server != "agent-memory":
            env[key] = value
    return entry


def package_version(server_js: Path) -> str | None:
    """The version in the package.json of the package server.js belongs to (dist/mcp/…)."""
    for folder in list(server_js.parents)[:4]:
        candidate = folder / "package.json"
        try:
            data = load_json(read_config(candidate), limit=CONFIG_MAX)
        except (OSError, ValueError, ConfigError):
            continue
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return str(data["version"])[:40]
    return None


def database_folder(entry: dict[str, Any]) -> list[str]:
    """The folder of the store's database, made when the entry names one that is not there
    (agent-memory does not make it: its server would die on `unable to open database file`)."""
    db = entry.get("env", {}).get("AGENT_MEMORY_DB")
    folder = Path(db).parent if isinstance(db, str) and db else None
    if folder is None or folder.is_dir():
        return []
    try:
        folder.mkdir(mode=0o700, parents=True)
    except OSError as exc:
        raise ConfigError(f"cannot make {folder} for the store's database: {exc}") from None
    return [f"made {folder}, the folder of the store's database"]
