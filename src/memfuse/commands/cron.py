"""`memfuse cron`: the five scheduled runs, for the scheduler `--format` names: printed,
installed (`--install`, recorded for `status`), removed, or tried (`--check [FILE]`); with
`--all-agents` or several `-w`, for each agent of the roster (docs/architecture.md)."""

from __future__ import annotations

import os
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from memfuse.errors import ConfigError, ExitCode
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CronCheckData, CronData
from memfuse.schedule import ParseError, ScheduleError, agents, registry, writers
from memfuse.schedule import check as checking
from memfuse.schedule import install as installing
from memfuse.schedule.base import Machine, MemoryRewriter, Scheduler
from memfuse.schedule.plan import build
from memfuse.schedule.runs import Schedule
from memfuse.settings import Settings
from memfuse.setup import merge
from memfuse.state.folder import StateFolder
from memfuse.store.server_entry import mcporter_config_path
from memfuse.untrusted import one_line
from memfuse.workspace.layout import Workspace

STDIN_LIMIT = 1 << 22


@dataclass(frozen=True)
class CronRequest:
    fmt: str = ""  # the registry's default when empty
    archive: bool = False
    install: bool = False
    remove: bool = False
    check: bool = False
    file: str | None = None
    all_agents: bool = False  # every agent the scheduler's host lists
    workspaces: tuple[Path, ...] = ()  # several -w: one block per workspace


def run(ctx: RunContext, request: CronRequest) -> CommandResult:
    s = ctx.settings
    scheduler = registry.get(request.fmt or registry.default())
    if request.all_agents or request.workspaces:
        if request.file is not None:
            raise ConfigError("--all-agents checks every agent's own schedule, not a FILE")
        given = agents.named(request.workspaces, scheduler.name) if request.workspaces else None
        return _every_agent(ctx, scheduler, request, given)
    machine = installing.machine_for(s, ctx.workspace.state, tool=ctx.seams.tool)
    schedule, files, busy = _planned(scheduler, s, machine, request)
    for unread in sorted({each.unread(machine) or "" for each in registry.every()} - {""}):
        ctx.reporter.warn(unread)  # its host's settings: taken as its defaults
    if request.check:
        return _check(ctx, scheduler, schedule, files, machine, busy, request.file)
    changes: list[str] = []
    if request.install or request.remove:
        placed = installing.place(
            scheduler, schedule, machine, ctx.workspace.state, s.now, ctx.workspace.recent_md,
            remove=request.remove, setup=s.store_setup, given=_given(s),
        )  # fmt: skip
        schedule, files, changes = placed.schedule, placed.files, placed.changes
    return _printed(scheduler, schedule.label, files, list(schedule.notes), changes, request)


def _given(s: Settings) -> str:
    """The store flags the user gave, for a retried install to repeat."""
    mcporter = s.mcporter if s.mcporter != "mcporter" else None
    flags = (("--mcporter", mcporter), ("--mcporter-config", s.mcporter_config))
    return "".join(f" {flag} {shlex.quote(str(value))}" for flag, value in flags if value)


def _planned(
    scheduler: Scheduler, settings: Settings, machine: Machine, request: CronRequest
) -> tuple[Schedule, dict[str, str], list[MemoryRewriter]]:
    """The schedule for these settings, clear of the jobs that rewrite MEMORY.md (a host's own
    scheduler reads its own as it installs), its files, and those jobs."""
    placing = request.install or request.remove
    busy = [] if placing and scheduler.own_writers else installing.writers_here(machine)
    try:
        planned = build(settings, archive=request.archive)
        schedule = writers.clear_of(planned, busy, scheduler.zone(machine))[0]
        return schedule, scheduler.render(schedule, machine), busy
    except ScheduleError as exc:
        raise ConfigError(f"no {scheduler.name} schedule can run this: {exc}") from None


def _printed(
    scheduler: Scheduler,
    label: str,
    files: dict[str, str],
    notes: list[str],
    changes: list[str],
    request: CronRequest,
) -> CommandResult:
    data: CronData = {
        "format": scheduler.name, "label": label, "files": files,
        "text": scheduler.printed(files), "notes": notes, "changes": changes,
    }  # fmt: skip
    if request.install or request.remove:
        return CommandResult("cron", data, tuple(render.cron_install(data)))
    return CommandResult("cron", data, payload=data["text"])


def _check(
    ctx: RunContext,
    scheduler: Scheduler,
    schedule: Schedule,
    files: dict[str, str],
    machine: Machine,
    busy: list[MemoryRewriter],
    file: str | None,
) -> CommandResult:
    given = files
    source = f"the {scheduler.name} schedule `memfuse cron` prints"
    try:
        if file == "-" and scheduler.stdin_ok:
            given, source = {"-": sys.stdin.read(STDIN_LIMIT)}, "stdin"
        elif file is not None:
            given, source = scheduler.load(Path(file)), file
        jobs = scheduler.read(given)
    except ParseError as exc:
        raise ConfigError(f"cannot read the {scheduler.name} schedule: {exc}") from None
    beside = scheduler.writers_in(given) or busy  # a checked job list says it better
    rendered = files if file is None else None
    done = checking.check(
        scheduler, jobs, rendered, ctx.settings, schedule, beside, machine, file or "FILE"
    )
    return _verdict(scheduler, source, done, "no memfuse job found")


def _verdict(scheduler: Scheduler, source: str, done: checking.Checked, none: str) -> CommandResult:
    """The check's data and its exit: 1 when a job would fail (or none was found), 3 when a
    job was not tried."""
    data: CronCheckData = {"format": scheduler.name, "source": source, "jobs": list(done.jobs)}
    code = ExitCode.FATAL if done.failed or not done.found else ExitCode.OK
    if code != ExitCode.OK:
        data["error"] = f"{done.failed} scheduled job(s) would fail" if done.found else none
    elif done.unchecked:
        code = ExitCode.UNCHECKED
        data["error"] = (
            f"{done.unchecked} scheduled job(s) not tried: each names a store setup of its own"
        )
    return CommandResult("cron", data, tuple(render.cron_check(data)), exit_code=code)


def _every_agent(
    ctx: RunContext, scheduler: Scheduler, request: CronRequest, given: list[tuple[str, str]] | None
) -> CommandResult:
    """Every agent's jobs (`given`: the workspaces several -w name, else the hosts' roster);
    `--check` tries each agent's printed schedule as it tries one: one list, the worst exit."""
    s = ctx.settings
    install, remove = request.install, request.remove
    if s.session_server is not None and not request.check:
        raise ConfigError(
            f"{'--all-agents' if given is None else 'several -w'} gives each workspace a server"
            " entry in the mcporter config; memfuse's own [session] table names one server for"
            " all: install each by hand"
        )
    config = mcporter_config_path(s, os.environ)
    roster, notes = agents.roster(s, config, store=not remove, given=given)
    if not roster:  # every one left out, each said why
        raise ConfigError("no agent left to schedule: " + "; ".join(notes))
    changes: list[str] = []
    files: dict[str, str] = {}
    tried: list[checking.JobCheck] = []
    failed = unchecked = 0
    placing: list[tuple[str, agents.Agent, Schedule, Machine, StateFolder]] = []
    for agent in roster:
        mine, state = agent.settings(s), agent.state()
        machine = installing.machine_for(mine, state, tool=ctx.seams.tool)
        schedule, printed, _ = _planned(scheduler, mine, machine, request)
        said = f"agent {agent.id} ({one_line(str(agent.workspace))})"
        if request.check:
            done = checking.check(scheduler, scheduler.read(printed), printed, mine, schedule, [],
                                  machine)  # fmt: skip
            tried += [{**c, "job": f"{agent.id}: {c['job']}"} for c in done.jobs]
            failed, unchecked = failed + done.failed, unchecked + done.unchecked
            continue
        if not (install or remove):
            _merge(files, printed)
            continue
        if install and not agent.workspace.is_dir():
            notes.append(
                f"{said}: its workspace does not exist yet (its host makes it at the agent's"
                " first session), so its jobs would fail: not installed; run this again then"
            )
            continue
        if install and agent.entry is not None and config is not None:
            changes += _store(config, agent)
        placing.append((said, agent, schedule, machine, state))
    if request.check:
        for note in notes:
            ctx.reporter.warn(note)
        every = checking.Checked(tried, failed, len(tried), unchecked)
        return _verdict(scheduler, "every agent's schedule", every, "no agent to check")
    machine = installing.machine_for(s, ctx.workspace.state, tool=ctx.seams.tool)
    with (
        scheduler.every_agent() as side_by_side,
        ThreadPoolExecutor(max_workers=max(1, min(side_by_side, len(placing)))) as pool,
    ):  # each agent's install or removal beside the others' where its host allows
        futures = [pool.submit(installing.place, scheduler, schedule, at, state, s.now,
                            Workspace(agent.workspace).recent_md, remove=remove)
                for _, agent, schedule, at, state in placing]  # fmt: skip
        for (said, agent, *_), placed in zip(placing, futures, strict=True):
            _merge(files, placed.result().files)
            changes += [f"{said}: {c}" for c in placed.result().changes]
            if remove and agent.entry is not None:
                changes.append(
                    f"{said}: left its store entry {agent.server} and its database"
                    f" ({agent.entry['env']['AGENT_MEMORY_DB']}): memfuse never deletes memories"
                )
        if (install or remove) and given is None:
            changes += scheduler.strays(machine, [a.id for a in roster], remove=remove)
    for host in registry.every():
        for crossing in host.crossings(machine):
            ctx.reporter.warn(crossing)  # another agent's memory within reach
    label = "all-agents" if given is None else "workspaces"
    return _printed(scheduler, label, files, notes, changes, request)


def _merge(files: dict[str, str], more: dict[str, str]) -> None:
    """Each agent's files beside the others'; one file they share (one table for all) holds every
    agent's block, in turn."""
    for name, text in more.items():
        files[name] = f"{files[name].rstrip()}\n\n{text}" if name in files else text


def _store(config: Path, agent: agents.Agent) -> list[str]:
    """The agent's own entry in the mcporter config (its database's folder made)."""
    assert agent.entry is not None
    database = Path(agent.entry["env"]["AGENT_MEMORY_DB"])
    database.parent.mkdir(parents=True, exist_ok=True)
    _, said = merge.install(config, agent.server, agent.entry)
    diff = ("---", "+++", "@@", "+", "-", " ")
    kept = [line for line in said if not line.startswith(diff)]
    return [f"agent {agent.id}: its own store {agent.server} ({database}): {line}" for line in kept]
