"""Whose memories a store holds: one workspace's — journal URIs name no workspace, so two on
one database overwrite and prune each other's bullets (docs/architecture.md, "One store, one
workspace")."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Mapping
from pathlib import Path

from memfuse.confine import UnsafePath, read_file
from memfuse.host import workspace_in
from memfuse.settings import Settings
from memfuse.store.connect import Server
from memfuse.store.server_entry import expand, mcporter_config_path, servers_in
from memfuse.untrusted import one_line

SUFFIX = ".memfuse-workspace"


def database(env: Mapping[str, str], cwd: str | None) -> Path | None:
    """The database an entry's env names (a relative one is the server's folder's), or None."""
    named = env.get("AGENT_MEMORY_DB", "").strip()
    if not named:
        return None
    return Path(os.path.realpath(os.path.join(cwd or "/", os.path.expanduser(named))))


def claimed(db: Path) -> str | None:
    """The workspace that claimed this database, or None."""
    try:
        raw = read_file(Path("/"), Path(f"{db}{SUFFIX}"), 8192)
    except (OSError, UnsafePath):
        return None
    return os.fsdecode(raw) or None


def check(
    settings: Settings, server: Server, *, claim: bool = False, sharing: Collection[str] = ()
) -> str | None:
    """Why the run may not use the store its settings name (None: it may, or no entry says);
    `claim`: an unclaimed database becomes its; `sharing`: others known to share it."""
    if isinstance(server, Exception):
        return None
    s, env = settings, server.env
    config = None if s.session_server else mcporter_config_path(s, os.environ)
    mine = os.path.realpath(s.workspace)
    allowed = {mine, *sharing}
    served = _real(env.get("AGENT_MEMORY_WORKSPACE"))
    if served is not None and served not in allowed:
        return _refusal(mine, served, "its entry's AGENT_MEMORY_WORKSPACE names that one")
    db = database(env, server.cwd)
    entries = _entries(config, s.server)
    for key, named, _, theirs in entries if served is None else ():
        if named == mine and theirs != db:  # `--server` left out: this workspace has its own
            return f"entry {key} serves this workspace, not {s.server}: add --server {key}"
    if db is None:
        return None
    for _, _, other, theirs in entries:
        if theirs == db and other not in allowed:
            return _refusal(mine, other, f"an entry of {config} names its database {db} too")
    owner = claimed(db)
    if owner is None and claim and not sharing:
        _claim(db, mine)
    elif owner is not None and owner not in allowed:
        why = f"{db}{SUFFIX} gives it the database (moved here? delete that file)"
        return _refusal(mine, owner, why)
    return None


def _real(path: str | None) -> str | None:
    return os.path.realpath(os.path.expanduser(path.strip())) if path and path.strip() else None


def _entries(config: Path | None, server: str) -> list[tuple[str, str | None, str, Path | None]]:
    """Each other entry: its key, the workspace it names, the one it serves (without
    AGENT_MEMORY_WORKSPACE the host's default one, as `--all-agents` reads it), its database."""
    found = []
    default = os.path.realpath(workspace_in(os.environ.get("HOME") or "~"))
    for key, entry in servers_in(config).items():
        env = entry.get("env") if isinstance(entry, dict) else None
        if key != server and isinstance(env, dict):
            env = {str(k): expand(str(v), os.environ) for k, v in env.items()}
            named = _real(env.get("AGENT_MEMORY_WORKSPACE"))
            folder = str(config.parent) if config else None
            found.append((one_line(key), named, named or default, database(env, folder)))
    return found


def _claim(db: Path, mine: str) -> None:
    """The claim: whole or not at all (linked in once written), never over another's."""
    temp = db.with_name(f".{db.name}{SUFFIX}.{os.getpid()}")
    with contextlib.suppress(OSError):
        with open(temp, "xb") as out:
            out.write(os.fsencode(mine))
            os.fsync(out.fileno())
        os.link(temp, f"{db}{SUFFIX}")
    with contextlib.suppress(OSError):
        temp.unlink()


def _refusal(mine: str, other: str, why: str) -> str:
    return (
        f"this store holds the memories of workspace {one_line(other)}, not of this one"
        f" ({one_line(mine)}): {why}. Two workspaces on one store overwrite and prune each"
        " other's bullets, so memfuse reaches no store for it. Give it its own:"
        f" `memfuse cron --install -w {one_line(other)} -w {one_line(mine)}` (or"
        " `--all-agents`) adds an entry with a database of its own, used by its jobs with"
        " --server; then `memfuse rollback --shared-with OTHER` on the shared store takes"
        ' out what this workspace put there (docs/operations.md, "One store, one workspace")'
    )
