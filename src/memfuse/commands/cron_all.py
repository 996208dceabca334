"""`memfuse cron --all-agents`: every agent a host configures (the roster of a scheduler with
`lists_agents`), each its own jobs — in that host's own scheduler, or one block per workspace
in a system scheduler — its own workspace, state folder and store.

Each agent's memories go to a database of its own: one agent's server entry in
the mcporter config memfuse reads, `agent-memory-<id>`, made from the `agent-memory` entry as
it is (the same server, the same capacities) with its own `AGENT_MEMORY_DB` beside the
first's and `AGENT_MEMORY_WORKSPACE` its workspace. The agent whose workspace the existing
entry serves keeps that entry and its database: nothing it holds moves. The entries are
merged by `doctor --install-config`'s writer (the file as it was kept, secrets masked).
Jobs of an agent no longer configured are named by an install and removed by `--remove`
(the scheduler's `strays`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memfuse.commands import install_config
from memfuse.errors import ConfigError, ExitCode
from memfuse.host import store_db_in, workspace_in
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CronCheckData, CronData
from memfuse.schedule import check as checking
from memfuse.schedule import install as installing
from memfuse.schedule import registry, writers
from memfuse.schedule.base import Machine, Scheduler
from memfuse.schedule.check import JobCheck
from memfuse.schedule.plan import build
from memfuse.schedule.runs import Schedule
from memfuse.settings import Settings
from memfuse.state.folder import StateFolder, default_state_dir
from memfuse.store.server_entry import CONFIG_MAX, mcporter_config_path, read_config, strip_jsonc
from memfuse.untrusted import load_json, one_line
from memfuse.workspace.layout import Workspace

AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Agent:
    id: str
    workspace: Path
    server: str  # its entry in the mcporter config
    entry: dict[str, Any] | None  # the entry to merge in; None: the existing one, kept


def check(ctx: RunContext, fmt: str, listed: list[tuple[str, str]] | None = None) -> CommandResult:
    """Each agent's printed schedule tried as `cron --check` tries one: one list, the worst
    exit."""
    s = ctx.settings
    scheduler = registry.get(fmt)
    agents, notes = roster(s, mcporter_config_path(s, os.environ), given=listed)
    jobs: list[JobCheck] = []
    failed = unchecked = 0
    for agent in agents:
        mine = replace(s, workspace=agent.workspace, state_dir=None, server=agent.server)
        state = StateFolder(default_state_dir(agent.workspace, os.environ))
        machine = installing.machine_for(mine, state)
        schedule = planned(scheduler, mine, machine)
        files = scheduler.render(schedule, machine)
        own = checking.own_settings(mine, schedule, machine.env, machine.home)
        timeout = max(checking.CHECK_TIMEOUT_FLOOR, s.timeout * 6)
        done = checking.check(scheduler, scheduler.read(files), files, own, [],
                              scheduler.zone(machine), machine, timeout)  # fmt: skip
        for c in done.jobs:
            jobs.append({**c, "job": f"{agent.id}: {c['job']}"})
        failed, unchecked = failed + done.failed, unchecked + done.unchecked
    data: CronCheckData = {"format": scheduler.name, "source": "every agent's schedule",
                           "jobs": list(jobs)}  # fmt: skip
    code = ExitCode.OK
    if failed or not jobs:
        code = ExitCode.FATAL
        data["error"] = f"{failed} scheduled job(s) would fail" if jobs else "no agent to check"
    elif unchecked:
        code = ExitCode.UNCHECKED
        data["error"] = f"{unchecked} scheduled job(s) not tried: each names a store of its own"
    for note in notes:
        ctx.reporter.warn(note)
    return CommandResult("cron", data, tuple(render.cron_check(data)), exit_code=code)


def run(
    ctx: RunContext,
    fmt: str,
    *,
    install: bool,
    remove: bool,
    given: list[tuple[str, str]] | None = None,
) -> CommandResult:
    """Every agent's jobs (`given`: the workspaces several -w name, else the host's roster)."""
    s = ctx.settings
    scheduler = registry.get(fmt)
    how = "--all-agents" if given is None else "several -w"
    if s.session_server is not None:
        raise ConfigError(
            f"{how} gives each workspace a server entry in the mcporter config; memfuse's"
            " own [session] table names one server for all: install each by hand"
        )
    config = mcporter_config_path(s, os.environ)
    agents, notes = roster(s, config, store=not remove, given=given)
    changes: list[str] = []
    files: dict[str, str] = {}
    for agent in agents:
        mine = replace(s, workspace=agent.workspace, state_dir=None, server=agent.server)
        state = StateFolder(default_state_dir(agent.workspace, os.environ))
        machine = installing.machine_for(mine, state)
        schedule = planned(scheduler, mine, machine)
        said = f"agent {agent.id} ({one_line(str(agent.workspace))})"
        if not (install or remove):
            _merge(files, scheduler.render(schedule, machine))
            continue
        if install and not agent.workspace.is_dir():
            notes.append(
                f"{said}: its workspace does not exist yet (its host makes it at the agent's"
                " first session), so its jobs would fail: not installed; run this again then"
            )
            continue
        if install and agent.entry is not None and config is not None:
            changes += _store(config, agent)
        placed = installing.place(
            scheduler, schedule, machine, state, s.now, Workspace(agent.workspace).recent_md,
            remove=remove,
        )  # fmt: skip
        _merge(files, placed.files)
        changes += [f"{said}: {c}" for c in placed.changes]
        if remove and agent.entry is not None:
            changes.append(
                f"{said}: left its store entry {agent.server} and its database"
                f" ({agent.entry['env']['AGENT_MEMORY_DB']}): memfuse never deletes memories"
            )
    machine = installing.machine_for(s, ctx.workspace.state)
    if (install or remove) and given is None:
        changes += scheduler.strays(machine, [a.id for a in agents], remove=remove)
    for host in registry.every():
        for crossing in host.crossings(machine):
            ctx.reporter.warn(crossing)  # another agent's memory within reach
    data: CronData = {
        "format": scheduler.name, "label": "all-agents" if given is None else "workspaces",
        "files": files,
        "text": scheduler.printed(files), "notes": notes, "changes": changes,
    }  # fmt: skip
    if install or remove:
        return CommandResult("cron", data, tuple(render.cron_install(data)))
    return CommandResult("cron", data, payload=data["text"])


def _merge(files: dict[str, str], more: dict[str, str]) -> None:
    """Each agent's files beside the others'; one file they share (one table for all) holds every
    agent's block, in turn."""
    for name, text in more.items():
        files[name] = f"{files[name].rstrip()}\n\n{text}" if name in files else text


def planned(scheduler: Scheduler, settings: Settings, machine: Machine) -> Schedule:
    """The agent's schedule, clear of the host's jobs that rewrite MEMORY.md (a scheduler
    that is not the host's own reads them from the host's configuration)."""
    busy = [] if scheduler.own_writers else installing.writers_here(machine)
    return writers.clear_of(build(settings), busy, scheduler.zone(machine))[0]


def roster(
    settings: Settings,
    config: Path | None,
    *,
    store: bool = True,
    given: list[tuple[str, str]] | None = None,
) -> tuple[list[Agent], list[str]]:
    """The agents a host configures (the first scheduler with `lists_agents` that lists any;
    `given`: these instead), each with its store, and what was left out and why."""
    machine: Machine = installing.machine_for(settings, StateFolder(Path("/nonexistent")))
    hosts = [s for s in registry.every() if s.lists_agents]
    listed = given or next((each for s in hosts if (each := s.agents(machine))), [])
    if not listed:
        raise ConfigError(registry.no_agents(hosts, machine))
    notes = [n for s in hosts if given is None and (n := s.left_out(machine))]
    try:
        base, servers = _base_entry(settings, config, "--all-agents" if given is None else "-w")
    except ConfigError:
        if store:
            raise
        base, servers = {}, {}  # removing: the jobs are found by their labels, no store needed
    given = base.get("env")
    env: dict[str, Any] = given if isinstance(given, dict) else {}
    home = Path(os.environ.get("HOME") or Path.home())
    served = os.path.realpath(
        os.path.expanduser(str(env.get("AGENT_MEMORY_WORKSPACE") or workspace_in(home)))
    )
    database = Path(os.path.expanduser(str(env.get("AGENT_MEMORY_DB") or store_db_in(home))))
    agents: list[Agent] = []
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for agent_id, workspace in listed:
        if not AGENT_ID.fullmatch(agent_id) or agent_id.lower() in ids:
            # `Work` beside `work`: one database file where names ignore case (macOS)
            notes.append(f"agent {agent_id[:80]!r}: an id memfuse cannot name files by: left out")
            continue
        ids.add(agent_id.lower())
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
                f" ({one_line(workspace)}),"
                " so they share one memory: left out"
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


def _around(workspace: str, listed: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The agent whose workspace holds this one (another's, not the same), if any."""
    inner = Path(workspace)
    return next(
        ((agent, own) for agent, own in listed
         if own != workspace and inner.is_relative_to(own)),
        None,
    )  # fmt: skip


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


def _store(config: Path, agent: Agent) -> list[str]:
    """The agent's own entry in the mcporter config (its database's folder made)."""
    assert agent.entry is not None
    database = Path(agent.entry["env"]["AGENT_MEMORY_DB"])
    database.parent.mkdir(parents=True, exist_ok=True)
    _, said = install_config.install(config, agent.server, agent.entry)
    diff = ("---", "+++", "@@", "+", "-", " ")
    kept = [line for line in said if not line.startswith(diff)]
    return [f"agent {agent.id}: its own store {agent.server} ({database}): {line}" for line in kept]
