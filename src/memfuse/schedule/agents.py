"""Every agent on this machine, each its own workspace and store: the one roster `cron`,
`status` and `doctor --all-agents` go through (docs/operations.md, "Several agents")."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memfuse.confine import nameable
from memfuse.errors import ConfigError
from memfuse.host import store_db_in, workspace_in
from memfuse.schedule import registry
from memfuse.schedule.install import machine_for
from memfuse.settings import Settings
from memfuse.state.folder import StateFolder, default_state_dir
from memfuse.store.owner import claimed
from memfuse.store.server_entry import CONFIG_MAX, read_config, strip_jsonc
from memfuse.untrusted import load_json, one_line

AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Agent:
    id: str
    workspace: Path
    server: str  # its entry in the mcporter config
    entry: dict[str, Any] | None  # the entry to merge in; None: the existing one, kept

    def settings(self, settings: Settings) -> Settings:
        """The settings this agent runs with: its workspace, its state folder, its store."""
        return replace(settings, workspace=self.workspace, state_dir=None, server=self.server)

    def state(self) -> StateFolder:
        return StateFolder(default_state_dir(self.workspace, os.environ))


def roster(
    settings: Settings,
    config: Path | None,
    *,
    store: bool = True,
    given: list[tuple[str, str]] | None = None,
) -> tuple[list[Agent], list[str]]:
    """Every agent the hosts configure (`given`: these instead), each with its store, and
    what was left out and why (`store`: an mcporter config to read each store from is needed)."""
    machine = machine_for(settings, StateFolder(Path("/nonexistent")))
    hosts = [s for s in registry.every() if s.lists_agents]
    listed = given or [agent for s in hosts for agent in s.agents(machine)]
    if not listed:
        said = "; ".join(f"{s.name}: {s.roster_in(machine)}" for s in hosts)
        problems = "".join(f"; {p}" for s in hosts if (p := s.unread(machine)))
        raise ConfigError(f"--all-agents: no host's configuration lists agents ({said}){problems}")
    try:
        base, servers = _base_entry(settings, config, "--all-agents" if given is None else "-w")
    except ConfigError:
        if store:
            raise
        base, servers = {}, {}  # no store asked for: the agents alone
    named = base.get("env")
    env: dict[str, Any] = named if isinstance(named, dict) else {}
    home = Path(os.environ.get("HOME") or Path.home())
    database = Path(os.path.expanduser(str(env.get("AGENT_MEMORY_DB") or store_db_in(home))))
    named = env.get("AGENT_MEMORY_WORKSPACE") or claimed(database.absolute()) or workspace_in(home)
    served = os.path.realpath(os.path.expanduser(str(named)))  # its memories stay where they are
    agents: list[Agent] = []
    notes = [n for s in hosts if given is None and (n := s.left_out(machine))]
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for agent_id, workspace in listed:
        if not AGENT_ID.fullmatch(agent_id) or agent_id.lower() in ids:
            # `Work` beside `work`: one database file where names ignore case (macOS)
            notes.append(f"agent {agent_id[:80]!r}: an id memfuse cannot name files by: left out")
            continue
        ids.add(agent_id.lower())
        if not nameable(workspace):  # a lone surrogate: its state folder could not be named
            notes.append(
                f"agent {agent_id}: its workspace ({one_line(workspace[:200])}) is no name a"
                " file system takes: left out"
            )
            continue
        held = _holds(agent_id, workspace, listed, database)
        if held is not None:
            notes.append(
                f"agent {agent_id}: its workspace ({one_line(workspace)}) holds {held}, which"
                " its agent can read and write: left out (give it a workspace of its own)"
            )
            continue
        outer = _around(workspace, listed)
        if outer is not None:
            notes.append(
                f"agent {agent_id}: its workspace ({one_line(workspace)}) lies inside agent"
                f" {outer[0]}'s ({one_line(outer[1])}), whose agent can write its journals:"
                " its memory would not be its own; left out (give it a workspace of its own)"
            )
            continue
        if workspace in seen:
            notes.append(
                f"agent {agent_id}: its workspace is agent {seen[workspace]}'s too"
                f" ({one_line(workspace)}), so they share one memory: left out"
            )
            continue
        seen[workspace] = agent_id
        if workspace == served or not base:
            agents.append(Agent(agent_id, Path(workspace), settings.server, None))
            continue
        key = f"{settings.server}-{agent_id}"
        db = _kept_db(servers.get(key), database) or database.with_name(f"{key}.db")
        own = {**env, "AGENT_MEMORY_DB": str(db), "AGENT_MEMORY_WORKSPACE": workspace}
        agents.append(Agent(agent_id, Path(workspace), key, {**base, "env": own}))
    return agents, notes


def named(workspaces: tuple[Path, ...], fmt: str) -> list[tuple[str, str]]:
    """(id, workspace) of each workspace several -w name, for a scheduler with no roster of its
    own: the id is the folder's name and a digest of its real path, so it stays the same from
    run to run and two folders of one name (or of one name but for case) never share a store."""
    if registry.get(fmt).lists_agents:
        raise ConfigError(
            f"{fmt} runs the agents its own configuration lists: --all-agents reads them;"
            " several -w are for "
            + ", ".join(s.name for s in registry.every() if not s.lists_agents)
        )
    listed: list[tuple[str, str]] = []
    for workspace in workspaces:
        real = os.path.realpath(os.path.expanduser(str(workspace)))
        if not Path(real).is_dir():
            raise ConfigError(f"workspace {one_line(str(workspace))} is not a folder")
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(real).name).strip("-_")[:40] or "workspace"
        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        if any(real == seen for _, seen in listed):
            raise ConfigError(f"workspace {one_line(real)} is given twice")
        listed.append((f"{name}-{digest}".lower(), real))
    return listed


def _around(workspace: str, listed: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The agent whose workspace holds this one (another's, not the same), if any."""
    inner = Path(workspace)
    return next(
        ((agent, own) for agent, own in listed
         if own != workspace and inner.is_relative_to(own)),
        None,
    )  # fmt: skip


def _holds(agent: str, workspace: str, listed: list[tuple[str, str]], db: Path) -> str | None:
    """Another agent's state folder, or the folder every database is made in, if this workspace
    holds it (another's workspace inside it is `_around`'s)."""
    for other, own in listed:
        state = default_state_dir(Path(own), os.environ) if nameable(own) else Path("/")
        for what, path in (("state folder", state), ("database's folder", db.parent)):
            real = Path(os.path.realpath(path))
            if other != agent and own != workspace and real.is_relative_to(workspace):
                return f"agent {other}'s {what} ({one_line(str(path))})"
    return None


def _kept_db(entry: object, shared: Path) -> Path | None:
    """The database an agent's entry already names (a hand-made one, or an earlier install's):
    kept, so its memories stay where recall looks — unless it is the shared one."""
    env = entry.get("env") if isinstance(entry, dict) else None
    named = env.get("AGENT_MEMORY_DB") if isinstance(env, dict) else None
    if not isinstance(named, str) or not named.strip():
        return None
    path = Path(os.path.expanduser(named))
    return None if os.path.realpath(path) == os.path.realpath(shared) else path


def _base_entry(
    settings: Settings, config: Path | None, how: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The store's entry as memfuse reaches it now, what each agent's own is made from, and
    every entry of the config."""
    found: object = None
    if config is not None:
        try:
            found = load_json(strip_jsonc(read_config(config)), limit=CONFIG_MAX)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{how}: cannot read {config}: {exc}") from None
    servers = found.get("mcpServers") if isinstance(found, dict) else None
    entry = servers.get(settings.server) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        where = config or Path("~/.mcporter/mcporter.json")
        raise ConfigError(
            f"{how}: no {settings.server!r} entry in {where} to give each agent its own"
            f" database from: `memfuse doctor --install-config {where}` writes it first"
        )
    return entry, dict(servers) if isinstance(servers, dict) else {}
